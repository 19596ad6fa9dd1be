/**
 * New embedded databases start from a cluster kept in the user's cache folder: the first new one
 * leaves it there, later ones unpack it instead of initialising a cluster of their own. The file is
 * only a cache, and one another user could have written is never loaded.
 */
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { clusterTemplate } from '../../../src/memory/cluster-template';
import { openPglitePool, type PglitePool } from '../../../src/memory/pglite-pool';

const cacheBefore = process.env.XDG_CACHE_HOME;
let root: string;
let cacheHome: string;
const open: PglitePool[] = [];
let planted: Uint8Array;

beforeAll(() => {
  planted = plantedCluster();
});

beforeEach(() => {
  root = fs.mkdtempSync(path.join(os.tmpdir(), 'aca-cluster-template-'));
  cacheHome = path.join(root, 'cache');
  process.env.XDG_CACHE_HOME = cacheHome;
});

afterEach(async () => {
  for (const db of open.splice(0)) {
    await db.pool.end();
    await db.close();
  }
  if (cacheBefore === undefined) delete process.env.XDG_CACHE_HOME;
  else process.env.XDG_CACHE_HOME = cacheBefore;
  fs.rmSync(root, { recursive: true, force: true });
});

async function openNew(name: string): Promise<PglitePool> {
  const db = await openPglitePool(path.join(root, name));
  open.push(db);
  return db;
}

async function tables(db: PglitePool): Promise<string[]> {
  const { rows } = await db.pool.query<{ name: string }>(
    "select table_name as name from information_schema.tables where table_schema = 'public' order by 1",
  );
  return rows.map((r) => r.name);
}

/**
 * The dump of a cluster holding a table `planted`, made by PGlite itself in a process of its own
 * (PGlite does not load inside Jest's module system).
 */
function plantedCluster(): Uint8Array {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'aca-planted-cluster-'));
  const out = path.join(dir, 'planted.tar.gz');
  const script = `
    const { PGlite } = require(${JSON.stringify(require.resolve('@electric-sql/pglite'))});
    (async () => {
      const pg = await PGlite.create(${JSON.stringify(path.join(dir, 'cluster'))});
      await pg.query('create table planted (x int)');
      const dump = await pg.dumpDataDir('gzip');
      require('node:fs').writeFileSync(${JSON.stringify(out)}, Buffer.from(await dump.arrayBuffer()));
      await pg.close();
    })();`;
  const made = spawnSync(process.execPath, ['-e', script], { encoding: 'utf8' });
  try {
    if (made.status !== 0) throw new Error(`could not make the planted cluster: ${made.stderr}`);
    return fs.readFileSync(out);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

/** Writes `bytes` where the cache keeps this PGlite version's template, with `mode`. */
function keepAsTemplate(bytes: Uint8Array, mode: number): string {
  const { file } = clusterTemplate(cacheHome);
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, bytes);
  fs.chmodSync(file, mode);
  return file;
}

describe('the kept cluster new embedded databases start from', () => {
  test('the first new database keeps one; a later one starts from it, with nothing of the first', async () => {
    const template = clusterTemplate(cacheHome);
    expect(fs.existsSync(template.file)).toBe(false);
    const first = await openNew('first');
    await first.pool.query('create table first_only (x int)');
    expect(fs.statSync(template.file).size).toBeGreaterThan(0);
    expect(fs.statSync(template.file).mode & 0o077).toBe(0);
    const kept = fs.readFileSync(template.file);

    const second = await openNew('second');
    // Taken before anything was made in the first: nothing of it reaches the second.
    expect(await tables(second)).toEqual([]);
    await second.pool.query('create table t (x int)');
    expect(await tables(second)).toEqual(['t']);
    // Starting from the template leaves it as it was.
    expect(fs.readFileSync(template.file).equals(kept)).toBe(true);
  }, 60_000);

  test('a database that exists is opened as it is, without reading the template', async () => {
    keepAsTemplate(planted, 0o600);
    const existing = await openNew('existing');
    await existing.pool.query('create table mine (x int)');
    await existing.pool.end();
    await existing.close();
    open.splice(open.indexOf(existing), 1);
    const file = keepAsTemplate(Buffer.from('not a cluster'), 0o600);
    const reopened = await openNew('existing');
    expect(await tables(reopened)).toEqual(['mine', 'planted']);
    // Never read, so never found wanting.
    expect(fs.readFileSync(file, 'utf8')).toBe('not a cluster');
  }, 60_000);

  test('a new database unpacks the template this user keeps', async () => {
    keepAsTemplate(planted, 0o600);
    expect(await tables(await openNew('from-template'))).toEqual(['planted']);
  }, 120_000);

  test('a template others may write, or a link, is never read', () => {
    const bytes = Buffer.from('a cluster');
    const template = clusterTemplate(cacheHome);
    const file = keepAsTemplate(bytes, 0o600);
    expect(template.read()).toEqual(bytes);
    fs.chmodSync(file, 0o620);
    expect(template.read()).toBeNull();
    fs.chmodSync(file, 0o602);
    expect(template.read()).toBeNull();
    const elsewhere = path.join(root, 'linked-template');
    fs.writeFileSync(elsewhere, bytes, { mode: 0o600 });
    fs.rmSync(file);
    fs.symlinkSync(elsewhere, file);
    expect(template.read()).toBeNull();
    // Writing replaces the link itself; the file it pointed at is untouched.
    template.write(Buffer.from('a new cluster'));
    expect(fs.lstatSync(file).isFile()).toBe(true);
    expect(fs.readFileSync(elsewhere)).toEqual(bytes);
    fs.rmSync(file);
    fs.mkdirSync(file);
    expect(template.read()).toBeNull();
  });

  test('a template that does not load is dropped; the database is made without it', async () => {
    const template = clusterTemplate(cacheHome);
    fs.mkdirSync(path.dirname(template.file), { recursive: true });
    fs.writeFileSync(template.file, 'not a cluster', { mode: 0o600 });
    const db = await openNew('despite-garbage');
    await db.pool.query('create table t (x int)');
    expect(await tables(db)).toEqual(['t']);
    expect(fs.existsSync(template.file)).toBe(false);
    // The next new database keeps a good one again.
    await openNew('after-garbage');
    expect(fs.statSync(template.file).size).toBeGreaterThan(1000);
  }, 60_000);
});
