/**
 * `aca memory search "<text>"`: the stored failures closest to the text, as a table for people
 * or a JSON array for scripts.
 *
 * With the embedded database the worker usually holds the data folder (one process at a time);
 * then this command reads a snapshot copy instead of failing, and says so in the table view.
 */
import { loadConfig } from '../config';
import type { FailureMemory, PastFailure } from '../memory/failure-repository';
import { MemoryUnavailableError } from '../memory/memory-errors';
import { embeddedDataDir, openFailureMemory } from '../memory/open-memory';
import { clipEnd, oneLine } from '../memory/bound-text';
import { jsonForTerminal, printableLine } from '../shared/terminal-text';
import { EXIT, UnreachableError } from './cli-context';

export interface MemorySearchOptions {
  json: boolean;
  out: (line: string) => void;
  /** Where memory lives; read from the environment when absent. */
  config?: { databaseUrl: string | null; home: string };
  /** An already open memory (tests, or a caller that holds one); it is not closed here. */
  memory?: FailureMemory;
  /** Rows at most (default 10). */
  limit?: number;
}

export async function memorySearchCommand(text: string, opts: MemorySearchOptions): Promise<number> {
  const memory = opts.memory ?? (await open(opts.config ?? loadConfig()));
  try {
    const results = await memory.search(text, opts.limit ?? 10);
    if (opts.json) {
      opts.out(jsonForTerminal(results, 2));
    } else {
      printTable(results, memory.description, opts.out);
    }
    return EXIT.success;
  } catch (err) {
    throw asCliError(err);
  } finally {
    if (!opts.memory) await memory.close();
  }
}

async function open(config: { databaseUrl: string | null; home: string }): Promise<FailureMemory> {
  try {
    return await openFailureMemory(
      config.databaseUrl
        ? { databaseUrl: config.databaseUrl }
        : { dataDir: embeddedDataDir(config.home), ifLocked: 'snapshot' },
    );
  } catch (err) {
    throw asCliError(err);
  }
}

/** An unreachable database is exit code 3, like an unreachable Temporal. */
function asCliError(err: unknown): unknown {
  return err instanceof MemoryUnavailableError ? new UnreachableError(err.message) : err;
}

const COLUMNS = [
  { title: 'SCORE', width: 5 },
  { title: 'WHEN', width: 10 },
  { title: 'STATUS', width: 7 },
  { title: 'RUN/ITER', width: 24 },
  { title: 'TASK', width: 32 },
  { title: 'ROOT CAUSE', width: 40 },
  { title: 'FIXED BY', width: 32 },
] as const;

function printTable(results: PastFailure[], source: string, out: (line: string) => void): void {
  if (results.length === 0) {
    out(printableLine(`No similar past failures in ${source}.`));
    return;
  }
  const row = (cells: string[]) =>
    cells
      .map((cell, i) => clipEnd(printableLine(oneLine(cell)), COLUMNS[i]!.width).padEnd(COLUMNS[i]!.width))
      .join('  ')
      .trimEnd();
  out(row(COLUMNS.map((c) => c.title)));
  for (const r of results) {
    out(
      row([
        r.score.toFixed(2),
        r.createdAt.slice(0, 10),
        r.status,
        `${r.workflowId}#${r.iteration}`,
        r.task,
        r.rootCause,
        r.fix ?? '-',
      ]),
    );
  }
  out(
    printableLine(
      `${results.length} result${results.length === 1 ? '' : 's'} from ${source}; --json for full text.`,
    ),
  );
}
