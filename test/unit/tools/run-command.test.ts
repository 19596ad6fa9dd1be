/** run_command's arguments as the model sends them: strict, bounded, with clear refusals. */
import {
  commandTarget,
  DEFAULT_COMMAND_TIMEOUT_SECONDS,
  RUN_COMMAND_DESCRIPTION,
  runCommandParameters,
  runCommandTool,
} from '../../../src/tools/run-command';
import { functionDefinition, parseArguments, type Tool } from '../../../src/tools/tool';
import { MAX_COMMAND_CHARS } from '../../../src/sandbox';

const parse = (raw: string) => parseArguments(runCommandTool, raw);

describe('run_command arguments', () => {
  test('a command line, with or without a time limit', () => {
    expect(parse('{"command":"pytest -x"}')).toEqual({ ok: true, args: { command: 'pytest -x' } });
    expect(parse('{"command":"ls","timeout_seconds":30}')).toEqual({
      ok: true,
      args: { command: 'ls', timeout_seconds: 30 },
    });
  });

  test.each([
    ['{}', 'command'],
    ['{"command":""}', 'command'],
    ['{"command":"   "}', 'blank'],
    ['{"command":"ls\\u0000rm"}', 'NUL'],
    ['{"command":"ls","timeout_seconds":0}', 'timeout_seconds'],
    ['{"command":"ls","timeout_seconds":1.5}', 'timeout_seconds'],
    [`{"command":"ls","timeout_seconds":${DEFAULT_COMMAND_TIMEOUT_SECONDS + 1}}`, 'timeout_seconds'],
    ['{"command":"ls","timeout_seconds":"10"}', 'timeout_seconds'],
    ['{"command":"ls","cwd":"/"}', 'cwd'],
    ['{"command":["ls"]}', 'command'],
  ])('%s is refused, naming %s', (raw, named) => {
    const parsed = parse(raw);
    expect(parsed.ok).toBe(false);
    if (!parsed.ok) {
      expect(parsed.kind).toBe('schema');
      expect(parsed.error).toContain(named);
    }
  });

  test('a command line past the limit is refused', () => {
    expect(runCommandParameters.safeParse({ command: 'x'.repeat(MAX_COMMAND_CHARS) }).success).toBe(true);
    expect(runCommandParameters.safeParse({ command: 'x'.repeat(MAX_COMMAND_CHARS + 1) }).success).toBe(
      false,
    );
  });

  test('arguments that are not JSON are refused as such', () => {
    const parsed = parse('{"command": ');
    expect(parsed).toMatchObject({ ok: false, kind: 'json' });
  });

  test('the model is told the limits it works under', () => {
    const definition = functionDefinition(runCommandTool as unknown as Tool);
    expect(definition.function.name).toBe('run_command');
    expect(definition.function.description).toBe(RUN_COMMAND_DESCRIPTION);
    expect(RUN_COMMAND_DESCRIPTION).toContain(String(DEFAULT_COMMAND_TIMEOUT_SECONDS));
    expect(definition.function.parameters).toMatchObject({
      type: 'object',
      required: ['command'],
      additionalProperties: false,
      properties: {
        timeout_seconds: { type: 'integer', minimum: 1, maximum: DEFAULT_COMMAND_TIMEOUT_SECONDS },
      },
    });
  });

  test('the target is the command line on one short line', () => {
    expect(commandTarget('  pytest\n  -x  ')).toBe('pytest -x');
    const long = commandTarget(`echo ${'a'.repeat(200)}`);
    expect(long).toHaveLength(80);
    expect(long.endsWith('…')).toBe(true);
    expect(runCommandTool.target({ command: 'ls -la' })).toBe('ls -la');
  });

  // The target is the step's summary in workflow history, which the Web UI and `temporal` show
  // as they are: a terminal escape or a bidi override of the model's command must not reach them.
  test("the target shows the command line's hidden characters as escapes", () => {
    const target = commandTarget('printf ok\u001b]52;c;ZXZpbA==\u0007 # \u202etxt.exe\u009b2J\u200b');
    expect(target).toBe('printf ok\\x1b]52;c;ZXZpbA==\\x07 # \\u202etxt.exe\\u009b2J\\u200b');
    expect(target).not.toMatch(/[\p{Cc}\p{Cf}]/u);
    const long = commandTarget('\u001b'.repeat(200));
    expect(long).toHaveLength(80);
    expect(long).not.toMatch(/\p{Cc}/u);
  });
});
