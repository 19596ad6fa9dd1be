import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { loadConfig } from '../../src/config';
import { UserInputError } from '../../src/shared/errors';

describe('configuration from the environment', () => {
  test('ACA_WORKFLOW_BUNDLE: an absolute path to the prebuilt bundle; unset or empty, none', () => {
    expect(loadConfig({ ACA_WORKFLOW_BUNDLE: 'build/bundle.js' }).workflowBundleFile).toBe(
      path.resolve('build/bundle.js'),
    );
    expect(loadConfig({}).workflowBundleFile).toBeNull();
    expect(loadConfig({ ACA_WORKFLOW_BUNDLE: ' ' }).workflowBundleFile).toBeNull();
  });

  test('test slots default to the CPU count, at least 2', () => {
    expect(loadConfig({}, { cpuCount: 8 }).testSlots).toBe(8);
    expect(loadConfig({}, { cpuCount: 1 }).testSlots).toBe(2);
    expect(loadConfig({ ACA_TEST_SLOTS: '3' }, { cpuCount: 8 }).testSlots).toBe(3);
  });

  test('ACA_TEST_SLOTS sets the sandboxed test runs a worker runs at once', () => {
    expect(loadConfig({ ACA_TEST_SLOTS: '6' }).testSlots).toBe(6);
  });

  test.each(['0', '-1', '2.5', 'four', '1000'])(
    'ACA_TEST_SLOTS=%s is refused with a clear message',
    (value) => {
      expect(() => loadConfig({ ACA_TEST_SLOTS: value })).toThrow(UserInputError);
      expect(() => loadConfig({ ACA_TEST_SLOTS: value })).toThrow(
        /ACA_TEST_SLOTS must be a whole number from 1 to 256/,
      );
    },
  );

  test("the maximums of a run's limits: documented defaults, each settable, nonsense refused", () => {
    expect(loadConfig({}).limitMaximums).toEqual({ wallSeconds: 1800, cpuSeconds: 1800, memoryMiB: 4096 });
    expect(
      loadConfig({ ACA_MAX_WALL_SECONDS: '600', ACA_MAX_CPU_SECONDS: '300', ACA_MAX_MEMORY_MIB: '2048' })
        .limitMaximums,
    ).toEqual({ wallSeconds: 600, cpuSeconds: 300, memoryMiB: 2048 });
    expect(() => loadConfig({ ACA_MAX_MEMORY_MIB: '100' })).toThrow(
      /ACA_MAX_MEMORY_MIB must be a whole number from 256 to 1048576, got "100"/,
    );
    for (const value of ['0', '1.5', 'lots', '-5', '100000']) {
      expect(() => loadConfig({ ACA_MAX_WALL_SECONDS: value })).toThrow(UserInputError);
    }
  });

  test('a bad sandbox mode or metrics port is refused', () => {
    expect(() => loadConfig({ ACA_SANDBOX: 'docker' })).toThrow(/ACA_SANDBOX must be "bwrap" or "none"/);
    expect(() => loadConfig({ ACA_METRICS_PORT: '70000' })).toThrow(/ACA_METRICS_PORT must be a port number/);
  });

  test('ACA_RUN_COMMAND is on unless it says off; anything else is refused', () => {
    expect(loadConfig({}).runCommand).toBe(true);
    expect(loadConfig({ ACA_RUN_COMMAND: 'on' }).runCommand).toBe(true);
    expect(loadConfig({ ACA_RUN_COMMAND: ' OFF ' }).runCommand).toBe(false);
    expect(() => loadConfig({ ACA_RUN_COMMAND: 'no' })).toThrow(
      /ACA_RUN_COMMAND must be "on" or "off", got "no"/,
    );
  });
});

