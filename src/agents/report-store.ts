import { randomBytes } from 'node:crypto';
import * as fs from 'node:fs/promises';
import * as path from 'node:path';
import { checkRunRef } from '../shared/run-ref';
import type { TestRunReport } from '../shared/types';

/**
 * Where full test reports are kept. Like conversations they stay out of workflow history: the
 * workflow holds only a report's reference. Files under the worker's ACA_HOME
 * (FileReportStore), or Postgres when DATABASE_URL is set, so that workers on other hosts see
 * them too (PgReportStore in src/memory/run-store-repository.ts).
 */
export interface ReportStore {
  /** Creates or replaces the report under `ref` (a retried test run saves again). */
  saveReport(ref: string, report: TestRunReport): Promise<void>;
  /** The report under `ref`, or null when none is stored there. */
  loadReport(ref: string): Promise<TestRunReport | null>;
}

/** The reference of a run's full test report of one attempt (0: the baseline). */
export function reportRef(runKey: string, attempt: number): string {
  return `${runKey}/reports/attempt-${attempt}`;
}

/** Keeps each report as one JSON file under `root`, replaced atomically on every save. */
export class FileReportStore implements ReportStore {
  constructor(readonly root: string) {}

  private reportFile(ref: string): string {
    return path.join(this.root, `${checkRunRef(ref, 'report')}.json`);
  }

  async saveReport(ref: string, report: TestRunReport): Promise<void> {
    const file = this.reportFile(ref);
    await fs.mkdir(path.dirname(file), { recursive: true });
    // A fresh name created exclusively: nothing planted there in advance is written through.
    const temporary = `${file}.${randomBytes(8).toString('hex')}.tmp`;
    await fs.writeFile(temporary, JSON.stringify(report), { encoding: 'utf8', flag: 'wx' });
    await fs.rename(temporary, file);
  }

  async loadReport(ref: string): Promise<TestRunReport | null> {
    try {
      return JSON.parse(await fs.readFile(this.reportFile(ref), 'utf8')) as TestRunReport;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
      throw err;
    }
  }
}
