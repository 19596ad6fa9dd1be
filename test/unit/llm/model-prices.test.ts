import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { BUILTIN_PRICES, costOf, loadPriceTable, priceOf } from '../../../src/llm/model-prices';
import { UserInputError } from '../../../src/shared/errors';

function priceFile(content: string): string {
  const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'aca-prices-')), 'prices.json');
  fs.writeFileSync(file, content);
  return file;
}

describe('model prices', () => {
  test('a dated or vendor-prefixed name finds its model, and no name borrows a longer one’s price', () => {
    expect(priceOf(BUILTIN_PRICES, 'gpt-4o-mini-2024-07-18')).toEqual(priceOf(BUILTIN_PRICES, 'gpt-4o-mini'));
    expect(priceOf(BUILTIN_PRICES, 'openai/gpt-4.1')).toEqual(priceOf(BUILTIN_PRICES, 'gpt-4.1'));
    expect(priceOf(BUILTIN_PRICES, 'gpt-4o-mini')).not.toEqual(priceOf(BUILTIN_PRICES, 'gpt-4o'));
    expect(priceOf(BUILTIN_PRICES, 'gpt-4o-mini-turbo')).toBeNull();
    expect(priceOf(BUILTIN_PRICES, 'llama3.1:8b')).toBeNull();
  });

  test('cached prompt tokens cost the cached price, reasoning tokens the output price', () => {
    const price = { input: 2, cachedInput: 0.5, output: 8 };
    // 1,000 prompt tokens of which 600 cached, 500 completion tokens of which 300 reasoning.
    const usd = costOf({ prompt: 1000, completion: 500, cached: 600, reasoning: 300 }, price);
    expect(usd).toBeCloseTo((400 * 2 + 600 * 0.5 + 500 * 8) / 1e6, 12);
    // A server that reports more cached tokens than prompt tokens is not paid back.
    expect(costOf({ prompt: 10, completion: 0, cached: 50 }, price)).toBeCloseTo((10 * 0.5) / 1e6, 12);
  });

  test('ACA_PRICES adds and overrides entries; cached_input defaults to the input price', () => {
    const table = loadPriceTable(
      priceFile(JSON.stringify({ 'my-llama': { input: 0, output: 0 }, 'gpt-4o': { input: 1, output: 4 } })),
    );
    expect(priceOf(table, 'my-llama')).toEqual({ input: 0, cachedInput: 0, output: 0 });
    expect(priceOf(table, 'gpt-4o')).toEqual({ input: 1, cachedInput: 1, output: 4 });
    expect(priceOf(table, 'gpt-4o-mini')).toEqual(priceOf(BUILTIN_PRICES, 'gpt-4o-mini'));
  });

  test.each([
    ['not JSON', '{"a": ', /is not JSON/],
    ['an unknown key', JSON.stringify({ m: { input: 1, output: 1, currency: 'EUR' } }), /m: .*currency/],
    ['a negative price', JSON.stringify({ m: { input: -1, output: 1 } }), /m\.input/],
    ['a missing output price', JSON.stringify({ m: { input: 1 } }), /m\.output/],
  ])(
    'a price file with %s is refused with one error naming the file and the key',
    (_name, content, message) => {
      const file = priceFile(content);
      let error: unknown;
      try {
        loadPriceTable(file);
      } catch (err) {
        error = err;
      }
      expect(error).toBeInstanceOf(UserInputError);
      expect((error as Error).message).toContain(file);
      expect((error as Error).message).toMatch(message);
    },
  );

  test('a missing price file is refused', () => {
    expect(() => loadPriceTable('/nonexistent/prices.json')).toThrow(/ACA_PRICES: cannot read \/nonexistent/);
  });
});