describe('Temporal connection settings', () => {
  test('address and namespace default to a local dev server', () => {
    const config = loadConfig({ TEMPORAL_CONFIG_FILE: '/nonexistent/temporal.toml' });
    expect(config.temporalConnection).toEqual({ address: '127.0.0.1:7233' });
    expect(config.namespace).toBe('default');
  });

  test('TEMPORAL_API_KEY turns TLS on, as Temporal Cloud needs', () => {
    const config = loadConfig({
      TEMPORAL_ADDRESS: 'ns.acct.tmprl.cloud:7233',
      TEMPORAL_NAMESPACE: 'ns.acct',
      TEMPORAL_API_KEY: 'secret-key',
    });
    expect(config.temporalConnection).toMatchObject({
      address: 'ns.acct.tmprl.cloud:7233',
      apiKey: 'secret-key',
      tls: true,
    });
    expect(config.namespace).toBe('ns.acct');
  });

  test('a profile of the Temporal config file gives address, namespace and client certificate', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'aca-envconfig-'));
    try {
      fs.writeFileSync(path.join(dir, 'client.pem'), 'CERT');
      fs.writeFileSync(path.join(dir, 'client.key'), 'KEY');
      const file = path.join(dir, 'temporal.toml');
      fs.writeFileSync(
        file,
        [
          '[profile.staging]',
          'address = "temporal.staging.example:7233"',
          'namespace = "agents"',
          '[profile.staging.tls]',
          `client_cert_path = "${path.join(dir, 'client.pem')}"`,
          `client_key_path = "${path.join(dir, 'client.key')}"`,
          '',
        ].join('\n'),
      );
      const config = loadConfig({ TEMPORAL_CONFIG_FILE: file, TEMPORAL_PROFILE: 'staging' });
      expect(config.temporalAddress).toBe('temporal.staging.example:7233');
      expect(config.namespace).toBe('agents');
      const tls = config.temporalConnection.tls as { clientCertPair?: { crt: Uint8Array; key: Uint8Array } };
      expect(Buffer.from(tls.clientCertPair!.crt).toString()).toBe('CERT');
      expect(Buffer.from(tls.clientCertPair!.key).toString()).toBe('KEY');
      // Variables override the profile, as in the Temporal CLI.
      expect(
        loadConfig({ TEMPORAL_CONFIG_FILE: file, TEMPORAL_PROFILE: 'staging', TEMPORAL_NAMESPACE: 'other' })
          .namespace,
      ).toBe('other');
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  test('an unreadable config file or an unknown log level is a clear error', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'aca-envconfig-'));
    try {
      const file = path.join(dir, 'temporal.toml');
      fs.writeFileSync(file, '[profile.default\naddress = ');
      expect(() => loadConfig({ TEMPORAL_CONFIG_FILE: file })).toThrow(UserInputError);
      expect(() => loadConfig({ TEMPORAL_CONFIG_FILE: file })).toThrow(/Temporal connection settings/);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
    expect(() => loadConfig({ ACA_LOG_LEVEL: 'loud' })).toThrow(/ACA_LOG_LEVEL must be one of TRACE/);
    expect(loadConfig({ ACA_LOG_LEVEL: 'warn' }).logLevel).toBe('WARN');
  });
});

describe('every variable validated in one place', () => {
  test.each([
    [
      'ACA_HOST_START_TIMEOUT',
      '0',
      /ACA_HOST_START_TIMEOUT must be a whole number of seconds from 1 to 86400, got "0"/,
    ],
    [
      'ACA_HEARTBEAT_TIMEOUT',
      '2.5',
      /ACA_HEARTBEAT_TIMEOUT must be a whole number of seconds from 1 to 3600, got "2.5"/,
    ],
    ['ACA_CACHED_RUNS', '-3', /ACA_CACHED_RUNS must be a whole number from 0 to 100000, got "-3"/],
    ['ACA_METRICS_PORT', '80a', /ACA_METRICS_PORT must be a port number, got "80a"/],
    ['ACA_GIT_AUTHOR_NAME', '', /ACA_GIT_AUTHOR_NAME must be non-empty/],
    ['ACA_GIT_AUTHOR_EMAIL', 'a <b@c>', /ACA_GIT_AUTHOR_EMAIL must be non-empty and free of </],
  ])('%s=%s is refused with a clear message', (variable, value, message) => {
    const load = () => loadConfig({ [variable]: value, TEMPORAL_CONFIG_FILE: '/nonexistent/temporal.toml' });
    expect(load).toThrow(UserInputError);
    expect(load).toThrow(message);
  });

  test('values are read as documented, an empty variable as unset', () => {
    const config = loadConfig(
      {
        ACA_HOST_START_TIMEOUT: ' 15 ',
        ACA_HEARTBEAT_TIMEOUT: '4',
        ACA_CACHED_RUNS: '0',
        ACA_SANDBOX: 'none',
        ACA_MODEL: '',
        ACA_TEST_SLOTS: '',
        ACA_GIT_AUTHOR_NAME: '  Ada  ',
        TEMPORAL_CONFIG_FILE: '/nonexistent/temporal.toml',
      },
      { cpuCount: 4 },
    );
    expect(config).toMatchObject({
      hostStartTimeoutMs: 15_000,
      heartbeatTimeoutMs: 4_000,
      cachedRuns: 0,
      sandbox: 'none',
      model: 'gpt-4o-mini',
      testSlots: 4,
      gitAuthor: { name: 'Ada', email: 'aca@localhost' },
    });
    // Unset, each kind of step keeps its own heartbeat timeout.
    expect(
      loadConfig({ ACA_HEARTBEAT_TIMEOUT: '', TEMPORAL_CONFIG_FILE: '/nonexistent/temporal.toml' })
        .heartbeatTimeoutMs,
    ).toBeNull();
  });

  test("the worker's ssh agent goes with an ssh store only", () => {
    const load = (store: string) =>
      loadConfig({
        ACA_GIT_STORE: store,
        SSH_AUTH_SOCK: '/run/agent.sock',
        TEMPORAL_CONFIG_FILE: '/nonexistent/temporal.toml',
      }).gitStore;
    expect(load('git@git.example.com:aca/store.git').sshAgentSocket).toBe('/run/agent.sock');
    expect(load('https://git.example.com/aca/store.git').sshAgentSocket).toBeUndefined();
  });
});

