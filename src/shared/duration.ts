import { UserInputError } from './errors';

const UNIT_MS: Record<string, number> = { s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000 };

/** `90s`, `30m`, `24h`, `2d` or `1.5h`, as milliseconds; anything else is the user's mistake. */
export function parseDuration(text: string, option: string): number {
  const match = /^(\d+(?:\.\d+)?)(s|m|h|d)$/.exec(text.trim());
  const ms = match ? Math.round(Number(match[1]) * UNIT_MS[match[2]]) : NaN;
  if (!(ms >= 1_000) || ms > 365 * UNIT_MS.d) {
    throw new UserInputError(
      `--${option} must be a duration from 1s to 365d such as 90s, 30m, 24h or 2d, got "${text}"`,
    );
  }
  return ms;
}
