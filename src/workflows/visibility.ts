import { metricMeter, setCurrentDetails, upsertSearchAttributes } from '@temporalio/workflow';
import type { RunSnapshot } from '../shared/run-types';
import {
  AgentIterationKey,
  AgentLanguageKey,
  AgentPassRateKey,
  AgentStateKey,
} from '../shared/search-attributes';
import { LISTED_WAITING, type Language } from '../shared/types';
import { renderDetails } from './details';

/**
 * Shows the run in the Web UI: search attributes for lists and filters, details for the run's page.
 * `listed` holds the attributes last upserted (a run publishes many times between moves): only a
 * change is upserted, since each upsert is a command and an event in history.
 */
export function publishRun(
  snapshot: RunSnapshot,
  language: Language,
  listed: { key: string | null },
  note?: string,
): void {
  const attributes = [
    // A run waiting at its limit for `aca extend` is listed as WAITING: it needs someone.
    { key: AgentStateKey, value: snapshot.waiting === 'limit' ? LISTED_WAITING : snapshot.state },
    { key: AgentIterationKey, value: snapshot.iterations },
    { key: AgentPassRateKey, value: snapshot.passRate ?? 0 },
    { key: AgentLanguageKey, value: language },
  ] as const;
  const key = JSON.stringify(attributes.map((a) => a.value));
  if (key !== listed.key) {
    upsertSearchAttributes([...attributes]);
    listed.key = key;
  }
  const details = renderDetails(snapshot);
  setCurrentDetails(note ? `${details}\n\n_${note}_` : details);
}

// Emitted through the worker runtime's Prometheus endpoint; the SDK skips them on replay. Created
// when used: the meter exists only inside a workflow, and the CLI imports this module for types.
export function countRunFinished(state: string, reason: string | null): void {
  metricMeter
    .createCounter('aca_runs_finished', 'runs', 'Agent runs by end state and reason')
    .add(1, { state, reason: reason ?? 'none' });
}

export function countIterationStarted(language: Language): void {
  metricMeter.createCounter('aca_iterations', 'iterations', 'Coding attempts started').add(1, { language });
}
