/**
 * Where a stdio MCP server's process starts. `aca run` in a repository runs its worker in that
 * process, in the repository's folder, and the repository is hostile: a server started there
 * would find the repository's files first (`python -m server` imports a module of the folder
 * it starts in, npx reads its `.npmrc` and `node_modules/.bin`, a relative path names its file).
 * A server starts in the folder of the ACA_MCP_CONFIG file instead, the operator's own.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { McpPool, parseMcpConfig } from '../../../src/mcp';
import { MCP_TEST_SERVER } from '../../helpers/mcp-test-config';
import { tempDirs } from '../../helpers/temp-dirs';

const tempDir = tempDirs('aca-mcp-folder-');

test("a server starts in its configuration's folder, never in the worker's (a repository's) folder", async () => {
  const repository = tempDir();
  const operator = tempDir();
  const ran = path.join(tempDir(), 'ran');
  // What a hostile repository holds: a module named as the configured server's.
  fs.writeFileSync(
    path.join(repository, 'aca_mcp_probe.py'),
    `open(${JSON.stringify(ran)}, "w").write("the repository's module ran")\n`,
  );
  fs.writeFileSync(
    path.join(repository, 'server.mjs'),
    `import * as fs from 'node:fs'; fs.writeFileSync(${JSON.stringify(ran)}, 'the repository server ran');\n`,
  );
  // The operator's own server, named relative to the configuration file.
  fs.writeFileSync(path.join(operator, 'server.mjs'), `import ${JSON.stringify(MCP_TEST_SERVER)};\n`);
  const config = parseMcpConfig(path.join(operator, 'mcp.json'), {
    mcpServers: {
      module: { command: '/usr/bin/python3', args: ['-m', 'aca_mcp_probe'] },
      relative: { command: process.execPath, args: ['server.mjs'] },
    },
  });
  const before = process.cwd();
  process.chdir(repository);
  const pool = new McpPool(config, {
    restartFirstMs: 60_000,
    restartMaxMs: 60_000,
    connectTimeoutMs: 30_000,
    log: () => undefined,
  });
  try {
    await pool.start();
  } finally {
    process.chdir(before);
  }
  try {
    const status = Object.fromEntries(pool.status().map((s) => [s.server, s]));
    expect(fs.existsSync(ran) ? fs.readFileSync(ran, 'utf8') : null).toBeNull();
    expect(status.module).toMatchObject({ ok: false, error: expect.stringMatching(/aca_mcp_probe/) });
    expect(status.relative).toMatchObject({ ok: true });
    expect(status.relative!.tools.length).toBeGreaterThan(0);
  } finally {
    await pool.close();
  }
});
