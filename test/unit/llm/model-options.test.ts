import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { loadConfig } from '../../../src/config';
import { optionsForModel } from '../../../src/llm/model-options';
import { UserInputError } from '../../../src/shared/errors';

describe('ACA_MODEL_OPTIONS', () => {
  let dir: string;
  beforeEach(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'aca-model-options-'));
  });
  afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

  const write = (text: string) => {
    const file = path.join(dir, 'models.json');
    fs.writeFileSync(file, text);
    return file;
  };

  test('unset means no options', () => {
    expect(loadConfig({}).modelOptions).toEqual({});
  });

  test('a model entry wins key by key over "*"', () => {
    const file = write(
      JSON.stringify({
        '*': { temperature: 0.2, max_completion_tokens: 4096 },
        'qwen2.5-coder:7b': { context_tokens: 32768, temperature: 0 },
        'o4-mini': { reasoning_effort: 'low' },
      }),
    );
    const table = loadConfig({ ACA_MODEL_OPTIONS: file }).modelOptions;
    expect(optionsForModel(table, 'qwen2.5-coder:7b')).toEqual({
      temperature: 0,
      max_completion_tokens: 4096,
      context_tokens: 32768,
    });
    expect(optionsForModel(table, 'o4-mini')).toEqual({
      temperature: 0.2,
      max_completion_tokens: 4096,
      reasoning_effort: 'low',
    });
    expect(optionsForModel({}, 'gpt-4o')).toEqual({});
  });

  test('streaming is per model and off unless asked', () => {
    const file = write(JSON.stringify({ 'qwen2.5-coder:7b': { stream: true, stream_idle_seconds: 90 } }));
    const table = loadConfig({ ACA_MODEL_OPTIONS: file }).modelOptions;
    expect(optionsForModel(table, 'qwen2.5-coder:7b')).toEqual({ stream: true, stream_idle_seconds: 90 });
    expect(optionsForModel(table, 'gpt-4o').stream).toBeUndefined();
  });

  test.each([
    [
      'an unknown key',
      { 'gpt-4o': { num_ctx: 8192 } },
      /models\.json, key "gpt-4o\.num_ctx": .*[Uu]nrecognized/,
    ],
    ['a wrong type', { 'gpt-4o': { temperature: 'hot' } }, /key "gpt-4o\.temperature"/],
    ['an out-of-range value', { '*': { temperature: 3 } }, /key "\*\.temperature"/],
    ['an unknown effort', { o3: { reasoning_effort: 'max' } }, /key "o3\.reasoning_effort"/],
    ['a stream flag that is not a boolean', { '*': { stream: 'yes' } }, /key "\*\.stream"/],
    ['a silence of no time', { m: { stream: true, stream_idle_seconds: 0 } }, /key "m\.stream_idle_seconds"/],
  ])('%s is one clear error naming the file and the key', (_what, content, message) => {
    const file = write(JSON.stringify(content));
    expect(() => loadConfig({ ACA_MODEL_OPTIONS: file })).toThrow(UserInputError);
    expect(() => loadConfig({ ACA_MODEL_OPTIONS: file })).toThrow(message);
  });

  test('a file that is not JSON or is missing is named', () => {
    const file = write('{ "gpt-4o": ');
    expect(() => loadConfig({ ACA_MODEL_OPTIONS: file })).toThrow(
      /ACA_MODEL_OPTIONS file .*models\.json: is not JSON/,
    );
    const missing = path.join(dir, 'nope.json');
    expect(() => loadConfig({ ACA_MODEL_OPTIONS: missing })).toThrow(/nope\.json: cannot be read \(ENOENT\)/);
  });
});
