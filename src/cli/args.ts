import { UserInputError } from '../shared/errors';

export interface FlagSpec {
  /** 'boolean' flags take no value; 'string' flags take the next word or `--flag=value`. */
  type: 'boolean' | 'string';
}

export interface ParsedArgs {
  positionals: string[];
  flags: Record<string, string | boolean>;
}

/** A deliberately small parser: unknown flags are errors, so typos never pass silently. */
export function parseArgs(argv: string[], specs: Record<string, FlagSpec>): ParsedArgs {
  const positionals: string[] = [];
  const flags: Record<string, string | boolean> = {};
  for (let i = 0; i < argv.length; i++) {
    const word = argv[i];
    if (word === '--') {
      positionals.push(...argv.slice(i + 1));
      break;
    }
    if (!word.startsWith('--') || word === '-') {
      positionals.push(word);
      continue;
    }
    const [name, inlineValue] = word.slice(2).split(/=(.*)/s, 2);
    const spec = specs[name];
    if (!spec) throw new UserInputError(`unknown option --${name}`);
    if (spec.type === 'boolean') {
      if (inlineValue !== undefined) throw new UserInputError(`option --${name} takes no value`);
      flags[name] = true;
      continue;
    }
    const value = inlineValue ?? argv[++i];
    if (value === undefined) throw new UserInputError(`option --${name} needs a value`);
    flags[name] = value;
  }
  return { positionals, flags };
}

export function positiveInteger(value: string | boolean | undefined, name: string): number | undefined {
  if (value === undefined) return undefined;
  const n = Number(value);
  if (typeof value !== 'string' || !/^\d+$/.test(value.trim()) || !Number.isSafeInteger(n) || n < 1) {
    throw new UserInputError(`--${name} must be a whole number of at least 1, got "${String(value)}"`);
  }
  return n;
}

export function stringFlag(value: string | boolean | undefined): string | undefined {
  return typeof value === 'string' ? value : undefined;
}
