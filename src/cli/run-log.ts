import { decodePayload as decode, type HistoryEvent } from '../api/history-payloads';
import type { RunSnapshot } from '../shared/run-types';
import { printableLine, printableName } from '../shared/terminal-text';
import type { Analysis, Plan, TokenUsage, TurnFinish } from '../shared/types';
import { describeCommand } from './command-log';
import { costText, formatUsd, tokenText } from './progress';

const MAX_FIELD = 300;

const short = (text: string): string => {
  const line = text.replace(/\s+/g, ' ').trim();
  return line.length > MAX_FIELD ? `${line.slice(0, MAX_FIELD - 1)}…` : line;
};

/** What one completed step of the run amounts to, in a few words. */
function describeOutcome(type: string, result: unknown): string {
  if (type === 'agentStep') {
    const step = result as {
      toolCalls?: Array<{ name: string; target: string }>;
      finished?: TurnFinish | null;
      note?: string | null;
      usage?: TokenUsage;
      usd?: number | null;
    };
    const spent = step?.usage
      ? ` (${step.usage.prompt}+${step.usage.completion} tokens${typeof step.usd === 'number' ? `, ${formatUsd(step.usd)}` : ''})`
      : '';
    if (step?.finished) return `${describeFinish(step.finished)}${spent}`;
    const calls = (step?.toolCalls ?? []).map((c) => (c.target ? `${c.name} ${c.target}` : c.name));
    if (calls.length) return `asks for ${calls.join(', ')}${spent}`;
    return `${step?.note ? short(step.note) : 'no tool calls'}${spent}`;
  }
  if (type === 'runTests') {
    const r = result as {
      outcome: string;
      passed: number;
      failed: number;
      errors: number;
      message: string | null;
    };
    const counts = `${r.passed} passed, ${r.failed} failed, ${r.errors} errors`;
    // A completed run's message only repeats the counts; any other outcome says what went wrong.
    return r.outcome === 'completed'
      ? counts
      : `${counts} (${r.outcome})${r.message ? `: ${short(r.message)}` : ''}`;
  }
  if (type === 'openTurn') {
    // The project's instruction files the turn's first message carries (see OpenedTurn).
    const files = (result as { instructions?: unknown } | undefined)?.instructions;
    return Array.isArray(files) && files.length
      ? `instructions from ${short(files.map((file) => printableName(String(file))).join(', '))}`
      : 'done';
  }
  if (type === 'commitTurn')
    return typeof result === 'string' ? `commit ${result.slice(0, 12)}` : 'nothing changed';
  const tool = result as { ok?: boolean; error?: string } | undefined;
  if (tool && typeof tool === 'object' && 'ok' in tool)
    return tool.ok ? 'ok' : `refused: ${short(tool.error ?? '')}`;
  return 'done';
}

function describeFinish(finish: TurnFinish): string {
  if (finish.tool === 'submit_plan') return describePlan(finish.plan);
  if (finish.tool === 'submit_analysis') return describeAnalysis(finish.analysis);
  return `finished: ${short(finish.summary)}`;
}

const describePlan = (plan: Plan): string =>
  `plan: ${short(plan.summary)} (${plan.steps.length} steps; files ${plan.files.join(', ') || '-'})`;

const describeAnalysis = (a: Analysis): string =>
  `analysis: root cause: ${short(a.rootCause)}; fix: ${short(a.fixHypothesis)}${a.testsWrong ? '; the tests are wrong' : ''}`;

/**
 * The run as plain text, from its workflow history: every step with its summary (the agent, the
 * tool and its target) and what came of it, each test run's counts and each analysis, then the
 * moves of the state machine. Each line is rendered for the terminal: what the model wrote (a
 * summary, an analysis, a file name) shows its control characters and newlines as escapes.
 */
export function renderRunLog(events: HistoryEvent[], snapshot: RunSnapshot | null): string[] {
  const lines: string[] = [];
  const scheduled = new Map<string, { type: string; summary: string }>();
  for (const event of events) {
    const summary = String(decode(event.userMetadata?.summary) ?? '');
    const time = event.eventTime?.seconds
      ? new Date(Number(event.eventTime.seconds) * 1000).toISOString().slice(11, 19)
      : '        ';
    const scheduledAttrs = event.activityTaskScheduledEventAttributes;
    if (scheduledAttrs) {
      scheduled.set(String(event.eventId), { type: scheduledAttrs.activityType?.name ?? '?', summary });
      continue;
    }
    const completed = event.activityTaskCompletedEventAttributes;
    if (completed) {
      const step = scheduled.get(String(completed.scheduledEventId));
      if (!step) continue;
      const command =
        step.type === 'runCommand' ? describeCommand(decode(completed.result?.payloads?.[0])) : null;
      if (command) {
        lines.push(`${time}  ${step.summary || step.type}: ${command.outcome}`, ...command.output);
        continue;
      }
      lines.push(
        `${time}  ${step.summary || step.type}: ${describeOutcome(step.type, decode(completed.result?.payloads?.[0]))}`,
      );
      continue;
    }
    const failed = event.activityTaskFailedEventAttributes;
    if (failed) {
      const step = scheduled.get(String(failed.scheduledEventId));
      lines.push(
        `${time}  ${step?.summary || step?.type || 'activity'}: failed: ${short(failed.failure?.message ?? '')}`,
      );
      continue;
    }
    const signal = event.workflowExecutionSignaledEventAttributes;
    if (signal) lines.push(`${time}  signal: ${signal.signalName}`);
    const update = event.workflowExecutionUpdateAcceptedEventAttributes;
    if (update) {
      const text = decode(update.acceptedRequest?.input?.args?.payloads?.[0]);
      lines.push(`${time}  ${update.acceptedRequest?.input?.name ?? 'update'}: ${short(String(text ?? ''))}`);
    }
  }
  if (snapshot) {
    lines.push('');
    lines.push(`moves: ${snapshot.transitions.map((t) => `${t.from} → ${t.to}`).join(', ') || '-'}`);
    lines.push(
      `state: ${snapshot.state}${snapshot.reason ? ` (${snapshot.reason})` : ''}, iteration ${snapshot.iterations}/${snapshot.maxIterations}, tokens ${tokenText(snapshot.tokens)}`,
    );
    lines.push(`cost: ${costText(snapshot.cost)}`);
    if (snapshot.error) lines.push(`last error: ${snapshot.error}`);
  }
  return lines.map(printableLine);
}
