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
}
