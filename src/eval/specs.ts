import * as fs from 'node:fs';
import { z } from 'zod';
import { UserInputError } from '../shared/errors';
import { testEnvProblem, type TestEnv } from '../shared/test-env';

/**
 * `--specs FILE`: what each repository's tests need, keyed by `owner/name`. The agent's runs take
 * the test command, setup command and variables as `aca run` takes `--test-cmd` and `--setup-cmd`;
 * the evaluation runs the setup command and gives the variables to its test command too.
 */
export interface RepoSpec {
  testCommand: string | null;
  setupCommand: string | null;
  env: TestEnv;
}

const commandLine = z
  .string()
  .min(1)
  .max(4000)
  .refine((line) => !line.includes('\0') && !/[\r\n]/.test(line), 'must be one line');

const specSchema = z.strictObject({
  testCommand: commandLine.optional(),
  setupCommand: commandLine.optional(),
  env: z.record(z.string(), z.string()).optional(),
});

const REPO = /^[A-Za-z0-9][A-Za-z0-9._-]*\/[A-Za-z0-9][A-Za-z0-9._-]*$/;

/** Reads a specs file; a UserInputError names the first problem (exit 2). */
export function readSpecs(file: string): Map<string, RepoSpec> {
  let value: unknown;
  try {
    value = JSON.parse(fs.readFileSync(file, 'utf8'));
  } catch (err) {
    throw new UserInputError(`cannot read the specs file ${file}: ${(err as Error).message}`);
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new UserInputError(`${file} is not a JSON object keyed by owner/name`);
  }
  const specs = new Map<string, RepoSpec>();
  for (const [repo, entry] of Object.entries(value)) {
    if (!REPO.test(repo)) throw new UserInputError(`${file}: key ${JSON.stringify(repo)} is not owner/name`);
    const parsed = specSchema.safeParse(entry);
    if (!parsed.success) {
      const issue = parsed.error.issues[0]!;
      throw new UserInputError(
        `${file}: ${repo}${issue.path.length ? `.${issue.path.join('.')}` : ''} ${issue.message} (allowed: testCommand, setupCommand, env)`,
      );
    }
    const env = parsed.data.env ?? {};
    const problem = testEnvProblem(env);
    if (problem) throw new UserInputError(`${file}: ${repo}.env: ${problem}`);
    specs.set(repo, {
      testCommand: parsed.data.testCommand ?? null,
      setupCommand: parsed.data.setupCommand ?? null,
      env,
    });
  }
  return specs;
}
