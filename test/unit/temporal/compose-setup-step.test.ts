/**
 * The compose stack's one-shot step that makes aca's namespace and registers its search
 * attributes (deploy/temporal/setup-namespace.sh), run here as the admin-tools image runs it: with
 * the Temporal CLI on PATH, against a real server (the tests' dev server), in a namespace of its own.
 */
import { execFile } from 'node:child_process';
import * as path from 'node:path';
import { promisify } from 'node:util';
import { Connection } from '@temporalio/client';
import { findTemporalCli } from '../../../src/temporal/temporal-cli';
import { AGENT_SEARCH_ATTRIBUTE_KEYS } from '../../../src/shared/search-attributes';
import { getTestTemporal } from '../../helpers/temporal-env';

const SCRIPT = path.resolve(__dirname, '..', '..', '..', 'deploy', 'temporal', 'setup-namespace.sh');
const run = promisify(execFile);

/** Indexed value types as the operator service reports them, by the SDK's type names. */
const INDEXED_TYPE: Record<string, number> = { TEXT: 1, KEYWORD: 2, INT: 3, DOUBLE: 4, BOOL: 5 };

describe('the compose setup step for namespace and search attributes', () => {
  const temporal = getTestTemporal();
  const namespace = `aca-compose-${process.pid}`;
  let connection: Connection;
  const setup = (env: NodeJS.ProcessEnv = {}) =>
    run('/bin/sh', [SCRIPT], {
      env: {
        ...process.env,
        PATH: `${path.dirname(findTemporalCli()!)}:${process.env.PATH ?? ''}`,
        TEMPORAL_ADDRESS: temporal.address,
        TEMPORAL_NAMESPACE: namespace,
        ...env,
      },
      timeout: 120_000,
    });

  beforeAll(async () => {
    connection = await Connection.connect({ address: temporal.address });
  });
  afterAll(async () => {
    await connection?.close();
  });

  test('makes the namespace and registers every attribute with its type, and may run again', async () => {
    const first = await setup();
    expect(first.stdout).toContain(`namespace ${namespace} and aca's search attributes are ready`);
    const again = await setup();
    expect(again.stdout).toContain('ready');
    const { customAttributes } = await connection.operatorService.listSearchAttributes({ namespace });
    for (const key of AGENT_SEARCH_ATTRIBUTE_KEYS) {
      expect({ name: key.name, type: customAttributes?.[key.name] }).toEqual({
        name: key.name,
        type: INDEXED_TYPE[key.type],
      });
    }
  }, 240_000);

  test('gives up with a clear message when no server answers', async () => {
    await expect(
      setup({ TEMPORAL_ADDRESS: '127.0.0.1:1', TEMPORAL_WAIT_SECONDS: '2' }),
    ).rejects.toMatchObject({
      code: 1,
      stderr: expect.stringContaining('the Temporal server at 127.0.0.1:1 never answered'),
    });
  }, 60_000);
});
