/**
 * Small helpers shared by the benchmark parts: statistics, the printed tables,
 * the JSON written under bench/results, and progress lines on stderr.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

/** Where `npm run bench` writes its results unless `--out` says otherwise. */
export function defaultResultsDir(): string {
  return path.join(__dirname, 'results');
}

export function median(values: number[]): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
}

/** Nearest-rank percentile, p in [0, 100]. */
export function percentile(values: number[], p: number): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const rank = Math.min(sorted.length, Math.max(1, Math.ceil((p / 100) * sorted.length)));
  return sorted[rank - 1];
}

export function sum(values: number[]): number {
  return values.reduce((a, b) => a + b, 0);
}

/** Rounds to `digits` decimals (milliseconds are kept to 0.1 ms, ratios to 0.001). */
export function round(value: number, digits = 1): number {
  const f = 10 ** digits;
  return Math.round(value * f) / f;
}

export const seconds = (ms: number): string => `${(ms / 1000).toFixed(2)} s`;

/** A goal as recorded in the JSON: what was measured against what target. */
export interface Goal {
  description: string;
  value: number | null;
  target: number;
  met: boolean | null;
}

export function goal(description: string, value: number | null, target: number): Goal {
  return {
    description,
    value: value === null || !Number.isFinite(value) ? null : value,
    target,
    met: value === null || !Number.isFinite(value) ? null : value <= target,
  };
}

export function goalText(g: Goal): string {
  if (g.met === null) return `n/a (${g.description})`;
  return `${g.met ? 'goal met' : 'goal MISSED'}: ${g.value} <= ${g.target} (${g.description})`;
}

export function hostInfo(): Record<string, string | number> {
  const cpus = os.cpus();
  return {
    cpus: cpus.length,
    cpuModel: cpus[0]?.model ?? 'unknown',
    memoryGiB: round(os.totalmem() / 1024 ** 3, 1),
    os: `${os.type()} ${os.release()}`,
    node: process.version,
    /** Other load on the machine skews timings; recorded so a reader can judge. */
    loadAverage1m: round(os.loadavg()[0], 2),
  };
}

/** JSON that puts any value whose one-line form is short enough on one line: diffable and compact. */
export function stringifyCompact(value: unknown, indent = '', width = 200): string {
  const inline = JSON.stringify(value);
  if (inline === undefined) return 'null';
  if (inline.length + indent.length <= width || value === null || typeof value !== 'object') return inline;
  const inner = `${indent}  `;
  if (Array.isArray(value)) {
    return `[\n${value.map((v) => `${inner}${stringifyCompact(v, inner, width)}`).join(',\n')}\n${indent}]`;
  }
  const entries = Object.entries(value as Record<string, unknown>).filter(([, v]) => v !== undefined);
  return `{\n${entries.map(([k, v]) => `${inner}${JSON.stringify(k)}: ${stringifyCompact(v, inner, width)}`).join(',\n')}\n${indent}}`;
}

/** Writes one result file (compact JSON, small enough to commit; strings as they are) and returns its path. */
export function writeResult(outDir: string, name: string, data: unknown): string {
  fs.mkdirSync(outDir, { recursive: true });
  const file = path.join(outDir, name);
  fs.writeFileSync(file, typeof data === 'string' ? data : `${stringifyCompact(data)}\n`);
  return file;
}

/** A plain-text table: a header row, a rule, then the rows; numbers are right-aligned. */
export function formatTable(header: string[], rows: Array<Array<string | number>>): string[] {
  const cells = [header, ...rows.map((r) => r.map((c) => String(c)))];
  const widths = header.map((_, i) => Math.max(...cells.map((r) => (r[i] ?? '').length)));
  const numeric = header.map((_, i) => rows.length > 0 && rows.every((r) => typeof r[i] === 'number'));
  const line = (r: string[]) =>
    r
      .map((c, i) => (numeric[i] ? (c ?? '').padStart(widths[i]) : (c ?? '').padEnd(widths[i])))
      .join('  ')
      .trimEnd();
  return [line(cells[0]), widths.map((w) => '-'.repeat(w)).join('  '), ...cells.slice(1).map(line)];
}

/** Key/value lines, keys padded to one width. */
export function formatPairs(pairs: Array<[string, string | number]>): string[] {
  const width = Math.max(...pairs.map(([k]) => k.length));
  return pairs.map(([k, v]) => `${k.padEnd(width)}  ${v}`);
}

export interface BenchIO {
  /** Tables and the final figures (stdout). */
  out(line: string): void;
  /** Progress (stderr). */
  progress(line: string): void;
}

/** Progress lines stamped with the time since the part started. */
export function progressLogger(io: BenchIO, part: string): (message: string) => void {
  const started = Date.now();
  return (message) =>
    io.progress(`[bench ${part} +${((Date.now() - started) / 1000).toFixed(1)}s] ${message}`);
}

/** Runs `work` over `items` with at most `limit` in flight; results keep the items' order. */
export async function mapPool<T, R>(
  items: T[],
  limit: number,
  work: (item: T, index: number) => Promise<R>,
): Promise<R[]> {
  const results = new Array<R>(items.length);
  let next = 0;
  const lanes = Array.from({ length: Math.max(1, Math.min(limit, items.length)) }, async () => {
    while (next < items.length) {
      const index = next++;
      results[index] = await work(items[index], index);
    }
  });
  await Promise.all(lanes);
  return results;
}

/** Resolves with `promise`, or rejects after `ms` with a message naming what timed out. */
export async function withTimeout<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([
      promise,
      new Promise<never>((_, reject) => {
        timer = setTimeout(
          () => reject(new Error(`${what} did not finish within ${Math.round(ms / 1000)} s`)),
          ms,
        );
      }),
    ]);
  } finally {
    clearTimeout(timer);
  }
}
