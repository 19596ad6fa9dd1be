import { randomBytes } from 'node:crypto';
import * as fs from 'node:fs/promises';
import * as path from 'node:path';
import type { TestRunReport } from '../shared/types';

/**
 * Where a run keeps what must not go into workflow history: conversations and
 * full test reports. On several hosts this folder must be shared, like the workspace.
 */
export class RunFiles {
  constructor(readonly root: string) {}

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
