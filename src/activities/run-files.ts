import * as fs from 'node:fs/promises';
import * as path from 'node:path';
import type { TestRunReport } from '../shared/types';

/**
 * Where a run keeps what must not go into workflow history: conversations and
 * full test reports. On several hosts this folder must be shared, like the workspace.
 */
export class RunFiles {
  constructor(readonly root: string) {}

  conversationsRoot(): string {
    return this.root;
  }

  reportRef(runKey: string, attempt: number): string {
    return `${runKey}/reports/attempt-${attempt}`;
  }

  private reportFile(ref: string): string {
    if (ref.split('/').includes('..')) throw new Error(`invalid report reference "${ref}"`);
    return path.join(this.root, `${ref}.json`);
  }

  async saveReport(ref: string, report: TestRunReport): Promise<void> {
    const file = this.reportFile(ref);
    await fs.mkdir(path.dirname(file), { recursive: true });
    await fs.writeFile(`${file}.tmp`, JSON.stringify(report), 'utf8');
    await fs.rename(`${file}.tmp`, file);
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
