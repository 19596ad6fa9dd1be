import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

const created: string[] = [];

/** A throwaway workspace with the given files, removed by `removeWorkspaces`. */
export function makeWorkspace(files: Record<string, string>): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'aca-sandbox-test-'));
  for (const [name, text] of Object.entries(files)) {
    const file = path.join(dir, name);
    fs.mkdirSync(path.dirname(file), { recursive: true });
    fs.writeFileSync(file, text);
  }
  created.push(dir);
  return dir;
}

export function removeWorkspaces(): void {
  for (const dir of created.splice(0)) fs.rmSync(dir, { recursive: true, force: true });
}

/** Owner and mode of every entry, to prove a run left the workspace as it found it. */
export function snapshotOwners(dir: string): Record<string, string> {
  const out: Record<string, string> = {};
  const walk = (p: string): void => {
    const st = fs.lstatSync(p);
    out[path.relative(dir, p) || '.'] = `${st.uid}:${st.gid}:${(st.mode & 0o7777).toString(8)}`;
    if (st.isDirectory()) for (const name of fs.readdirSync(p)) walk(path.join(p, name));
  };
  walk(dir);
  return out;
}
