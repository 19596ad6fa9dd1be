import { UserInputError } from '../shared/errors';

export function positiveInteger(value: string | boolean | undefined, name: string): number | undefined {
  if (value === undefined) return undefined;
  const n = Number(value);
  if (typeof value !== 'string' || !/^\d+$/.test(value.trim()) || !Number.isSafeInteger(n) || n < 1) {
    throw new UserInputError(`--${name} must be a whole number of at least 1, got "${String(value)}"`);
  }
  return n;
}

/** A TCP port as typed: 0 (any free one) to 65535. */
export function portNumber(value: string): number {
  const n = Number(value);
  if (!/^\d+$/.test(value.trim()) || !Number.isSafeInteger(n) || n > 65535) {
    throw new UserInputError(`--port must be a port number from 0 to 65535, got "${value}"`);
  }
  return n;
}
