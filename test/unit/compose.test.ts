/**
 * docker-compose.yml, checked without Docker: the services a production-shaped stack needs, wired
 * to each other and to what the code reads (src/config.ts) and the image it builds (Dockerfile).
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { loadConfig } from '../../src/config';
import { parse } from 'yaml';
import { TEMPORAL_ENV_VARIABLES } from '../../src/config';
import { AGENT_SEARCH_ATTRIBUTE_KEYS } from '../../src/shared/search-attributes';

/** The failsafe schema keeps every scalar a string, as docker compose reads ports and versions. */
type YamlValue = string | null | YamlValue[] | { [key: string]: YamlValue };
const parseYaml = (source: string): YamlValue => parse(source, { schema: 'failsafe' }) as YamlValue;

const ROOT = path.resolve(__dirname, '..', '..');
const read = (file: string): string => fs.readFileSync(path.join(ROOT, file), 'utf8');

type Service = {
  image?: string;
  build?: string | { context?: string; dockerfile?: string };
  environment?: Record<string, string | null>;
  ports?: string[];
  depends_on?: string[] | Record<string, { condition?: string }>;
  volumes?: string[];
  healthcheck?: { test?: string[] | string };
  command?: string | string[];
  entrypoint?: string | string[];
};

const compose = parseYaml(read('docker-compose.yml')) as {
  services: Record<string, Service>;
  volumes?: Record<string, YamlValue>;
};
const services = compose.services;

function env(service: string): Record<string, string> {
  const e = services[service]?.environment;
  if (!e || Array.isArray(e)) throw new Error(`service ${service} needs an environment mapping`);
  return Object.fromEntries(Object.entries(e).map(([k, v]) => [k, v ?? '']));
}

/** "HOST:CONTAINER" port mappings as [host, container] numbers. */
function portMappings(service: string): Array<[number, number]> {
  return (services[service]?.ports ?? []).map((p) => {
    const m = /^(?:[\d.]+:)?(\d+):(\d+)(?:\/tcp)?$/.exec(p);
    if (!m) throw new Error(`service ${service}: unsupported port mapping "${p}"`);
    return [Number(m[1]), Number(m[2])];
  });
}

/** The script a one-shot setup service runs: its entrypoint's file, from the folder it mounts. */
function setupScript(service: string): string {
  const entrypoint = services[service]?.entrypoint;
  const args = Array.isArray(entrypoint) ? entrypoint : [];
  const inContainer = args.find((a) => a.endsWith('.sh'));
  if (!inContainer) throw new Error(`service ${service} runs no script`);
  const mount = (services[service].volumes ?? [])
    .map((v) => v.split(':'))
    .find(([, target]) => inContainer.startsWith(`${target}/`));
  if (!mount) throw new Error(`service ${service}: ${inContainer} is not in a mounted folder`);
  expect(mount[2]).toBe('ro');
  return read(path.join(mount[0], path.relative(mount[1], inContainer)));
}

function dependsOn(service: string): string[] {
  const d = services[service]?.depends_on ?? [];
  return Array.isArray(d) ? d : Object.keys(d);
}

/** Environment variables the worker's code reads: src/config.ts plus the API key in src/worker.ts. */
function envNamesReadByCode(): Set<string> {
  const names = new Set<string>(TEMPORAL_ENV_VARIABLES);
  for (const file of ['src/config.ts', 'src/worker.ts']) {
    for (const m of read(file).matchAll(/\b(?:process\.)?env\.([A-Z][A-Z0-9_]*)/g)) names.add(m[1]);
  }
  return names;
}

describe('docker-compose.yml', () => {
  test('has Postgres, a Temporal server, its Web UI and aca workers', () => {
    expect(Object.keys(services).sort()).toEqual([
      'aca-worker',
      'postgres',
      'temporal',
      'temporal-schema',
      'temporal-setup',
      'temporal-ui',
    ]);
  });

  test('pins every image to a version tag (no latest, no untagged images)', () => {
    for (const [name, service] of Object.entries(services)) {
      if (!service.image) continue;
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
    // `aca` prints links to http://<temporal host>:8233 unless ACA_UI_URL says otherwise.
    expect(loadConfig({}).uiUrl).toBe('http://127.0.0.1:8233');
    if (ui.TEMPORAL_CORS_ORIGINS) expect(ui.TEMPORAL_CORS_ORIGINS).toContain(':8233');
  });

  test('the worker is built from the Dockerfile, whose image runs `aca worker`', () => {
    const build = services['aca-worker'].build;
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
    expect(services['aca-worker'].entrypoint).toBeUndefined();
    expect(services['aca-worker'].command).toBeUndefined();
    // Workers start once the namespace and search attributes they use are registered.
    expect(services['aca-worker'].depends_on).toEqual({
      'temporal-setup': { condition: 'service_completed_successfully' },
      postgres: { condition: 'service_healthy' },
    });
  });

  test("the worker's environment uses exactly the names src/config.ts reads, pointing at the other services", () => {
    const w = env('aca-worker');
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
    // task queue and namespace reaches these workers.
    const defaults = loadConfig({});
    const config = loadConfig({ ...w, OPENAI_BASE_URL: 'http://model:8000/v1', ACA_MODEL: 'm' });
    expect(config.taskQueue).toBe(defaults.taskQueue);
    expect(config.namespace).toBe(defaults.namespace);
    expect(config.sandbox).toBe('bwrap');
    expect(config.databaseUrl).toBe(w.DATABASE_URL);
    expect(w.OPENAI_API_KEY).toBe('${OPENAI_API_KEY:-}');
    expect(w.OPENAI_BASE_URL).toMatch(/^\$\{OPENAI_BASE_URL/);
  });

  test("the worker's metrics port is the one the image exposes, and its state lives on a named volume", () => {
    const w = env('aca-worker');
    const docker = read('Dockerfile');
    expect(docker).toMatch(new RegExp(`^EXPOSE ${loadConfig(w).metricsPort}$`, 'm'));
    // ACA_HOME (conversations, test reports) and ACA_WORKSPACES must be on the volume every
    // replica of the worker mounts, or a run moved to another replica loses its files.
    const home = /ACA_HOME=(\S+)/.exec(docker)?.[1] ?? w.ACA_HOME;
    const workspaces = /ACA_WORKSPACES=(\S+)/.exec(docker)?.[1] ?? w.ACA_WORKSPACES;
    expect(home).toBeTruthy();
    const mount = (services['aca-worker'].volumes ?? [])
      .map((v) => v.split(':'))
      .find(([, target]) => target === home);
    expect(mount).toBeDefined();
    expect(Object.keys(compose.volumes ?? {})).toContain(mount![0]);
    expect(path.relative(home, workspaces).startsWith('..')).toBe(false);
  });
});
