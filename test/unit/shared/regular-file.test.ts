/**
 * readRegularFile: a path that something untrusted may have replaced is read without blocking,
 * without following a link there (unless asked), as a regular file only, and never past a bound.
 */
import { execFileSync, spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { IrregularFileError, readRegularFile } from '../../../src/shared/regular-file';
import { tempDirs } from '../../helpers/temp-dirs';

const tempDir = tempDirs('aca-regular-file-');

function refusal(run: () => unknown): IrregularFileError {
  try {
    run();
  } catch (err) {
    if (err instanceof IrregularFileError) return err;
    throw err;
  }
  throw new Error('read without refusing');
}

test('a regular file comes back whole; nothing there is null', () => {
  const dir = tempDir();
  fs.writeFileSync(path.join(dir, 'f'), 'gitdir: /x\n');
  expect(readRegularFile(path.join(dir, 'f'), { maxBytes: 64 })?.toString()).toBe('gitdir: /x\n');
  fs.writeFileSync(path.join(dir, 'empty'), '');
  expect(readRegularFile(path.join(dir, 'empty'), { maxBytes: 64 })?.length).toBe(0);
  expect(readRegularFile(path.join(dir, 'missing'), { maxBytes: 64 })).toBeNull();
  expect(readRegularFile(path.join(dir, 'f', 'below-a-file'), { maxBytes: 64 })).toBeNull();
});

test('a FIFO is refused at once, never waiting for a writer', () => {
  const dir = tempDir();
  const fifo = path.join(dir, 'fifo');
  execFileSync('mkfifo', [fifo]);
  // Should the read block, this writer ends it (with a line a read would return), so the suite
  // fails instead of hanging.
  const writer = spawn('sh', ['-c', `sleep 5; echo unblocked > '${fifo}'`], { stdio: 'ignore' });
  try {
    expect(refusal(() => readRegularFile(fifo, { maxBytes: 64 })).kind).toBe('fifo');
    expect(refusal(() => readRegularFile(fifo, { maxBytes: 64, followLinks: true })).kind).toBe('fifo');
  } finally {
    writer.kill('SIGKILL');
  }
});

test('a link is refused unless links are followed; then what it names is judged', () => {
  const dir = tempDir();
  fs.writeFileSync(path.join(dir, 'target'), 'content');
  fs.symlinkSync(path.join(dir, 'target'), path.join(dir, 'link'));
  fs.symlinkSync('/dev/zero', path.join(dir, 'zero'));
  expect(refusal(() => readRegularFile(path.join(dir, 'link'), { maxBytes: 64 })).kind).toBe('symbolic link');
  expect(readRegularFile(path.join(dir, 'link'), { maxBytes: 64, followLinks: true })?.toString()).toBe(
    'content',
  );
  expect(refusal(() => readRegularFile(path.join(dir, 'zero'), { maxBytes: 64 })).kind).toBe('symbolic link');
  expect(
    refusal(() => readRegularFile(path.join(dir, 'zero'), { maxBytes: 64, followLinks: true })).kind,
  ).toBe('character device');
  expect(refusal(() => readRegularFile('/dev/zero', { maxBytes: 64 })).kind).toBe('character device');
});

test('a folder and a unix socket are refused', async () => {
  const dir = tempDir();
  expect(refusal(() => readRegularFile(dir, { maxBytes: 64 })).kind).toBe('directory');
  const { createServer } = await import('node:net');
  const server = createServer();
  const socket = path.join(dir, 's');
  await new Promise<void>((resolve) => server.listen(socket, resolve));
  try {
    expect(refusal(() => readRegularFile(socket, { maxBytes: 64 })).kind).toBe('socket');
  } finally {
    server.close();
  }
});

test('a file over the bound is refused without being read, a huge sparse one too', () => {
  const dir = tempDir();
  fs.writeFileSync(path.join(dir, 'big'), 'x'.repeat(65));
  fs.writeFileSync(path.join(dir, 'fits'), 'x'.repeat(64));
  const err = refusal(() => readRegularFile(path.join(dir, 'big'), { maxBytes: 64 }));
  expect(err).toMatchObject({ kind: 'too large', maxBytes: 64, file: path.join(dir, 'big') });
  expect(err.message).toContain('larger than 64 bytes');
  expect(readRegularFile(path.join(dir, 'fits'), { maxBytes: 64 })?.length).toBe(64);
  const sparse = path.join(dir, 'sparse');
  fs.closeSync(fs.openSync(sparse, 'w'));
  fs.truncateSync(sparse, 3 * 1024 ** 3);
  expect(refusal(() => readRegularFile(sparse, { maxBytes: 64 * 1024 })).kind).toBe('too large');
});
