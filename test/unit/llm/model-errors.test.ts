import OpenAI from 'openai';
import { contextLengthExceeded, rejectsToolChoice, toActivityFailure } from '../../../src/llm/model-errors';
import { createOpenAIChatModel, endpointForDisplay } from '../../../src/llm/chat-model';

const apiError = (status: number, error: Record<string, unknown>) =>
  OpenAI.APIError.generate(status, { error }, undefined, new Headers());

describe('telling a too-long request from other refusals', () => {
  test.each([
    [
      'OpenAI',
      400,
      {
        message:
          "This model's maximum context length is 128000 tokens. However, your messages resulted in 130001 tokens.",
        type: 'invalid_request_error',
        code: 'context_length_exceeded',
      },
      128000,
    ],
    [
      'vLLM',
      400,
      {
        message:
          "This model's maximum context length is 16384 tokens. However, you requested 122946 tokens (112946 in the messages, 10000 in the completion). Please reduce the length of the messages or completion.",
        type: 'BadRequestError',
      },
      16384,
    ],
    [
      'llama.cpp',
      400,
      {
        message: 'the request exceeds the available context size, try increasing it',
        type: 'exceed_context_size_error',
        n_prompt_tokens: 14429,
        n_ctx: 8192,
      },
      8192,
    ],
    [
      'llama.cpp answering 500',
      500,
      {
        message:
          'the request exceeds the available context size. try increasing the context size or enable context shift',
        type: 'exceed_context_size_error',
        n_ctx: 256,
      },
      256,
    ],
    ['a server that names no limit', 400, { message: 'Prompt is too long' }, null],
  ])('%s', (_server, status, body, limit) => {
    expect(contextLengthExceeded(apiError(status, body))).toEqual({ statedLimit: limit });
  });

  test('other 400s and other errors are not context-length errors', () => {
    expect(contextLengthExceeded(apiError(400, { message: 'Invalid tools schema' }))).toBeNull();
    expect(contextLengthExceeded(apiError(500, { message: 'maximum context length is 4096' }))).toBeNull();
    expect(contextLengthExceeded(new Error('maximum context length'))).toBeNull();
    // Unchanged: a 400 that is not cured by trimming still fails the activity at once.
    expect(toActivityFailure(apiError(400, { message: 'Invalid tools schema' }))).toMatchObject({
      nonRetryable: true,
    });
  });

  test('a refused tool_choice is recognised in the phrasings servers use', () => {
    expect(rejectsToolChoice(apiError(400, { message: 'tool_choice is not supported' }))).toBe(true);
    expect(
      rejectsToolChoice(
        apiError(400, {
          message: '"auto" tool choice requires --enable-auto-tool-choice and --tool-call-parser to be set',
        }),
      ),
    ).toBe(true);
    expect(rejectsToolChoice(apiError(400, { message: 'Invalid tools schema' }))).toBe(false);
    expect(rejectsToolChoice(apiError(500, { message: 'tool_choice crashed' }))).toBe(false);
  });
});

describe('a model endpoint that cannot be reached is named', () => {
  test('the failure names the address tried, so a retried step says where it looked', () => {
    const failure = toActivityFailure(
      new OpenAI.APIConnectionError({ message: 'Connection error.' }),
      'http://127.0.0.1:9/v1',
    );
    expect(failure.message).toBe('model endpoint unreachable at http://127.0.0.1:9/v1: Connection error.');
  });

  test('the address the chat model gives shows no credentials', () => {
    expect(endpointForDisplay('https://user:secret@llm.example:8443/v1/?key=sk-123#x')).toBe(
      'https://llm.example:8443/v1',
    );
    expect(createOpenAIChatModel({ baseURL: 'http://k:s@127.0.0.1:9/v1' }).endpoint).toBe(
      'http://127.0.0.1:9/v1',
    );
    expect(createOpenAIChatModel({}).endpoint).toBe('https://api.openai.com/v1');
  });
});
