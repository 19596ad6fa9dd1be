import * as fs from 'node:fs';
import * as path from 'node:path';

/**
 * The Temporal server `aca up`, `aca demo` (or `aca run`'s local stack) last started for an
 * ACA_HOME, and its Web UI: later commands of that home without TEMPORAL_ADDRESS go to that
 * server, and print links to that UI, whatever ports it was given.
 */
export interface LocalStackRecord {
  address: string;
  uiUrl: string;
}

export function localStackRecordFile(home: string): string {
  return path.join(home, 'temporal', 'local-stack.json');
}

/** The record of `home`, or null when there is none or it is not one (it is then ignored). */
export function readLocalStackRecord(home: string): LocalStackRecord | null {
  let parsed: unknown;
  try {
    parsed = JSON.parse(fs.readFileSync(localStackRecordFile(home), 'utf8'));
  } catch {
    return null;
  }
  if (typeof parsed !== 'object' || parsed === null) return null;
  const { address, uiUrl } = parsed as Record<string, unknown>;
  if (typeof address !== 'string' || !/^[^\s/]+:\d{1,5}$/.test(address)) return null;
  if (typeof uiUrl !== 'string' || !/^https?:\/\/[^\s]+$/.test(uiUrl)) return null;
  return { address, uiUrl: uiUrl.replace(/\/$/, '') };
}

export function writeLocalStackRecord(home: string, record: LocalStackRecord): void {
  const file = localStackRecordFile(home);
  fs.mkdirSync(path.dirname(file), { recursive: true });
  const temporary = `${file}.${process.pid}.tmp`;
  fs.writeFileSync(temporary, `${JSON.stringify(record, null, 2)}\n`);
  fs.renameSync(temporary, file);
}
