/**
 * docker-compose.yml, checked without Docker: the services a production-shaped stack needs, wired
 * to each other and to what the code reads (src/config.ts) and the image it builds (Dockerfile).
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { parse as parseYaml } from 'yaml';
import { loadConfig } from '../../src/config';
import { TASK_QUEUE_READ_RATES } from '../../src/temporal/dev-server';
import { ACA_ENV_VARIABLES, TEMPORAL_ENV_VARIABLES } from '../../src/config';
import { parseGitStoreLocation } from '../../src/repo';
import { AGENT_SEARCH_ATTRIBUTE_KEYS } from '../../src/shared/search-attributes';
import {
  compose,
  mounts,
  readRepoFile as read,
  ROOT,
  serviceEnv as env,
  serviceScript,
} from '../helpers/compose-file';

const services = compose.services;

/** The services that run `aca worker`: built from the Dockerfile, its command left as it is. */
const workers = Object.keys(services).filter(
  (name) => services[name].build !== undefined && !services[name].command && !services[name].entrypoint,
);

/** "HOST:CONTAINER" port mappings as [host, container] numbers. */
function portMappings(service: string): Array<[number, number]> {
  return (services[service]?.ports ?? []).map((p) => {
    const m = /^(?:[\d.]+:)?(\d+):(\d+)(?:\/tcp)?$/.exec(p);
    if (!m) throw new Error(`service ${service}: unsupported port mapping "${p}"`);
    return [Number(m[1]), Number(m[2])];
  });
}

/** The script a one-shot setup service runs, from the folder it mounts read-only. */
function setupScript(service: string): string {
  const script = serviceScript(service);
  expect(script.readOnly).toBe(true);
  return fs.readFileSync(script.file, 'utf8');
}

function dependsOn(service: string): string[] {
  const d = services[service]?.depends_on ?? [];
  return Array.isArray(d) ? d : Object.keys(d);
}

/** Environment variables the worker's code reads: src/config.ts plus the API key in src/worker.ts. */
function envNamesReadByCode(): Set<string> {
  return new Set<string>([...TEMPORAL_ENV_VARIABLES, ...ACA_ENV_VARIABLES]);
}

