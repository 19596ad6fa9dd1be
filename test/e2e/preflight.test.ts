import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import { loadConfig } from '../../src/config';
import { ScriptedLlmServer } from '../../src/llm/scripted-server';
import { preflight } from '../../src/preflight/preflight';
import { defaultHostCheckEnv } from '../../src/preflight/host-checks';
import { isRoot } from '../../src/sandbox';
import { getFreePort, isTemporalReachable } from '../../src/temporal/dev-server';
import { runCli } from '../helpers/run-cli';

/**
 * The preflight with one prerequisite hidden at a time. Each case runs the built `aca` with a
 * Temporal address where nothing listens, so "nothing was started" is checkable: no server
 * answers there afterwards and the dev server's state file was never written.
 */
describe('preflight and aca doctor', () => {
  const scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'aca-preflight-'));
  // As root the sandbox is started as another uid, which must be able to reach a stand-in bwrap here.
  fs.chmodSync(scratch, 0o755);
  let deadAddress: string;

  beforeAll(async () => {
    deadAddress = `127.0.0.1:${await getFreePort()}`;
  });
  afterAll(() => fs.rmSync(scratch, { recursive: true, force: true }));

  /** A folder of links to real tools, to serve as the whole PATH. */
  function toolFolder(name: string, tools: string[], scripts: Record<string, string> = {}): string {
    const dir = path.join(scratch, name);
    fs.mkdirSync(dir);
    for (const tool of tools) fs.symlinkSync(`/usr/bin/${tool}`, path.join(dir, tool));
    for (const [tool, body] of Object.entries(scripts)) {
      fs.writeFileSync(path.join(dir, tool), `#!/bin/sh\n${body}\n`, { mode: 0o755 });
    }
    return dir;
  }

  function cliEnv(name: string, extra: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
    return {
      ACA_HOME: path.join(scratch, `${name}-home`),
      TEMPORAL_ADDRESS: deadAddress,
      DATABASE_URL: '',
      ACA_SANDBOX: 'bwrap',
      ...extra,
    };
  }

  async function expectNothingStarted(name: string): Promise<void> {
    expect(await isTemporalReachable(deadAddress, 500)).toBe(false);
    expect(fs.existsSync(path.join(scratch, `${name}-home`, 'temporal', 'dev-server.db'))).toBe(false);
  }

  it('a PATH without bubblewrap: aca demo names the package and exits 2 (no apt-get to install with)', async () => {
    const bin = toolFolder('no-bwrap', ['git']);
    const r = await runCli(['demo'], cliEnv('no-bwrap', { PATH: bin }), 60_000);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(
      /^aca: sandbox +missing +bubblewrap \(bwrap\) is not on PATH.*; fix: apt-get install -y bubblewrap$/m,
    );
    expect(r.stderr).not.toMatch(/Scripted model|Started aca-demo/);
    await expectNothingStarted('no-bwrap');
  });

  it('no git: aca up names it and exits 2', async () => {
    const bin = toolFolder('no-git', ['bwrap']);
    const r = await runCli(['up'], cliEnv('no-git', { PATH: bin }), 60_000);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/^aca: git +missing +git is not on PATH; fix: apt-get install -y git$/m);
    expect(r.stderr).not.toMatch(/sandbox +missing/);
    await expectNothingStarted('no-git');
  });

  it('a bubblewrap that cannot create namespaces: one line with the sysctl fix, exit 2', async () => {
    const bin = toolFolder('userns-denied', ['git'], {
      bwrap: 'echo "bwrap: No permissions to create new namespace" >&2; exit 1',
    });
    const r = await runCli(['up'], cliEnv('userns-denied', { PATH: bin }), 60_000);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(
      /^aca: sandbox +missing +bubblewrap is installed but cannot create a sandbox here \(bwrap: No permissions to create new namespace\).*; fix: sysctl -w kernel\.unprivileged_userns_clone=1/m,
    );
    await expectNothingStarted('userns-denied');
  });

  it('an unreachable DATABASE_URL: exit 3, the password not shown', async () => {
    const deadDb = `postgres://aca:s3cret-pw@127.0.0.1:${await getFreePort()}/test`;
    const r = await runCli(['up'], cliEnv('dead-db', { DATABASE_URL: deadDb }), 60_000);
    expect(r.code).toBe(3);
    expect(r.stderr).toMatch(
      /^aca: database +unreachable +cannot reach PostgreSQL at postgres:\/\/aca:\*\*\*@127\.0\.0\.1:/m,
    );
    expect(r.stderr).not.toContain('s3cret-pw');
    await expectNothingStarted('dead-db');
  });

  it('a python without pytest: the preflight names python3-pytest and refuses', async () => {
    const venv = path.join(scratch, 'venv');
    const made = await runProcess('/usr/bin/python3', ['-m', 'venv', '--without-pip', venv]);
    expect(made).toBe(0);
    const lines: string[] = [];
    const io = { out: (l: string) => lines.push(l), err: (l: string) => lines.push(l), isTTY: false };
    const config = loadConfig({ ACA_HOME: path.join(scratch, 'venv-home'), TEMPORAL_ADDRESS: deadAddress });
    const code = await preflight('up', config, io, {
      env: { ...defaultHostCheckEnv(), python: path.join(venv, 'bin', 'python3') },
    });
    expect(code).toBe(2);
    expect(lines).toContainEqual(
      expect.stringMatching(
        /^aca: python\/pytest +missing +.*venv\/bin\/python3 has no pytest module.*; fix: apt-get install -y python3-pytest$/,
      ),
    );
  });

  // aca installs packages only as root; on a runner that is not root the install path cannot be reached.
  const itAsRoot = isRoot() ? it : it.skip;
  itAsRoot('as root with apt-get, aca demo installs what is missing, says so, and re-checks', async () => {
    const log = path.join(scratch, 'apt-calls.log');
    const bin = toolFolder('apt', ['git'], { 'apt-get': `echo "$*" >> ${log}; echo "Setting up $*"` });
    const r = await runCli(['demo'], cliEnv('apt', { PATH: bin }), 60_000);
    expect(fs.readFileSync(log, 'utf8').trim().split('\n')).toEqual([
      'update -qq',
      'install -y -qq --no-install-recommends bubblewrap',
    ]);
    expect(r.stderr).toContain('aca demo: installing what is missing with apt-get: bubblewrap (sandbox)');
    expect(r.stderr).toContain('  apt: Setting up install -y -qq --no-install-recommends bubblewrap');
    // The stand-in installed nothing, so the re-check still refuses.
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/^aca: sandbox +missing +bubblewrap \(bwrap\) is not on PATH/m);
    await expectNothingStarted('apt');
  });

  describe('aca doctor', () => {
    it('against the scripted model: every line ok, exit 0', async () => {
      const llm = await new ScriptedLlmServer().start();
      try {
        const r = await runCli(
          ['doctor', '--json'],
          cliEnv('doctor-ok', { OPENAI_BASE_URL: llm.url, ACA_MODEL: 'demo-fizzbuzz' }),
          60_000,
        );
        const report = JSON.parse(r.stdout) as {
          ok: boolean;
          checks: Array<{ name: string; status: string }>;
        };
        expect(report.checks.map((c) => [c.name, c.status])).toEqual([
          ['sandbox', 'ok'],
          ['python/pytest', 'ok'],
          ['jest', 'ok'],
          ['git', 'ok'],
          ['flock', 'ok'],
          ['temporal', 'ok'],
          ['database', 'ok'],
          ['model endpoint', 'ok'],
          ['model', 'ok'],
          ['tool calling', 'ok'],
        ]);
        expect(report.ok).toBe(true);
        expect(r.code).toBe(0);
      } finally {
        await llm.stop();
      }
    });

    it('no flock on PATH: a warning naming util-linux, and nothing else changes', async () => {
      const llm = await new ScriptedLlmServer().start();
      try {
        const bin = toolFolder('no-flock', ['git', 'bwrap']);
        const r = await runCli(
          ['doctor', '--json'],
          cliEnv('doctor-no-flock', { PATH: bin, OPENAI_BASE_URL: llm.url, ACA_MODEL: 'demo-fizzbuzz' }),
          60_000,
        );
        const report = JSON.parse(r.stdout) as {
          ok: boolean;
          checks: Array<{ name: string; status: string; detail: string; fix?: string }>;
        };
        const flock = report.checks.find((c) => c.name === 'flock');
        expect(flock).toEqual({
          name: 'flock',
          status: 'warn',
          detail: expect.stringContaining('runs on a repository (--repo) cannot lock'),
          fix: expect.stringMatching(/^(sudo )?apt-get install -y util-linux$/),
          debianPackages: ['util-linux'],
        });
        expect(report.checks.filter((c) => c.status !== 'ok').map((c) => c.name)).toEqual(['flock']);
      } finally {
        await llm.stop();
      }
    });

    it('an endpoint that rejects tools: the tool-calling line says so, with the context size', async () => {
      const server = await fakeEndpoint((req, res) => {
        if (req.method === 'GET') {
          return send(res, 200, {
            object: 'list',
            data: [{ id: 'tiny-model', object: 'model', max_model_len: 8192 }],
          });
        }
        return send(res, 400, {
          error: { message: 'tools are not supported for this model', type: 'invalid_request_error' },
        });
      });
      try {
        const r = await runCli(
          ['doctor'],
          cliEnv('doctor-notools', { OPENAI_BASE_URL: server.url, ACA_MODEL: 'tiny-model' }),
          60_000,
        );
        expect(r.stdout).toMatch(/^model endpoint +ok +/m);
        expect(r.stdout).toMatch(/^model +ok +tiny-model is offered, context 8192 tokens$/m);
        expect(r.stdout).toMatch(
          /^tool calling +missing +400 tools are not supported for this model \(HTTP 400\)/m,
        );
        expect(r.code).toBe(2);
      } finally {
        await server.close();
      }
    });

    it('an endpoint that answers 401: the key line says so and nothing else is tried', async () => {
      let chatRequests = 0;
      const server = await fakeEndpoint((req, res) => {
        if (req.method === 'POST') chatRequests++;
        send(res, 401, { error: { message: 'Incorrect API key provided', type: 'invalid_request_error' } });
      });
      try {
        const r = await runCli(
          ['doctor'],
          cliEnv('doctor-401', { OPENAI_BASE_URL: server.url, OPENAI_API_KEY: 'sk-wrong' }),
          60_000,
        );
        expect(r.stdout).toMatch(
          /^model endpoint +missing +.* rejected the key \(HTTP 401: 401 Incorrect API key provided\); fix: set OPENAI_API_KEY/m,
        );
        expect(r.stdout).toMatch(/^tool calling +missing +not tried/m);
        expect(r.stdout).not.toContain('sk-wrong');
        expect(chatRequests).toBe(0);
        expect(r.code).toBe(2);
      } finally {
        await server.close();
      }
    });
  });
});

function send(res: http.ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify(body));
}

async function fakeEndpoint(
  handler: (req: http.IncomingMessage, res: http.ServerResponse) => void,
): Promise<{ url: string; close: () => Promise<void> }> {
  const server = http.createServer((req, res) => {
    req.resume();
    req.on('end', () => handler(req, res));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/v1`,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

function runProcess(command: string, args: string[]): Promise<number | null> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { stdio: 'ignore' });
    child.on('error', reject);
    child.on('close', resolve);
  });
}
