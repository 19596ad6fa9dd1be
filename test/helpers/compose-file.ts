/**
 * docker-compose.yml as docker compose reads it (anchors and `<<` merges resolved, every scalar a
 * string), for the tests that check the stack without Docker.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { parse } from 'yaml';

export type YamlValue = string | null | YamlValue[] | { [key: string]: YamlValue };

export type ComposeService = {
  image?: string;
  build?: string | { context?: string; dockerfile?: string };
  hostname?: string;
  user?: string;
  security_opt?: string[];
  environment?: Record<string, string | null>;
  ports?: string[];
  depends_on?: string[] | Record<string, { condition?: string }>;
  volumes?: string[];
  healthcheck?: { test?: string[] | string };
  command?: string | string[];
  entrypoint?: string | string[];
};

export const ROOT = path.resolve(__dirname, '..', '..');

export const readRepoFile = (file: string): string => fs.readFileSync(path.join(ROOT, file), 'utf8');

export const compose = parse(readRepoFile('docker-compose.yml'), { schema: 'failsafe', merge: true }) as {
  services: Record<string, ComposeService>;
  volumes?: Record<string, YamlValue>;
};

export function serviceEnv(service: string): Record<string, string> {
  const e = compose.services[service]?.environment;
  if (!e || Array.isArray(e)) throw new Error(`service ${service} needs an environment mapping`);
  return Object.fromEntries(Object.entries(e).map(([k, v]) => [k, v ?? '']));
}

/** The service's volume mounts as source, target and (when given) mode. */
export function mounts(service: string): Array<{ source: string; target: string; mode?: string }> {
  return (compose.services[service]?.volumes ?? []).map((v) => {
    const [source, target, mode] = v.split(':');
    return { source, target, mode };
  });
}

/**
 * The script a one-shot service runs: its entrypoint's `.sh` file, as a path in this repository
 * (found through the folder the service mounts), and whether that folder is mounted read-only.
 */
export function serviceScript(service: string): { file: string; readOnly: boolean } {
  const entrypoint = compose.services[service]?.entrypoint;
  const args = Array.isArray(entrypoint) ? entrypoint : [];
  const inContainer = args.find((a) => a.endsWith('.sh'));
  if (!inContainer) throw new Error(`service ${service} runs no script`);
  const mount = mounts(service).find(({ target }) => inContainer.startsWith(`${target}/`));
  if (!mount) throw new Error(`service ${service}: ${inContainer} is not in a mounted folder`);
  return {
    file: path.join(ROOT, mount.source, path.relative(mount.target, inContainer)),
    readOnly: mount.mode === 'ro',
  };
}
