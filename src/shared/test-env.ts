/**
 * Environment variables a repository's tests need (`aca eval --specs`: a repository's `env`), given
 * to its setup command and test runs in the sandbox. The values are the user's text, passed as they
 * are (never expanded on the host, so they cannot carry the worker's own variables in). What they
 * may not do is change how the sandbox or aca's runners work: the names those set or read are
 * refused, and `PYTHONPATH` may only name folders inside the repository (a folder outside it would
 * be the host's, or one the code under test could plant a module in before aca's plugin loads).
 */
export type TestEnv = Record<string, string>;

/** Names the sandbox's runners set themselves, or that would load code into every process. */
const RESERVED_NAMES = new Set([
  'PATH',
  'HOME',
  'TMPDIR',
  'TMP',
  'TEMP',
  'USER',
  'LOGNAME',
  'SHELL',
  'IFS',
  'ENV',
  'BASH_ENV',
  'PS4',
  'CI',
  'LANG',
  'LC_ALL',
  'NO_COLOR',
  'FORCE_COLOR',
  'VIRTUAL_ENV',
  'GCONV_PATH',
  'GLIBC_TUNABLES',
  'HOSTALIASES',
  'LOCALDOMAIN',
  'RESOLV_HOST_CONF',
]);

/** Prefixes of reserved families: the dynamic loader's, aca's own, node's and pytest's switches. */
const RESERVED_PREFIXES = ['LD_', 'ACA_', 'NODE_', 'PYTEST_', 'MALLOC_', 'GIT_', 'NPM_', 'JEST_'];

const NAME = /^[A-Za-z_][A-Za-z0-9_]{0,127}$/;
const MAX_VALUE_CHARS = 4096;

/** Why `name` may not be set for a repository's tests, or null when it may. */
export function reservedTestEnvName(name: string): string | null {
  if (!NAME.test(name)) return `${JSON.stringify(name)} is not a variable name`;
  const upper = name.toUpperCase();
  if (RESERVED_NAMES.has(upper)) return `${name} is set by aca's sandbox`;
  if (RESERVED_PREFIXES.some((prefix) => upper.startsWith(prefix)))
    return `${name} is reserved (aca's sandbox and runners set or read the ${upper.split('_')[0]}_ variables)`;
  // PYTHONPATH is the one Python variable a layout needs; the others change how the interpreter
  // starts (PYTHONSTARTUP, PYTHONHOME, PYTHONINSPECT…).
  if (upper.startsWith('PYTHON') && name !== 'PYTHONPATH')
    return `${name} is reserved (only PYTHONPATH of Python's)`;
  return null;
}

/** The first problem with a repository's `env`, or null. */
export function testEnvProblem(env: TestEnv): string | null {
  for (const [name, value] of Object.entries(env)) {
    const reserved = reservedTestEnvName(name);
    if (reserved) return reserved;
    if (typeof value !== 'string') return `${name} is not a string`;
    if (value.includes('\0')) return `${name} holds a NUL character`;
    if (value.length > MAX_VALUE_CHARS) return `${name} is longer than ${MAX_VALUE_CHARS} characters`;
    if (name === 'PYTHONPATH') {
      const outside = value.split(':').find((entry) => entry !== '' && !isInsideRepository(entry));
      if (outside !== undefined)
        return `PYTHONPATH entry ${JSON.stringify(outside)} is not a folder inside the repository (relative, without ..)`;
    }
  }
  return null;
}

/** PYTHONPATH's folders, relative to the repository's top, in order (empty entries dropped). */
export function pythonPathFolders(env: TestEnv | undefined): string[] {
  const value = env?.PYTHONPATH;
  if (!value) return [];
  return value
    .split(':')
    .filter((entry) => entry !== '' && isInsideRepository(entry))
    .map((entry) => entry.replace(/\/+$/, '').replace(/^(\.\/)+/, '') || '.');
}

function isInsideRepository(entry: string): boolean {
  if (entry.startsWith('/') || entry.startsWith('~')) return false;
  return !entry.split('/').some((part) => part === '..');
}
