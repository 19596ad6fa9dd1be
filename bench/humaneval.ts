/**
 * HumanEval as aca runs: the dataset, the acceptance test each problem becomes,
 * the task text, and the scripted model's answers for the offline harness.
 */
import * as fs from 'node:fs';
import * as zlib from 'node:zlib';
import { z } from 'zod';
import type { Scenario } from '../src/llm/scenario';

const problemSchema = z.object({
  task_id: z.string().min(1),
  prompt: z.string(),
  entry_point: z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/),
  canonical_solution: z.string(),
  test: z.string(),
});

export type HumanEvalProblem = z.infer<typeof problemSchema>;

/** The module every run must write, and the acceptance test that imports it. */
export const SOLUTION_FILE = 'solution.py';
export const ACCEPTANCE_FILE = 'test_humaneval_acceptance.py';
/** The acceptance test's case as the pytest runner names it: its pytest node id. */
export const ACCEPTANCE_CASE = `${ACCEPTANCE_FILE}::test_check`;

/** Reads a HumanEval-format JSONL file, gzip-compressed or plain. */
export function loadDataset(file: string): HumanEvalProblem[] {
  let raw = fs.readFileSync(file);
  if (raw[0] === 0x1f && raw[1] === 0x8b) raw = zlib.gunzipSync(raw);
  const problems: HumanEvalProblem[] = [];
  raw
    .toString('utf8')
    .split('\n')
    .forEach((line, i) => {
      if (!line.trim()) return;
      let value: unknown;
      try {
        value = JSON.parse(line);
      } catch (err) {
        throw new Error(`${file}:${i + 1}: not JSON (${(err as Error).message})`);
      }
      const parsed = problemSchema.safeParse(value);
      if (!parsed.success) {
        throw new Error(
          `${file}:${i + 1}: not a HumanEval problem: ${parsed.error.issues.map((x) => `${x.path.join('.')}: ${x.message}`).join('; ')}`,
        );
      }
      problems.push(parsed.data);
    });
  const ids = new Set<string>();
  for (const p of problems) {
    if (ids.has(p.task_id)) throw new Error(`${file}: task_id ${p.task_id} appears twice`);
    ids.add(p.task_id);
  }
  return problems;
}

/**
 * The problem's own `test` (which defines check(candidate)) run against the
 * solution module. `import *` as well, because some checks call the prompt's
 * helper functions (e.g. poly in HumanEval/32, encode_cyclic in HumanEval/38),
 * as the reference harness does by running prompt, completion and test in one namespace.
 */
export function acceptanceTest(p: HumanEvalProblem): string {
  return [
    `# Acceptance test for ${p.task_id}: the dataset's check() applied to ${p.entry_point} from ${SOLUTION_FILE}.`,
    'from solution import *  # noqa: F401,F403',
    `from solution import ${p.entry_point}`,
    '',
    p.test.trimEnd(),
    '',
    '',
    'def test_check():',
    `    check(${p.entry_point})`,
    '',
  ].join('\n');
}

export function taskText(p: HumanEvalProblem): string {
  return [
    `Complete the Python function \`${p.entry_point}\` (${p.task_id}) and save the whole program, the code below with your completion, as ${SOLUTION_FILE} in the workspace root.`,
    `The acceptance test ${ACCEPTANCE_FILE} imports ${p.entry_point} from ${SOLUTION_FILE}.`,
    '',
    '```python',
    p.prompt.trimEnd(),
    '```',
  ].join('\n');
}

function withNewline(text: string): string {
  return text.endsWith('\n') ? text : `${text}\n`;
}

/** The reference program: prompt followed by the canonical completion. */
export function canonicalProgram(p: HumanEvalProblem): string {
  return withNewline(p.prompt + p.canonical_solution);
}

/** A first attempt that certainly fails check(): the function body raises. */
export function wrongProgram(p: HumanEvalProblem): string {
  return `${withNewline(p.prompt)}    raise NotImplementedError("scripted wrong first attempt")\n`;
}

/**
 * Exactly floor(n * fraction) of n problems, spread evenly: problem i is
 * wrong first when floor((i + 1) f) > floor(i f).
 */
export function isWrongFirst(index: number, fraction: number): boolean {
  const at = (k: number) => Math.floor(k * fraction + 1e-9);
  return at(index + 1) > at(index);
}

const call = (name: string, args: Record<string, unknown>) => ({ tool_calls: [{ name, arguments: args }] });

/**
 * The scripted model's answers for one problem: planner submits a plan; coder
 * writes prompt + canonical solution and finishes; tester finishes without
 * writing (the acceptance test covers the task). Wrong first: the coder's first
 * attempt raises, the reflector names that, and attempt 2 is the canonical fix.
 */
export function scriptedScenario(p: HumanEvalProblem, name: string, wrongFirst: boolean): Scenario {
  const coderTurn = (content: string, summary: string) => [
    call('create_file', { path: SOLUTION_FILE, content }),
    call('finish', { summary }),
  ];
  return {
    name,
    description: `HumanEval ${p.task_id}${wrongFirst ? ', wrong first attempt' : ''}`,
    language: 'python',
    agents: {
      planner: [
        [
          call('submit_plan', {
            summary: `Implement ${p.entry_point} in ${SOLUTION_FILE} as its docstring describes.`,
            steps: [`Write ${SOLUTION_FILE}: the given code with the body of ${p.entry_point} completed`],
            files: [SOLUTION_FILE],
          }),
        ],
      ],
      coder: wrongFirst
        ? [
            coderTurn(wrongProgram(p), `First attempt at ${p.entry_point}.`),
            coderTurn(canonicalProgram(p), `Implemented ${p.entry_point} as the analysis proposed.`),
          ]
        : [coderTurn(canonicalProgram(p), `Implemented ${p.entry_point}.`)],
      tester: [
        [
          call('finish', {
            summary: `The acceptance test ${ACCEPTANCE_FILE} covers ${p.entry_point}; no further tests.`,
          }),
        ],
      ],
      reflector: [
        [
          call('submit_analysis', {
            root_cause: `${p.entry_point} in ${SOLUTION_FILE} raises NotImplementedError: its body was never written, so check() fails on the first call.`,
            fix_hypothesis: `Implement the body of ${p.entry_point} as the docstring and its examples describe.`,
            files_to_change: [SOLUTION_FILE],
            tests_wrong: false,
          }),
        ],
      ],
    },
  };
}
