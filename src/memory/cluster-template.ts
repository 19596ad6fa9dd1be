/**
 * A freshly initialised PGlite cluster, kept once per PGlite version in the user's cache folder,
 * that a new embedded database starts from. Initialising a cluster (initdb, compiled to
 * WebAssembly) costs about four seconds of CPU; unpacking the kept one costs about one. Every new
 * `ACA_HOME` pays the first on its first start without it: a first `aca demo`, a worker with a
 * home of its own, each test's workers.
 *
 * The file holds nothing of any run: it is taken before failure memory's schema is made, so the
 * migrations still run on every new database. It is a cache: one that cannot be read is ignored,
 * one that does not load is removed, and the next new database writes it again.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { randomBytes } from 'node:crypto';
import { readRegularFile } from '../shared/regular-file';

/** Far above a real template (about 5 MB compressed): anything larger is not one. */
const MAX_TEMPLATE_BYTES = 64 * 1024 * 1024;

export interface ClusterTemplate {
  /** Where it is kept. */
  file: string;
  /** The kept cluster, or null when there is none this process can trust. */
  read(): Buffer | null;
  /** Keeps `bytes` (a dump of a fresh cluster) for the next new database. Never throws. */
  write(bytes: Uint8Array): void;
  /** Forgets a template that did not load. Never throws. */
  remove(): void;
}

/** The version of the PGlite package this build runs, which the cluster's format belongs to. */
export function pgliteVersion(): string {
  const entry = require.resolve('@electric-sql/pglite');
  const manifest = path.join(path.dirname(entry), '..', 'package.json');
  const { version } = JSON.parse(fs.readFileSync(manifest, 'utf8')) as { version?: unknown };
  if (typeof version !== 'string' || !/^[0-9A-Za-z.+-]+$/.test(version))
    throw new Error(`no usable version in ${manifest}`);
  return version;
}

/** The template under `cacheHome` (XDG_CACHE_HOME or ~/.cache) for this PGlite version. */
export function clusterTemplate(cacheHome: string, version: string = pgliteVersion()): ClusterTemplate {
  const dir = path.join(cacheHome, 'aca', 'pglite');
  const file = path.join(dir, `cluster-${version}.tar.gz`);
  return {
    file,
    read: () => readOwnFile(file),
    write(bytes) {
      const partial = `${file}.${process.pid}.${randomBytes(4).toString('hex')}`;
      try {
        fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
        // 'wx': a file planted at the temporary name is not written through; the rename then
        // replaces whatever is at `file` (a link included) rather than following it.
        fs.writeFileSync(partial, bytes, { flag: 'wx', mode: 0o600 });
        fs.renameSync(partial, file);
      } catch {
        fs.rmSync(partial, { force: true });
      }
    },
    remove() {
      fs.rmSync(file, { force: true });
    },
  };
}

/**
 * The kept cluster if it is a regular file (not a link) of this user's that nobody else may write,
 * checked on the open descriptor; otherwise null. An empty file is no cluster either.
 */
function readOwnFile(file: string): Buffer | null {
  try {
    const bytes = readRegularFile(file, { maxBytes: MAX_TEMPLATE_BYTES, privateOnly: true });
    return bytes && bytes.length > 0 ? bytes : null;
  } catch {
    return null;
  }
}
