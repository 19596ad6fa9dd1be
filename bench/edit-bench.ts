/**
 * Tokens of one fix in a 5,000-line file, `edit_file` against rewriting the file whole. The same
 * task runs twice on the scripted model: once the Coder reads 21 lines around the bug and replaces
 * one line with edit_file, once it reads every line (in as many read_file windows as the 100 KB
 * answer limit needs) and writes the whole file back with create_file. The figures are the tokens
 * of the coding iteration as the scripted server counts them: a request's prompt tokens are its
 * messages' characters / 4, an answer's completion tokens its characters / 4.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { ModelOptionsTable } from '../src/llm/model-options';
import { safeKey } from '../src/shared/safe-key';
import { runResult, uniqueSuffix, type BenchStack } from './bench-stack';
import { formatPairs, formatTable, round, withTimeout, type BenchIO } from './bench-util';
import { tokensPerIteration } from './history-bench';
import {
  ACCEPTANCE_FILE,
  ACCEPTANCE_TEST,
  BUG_LINE,
  LARGE_FILE,
  LARGE_FILE_LINES,
  LARGE_FILE_TASK,
  largeFileScenario,
  largeModule,
  readingWindows,
} from './large-file-fixture';

const HOW = ['edit', 'rewrite'] as const;
type How = (typeof HOW)[number];
const modelAlias = (how: How) => `bench-edit-${how}`;

/**
 * The window of gpt-4o for both models: with the 32k aca assumes for an unknown model, the rewrite
 * would have its first window trimmed away before it writes the file, which no real fix survives.
 */
export const EDIT_BENCH_MODEL_OPTIONS: ModelOptionsTable = Object.fromEntries(
  HOW.map((how) => [`scripted:${modelAlias(how)}`, { context_tokens: 128_000 }]),
);

export interface EditVariant {
  how: How;
  workflowId: string;
  state: string;
  iterations: number;
  /** Model calls of the coding iteration (Coder and Tester). */
  calls: number;
  readFileCalls: number;
  promptTokens: number;
  completionTokens: number;
  coder: { calls: number; promptTokens: number; completionTokens: number; maxPromptPerCall: number };
  /** Every line but the fixed one is as it was, and the fixed one is right. */
  fileAsExpected: boolean;
}

export interface EditBenchResult {
  part: 'edit';
  file: { lines: number; bytes: number; bugLine: number; readWindows: Array<[number, number]> };
  edit: EditVariant;
  rewrite: EditVariant;
  /** rewrite / edit, per iteration. */
  ratio: { prompt: number; completion: number; total: number };
}

