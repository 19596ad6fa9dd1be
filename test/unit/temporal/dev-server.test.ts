import * as fs from 'node:fs';
import * as net from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import { Client, Connection } from '@temporalio/client';
import {
  getFreePort,
  isTemporalReachable,
  PortInUseError,
  startDevServer,
  startDevServerOnFreePorts,
} from '../../../src/temporal/dev-server';
import { AGENT_SEARCH_ATTRIBUTE_KEYS } from '../../../src/shared/search-attributes';
import { registerSearchAttributes } from '../../../src/temporal/search-attributes';
import { ensureTemporalCli, findTemporalCli } from '../../../src/temporal/temporal-cli';
import { getTestTemporal } from '../../helpers/temporal-env';

describe('temporal CLI', () => {
  it('finds (or builds) an executable temporal binary', async () => {
    const cli = await ensureTemporalCli({ allowSdkDownload: false });
    expect(findTemporalCli()).toBe(cli);
    expect(() => fs.accessSync(cli, fs.constants.X_OK)).not.toThrow();
  });
});

describe('shared test server from global setup', () => {
  let connection: Connection;
  beforeAll(async () => {
    connection = await Connection.connect({ address: getTestTemporal().address });
  });
  afterAll(() => connection?.close());

  it('is reachable', async () => {
    expect(await isTemporalReachable(getTestTemporal().address, 5000)).toBe(true);
  });

  it('registers search attributes idempotently', async () => {
    const { namespace } = getTestTemporal();
    await registerSearchAttributes(connection, namespace);
    await registerSearchAttributes(connection, namespace);
    // Concurrent callers race on "add"; both must succeed.
    await Promise.all([
      registerSearchAttributes(connection, namespace),
      registerSearchAttributes(connection, namespace),
    ]);
    const { customAttributes } = await connection.operatorService.listSearchAttributes({ namespace });
    for (const key of AGENT_SEARCH_ATTRIBUTE_KEYS) expect(customAttributes).toHaveProperty(key.name);
  });
});

describe('isTemporalReachable', () => {
  it('is false for a closed port, quickly', async () => {
    const port = await getFreePort();
    const started = Date.now();
    expect(await isTemporalReachable(`127.0.0.1:${port}`, 3000)).toBe(false);
    expect(Date.now() - started).toBeLessThan(3000);
  });
});

describe('dev server persistence', () => {
  const tmpDir = fs.mkdtempSync(path.join(os.tmpdir(), 'aca-devserver-test-'));
  afterAll(() => fs.rmSync(tmpDir, { recursive: true, force: true }));

  it('keeps namespace, search attributes and workflows across a restart from the db file', async () => {
    const cliPath = await ensureTemporalCli({ allowSdkDownload: false });
    const dbFile = path.join(tmpDir, 'temporal.db');
    const namespace = 'aca-persist';
    const workflowId = `persist-${Date.now()}`;
    const start = async () =>
      startDevServerOnFreePorts({
        cliPath,
        dbFile,
        namespace,
        headless: true,
        logFile: path.join(tmpDir, 'server.log'),
      });

    const first = await start();
    try {
      const connection = await Connection.connect({ address: first.address });
      try {
        const { customAttributes } = await connection.operatorService.listSearchAttributes({ namespace });
        for (const key of AGENT_SEARCH_ATTRIBUTE_KEYS) expect(customAttributes).toHaveProperty(key.name);
        // No worker polls this queue: the workflow just sits there, as an agent run would mid-flight.
        await new Client({ connection, namespace }).workflow.start('NoSuchWorkflow', {
          taskQueue: 'nobody-polls-this',
          workflowId,
        });
      } finally {
        await connection.close();
      }
    } finally {
      await first.stop();
    }
    expect(await isTemporalReachable(first.address, 1000)).toBe(false);

    // Restart on a different port: everything must come from the db file, not the old process.
    const second = await start();
    try {
      const connection = await Connection.connect({ address: second.address });
      try {
        const ns = await connection.workflowService.describeNamespace({ namespace });
        expect(ns.namespaceInfo?.name).toBe(namespace);
        const { customAttributes } = await connection.operatorService.listSearchAttributes({ namespace });
        for (const key of AGENT_SEARCH_ATTRIBUTE_KEYS) expect(customAttributes).toHaveProperty(key.name);
        const description = await new Client({ connection, namespace }).workflow
          .getHandle(workflowId)
          .describe();
        expect(description.status.name).toBe('RUNNING');
        expect(description.type).toBe('NoSuchWorkflow');
      } finally {
        await connection.close();
      }
    } finally {
      await second.stop();
    }
  });

  it('refuses a port that is already taken', async () => {
    const cliPath = await ensureTemporalCli({ allowSdkDownload: false });
    const { address } = getTestTemporal();
    const port = Number(address.split(':').pop());
    await expect(
      startDevServer({
        cliPath,
        dbFile: path.join(tmpDir, 'taken.db'),
        port,
        headless: true,
        readyTimeoutMs: 20_000,
      }),
    ).rejects.toThrow(PortInUseError);
  });
});

