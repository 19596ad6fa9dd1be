import * as fs from 'node:fs';
import { z } from 'zod';
import { UserInputError } from '../shared/errors';

/** A list of test ids, or that list JSON-encoded as a string (as SWE-bench's datasets hold it). */
const testIds = z.preprocess(
  (value) => {
    if (typeof value !== 'string') return value;
    try {
      return JSON.parse(value) as unknown;
    } catch {
      return value;
    }
  },
  z.array(z.string(), { error: 'is neither a list of test ids nor one JSON-encoded' }),
);

/** One SWE-bench instance: the fields aca uses; any other field is kept in the line and ignored. */
export const instanceSchema = z.looseObject({
  instance_id: z
    .string()
    .min(1)
    .max(200)
    .regex(/^[A-Za-z0-9][A-Za-z0-9._-]*$/, 'holds characters other than letters, digits, . _ -'),
  repo: z.string().regex(/^[A-Za-z0-9][A-Za-z0-9._-]*\/[A-Za-z0-9][A-Za-z0-9._-]*$/, 'is not owner/name'),
  base_commit: z.string().regex(/^[0-9a-f]{7,64}$/, 'is not a commit id'),
  problem_statement: z.string().min(1),
  patch: z.string(),
  test_patch: z.string(),
  FAIL_TO_PASS: testIds,
  PASS_TO_PASS: testIds,
  test_cmd: z.string().min(1).nullish(),
});

export type EvalInstance = z.infer<typeof instanceSchema>;

/** Reads an instances file (one JSON object a line; blank lines skipped); a bad line is a UserInputError. */
export function readInstances(file: string): EvalInstance[] {
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch (err) {
    throw new UserInputError(`cannot read the instances file ${file}: ${(err as Error).message}`);
  }
  const instances: EvalInstance[] = [];
  const seen = new Set<string>();
  text.split('\n').forEach((line, index) => {
    if (!line.trim()) return;
    const where = `${file} line ${index + 1}`;
    let value: unknown;
    try {
      value = JSON.parse(line);
    } catch {
      throw new UserInputError(`${where} is not JSON`);
    }
    const parsed = instanceSchema.safeParse(value);
    if (!parsed.success) {
      const issue = parsed.error.issues[0]!;
      throw new UserInputError(
        `${where} is not an instance: ${issue.path.join('.') || 'the line'} ${issue.message}`,
      );
    }
    if (seen.has(parsed.data.instance_id)) {
      throw new UserInputError(`${where}: instance ${parsed.data.instance_id} appears twice`);
    }
    seen.add(parsed.data.instance_id);
    instances.push(parsed.data);
  });
  if (instances.length === 0) throw new UserInputError(`${file} holds no instance`);
  return instances;
}

/** `--only ID,ID…` then `--limit N`, in the file's order; an unknown id is a UserInputError. */
export function selectInstances(
  instances: EvalInstance[],
  only: string[] | undefined,
  limit: number | undefined,
): EvalInstance[] {
  let chosen = instances;
  if (only && only.length > 0) {
    const known = new Set(instances.map((i) => i.instance_id));
    const unknown = only.filter((id) => !known.has(id));
    if (unknown.length > 0) throw new UserInputError(`--only names unknown instances: ${unknown.join(', ')}`);
    chosen = instances.filter((i) => only.includes(i.instance_id));
  }
  return limit === undefined ? chosen : chosen.slice(0, limit);
}

/** The files a git diff changes, from its `diff --git a/X b/Y` headers (both sides of a rename). */
export function patchFiles(patch: string): string[] {
  const files = new Set<string>();
  for (const line of patch.split('\n')) {
    const match = /^diff --git a\/(.+) b\/(.+)$/.exec(line);
    if (!match) continue;
    files.add(match[1]!);
    files.add(match[2]!);
  }
  return [...files].sort();
}
