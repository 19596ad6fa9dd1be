import { z } from 'zod';

/**
 * One zod schema per tool. The same object yields the JSON schema the model sees
 * and the parser its arguments go through, so the two can never disagree.
 * Strict objects: unknown keys are rejected, as the contract (docs/contract.md) requires.
 */
const relativePath = z.string().min(1).describe('A path relative to the workspace root, e.g. "src/app.py".');
const stringList = z.array(z.string());

export const TOOL_SCHEMAS = {
  list_files: z.strictObject({
    path: z
      .string()
      .optional()
      .describe('Folder to list, relative to the workspace root; the root when omitted.'),
  }),
  read_file: z.strictObject({ path: relativePath }),
  create_file: z.strictObject({
    path: relativePath,
    content: z.string().describe('The whole content of the file; an existing file is overwritten.'),
  }),
  delete_file: z.strictObject({ path: relativePath }),
  finish: z.strictObject({ summary: z.string().describe('What you did in this turn, in a few sentences.') }),
  submit_plan: z.strictObject({
    summary: z.string(),
    steps: stringList.describe('Ordered implementation steps.'),
    files: stringList.describe('Files that will be created or changed.'),
  }),
  submit_analysis: z.strictObject({
    root_cause: z.string().describe('Why the tests failed.'),
    fix_hypothesis: z.string().describe('The change that should make them pass.'),
    files_to_change: stringList,
    tests_wrong: z.boolean().describe('True when the tests themselves are wrong, not the code.'),
  }),
} as const;

export type ToolName = keyof typeof TOOL_SCHEMAS;
export type ToolArgs<N extends ToolName> = z.infer<(typeof TOOL_SCHEMAS)[N]>;

export const FILE_TOOL_NAMES = ['list_files', 'read_file', 'create_file', 'delete_file'] as const;
export type FileToolName = (typeof FILE_TOOL_NAMES)[number];

const TOOL_DESCRIPTIONS: Record<ToolName, string> = {
  list_files: 'List the files under a folder of the workspace, recursively.',
  read_file: 'Read a text file of the workspace.',
  create_file: 'Create a file in the workspace, or overwrite it, with the given content.',
  delete_file: 'Delete a file of the workspace.',
  finish: 'End your turn once your work is done.',
  submit_plan: 'Submit the implementation plan; this ends your turn.',
  submit_analysis: 'Submit your analysis of the failing tests; this ends your turn.',
};

export interface FunctionToolDefinition {
  type: 'function';
  function: { name: string; description: string; parameters: Record<string, unknown> };
}

export function isToolName(name: string): name is ToolName {
  return Object.prototype.hasOwnProperty.call(TOOL_SCHEMAS, name);
}

export function toolDefinition(name: ToolName): FunctionToolDefinition {
  const { $schema: _ignored, ...parameters } = z.toJSONSchema(TOOL_SCHEMAS[name]) as Record<string, unknown>;
  return { type: 'function', function: { name, description: TOOL_DESCRIPTIONS[name], parameters } };
}

/** Parses raw JSON arguments with the tool's schema; the error text goes back to the model. */
export function parseToolArguments<N extends ToolName>(
  name: N,
  rawArguments: string,
): { ok: true; args: ToolArgs<N> } | { ok: false; error: string } {
  let candidate: unknown;
  try {
    candidate = rawArguments.trim() === '' ? {} : JSON.parse(rawArguments);
  } catch (err) {
    return { ok: false, error: `arguments are not valid JSON: ${(err as Error).message}` };
  }
  const parsed = TOOL_SCHEMAS[name].safeParse(candidate);
  if (!parsed.success) {
    const issues = parsed.error.issues
      .map((issue) => `${issue.path.length ? issue.path.join('.') : '(arguments)'}: ${issue.message}`)
      .join('; ');
    return { ok: false, error: `arguments do not match the schema of ${name}: ${issues}` };
  }
  return { ok: true, args: parsed.data as ToolArgs<N> };
}
