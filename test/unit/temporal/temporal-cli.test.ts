import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import {
  ensureTemporalCli,
  findTemporalCli,
  TEMPORAL_CLI_VERSION,
  temporalCliCacheDir,
} from '../../../src/temporal/temporal-cli';

// Exercises the build path without a real multi-minute build: a stub `go` that "installs" a script.
describe('ensureTemporalCli with Go', () => {
  const saved = { ...process.env };
  let tmp: string;
  beforeEach(() => {
    tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'aca-cli-test-'));
    const bin = path.join(tmp, 'bin');
    fs.mkdirSync(bin);
    fs.writeFileSync(
      path.join(bin, 'go'),
      [
        '#!/bin/sh',
        'echo "$@" >> "$GOBIN/../go-args"',
        'echo "go: downloading example.com/x v1.0.0" >&2',
        '/bin/sleep 0.3',
        'printf "#!/bin/sh\\necho fake\\n" > "$GOBIN/temporal" && /bin/chmod +x "$GOBIN/temporal"',
      ].join('\n'),
      { mode: 0o755 },
    );
    delete process.env.TEMPORAL_CLI;
    process.env.PATH = bin;
    process.env.XDG_CACHE_HOME = path.join(tmp, 'cache');
  });
  afterEach(() => {
    process.env = { ...saved };
    fs.rmSync(tmp, { recursive: true, force: true });
  });

  it('builds the pinned version into the cache dir, reporting progress', async () => {
    expect(findTemporalCli()).toBeUndefined();
    const progress: string[] = [];
    const cli = await ensureTemporalCli({ onProgress: (m) => progress.push(m), progressIntervalMs: 100 });
    expect(cli).toBe(path.join(temporalCliCacheDir(), 'temporal'));
    expect(fs.readFileSync(path.join(tmp, 'cache', 'aca', 'go-args'), 'utf8').trim()).toBe(
      `install github.com/temporalio/cli/cmd/temporal@${TEMPORAL_CLI_VERSION}`,
    );
    expect(progress.some((m) => m.includes('go: downloading example.com/x'))).toBe(true);
    expect(progress.some((m) => m.startsWith('still building'))).toBe(true);
    expect(findTemporalCli()).toBe(cli);
    // Lock released.
    expect(fs.existsSync(path.join(temporalCliCacheDir(), '.temporal-build.lock'))).toBe(false);
  });

  it('builds once when two callers race', async () => {
    const [a, b] = await Promise.all([ensureTemporalCli(), ensureTemporalCli()]);
    expect(a).toBe(b);
    // The stub appends one line per `go install`: the second caller waited for the first build.
    const builds = fs
      .readFileSync(path.join(tmp, 'cache', 'aca', 'go-args'), 'utf8')
      .trim()
      .split('\n');
    expect(builds).toHaveLength(1);
  });

  it('rejects a TEMPORAL_CLI that is not executable', async () => {
    process.env.TEMPORAL_CLI = path.join(tmp, 'nope');
    await expect(ensureTemporalCli()).rejects.toThrow(/TEMPORAL_CLI/);
  });
});
