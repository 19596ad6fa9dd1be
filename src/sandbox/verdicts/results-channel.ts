import { createHmac, timingSafeEqual } from 'node:crypto';
import { z } from 'zod';

/**
 * The results channel: fd 3 of the test process, a pipe to the worker. aca's own plugin
 * inside the runner (pytest plugin, Jest reporter) writes one JSON line per finished test
 * phase, so every outcome leaves the sandbox the moment it is known. A report file can be
 * rewritten by code that runs later in the same process (an atexit handler, a hook that
 * runs after the report is written); a line already read from a pipe cannot be taken back.
 */

/** A run of a few thousand tests writes well under 1 MiB; more is a flood, not a report. */
export const MAX_RESULTS_BYTES = 8 * 1024 * 1024;

export class ResultsCollector {
  private readonly chunks: Buffer[] = [];
  private bytes = 0;
  overflowed = false;

  constructor(private readonly capacity = MAX_RESULTS_BYTES) {}

  push(chunk: Buffer): void {
    if (this.overflowed) return;
    if (this.bytes + chunk.length > this.capacity) {
      this.overflowed = true;
      this.chunks.length = 0;
      return;
    }
    this.chunks.push(chunk);
    this.bytes += chunk.length;
  }

  text(): string {
    return Buffer.concat(this.chunks).toString('utf8');
  }
}

const PhaseOutcome = z.enum(['passed', 'failed', 'skipped']);

/** pytest: one line per phase (setup, call, teardown) of each test, as pytest reported it. */
const PytestCase = z.object({
  t: z.literal('case'),
  id: z.string(),
  when: z.enum(['setup', 'call', 'teardown']),
  outcome: PhaseOutcome,
  /** What the phase itself raised, seen beneath every hook that may rewrite the report. */
  raw: z.enum(['passed', 'failed', 'skipped', 'unknown']),
  /**
   * For the call phase of an acceptance test: whether the test's own function, as compiled from
   * the original file, returned (`ran`), only raised (`raised`) or never ran (`not_run`) during
   * the phase; `unknown` for other tests and phases.
   */
  body: z.enum(['ran', 'raised', 'not_run', 'unknown']),
  xfail: z.boolean(),
});
const PytestCollectError = z.object({ t: z.literal('collect_error'), id: z.string() });
const PytestDone = z.object({ t: z.literal('done'), exit: z.number().int() });

/** Jest: one line per test case, one per test file that failed to run, one at the end. */
const JestCase = z.object({
  t: z.literal('case'),
  file: z.string(),
  name: z.string(),
  status: z.string(),
});
const JestFileError = z.object({ t: z.literal('file_error'), file: z.string() });
const JestDone = z.object({ t: z.literal('done'), success: z.boolean() });

export const PytestRecord = z.discriminatedUnion('t', [PytestCase, PytestCollectError, PytestDone]);
export const JestRecord = z.discriminatedUnion('t', [JestCase, JestFileError, JestDone]);
export type PytestRecord = z.infer<typeof PytestRecord>;
export type JestRecord = z.infer<typeof JestRecord>;

export type ParsedRecords<T> = { ok: true; records: T[] } | { ok: false; problem: string };

/** Splits the channel into records; any line that is not one of ours means someone else wrote there. */
export function parseRecords<T>(text: string, schema: z.ZodType<T>): ParsedRecords<T> {
  const records: T[] = [];
  const lines = text.split('\n');
  // The last line may have been cut off by a killed process: dropped, not judged.
  if (lines.at(-1) !== '') lines.pop();
  for (const line of lines) {
    if (line === '') continue;
    let value: unknown;
    try {
      value = JSON.parse(line);
    } catch {
      return { ok: false, problem: `a line on the results channel is not JSON: ${line.slice(0, 120)}` };
    }
    const parsed = schema.safeParse(value);
    if (!parsed.success)
      return { ok: false, problem: `an unexpected record on the results channel: ${line.slice(0, 120)}` };
    records.push(parsed.data);
  }
  return { ok: true, records };
}

/**
 * The pytest verdict process's records (python/pytest_verdict.py), each written and signed by its
 * audit hook. `n` numbers them from 0, so none can be dropped, repeated or reordered unseen.
 */
const VerdictCase = PytestCase.extend({
  n: z.number().int(),
  body: z.enum(['ran', 'raised', 'not_run', 'rebound', 'unknown']),
  /** Who raised a skip or an expected failure: pytest (a mark), the acceptance test's code, other code. */
  skip: z.enum(['pytest', 'test', 'other', 'none']),
});
const VerdictCollect = z.object({
  t: z.literal('collect'),
  n: z.number().int(),
  id: z.string(),
  outcome: z.enum(['failed', 'skipped']),
});
const VerdictTamper = z.object({ t: z.literal('tamper'), n: z.number().int(), what: z.string() });
const VerdictDone = z.object({
  t: z.literal('done'),
  n: z.number().int(),
  exit: z.number().int(),
  tampered: z.number().int(),
});
export const PytestVerdictRecord = z.discriminatedUnion('t', [
  VerdictCase,
  VerdictCollect,
  VerdictTamper,
  VerdictDone,
]);
export type PytestVerdictRecord = z.infer<typeof PytestVerdictRecord>;

/**
 * Checks each line's signature (`<json>\t<hex HMAC-SHA256 of the json under key>`) and number, and
 * returns the JSON text of the lines the verdict process's audit hook wrote, in order. Any other
 * line (code under test writing to the channel it found) is a problem: the run is not trusted,
 * and the signed lines still say what the hook saw.
 */
export function verifySignedLines(text: string, key: Buffer): { records: string[]; problems: string[] } {
  const lines = text.split('\n');
  if (lines.at(-1) !== '') lines.pop();
  const records: string[] = [];
  const problems: string[] = [];
  for (const line of lines) {
    if (line === '') continue;
    const tab = line.lastIndexOf('\t');
    const body = tab < 0 ? line : line.slice(0, tab);
    const mac = tab < 0 ? '' : line.slice(tab + 1);
    const expected = createHmac('sha256', key).update(body, 'utf8').digest();
    const given = /^[0-9a-f]{64}$/.test(mac) ? Buffer.from(mac, 'hex') : Buffer.alloc(0);
    if (given.length !== expected.length || !timingSafeEqual(given, expected)) {
      if (problems.length === 0)
        problems.push(
          `a line on the results channel was not written by aca's verdict process: ${body.slice(0, 120)}`,
        );
      continue;
    }
    const numbered = /"n":(\d+)[,}]/.exec(body);
    if (!numbered || Number(numbered[1]) !== records.length) {
      problems.push('the results channel lost or repeated a record of the verdict process');
      break;
    }
    records.push(body);
  }
  return { records, problems };
}
