/**
 * Part 4, history and tokens. How many events and bytes of Temporal history a run
 * leaves, per run and per iteration, for the 2-iteration demo and a 15-iteration
 * run that never passes; and the prompt tokens of every iteration, from the usage
 * the scripted server reports (its estimate is 1 token per 4 characters of the
 * messages actually sent), to show that prompts stay flat instead of growing
 * with the run.
 */
import { loadBuiltinScenario } from '../src/llm/scenario';
import type { RecordedRequest } from '../src/llm/scripted-server';
import type { RunResult } from '../src/shared/run-types';
import type { AgentRole } from '../src/shared/types';
import { runResult, uniqueSuffix, type BenchStack } from './bench-stack';
import { formatPairs, formatTable, round, sum, withTimeout, type BenchIO } from './bench-util';
import { fetchExecutions, summarizeHistory, type HistorySummary } from './history-analysis';
import { lineChartSvg } from './svg-chart';

export interface HistoryCase {
  key: string;
  scenario: string;
  maxIterations: number;
  warnAt: number;
  expect: { state: RunResult['state']; iterations: number };
}

export const HISTORY_CASES: Record<string, HistoryCase> = {
  demo: {
    key: 'demo',
    scenario: 'demo-fizzbuzz',
    maxIterations: 15,
    warnAt: 12,
    expect: { state: 'SUCCESS', iterations: 2 },
  },
  long: {
    key: 'long',
    scenario: 'never-passes',
    maxIterations: 15,
    warnAt: 12,
    expect: { state: 'FAILED', iterations: 15 },
  },
};

export interface IterationTokens {
  iteration: number;
  calls: number;
  byAgent: Partial<Record<AgentRole, number>>;
  promptTokens: number;
  completionTokens: number;
  maxPromptPerCall: number;
}

export interface HistoryRun {
  case: string;
  scenario: string;
  workflowId: string;
  state: string;
  reason: string | null;
  iterations: number;
  history: HistorySummary;
  eventsPerIteration: number;
  bytesPerIteration: number;
  tokens: { prompt: number; completion: number };
  perIteration: Array<IterationTokens & { events: number; historyBytes: number }>;
  /** Prompt tokens of the last iteration / of iteration 2 (1.0 = flat). */
  promptGrowth: number | null;
  largestPromptTokens: number;
}

export interface HistoryResult {
  part: 'history';
  runs: HistoryRun[];
  promptsBounded: boolean;
}

/** Groups one run's model calls by coding iteration (0 = planning), in call order. */
export function tokensPerIteration(requests: RecordedRequest[]): IterationTokens[] {
  const byIteration = new Map<number, IterationTokens>();
  let iteration = 0;
  for (const r of [...requests].sort((a, b) => a.seq - b.seq)) {
    if (r.status !== 200 || !r.usage) continue;
    if (r.agent === 'coder') iteration = r.turn + 1;
    let e = byIteration.get(iteration);
    if (!e)
      byIteration.set(
        iteration,
        (e = { iteration, calls: 0, byAgent: {}, promptTokens: 0, completionTokens: 0, maxPromptPerCall: 0 }),
      );
    e.calls += 1;
    if (r.agent) e.byAgent[r.agent] = (e.byAgent[r.agent] ?? 0) + 1;
    e.promptTokens += r.usage.prompt;
    e.completionTokens += r.usage.completion;
    e.maxPromptPerCall = Math.max(e.maxPromptPerCall, r.usage.prompt);
  }
  return [...byIteration.values()].sort((a, b) => a.iteration - b.iteration);
}

