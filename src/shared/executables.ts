import * as fs from 'node:fs';
import * as path from 'node:path';

/** Environment of the host-side tools: enough to find binaries, nothing secret. */
export const HOST_TOOL_ENV = { PATH: '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' };

/** A regular file this process may execute. */
export function isExecutable(file: string): boolean {
  try {
    if (!fs.statSync(file).isFile()) return false;
    fs.accessSync(file, fs.constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/** Finds an executable on a search path the way a shell would, without running one. */
export function findExecutable(name: string, searchPath: string): string | undefined {
  const file = process.platform === 'win32' ? `${name}.exe` : name;
  for (const dir of searchPath.split(path.delimiter)) {
    if (!dir) continue;
    const candidate = path.join(dir, file);
    if (isExecutable(candidate)) return candidate;
  }
  return undefined;
}