describe('ACA_GIT_STORE', () => {
  test('defaults to a bare repository under ACA_HOME', () => {
    const config = loadConfig({ ACA_HOME: '/srv/aca', TEMPORAL_CONFIG_FILE: '/nonexistent/temporal.toml' });
    expect(config.gitStore).toEqual({
      url: '/srv/aca/store.git',
      scheme: 'file',
      display: '/srv/aca/store.git',
      isDefault: true,
    });
  });

  test.each([
    ['/mnt/shared/store.git', '/mnt/shared/store.git', 'file'],
    ['file:///mnt/shared/store.git', '/mnt/shared/store.git', 'file'],
    ['ssh://git@git.example.com/aca/store.git', 'ssh://git@git.example.com/aca/store.git', 'ssh'],
    ['git@git.example.com:aca/store.git', 'git@git.example.com:aca/store.git', 'ssh'],
    ['https://git.example.com/aca/store.git', 'https://git.example.com/aca/store.git', 'https'],
    ['git://127.0.0.1:9418/store.git', 'git://127.0.0.1:9418/store.git', 'git'],
  ])('%s is a store', (value, url, scheme) => {
    const store = loadConfig({
      ACA_GIT_STORE: value,
      TEMPORAL_CONFIG_FILE: '/nonexistent/temporal.toml',
    }).gitStore;
    expect(store).toMatchObject({ url, scheme, isDefault: false });
  });

  test('a relative path is taken from the current folder', () => {
    const store = loadConfig({
      ACA_GIT_STORE: 'stores/aca.git',
      TEMPORAL_CONFIG_FILE: '/nonexistent/temporal.toml',
    }).gitStore;
    expect(store.url).toBe(path.resolve('stores/aca.git'));
  });

  test('credentials in the URL are kept for git and never shown', () => {
    const store = loadConfig({
      ACA_GIT_STORE: 'https://aca:tok3n@git.example.com/store.git',
      TEMPORAL_CONFIG_FILE: '/nonexistent/temporal.toml',
    }).gitStore;
    expect(store.url).toBe('https://aca:tok3n@git.example.com/store.git');
    expect(store.display).toBe('https://git.example.com/store.git');
  });

  test.each([
    ['ftp://example.com/store.git', /the scheme "ftp" is not one of/],
    ['ext::sh -c touch% /tmp/pwned', /spaces|remote helpers/],
    ['fd::17', /remote helpers/],
    ['ssh://-oProxyCommand=evil/store.git', /names no host/],
    ['https://example.com/', /names no repository/],
    ['-store.git', /may not start with "-"/],
    ['https://user:secret@exa mple.com/x.git', /ACA_GIT_STORE must be a path or a git URL/],
  ])('%s is refused with a clear message', (value, why) => {
    const load = () =>
      loadConfig({ ACA_GIT_STORE: value, TEMPORAL_CONFIG_FILE: '/nonexistent/temporal.toml' });
    expect(load).toThrow(UserInputError);
    expect(load).toThrow(why);
    expect(load).toThrow(/ACA_GIT_STORE must be a path or a git URL/);
    try {
      load();
    } catch (err) {
      expect((err as Error).message).not.toContain('secret');
    }
  });
});

describe('the local stack `aca up` or `aca demo` started for a home', () => {
  const homeWith = (record: unknown): string => {
    const home = fs.mkdtempSync(path.join(os.tmpdir(), 'aca-stack-home-'));
    fs.mkdirSync(path.join(home, 'temporal'));
    fs.writeFileSync(path.join(home, 'temporal', 'local-stack.json'), JSON.stringify(record));
    return home;
  };

  test('without TEMPORAL_ADDRESS, commands go to its server and link to its Web UI', () => {
    const home = homeWith({ address: '127.0.0.1:17301', uiUrl: 'http://localhost:18301' });
    const config = loadConfig({ ACA_HOME: home });
    expect(config).toMatchObject({
      temporalAddress: '127.0.0.1:17301',
      temporalAddressConfigured: false,
      uiUrl: 'http://localhost:18301',
    });
    expect(config.temporalConnection.address).toBe('127.0.0.1:17301');
  });

  test('TEMPORAL_ADDRESS and ACA_UI_URL win; another address keeps the default UI port', () => {
    const home = homeWith({ address: '127.0.0.1:17301', uiUrl: 'http://localhost:18301' });
    expect(loadConfig({ ACA_HOME: home, TEMPORAL_ADDRESS: '127.0.0.1:17301' }).uiUrl).toBe(
      'http://localhost:18301',
    );
    expect(loadConfig({ ACA_HOME: home, TEMPORAL_ADDRESS: 'temporal.example:7233' }).uiUrl).toBe(
      'http://temporal.example:8233',
    );
    expect(loadConfig({ ACA_HOME: home, ACA_UI_URL: 'https://ui.example/' }).uiUrl).toBe(
      'https://ui.example',
    );
  });

  test('a record that is not one is ignored', () => {
    for (const record of [
      null,
      'x',
      { address: 'no port', uiUrl: 'http://x' },
      { address: 'h:1', uiUrl: 'javascript:1' },
    ]) {
      expect(loadConfig({ ACA_HOME: homeWith(record) })).toMatchObject({
        temporalAddress: '127.0.0.1:7233',
        uiUrl: 'http://127.0.0.1:8233',
      });
    }
  });
});
