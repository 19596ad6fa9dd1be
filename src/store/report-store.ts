import { createHash } from 'node:crypto';
import { JsonFiles } from './json-files';
import type { TestRunReport } from '../shared/types';

/**
 * Where full test reports are kept. Like conversations they stay out of workflow history: the
 * workflow holds only a report's reference. Files under the worker's ACA_HOME
 * (FileReportStore), or Postgres when DATABASE_URL is set, so that workers on other hosts see
 * them too (PgReportStore in src/store/run-store-repository.ts).
 */
export interface ReportStore {
  /** Creates or replaces the report under `ref` (a retried test run saves again). */
  saveReport(ref: string, report: TestRunReport): Promise<void>;
  /** The report under `ref`, or null when none is stored there. */
  loadReport(ref: string): Promise<TestRunReport | null>;
  /** Creates or replaces an agent command's output under `ref` (a retried call saves again). */
  saveCommandOutput(ref: string, output: CommandOutput): Promise<void>;
  /** The command output under `ref`, or null when none is stored there. */
  loadCommandOutput(ref: string): Promise<CommandOutput | null>;
}

/**
 * What an agent's command (run_command) wrote, kept beside the test reports: each stream whole up
 * to the sandbox's stored cap (its head and tail beyond that), where the answer the model got
 * shows far less.
 */
export interface CommandOutput {
  kind: 'command-output';
  command: string;
  exitCode: number | null;
  exitSignal: string | null;
  durationMs: number;
  timedOut: boolean;
  stdout: string;
  stderr: string;
  /** Only what the answer showed of each stream: the turn had stored enough whole outputs. */
  asAnswered?: true;
}

/**
 * The reference of a tool call's command output: under its conversation's reference, with the
 * call id reduced to the characters a reference may hold (a short hash of the id keeps two ids
 * that reduce alike apart).
 */
export function commandOutputRef(conversationRef: string, toolCallId: string): string {
  const safe = toolCallId
    .replace(/[^A-Za-z0-9._-]/g, '_')
    .replace(/^\.+/, '_')
    .slice(0, 100);
  return `${conversationRef}/commands/${safe}-${createHash('sha256').update(toolCallId).digest('hex').slice(0, 8)}`;
}

/** The reference of a run's full test report of one attempt (0: the baseline). */
export function reportRef(runKey: string, attempt: number): string {
  return `${runKey}/reports/attempt-${attempt}`;
}

/** Keeps each report as one JSON file under `root`, replaced atomically on every save. */
export class FileReportStore implements ReportStore {
  private readonly files: JsonFiles;

  constructor(readonly root: string) {
    this.files = new JsonFiles(root, 'report');
  }

  saveReport(ref: string, report: TestRunReport): Promise<void> {
    return this.files.put(ref, JSON.stringify(report));
  }

  async loadReport(ref: string): Promise<TestRunReport | null> {
    const body = await this.files.get(ref);
    return body === null ? null : (JSON.parse(body) as TestRunReport);
  }

  saveCommandOutput(ref: string, output: CommandOutput): Promise<void> {
    return this.files.put(ref, JSON.stringify(output));
  }

  async loadCommandOutput(ref: string): Promise<CommandOutput | null> {
    return commandOutputOf(await this.files.get(ref));
  }
}

/** A stored body as command output; null for none, or for a test report stored under the reference. */
export function commandOutputOf(body: string | null): CommandOutput | null {
  if (body === null) return null;
  const value = JSON.parse(body) as Partial<CommandOutput>;
  return value.kind === 'command-output' ? (value as CommandOutput) : null;
}