export async function runHistoryBench(
  stack: BenchStack,
  opts: { cases: string[] },
  progress: (m: string) => void,
): Promise<HistoryResult> {
  stack.llm.setDelay(0);
  const runs: HistoryRun[] = [];
  for (const key of opts.cases) {
    const c = HISTORY_CASES[key];
    if (!c)
      throw new Error(`unknown history case "${key}" (known: ${Object.keys(HISTORY_CASES).join(', ')})`);
    const scenario = loadBuiltinScenario(c.scenario);
    const id = `bench-history-${key}-${uniqueSuffix()}`;
    const model = stack.scriptedModel(scenario, id);
    progress(`${key}: ${c.scenario}, maxIterations ${c.maxIterations}, warnAt ${c.warnAt}`);
    const run = await stack.start({
      workflowId: id,
      task: scenario.task ?? c.scenario,
      model,
      language: scenario.language ?? 'python',
      options: { maxIterations: c.maxIterations, warnAt: c.warnAt },
    });
    const result = await withTimeout(runResult(run), 20 * 60_000, `run ${id}`);
    if (result.state !== c.expect.state || result.iterations !== c.expect.iterations) {
      throw new Error(
        `${id} ended ${result.state} at iteration ${result.iterations}; expected ${c.expect.state} at ${c.expect.iterations}: ${result.error ?? ''}`,
      );
    }
    const history = summarizeHistory(await fetchExecutions(stack.client, id, run.firstExecutionRunId));
    const tokens = tokensPerIteration(stack.llm.requests.filter((r) => r.model === model));
    const it = (n: number) => tokens.find((t) => t.iteration === n);
    const second = it(2);
    const last = tokens[tokens.length - 1];
    const perIteration = tokens.map((t) => {
      const h = history.perIteration.find((x) => x.iteration === t.iteration);
      return { ...t, events: h?.events ?? 0, historyBytes: h?.bytes ?? 0 };
    });
    const codingIterations = history.perIteration.filter((p) => p.iteration > 0);
    const hr: HistoryRun = {
      case: key,
      scenario: c.scenario,
      workflowId: id,
      state: result.state,
      reason: result.reason,
      iterations: result.iterations,
      history,
      eventsPerIteration: round(
        sum(codingIterations.map((p) => p.events)) / Math.max(1, codingIterations.length),
        1,
      ),
      bytesPerIteration: Math.round(
        sum(codingIterations.map((p) => p.bytes)) / Math.max(1, codingIterations.length),
      ),
      tokens: result.tokens,
      perIteration,
      promptGrowth:
        second && last && last.iteration > 2 ? round(last.promptTokens / second.promptTokens, 3) : null,
      largestPromptTokens: Math.max(...tokens.map((t) => t.maxPromptPerCall)),
    };
    const counted = sum(tokens.map((t) => t.promptTokens));
    if (counted !== result.tokens.prompt) {
      progress(
        `note: the run counted ${result.tokens.prompt} prompt tokens, the scripted server reported ${counted}`,
      );
    }
    runs.push(hr);
    progress(
      `${key}: ${result.state} after ${result.iterations} iterations, ${history.events} events, ${history.bytes} bytes of history`,
    );
  }
  return {
    part: 'history',
    runs,
    // Each turn starts a fresh conversation: a later iteration's prompts must not outgrow the second's.
    promptsBounded: runs.every((r) => r.promptGrowth === null || r.promptGrowth <= 1.1),
  };
}

export function historyReport(r: HistoryResult, io: BenchIO): void {
  io.out('\n== History and tokens per run ==');
  for (const line of formatTable(
    [
      'case',
      'scenario',
      'end',
      'iterations',
      'executions',
      'events',
      'history bytes',
      'events/iter',
      'bytes/iter',
      'prompt tok',
      'completion tok',
    ],
    r.runs.map((run) => [
      run.case,
      run.scenario,
      `${run.state}${run.reason ? ` (${run.reason})` : ''}`,
      run.iterations,
      run.history.executions,
      run.history.events,
      run.history.bytes,
      run.eventsPerIteration,
      run.bytesPerIteration,
      run.tokens.prompt,
      run.tokens.completion,
    ]),
  ))
    io.out(line);
  for (const run of r.runs) {
    io.out(`\n${run.case} (${run.scenario}), per iteration (0 = setup and planning):`);
    for (const line of formatTable(
      [
        'iter',
        'model calls',
        'agents',
        'prompt tok',
        'max prompt/call',
        'completion tok',
        'events',
        'history bytes',
      ],
      run.perIteration.map((p) => [
        p.iteration,
        p.calls,
        Object.entries(p.byAgent)
          .map(([a, n]) => `${a} ${n}`)
          .join(', '),
        p.promptTokens,
        p.maxPromptPerCall,
        p.completionTokens,
        p.events,
        p.historyBytes,
      ]),
    ))
      io.out(`  ${line}`);
  }
  io.out('');
  for (const line of formatPairs([
    ...r.runs.map((run): [string, string] => [
      `${run.case}: prompt growth`,
      run.promptGrowth === null
        ? 'n/a (fewer than 3 iterations)'
        : `${run.promptGrowth} (last iteration / iteration 2); largest prompt ${run.largestPromptTokens} tokens`,
    ]),
    [
      'prompts bounded',
      r.promptsBounded
        ? 'yes: every iteration starts fresh conversations of about the same size'
        : 'NO: prompts grow with the iteration',
    ],
  ]))
    io.out(line);
}

export function historySvg(r: HistoryResult): string | null {
  const long = r.runs.find((run) => run.iterations > 2) ?? r.runs[0];
  if (!long) return null;
  let cumulative = 0;
  const cumulativeBytes: Array<[number, number]> = long.perIteration.map((p) => [
    p.iteration,
    (cumulative += p.historyBytes) / 1024,
  ]);
  return lineChartSvg({
    title: `aca history and tokens per iteration: ${long.scenario}, ${long.iterations} iterations`,
    subtitle: `${long.history.events} events, ${long.history.bytes} bytes of history; prompt growth ${long.promptGrowth ?? 'n/a'} (last / iteration 2)`,
    panels: [
      {
        title: 'Prompt tokens per iteration',
        xLabel: 'iteration (0 = planning)',
        yLabel: 'tokens',
        series: [
          {
            name: 'prompt tokens, all calls',
            color: '#1f77b4',
            points: long.perIteration.map((p) => [p.iteration, p.promptTokens]),
          },
          {
            name: 'largest prompt of one call',
            color: '#ff7f0e',
            points: long.perIteration.map((p) => [p.iteration, p.maxPromptPerCall]),
          },
        ],
      },
      {
        title: 'Workflow history',
        xLabel: 'iteration (0 = planning)',
        yLabel: 'KiB (cumulative)',
        series: [{ name: 'history size', color: '#2ca02c', points: cumulativeBytes }],
      },
    ],
  });
}