describe('docker-compose.yml', () => {
  test('has Postgres, a Temporal server, its Web UI, a git store and two aca workers', () => {
    expect(Object.keys(services).sort()).toEqual([
      'aca-worker-1',
      'aca-worker-2',
      'git-store',
      'git-store-init',
      'postgres',
      'temporal',
      'temporal-schema',
      'temporal-setup',
      'temporal-ui',
    ]);
    expect(workers).toEqual(['aca-worker-1', 'aca-worker-2']);
  });

  test('pins every image to a version tag (no latest, no untagged images); the rest are built here', () => {
    for (const [name, service] of Object.entries(services)) {
      if (!service.image) {
        // No image to pull: the service is built from this repository's Dockerfile.
        expect({ name, build: service.build }).toEqual({ name, build: '.' });
        continue;
      }
      const tag = /^[^@]+:([^/:@]+)$/.exec(service.image)?.[1];
      expect({ name, tag }).toEqual({ name, tag: expect.stringMatching(/^v?\d+(\.\d+)*/) });
      expect(tag).not.toBe('latest');
    }
    expect(services.postgres.image).toMatch(/^postgres:\d+/);
    // The maintained server image; auto-setup is deprecated and no longer updated.
    expect(services.temporal.image).toMatch(/^temporalio\/server:\d+\.\d+\.\d+$/);
    // The admin tools that set the server up are of the server's own version.
    const serverVersion = services.temporal.image!.split(':')[1];
    for (const step of ['temporal-schema', 'temporal-setup']) {
      expect(services[step].image).toMatch(
        new RegExp(`^temporalio/admin-tools:${serverVersion.replace(/\./g, '\\.')}(-|$)`),
      );
    }
    expect(services['temporal-ui'].image).toMatch(/^temporalio\/ui:\d+\.\d+\.\d+$/);
  });

  test('Postgres listens on 5432 and keeps its data in a named volume', () => {
    expect(portMappings('postgres')).toContainEqual([5432, 5432]);
    const e = env('postgres');
    expect(e.POSTGRES_USER).toBeTruthy();
    expect(e.POSTGRES_PASSWORD).toBeTruthy();
    const dataVolume = (services.postgres.volumes ?? []).find((v) => v.endsWith(':/var/lib/postgresql/data'));
    expect(dataVolume).toBeDefined();
    expect(Object.keys(compose.volumes ?? {})).toContain(dataVolume!.split(':')[0]);
    expect(JSON.stringify(services.postgres.healthcheck?.test)).toContain('pg_isready');
  });

  test('Temporal persists to that Postgres, whose schema a one-shot step sets up first, and serves gRPC on 7233', () => {
    const t = env('temporal');
    const pg = env('postgres');
    expect(t.DB).toMatch(/^postgres12(_pgx)?$/);
    expect(t.POSTGRES_SEEDS).toBe('postgres');
    expect(t.DB_PORT ?? '5432').toBe('5432');
    expect(t.POSTGRES_USER).toBe(pg.POSTGRES_USER);
    expect(t.POSTGRES_PWD).toBe(pg.POSTGRES_PASSWORD);
    expect(portMappings('temporal')).toContainEqual([7233, 7233]);
    // The server starts once its schema is there; the schema step waits for a healthy Postgres
    // and reaches it with the server's own settings.
    expect(services.temporal.depends_on).toEqual({
      'temporal-schema': { condition: 'service_completed_successfully' },
    });
    expect(services['temporal-schema'].depends_on).toEqual({ postgres: { condition: 'service_healthy' } });
    const schema = env('temporal-schema');
    for (const name of ['POSTGRES_SEEDS', 'POSTGRES_USER', 'POSTGRES_PWD'])
      expect(schema[name]).toBe(t[name]);
    const script = setupScript('temporal-schema');
    expect(script).toMatch(/temporal-sql-tool --plugin postgres12/);
    expect(script).toMatch(/setup-schema --version 0\.0/);
    expect(script).toMatch(/update-schema --schema-dir "\$schemas\/\$schema\/versioned"/);
    expect(script).toContain('temporal_visibility');
  });

  test("Temporal runs with the dynamic configuration aca's own dev server starts with", () => {
    const file = env('temporal').DYNAMIC_CONFIG_FILE_PATH;
    // The server image resolves a relative path from /etc/temporal.
    const target = path.posix.resolve('/etc/temporal', file);
    const mount = mounts('temporal').find((m) => m.target === target);
    expect(mount).toEqual({ source: expect.stringMatching(/^\.\//), target, mode: 'ro' });
    const settings = parseYaml(read(mount!.source)) as Record<string, Array<{ value: unknown }>>;
    const value = (key: string): unknown => {
      expect(settings[key]).toHaveLength(1);
      return settings[key][0].value;
    };
    for (const key of TASK_QUEUE_READ_RATES) expect(value(key)).toBeGreaterThanOrEqual(1000);
    expect(value('system.enableActivityEagerExecution')).toBe(true);
    expect(value('system.forceSearchAttributesCacheRefreshOnRead')).toBe(true);
  });

  test("a one-shot step registers aca's search attributes, by the names and types the workflows publish", () => {
    const setup = env('temporal-setup');
    expect(setup.TEMPORAL_ADDRESS).toBe('temporal:7233');
    expect(setup.TEMPORAL_NAMESPACE).toBe(loadConfig({}).namespace);
    expect(dependsOn('temporal-setup')).toEqual(['temporal']);
    const registered = [...setupScript('temporal-setup').matchAll(/--name (\w+) --type (\w+)/g)].map(
      ([, name, type]) => `${name}:${type.toUpperCase()}`,
    );
    expect(registered.sort()).toEqual(
      AGENT_SEARCH_ATTRIBUTE_KEYS.map((key) => `${key.name}:${key.type}`).sort(),
    );
  });

  test('the Web UI talks to that Temporal and is published on 8233, as in the printed links', () => {
    const ui = env('temporal-ui');
    expect(ui.TEMPORAL_ADDRESS).toBe('temporal:7233');
    expect(dependsOn('temporal-ui')).toContain('temporal');
    const uiPort = Number(ui.TEMPORAL_UI_PORT ?? 8080);
    expect(portMappings('temporal-ui')).toContainEqual([8233, uiPort]);
    // `aca` prints links to http://<temporal host>:8233 unless ACA_UI_URL (or a local stack of
    // its home started on other ports) says otherwise: a home of its own, whatever the user's says.
    const home = fs.mkdtempSync(path.join(os.tmpdir(), 'aca-compose-home-'));
    expect(loadConfig({ ACA_HOME: home }).uiUrl).toBe('http://127.0.0.1:8233');
    fs.rmSync(home, { recursive: true, force: true });
    if (ui.TEMPORAL_CORS_ORIGINS) expect(ui.TEMPORAL_CORS_ORIGINS).toContain(':8233');
  });

  test.each(workers)('%s is built from the Dockerfile, whose image runs `aca worker`', (worker) => {
    const build = services[worker].build;
    const context = typeof build === 'string' ? build : build?.context;
    const dockerfile = typeof build === 'string' ? 'Dockerfile' : (build?.dockerfile ?? 'Dockerfile');
    expect(path.resolve(ROOT, context ?? '<none>')).toBe(ROOT);
    expect(dockerfile).toBe('Dockerfile');
    const docker = read('Dockerfile');
    expect(docker).toMatch(/^FROM node:20[\w.-]*$/m);
    expect(docker).toMatch(/^CMD \["node", "bin\/aca\.js", "worker"\]$/m);
    expect(docker).toMatch(/apt-get install[^\n]*\bbubblewrap\b[^\n]*\bpython3-pytest\b/);
    // An init as PID 1 reaps what sandboxes leave behind; the worker itself is not PID 1.
    expect(docker).toMatch(/apt-get install[^\n]*\btini\b/);
    expect(docker).toMatch(/^ENTRYPOINT \["\/usr\/bin\/tini", "--"\]$/m);
    // Workers start once the namespace and search attributes they use are registered, and the
    // store they push to answers.
    expect(services[worker].depends_on).toEqual({
      'temporal-setup': { condition: 'service_completed_successfully' },
      postgres: { condition: 'service_healthy' },
      'git-store': { condition: 'service_healthy' },
    });
  });

  test.each(workers)(
    "%s's environment uses exactly the names src/config.ts reads, pointing at the other services",
    (worker) => {
      const w = env(worker);
      const known = envNamesReadByCode();
      expect(Object.keys(w).filter((name) => !known.has(name))).toEqual([]);

      expect(w.TEMPORAL_ADDRESS).toBe(`temporal:${portMappings('temporal')[0][1]}`);
      const pg = env('postgres');
      const db = new URL(w.DATABASE_URL);
      expect(db.protocol).toBe('postgres:');
      expect(db.hostname).toBe('postgres');
      expect(db.port || '5432').toBe('5432');
      expect(decodeURIComponent(db.username)).toBe(pg.POSTGRES_USER);
      expect(decodeURIComponent(db.password)).toBe(pg.POSTGRES_PASSWORD);
      expect(db.pathname.slice(1)).toBe(pg.POSTGRES_DB ?? pg.POSTGRES_USER);

      // The same values through the real configuration loader: a host `aca run` with the default
      // task queue and namespace reaches these workers, and they push to a store of their own
      // choosing rather than each to its own default one.
      const defaults = loadConfig({});
      const config = loadConfig({ ...w, OPENAI_BASE_URL: 'http://model:8000/v1', ACA_MODEL: 'm' });
      expect(config.taskQueue).toBe(defaults.taskQueue);
      expect(config.namespace).toBe(defaults.namespace);
      expect(config.sandbox).toBe('bwrap');
      expect(config.databaseUrl).toBe(w.DATABASE_URL);
      expect(config.gitStore).toMatchObject({ scheme: 'git', isDefault: false });
      expect(w.OPENAI_API_KEY).toBe('${OPENAI_API_KEY:-}');
      expect(w.OPENAI_BASE_URL).toMatch(/^\$\{OPENAI_BASE_URL/);
    },
  );

  test('the workers are configured alike, so any of them may run any step of any run', () => {
    for (const worker of workers.slice(1)) {
      expect(env(worker)).toEqual(env(workers[0]));
      expect(services[worker].security_opt).toEqual(services[workers[0]].security_opt);
    }
  });

  test("each worker's state lives on a named volume of its own, and its Temporal identity is its own", () => {
    const docker = read('Dockerfile');
    // ACA_HOME holds the worker's run repositories and ACA_WORKSPACES its work trees: kept across
    // restarts on a named volume, and shared with no other worker, as between hosts.
    const home = /ACA_HOME=(\S+)/.exec(docker)?.[1];
    const workspaces = /ACA_WORKSPACES=(\S+)/.exec(docker)?.[1];
    expect(home).toBeTruthy();
    expect(path.relative(home!, workspaces!).startsWith('..')).toBe(false);
    const declared = Object.keys(compose.volumes ?? {});
    const mountedBy = new Map<string, string[]>();
    for (const worker of workers) {
      expect(env(worker).ACA_HOME ?? home).toBe(home);
      expect(env(worker).ACA_WORKSPACES ?? workspaces).toBe(workspaces);
      const own = mounts(worker).find(({ target }) => target === home);
      expect({ worker, declared: declared.includes(own?.source ?? '') }).toEqual({ worker, declared: true });
      for (const { source } of mounts(worker))
        mountedBy.set(source, [...(mountedBy.get(source) ?? []), worker]);
    }
    expect([...mountedBy.values()].filter((users) => users.length > 1)).toEqual([]);
    // The SDK's worker identity is <pid>@<hostname>: a hostname each, or two identities could match.
    const hostnames = workers.map((worker) => services[worker].hostname ?? '');
    expect(hostnames.filter((name) => name === '')).toEqual([]);
    expect(new Set(hostnames).size).toBe(workers.length);
  });

  test("each worker's metrics port is the one the image exposes", () => {
    const docker = read('Dockerfile');
    for (const worker of workers) {
      expect(docker).toMatch(new RegExp(`^EXPOSE ${loadConfig(env(worker)).metricsPort}$`, 'm'));
    }
  });
});

describe('the git store in docker-compose.yml', () => {
  const init = env('git-store-init');
  const command = services['git-store'].command;
  const daemonArgs = Array.isArray(command) ? command : [];
  const option = (name: string): string | undefined =>
    daemonArgs.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3);
  const basePath = option('base-path');
  const port = option('port') ?? '9418';
  const repository = path.posix.join(init.GIT_STORE_ROOT, init.GIT_STORE_REPOSITORY);
  const script = () => setupScript('git-store-init');

  test('is a git daemon, from the image the workers run, that takes pushes', () => {
    expect(services['git-store'].build).toBe(services[workers[0]].build);
    expect(services['git-store'].entrypoint).toBeUndefined();
    expect(daemonArgs.slice(0, 2)).toEqual(['git', 'daemon']);
    expect(daemonArgs).toContain('--enable=receive-pack');
    expect(basePath).toBeDefined();
    // The repository is served when every repository is, or when the init marked it so.
    if (!daemonArgs.includes('--export-all'))
      expect(script()).toMatch(/touch "\$store\/git-daemon-export-ok"/);
  });

  test('its repository is made by a one-shot step before the daemon starts, on a volume they share', () => {
    expect(services['git-store'].depends_on).toEqual({
      'git-store-init': { condition: 'service_completed_successfully' },
    });
    const storeVolume = mounts('git-store').find(({ target }) => target === basePath);
    expect(storeVolume).toBeDefined();
    expect(Object.keys(compose.volumes ?? {})).toContain(storeVolume!.source);
    expect(mounts('git-store-init')).toContainEqual({
      source: storeVolume!.source,
      target: init.GIT_STORE_ROOT,
    });
    expect(script()).toMatch(/git init --bare/);
    expect(script()).toMatch(/core\.logAllRefUpdates always/);
    // The daemon runs as a user of its own, to whom the init step gives the repository it writes.
    const user = services['git-store'].user;
    expect(user).toBeTruthy();
    expect(user).not.toMatch(/^(root|0)(:|$)/);
    expect(init.GIT_STORE_OWNER?.split(':')[0]).toBe(user!.split(':')[0]);
  });

  test.each(workers)(
    "%s's ACA_GIT_STORE is the repository the init step makes, through that daemon",
    (worker) => {
      const store = parseGitStoreLocation(env(worker).ACA_GIT_STORE, '/unused');
      expect(store).toMatchObject({ scheme: 'git', isDefault: false });
      const url = new URL(store.url);
      expect(url.hostname).toBe('git-store');
      expect(url.port || '9418').toBe(port);
      expect(path.posix.join(basePath!, url.pathname)).toBe(repository);
    },
  );

  test('git:// has no authentication: the daemon is published on no host port, only the compose network', () => {
    expect(services['git-store'].ports ?? []).toEqual([]);
  });

  test("its healthcheck asks the daemon for the store's branches", () => {
    const check = services['git-store'].healthcheck?.test;
    expect(check).toEqual([
      'CMD',
      'git',
      'ls-remote',
      `git://127.0.0.1:${port}/${path.posix.relative(basePath!, repository)}`,
    ]);
  });
});
