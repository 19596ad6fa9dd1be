import type { AcaConfig } from '../config';
import { UserInputError } from '../shared/errors';

/** `aca up` and `aca demo`'s `--port` and `--ui-port`, as commander hands them over. */
export interface StackPortFlags {
  port?: string;
  uiPort?: string;
}

/**
 * The configuration with the ports asked for: `--port` moves the Temporal address (same host),
 * `--ui-port` the Web UI the links point at (and the one a dev server started here serves).
 */
export function withStackPorts(config: AcaConfig, flags: StackPortFlags): AcaConfig {
  let next = config;
  if (flags.port !== undefined) {
    const address = `${hostOf(config.temporalAddress)}:${fixedPort(flags.port, '--port')}`;
    next = { ...next, temporalAddress: address, temporalConnection: { ...next.temporalConnection, address } };
  }
  if (flags.uiPort !== undefined) {
    const host = hostOf(next.temporalAddress);
    const uiPort = fixedPort(flags.uiPort, '--ui-port');
    next = { ...next, uiUrl: `http://${host === '127.0.0.1' ? 'localhost' : host}:${uiPort}` };
  }
  return next;
}

function hostOf(address: string): string {
  return address.replace(/:\d+$/, '');
}

/** A port a server listens on: 1 to 65535 (0, "any", would leave the address unknown to other commands). */
function fixedPort(value: string, flag: string): number {
  const n = Number(value);
  if (!/^\d+$/.test(value.trim()) || n < 1 || n > 65535) {
    throw new UserInputError(`${flag} must be a port number from 1 to 65535, got "${value}"`);
  }
  return n;
}
