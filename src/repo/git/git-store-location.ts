/**
 * Where the git store is (ACA_GIT_STORE): a folder on this machine (or one every worker mounts),
 * or a git URL. Parsed once, in config.ts; everything that names the store in a message or a log
 * uses `display`, which never carries a password or token.
 */
import * as path from 'node:path';
import { UserInputError } from '../../shared/errors';

export type GitStoreScheme = 'file' | 'ssh' | 'https' | 'http' | 'git';

export interface GitStoreLocation {
  /** What git is given: an absolute path, or the URL as configured (credentials and all). */
  url: string;
  /** The protocol git needs to reach it ('file' for a path). */
  scheme: GitStoreScheme;
  /** The store as messages may show it: credentials removed. */
  display: string;
  /** The default bare repository under ACA_HOME, which a worker creates on first use. */
  isDefault: boolean;
  /** For an ssh store: the worker's ssh agent (SSH_AUTH_SOCK), which ssh may ask for keys. */
  sshAgentSocket?: string;
}

/** ACA_GIT_STORE names no store aca can use; `given` has its credentials removed. */
export class GitStoreLocationError extends UserInputError {
  readonly given: string;

  constructor(
    value: string,
    readonly problem: string,
  ) {
    const given = redactUrl(value);
    super(
      `ACA_GIT_STORE must be a path or a git URL (file://, ssh://, https://, http://, git://, or user@host:path), ` +
        `got "${given}": ${problem}`,
    );
    this.given = given;
  }
}

const SCHEMES: readonly GitStoreScheme[] = ['file', 'ssh', 'https', 'http', 'git'];

/** The default store: a bare repository under ACA_HOME, so one host needs nothing configured. */
export function defaultGitStorePath(home: string): string {
  return path.join(home, 'store.git');
}

/**
 * Reads ACA_GIT_STORE: an `scheme://` URL of a scheme git can push to without running anything
 * of the URL's choosing (no `ext::`, no remote helpers), scp-like ssh (`user@host:path`), or
 * a path. Unset or empty: the default under `home`.
 */
export function parseGitStoreLocation(text: string | undefined, home: string): GitStoreLocation {
  const value = (text ?? '').trim();
  if (value === '') {
    const store = defaultGitStorePath(home);
    return { url: store, scheme: 'file', display: store, isDefault: true };
  }
  if (/[\0\n\r\s]/.test(value))
    throw new GitStoreLocationError(value, 'it holds spaces or control characters');
  // `<helper>::<address>` makes git run git-remote-<helper>: never a store.
  if (value.includes('::')) throw new GitStoreLocationError(value, 'remote helpers (`::`) are not accepted');
  const scheme = /^([A-Za-z][A-Za-z0-9+.-]*):\/\//.exec(value)?.[1]?.toLowerCase();
  if (scheme !== undefined) return parseUrl(value, scheme);
  const scp = /^(?:[A-Za-z0-9._~-]+@)?([A-Za-z0-9][A-Za-z0-9.-]*|\[[0-9A-Fa-f:.]+\]):(.*)$/.exec(value);
  // git reads `host:path` as ssh when the colon comes before any slash (as it does here).
  if (scp) {
    if (scp[2] === '') throw new GitStoreLocationError(value, 'the ssh address has no path');
    return { url: value, scheme: 'ssh', display: value, isDefault: false };
  }
  if (value.startsWith('-')) throw new GitStoreLocationError(value, 'a path may not start with "-"');
  const store = path.resolve(value);
  return { url: store, scheme: 'file', display: store, isDefault: false };
}

function parseUrl(value: string, scheme: string): GitStoreLocation {
  if (!(SCHEMES as readonly string[]).includes(scheme)) {
    throw new GitStoreLocationError(
      value,
      `the scheme "${scheme}" is not one of ${SCHEMES.map((s) => `${s}://`).join(', ')}`,
    );
  }
  let parsed: URL;
  try {
    parsed = new URL(value);
  } catch {
    throw new GitStoreLocationError(value, 'it is not a valid URL');
  }
  if (scheme === 'file') {
    if (parsed.host !== '' && parsed.host !== 'localhost') {
      throw new GitStoreLocationError(value, 'a file:// URL must name a path on this machine');
    }
    const store = path.resolve(decodeURIComponent(parsed.pathname));
    return { url: store, scheme: 'file', display: store, isDefault: false };
  }
  // An option-like host would reach ssh as a flag (git refuses these too, as CVE-2017-1000117 taught).
  if (parsed.hostname === '' || parsed.hostname.startsWith('-')) {
    throw new GitStoreLocationError(value, 'it names no host');
  }
  if (parsed.pathname === '' || parsed.pathname === '/') {
    throw new GitStoreLocationError(value, 'it names no repository');
  }
  return { url: value, scheme: scheme as GitStoreScheme, display: redactUrl(value), isDefault: false };
}

/** The URL without its user information: `https://user:token@host/x` becomes `https://host/x`. */
export function redactUrl(text: string): string {
  return text.replace(/\b([A-Za-z][A-Za-z0-9+.-]*:\/\/)[^/@\s]*@/g, '$1');
}

/** Any text git printed, with the store's URL (and any other URL's credentials) taken out. */
export function redactStore(text: string, store: GitStoreLocation): string {
  return redactUrl(text.split(store.url).join(store.display));
}
