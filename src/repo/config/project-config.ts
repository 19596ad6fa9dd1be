import { z } from 'zod';
import { UserInputError } from '../../shared/errors';
import { MAX_TARGETS, targetProblem } from '../../shared/targets';
import type { ProjectLimits } from '../../shared/test-command';
import type { LimitMaximums } from '../../shared/limit-maximums';

/** The file at a repository's root where a project tells aca how to test it. */
export const PROJECT_CONFIG_FILE = '.aca.json';

/** Larger than any sensible `.aca.json`; a bigger file is refused before it is parsed. */
export const MAX_PROJECT_CONFIG_BYTES = 64 * 1024;

const commandLine = z
  .string()
  .refine((text) => text.trim() !== '', 'must not be empty')
  .refine((text) => !text.includes('\0'), 'must not contain a NUL character');

const ProjectConfig = z.strictObject({
  testCommand: commandLine.optional(),
  setupCommand: commandLine.optional(),
  limits: z
    .strictObject({
      wallTimeSeconds: z
        .number()
        .int()
        .min(1)
        .max(24 * 3600)
        .optional(),
      memoryMiB: z
        .number()
        .int()
        .min(256)
        .max(1024 * 1024)
        .optional(),
      cpuSeconds: z
        .number()
        .int()
        .min(1)
        .max(24 * 3600)
        .optional(),
    })
    .optional(),
  targets: z
    .array(
      z.string().superRefine((id, ctx) => {
        const problem = targetProblem(id);
        if (problem) ctx.addIssue({ code: 'custom', message: `target "${id.slice(0, 200)}" ${problem}` });
      }),
    )
    .max(MAX_TARGETS)
    .optional(),
  tools: z.strictObject({ runCommand: z.boolean().optional() }).optional(),
});

export interface ProjectConfig {
  testCommand: string | null;
  setupCommand: string | null;
  limits: ProjectLimits;
  /** Tests every run of the project must leave passing, whatever the baseline said. */
  targets: string[];
  /** `tools.runCommand`: false leaves `run_command` out of every agent's tools. */
  runCommand: boolean;
}

export const NO_PROJECT_CONFIG: ProjectConfig = {
  testCommand: null,
  setupCommand: null,
  limits: {},
  targets: [],
  runCommand: true,
};

/** Reads `.aca.json`'s text; a UserInputError names the file and the first thing wrong with it. */
export function parseProjectConfig(text: string, source: string): ProjectConfig {
  if (Buffer.byteLength(text) > MAX_PROJECT_CONFIG_BYTES) {
    throw new UserInputError(`${source} is larger than ${MAX_PROJECT_CONFIG_BYTES} bytes`);
  }
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (err) {
    throw new UserInputError(`${source} is not valid JSON: ${(err as Error).message}`);
  }
  const parsed = ProjectConfig.safeParse(raw);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    const where = issue.path.length > 0 ? issue.path.join('.') : 'the file';
    const detail =
      issue.code === 'unrecognized_keys' ? `unknown key(s) ${issue.keys.join(', ')}` : issue.message;
    throw new UserInputError(
      `${source}: ${where}: ${detail} (allowed: testCommand, setupCommand, limits.{wallTimeSeconds,memoryMiB,cpuSeconds}, targets, tools.runCommand)`,
    );
  }
  const { testCommand, setupCommand, limits, targets, tools } = parsed.data;
  return {
    testCommand: testCommand ?? null,
    setupCommand: setupCommand ?? null,
    limits: limits ?? {},
    targets: targets ?? [],
    runCommand: tools?.runCommand ?? true,
  };
}

/** Each project limit, with the maximum that bounds it and the setting that names that maximum. */
const BOUNDS = [
  { key: 'wallTimeSeconds', maximum: 'wallSeconds', variable: 'ACA_MAX_WALL_SECONDS' },
  { key: 'cpuSeconds', maximum: 'cpuSeconds', variable: 'ACA_MAX_CPU_SECONDS' },
  { key: 'memoryMiB', maximum: 'memoryMiB', variable: 'ACA_MAX_MEMORY_MIB' },
] as const;

/** Refuses a limit above what workers allow, naming it, its maximum and the setting that raises it. */
export function checkProjectLimits(limits: ProjectLimits, maximums: LimitMaximums, source: string): void {
  for (const { key, maximum, variable } of BOUNDS) {
    const value = limits[key];
    if (value !== undefined && value > maximums[maximum]) {
      throw new UserInputError(
        `${source}: limits.${key} is ${value}, above the most a run may have (${maximums[maximum]}, set by ${variable})`,
      );
    }
  }
}

/** The limits held to the maximums, and which of them were lowered. */
export function clampProjectLimits(
  limits: ProjectLimits,
  maximums: LimitMaximums,
): { limits: ProjectLimits; lowered: string[] } {
  const clamped: ProjectLimits = { ...limits };
  const lowered: string[] = [];
  for (const { key, maximum } of BOUNDS) {
    const value = limits[key];
    if (value !== undefined && value > maximums[maximum]) {
      clamped[key] = maximums[maximum];
      lowered.push(`limits.${key} ${value} -> ${maximums[maximum]}`);
    }
  }
  return { limits: clamped, lowered };
}