async function runVariant(
  stack: BenchStack,
  how: How,
  testsDir: string,
  progress: (m: string) => void,
): Promise<EditVariant> {
  const model = stack.scriptedModel(largeFileScenario(modelAlias(how), how), modelAlias(how));
  const workflowId = `bench-edit-${how}-${uniqueSuffix()}`;
  const workspace = path.join(stack.config.workspacesRoot, safeKey(workflowId));
  fs.mkdirSync(workspace, { recursive: true });
  const before = largeModule(false);
  fs.writeFileSync(path.join(workspace, LARGE_FILE), before);
  progress(`${how}: run ${workflowId}`);
  const run = await stack.start({
    workflowId,
    task: LARGE_FILE_TASK,
    model,
    testsDir,
    options: { maxIterations: 2 },
  });
  const result = await withTimeout(runResult(run), 5 * 60_000, `run ${workflowId}`);
  if (result.state !== 'SUCCESS' || result.iterations !== 1) {
    throw new Error(
      `${how}: ${workflowId} ended ${result.state} at iteration ${result.iterations}: ${result.error ?? ''}`,
    );
  }
  const after = fs.readFileSync(path.join(workspace, LARGE_FILE), 'utf8');
  const [was, is] = [before.split('\n'), after.split('\n')];
  const changed = is.flatMap((line, i) => (line === was[i] ? [] : [i + 1]));
  const requests = stack.llm.requests.filter((r) => r.model === model && r.status === 200);
  const iteration = tokensPerIteration(requests).find((t) => t.iteration === 1);
  if (!iteration) throw new Error(`${how}: no model calls in the coding iteration`);
  const coderCalls = requests.filter((r) => r.agent === 'coder');
  const variant: EditVariant = {
    how,
    workflowId,
    state: result.state,
    iterations: result.iterations,
    calls: iteration.calls,
    readFileCalls: how === 'edit' ? 1 : readingWindows(before).length,
    promptTokens: iteration.promptTokens,
    completionTokens: iteration.completionTokens,
    coder: {
      calls: coderCalls.length,
      promptTokens: coderCalls.reduce((n, r) => n + (r.usage?.prompt ?? 0), 0),
      completionTokens: coderCalls.reduce((n, r) => n + (r.usage?.completion ?? 0), 0),
      maxPromptPerCall: Math.max(...coderCalls.map((r) => r.usage?.prompt ?? 0)),
    },
    fileAsExpected: after === largeModule(true) && changed.length === 1 && changed[0] === BUG_LINE,
  };
  if (!variant.fileAsExpected)
    throw new Error(`${how}: ${LARGE_FILE} changed on lines ${changed.join(', ')}`);
  progress(`${how}: ${variant.promptTokens} prompt and ${variant.completionTokens} completion tokens`);
  return variant;
}

export async function runEditBench(
  stack: BenchStack,
  progress: (m: string) => void,
): Promise<EditBenchResult> {
  stack.llm.setDelay(0);
  const testsDir = fs.mkdtempSync(path.join(os.tmpdir(), 'aca-edit-bench-'));
  try {
    fs.writeFileSync(path.join(testsDir, ACCEPTANCE_FILE), ACCEPTANCE_TEST);
    const edit = await runVariant(stack, 'edit', testsDir, progress);
    const rewrite = await runVariant(stack, 'rewrite', testsDir, progress);
    const module = largeModule(false);
    return {
      part: 'edit',
      file: {
        lines: LARGE_FILE_LINES,
        bytes: Buffer.byteLength(module),
        bugLine: BUG_LINE,
        readWindows: readingWindows(module),
      },
      edit,
      rewrite,
      ratio: {
        prompt: round(rewrite.promptTokens / edit.promptTokens, 2),
        completion: round(rewrite.completionTokens / edit.completionTokens, 2),
        total: round(
          (rewrite.promptTokens + rewrite.completionTokens) / (edit.promptTokens + edit.completionTokens),
          2,
        ),
      },
    };
  } finally {
    fs.rmSync(testsDir, { recursive: true, force: true });
  }
}

export function editReport(r: EditBenchResult, io: BenchIO): void {
  io.out(
    `\n== Edit: one fix in a ${r.file.lines}-line file (${r.file.bytes} bytes, bug on line ${r.file.bugLine}), edit_file against a whole rewrite ==`,
  );
  const row = (v: EditVariant) => [
    v.how === 'edit' ? 'read 21 lines + edit_file' : `read ${v.readFileCalls} windows + create_file`,
    v.calls,
    v.promptTokens,
    v.completionTokens,
    v.promptTokens + v.completionTokens,
    v.coder.maxPromptPerCall,
  ];
  for (const line of formatTable(
    ['coding iteration', 'calls', 'prompt tokens', 'completion tokens', 'total', 'largest prompt'],
    [row(r.edit), row(r.rewrite)],
  ))
    io.out(line);
  for (const line of formatPairs([
    ['prompt ratio (rewrite / edit)', r.ratio.prompt],
    ['completion ratio', r.ratio.completion],
    ['total ratio', r.ratio.total],
    ['files', 'both runs SUCCESS in 1 iteration; 4,999 other lines byte for byte'],
  ]))
    io.out(line);
}
