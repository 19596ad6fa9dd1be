/**
 * A fix in a large file, as data: a 5,000-line Python module with one wrong sign deep inside, the
 * acceptance test that catches it, and the two scripted ways a Coder fixes it, by `edit_file` on a
 * window it read, or by reading every line and rewriting the file with `create_file`. Used by
 * `npm run bench -- edit` and by the end-to-end test of the edit.
 */
import { readWindow } from '../src/tools/file-tools';
import type { Scenario, ScenarioStep } from '../src/llm/scenario';

export const LARGE_FILE = 'series.py';
export const LARGE_FILE_LINES = 5_000;
const LINES_PER_FUNCTION = 5;
/** The function whose `return` line (3,704) has the wrong sign. */
const BROKEN = 740;
export const BUG_LINE = BROKEN * LINES_PER_FUNCTION + 4;

const name = (k: number) => `series_${String(k).padStart(4, '0')}`;
const returnLine = (k: number, sign: '+' | '-') => `    return scaled ${sign} ${k}`;

/** The module, broken or fixed: 1,000 functions of 5 lines each, about 24 bytes a line. */
export function largeModule(fixed: boolean): string {
  const lines: string[] = [];
  for (let k = 0; k < LARGE_FILE_LINES / LINES_PER_FUNCTION; k++) {
    lines.push(
      `def ${name(k)}(x: int) -> int:`,
      `    """Series ${k}: three times x, plus ${k}."""`,
      '    scaled = x * 3',
      returnLine(k, k === BROKEN && !fixed ? '-' : '+'),
      '',
    );
  }
  return lines.join('\n') + '\n';
}

export const ACCEPTANCE_FILE = 'test_series.py';
export const ACCEPTANCE_TEST = [
  `from series import ${name(0)}, ${name(BROKEN)}, ${name(999)}`,
  '',
  '',
  `def test_${name(BROKEN)}():`,
  `    assert ${name(BROKEN)}(2) == ${6 + BROKEN}`,
  '',
  '',
  'def test_neighbours():',
  `    assert ${name(0)}(2) == 6`,
  `    assert ${name(999)}(1) == ${3 + 999}`,
  '',
].join('\n');

export const LARGE_FILE_TASK = `Fix ${name(BROKEN)} in ${LARGE_FILE}: it must return three times x plus ${BROKEN}; ${ACCEPTANCE_FILE} must pass (large-file fix)`;

const call = (tool: string, args: Record<string, unknown>): ScenarioStep => ({
  tool_calls: [{ name: tool, arguments: args }],
});

/** The windows a Coder reading on from each cut answer gets: [start, end] lines. */
export function readingWindows(text: string): Array<[number, number]> {
  const windows: Array<[number, number]> = [];
  for (let start = 1; start <= LARGE_FILE_LINES;) {
    const answer = readWindow(LARGE_FILE, text, start);
    const end = answer.ok ? Number(answer.end_line) : LARGE_FILE_LINES;
    windows.push([start, end]);
    start = end + 1;
  }
  return windows;
}

/**
 * The run's scenario. `edit`: the Coder reads 21 lines around the bug and replaces one line with
 * edit_file. `rewrite`: it reads the whole file, window after window as the answers are cut, and
 * writes it back whole with create_file. The Tester adds nothing: the acceptance test decides.
 */
export function largeFileScenario(name: string, how: 'edit' | 'rewrite'): Scenario {
  const coder: ScenarioStep[] =
    how === 'edit'
      ? [
          call('read_file', { path: LARGE_FILE, start_line: BUG_LINE - 10, end_line: BUG_LINE + 10 }),
          call('edit_file', {
            path: LARGE_FILE,
            old_string: `${returnLine(BROKEN, '-')}\n`,
            new_string: `${returnLine(BROKEN, '+')}\n`,
          }),
        ]
      : [
          ...readingWindows(largeModule(false)).map(([start]) =>
            call('read_file', { path: LARGE_FILE, start_line: start }),
          ),
          call('create_file', { path: LARGE_FILE, content: largeModule(true) }),
        ];
  return {
    name,
    task: LARGE_FILE_TASK,
    language: 'python',
    acceptanceTests: { [ACCEPTANCE_FILE]: ACCEPTANCE_TEST },
    agents: {
      planner: [
        [
          call('submit_plan', {
            summary: `Fix the sign in ${LARGE_FILE}`,
            steps: [`Find ${BROKEN} in ${LARGE_FILE}`, 'Fix its return line'],
            files: [LARGE_FILE],
          }),
        ],
      ],
      coder: [[...coder, call('finish', { summary: `Fixed the sign of ${BROKEN}` })]],
      tester: [[call('finish', { summary: `${ACCEPTANCE_FILE} covers it` })]],
      reflector: [
        [
          call('submit_analysis', {
            root_cause: 'the fix did not take',
            fix_hypothesis: 'fix the return line again',
            files_to_change: [LARGE_FILE],
            tests_wrong: false,
          }),
        ],
      ],
    },
  };
}