describe('a port taken between choosing and binding', () => {
  const tmpDir = fs.mkdtempSync(path.join(os.tmpdir(), 'aca-devserver-race-'));
  const squatters: net.Server[] = [];
  afterAll(async () => {
    for (const squatter of squatters) await new Promise((resolve) => squatter.close(resolve));
    fs.rmSync(tmpDir, { recursive: true, force: true });
  });

  /** Chooses ports like getFreePort, but the calls numbered in `stolen` hand back a port someone else just took. */
  const racingChooser = (stolen: number[]) => {
    const chosen: number[] = [];
    const choosePort = async (host: string): Promise<number> => {
      const port = await getFreePort(host);
      chosen.push(port);
      if (stolen.includes(chosen.length)) squatters.push(await occupy(port, host));
      return port;
    };
    return { chosen, choosePort };
  };

  it("chooses again when the frontend's port is taken", async () => {
    const cliPath = await ensureTemporalCli({ allowSdkDownload: false });
    const { chosen, choosePort } = racingChooser([1]);
    const server = await startDevServerOnFreePorts(
      { cliPath, dbFile: path.join(tmpDir, 'frontend.db'), headless: true },
      { choosePort },
    );
    try {
      expect(chosen).toHaveLength(2);
      expect(server.address).toBe(`127.0.0.1:${chosen[1]}`);
      expect(await isTemporalReachable(server.address, 5000)).toBe(true);
    } finally {
      await server.stop();
    }
  });

  it('chooses again when the server itself fails to bind (its Web UI port taken)', async () => {
    const cliPath = await ensureTemporalCli({ allowSdkDownload: false });
    // Calls 1 and 2 choose the frontend and UI ports of the first attempt; the UI's is stolen.
    const { chosen, choosePort } = racingChooser([2]);
    const server = await startDevServerOnFreePorts(
      { cliPath, dbFile: path.join(tmpDir, 'ui.db'), logFile: path.join(tmpDir, 'ui.log') },
      { choosePort },
    );
    try {
      expect(chosen).toHaveLength(4);
      expect(server.address).toBe(`127.0.0.1:${chosen[2]}`);
      expect(server.uiUrl).toBe(`http://localhost:${chosen[3]}`);
      expect(await isTemporalReachable(server.address, 5000)).toBe(true);
    } finally {
      await server.stop();
    }
  });

  it('gives up after its attempts with the port-in-use error', async () => {
    const cliPath = await ensureTemporalCli({ allowSdkDownload: false });
    const { chosen, choosePort } = racingChooser([1, 2, 3]);
    await expect(
      startDevServerOnFreePorts(
        { cliPath, dbFile: path.join(tmpDir, 'never.db'), headless: true },
        { choosePort, attempts: 3 },
      ),
    ).rejects.toThrow(PortInUseError);
    expect(chosen).toHaveLength(3);
  });
});

function occupy(port: number, host: string): Promise<net.Server> {
  return new Promise((resolve, reject) => {
    const server = net.createServer((socket) => socket.destroy());
    server.once('error', reject);
    server.listen(port, host, () => resolve(server));
  });
}
