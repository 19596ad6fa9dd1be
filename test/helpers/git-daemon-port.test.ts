/**
 * The tests' git daemon (test/helpers/git-daemon.ts) on a port someone takes between choosing and
 * binding: it chooses again, and a port the caller names is refused, not silently served by
 * whoever holds it.
 */
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import { getFreePort, PortInUseError } from '../../src/temporal/dev-server';
import { startGitDaemon, type GitDaemon } from './git-daemon';

describe('the git daemon of the tests and a taken port', () => {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'aca-daemon-port-'));
  const squatters: net.Server[] = [];
  let daemon: GitDaemon | null = null;
  beforeAll(() => execFileSync('git', ['init', '--quiet', '--bare', path.join(root, 'store.git')]));
  afterEach(async () => {
    await daemon?.stop();
    daemon = null;
  });
  afterAll(async () => {
    for (const squatter of squatters) await new Promise((resolve) => squatter.close(resolve));
    fs.rmSync(root, { recursive: true, force: true });
  });

  const occupied = async (): Promise<number> => {
    const port = await getFreePort();
    const squatter = net.createServer((socket) => socket.destroy());
    await new Promise<void>((resolve) => squatter.listen(port, '127.0.0.1', resolve));
    squatters.push(squatter);
    return port;
  };

  test('a port taken after it was chosen: another is chosen, and the daemon serves there', async () => {
    const taken = await occupied();
    const chosen: number[] = [];
    daemon = await startGitDaemon(root, undefined, undefined, async () => {
      const port = chosen.length === 0 ? taken : await getFreePort();
      chosen.push(port);
      return port;
    });
    expect(chosen).toHaveLength(2);
    expect(daemon.port).toBe(chosen[1]);
    const refs = execFileSync('git', ['ls-remote', daemon.url('store.git')], { encoding: 'utf8' });
    expect(refs).toBe('');
  });

  test("the caller's own port, taken: refused with the port-in-use error", async () => {
    await expect(startGitDaemon(root, undefined, await occupied())).rejects.toThrow(PortInUseError);
  });
});
