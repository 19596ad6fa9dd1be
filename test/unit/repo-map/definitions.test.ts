import { extractDefinitions, isBinary, languageOf } from '../../../src/repo-map/definitions';

describe('top-level definitions, line by line', () => {
  test('Python: def, async def and class at column 0; nested ones and look-alikes are not', () => {
    const source = [
      'import os',
      '@decorator',
      'def parse_invoice(text: str) -> "Invoice":',
      '    def inner():',
      '        pass',
      'async def fetch_invoice(id):',
      'class Invoice(Base):',
      '    def total(self):',
      '        return 0',
      'class  Spaced :',
      'define = 3',
      'classic = 4',
      '#def commented():',
      'async  def  spaced_async():',
    ].join('\n');
    expect(extractDefinitions('python', source)).toEqual([
      { kind: 'def', name: 'parse_invoice' },
      { kind: 'def', name: 'fetch_invoice' },
      { kind: 'class', name: 'Invoice' },
      { kind: 'class', name: 'Spaced' },
      { kind: 'def', name: 'spaced_async' },
    ]);
  });

  test('TypeScript: exported functions, classes, consts, interfaces, types, enums and defaults', () => {
    const source = [
      "import { x } from './x';",
      'export function parseInvoice(text: string): Invoice {',
      '  function nested() {}',
      '}',
      'export async function fetchInvoice(id: string) {}',
      'export function* walk() {}',
      'export default class InvoiceStore {}',
      'export abstract class Shape {}',
      'export const TAX_RATE = 0.2;',
      'export let counter = 0;',
      'export interface Invoice { id: string }',
      'export type Total = number;',
      'export const enum Currency { EUR }',
      'export enum Status { Open }',
      'export declare function declared(): void;',
      'function helper() {}',
      'async function loadAll() {}',
      'class Internal {}',
      'const notExported = 1;',
      '  export function indented() {}',
      'export { a, b };',
    ].join('\n');
    expect(extractDefinitions('typescript', source)).toEqual([
      { kind: 'function', name: 'parseInvoice' },
      { kind: 'function', name: 'fetchInvoice' },
      { kind: 'function', name: 'walk' },
      { kind: 'class', name: 'InvoiceStore' },
      { kind: 'class', name: 'Shape' },
      { kind: 'const', name: 'TAX_RATE' },
      { kind: 'const', name: 'counter' },
      { kind: 'interface', name: 'Invoice' },
      { kind: 'type', name: 'Total' },
      { kind: 'enum', name: 'Currency' },
      { kind: 'enum', name: 'Status' },
      { kind: 'function', name: 'declared' },
      { kind: 'function', name: 'helper' },
      { kind: 'function', name: 'loadAll' },
      { kind: 'class', name: 'Internal' },
    ]);
  });

  test('JavaScript: default exports with and without a name, CommonJS exports', () => {
    const source = [
      'export default router;',
      'export default function () {}',
      'export default {',
      '  a: 1,',
      '};',
      'module.exports.slugify = function (s) {};',
      'exports.wordCount = (s) => 0;',
      'module.exports = { slugify };',
      'export const $store = 1;',
    ].join('\n');
    expect(extractDefinitions('javascript', source)).toEqual([
      { kind: 'default', name: 'router' },
      { kind: 'default', name: 'default' },
      { kind: 'default', name: 'default' },
      { kind: 'const', name: 'slugify' },
      { kind: 'const', name: 'wordCount' },
      { kind: 'const', name: '$store' },
    ]);
  });

  test('Windows line ends, a file without a final newline, and a megabyte-long line', () => {
    expect(extractDefinitions('python', 'def a():\r\n    pass\r\nclass B:\r\n')).toEqual([
      { kind: 'def', name: 'a' },
      { kind: 'class', name: 'B' },
    ]);
    const long = `export const data = "${'x'.repeat(1_000_000)}";\nexport function after() {}`;
    const started = performance.now();
    expect(extractDefinitions('typescript', long)).toEqual([
      { kind: 'const', name: 'data' },
      { kind: 'function', name: 'after' },
    ]);
    expect(performance.now() - started).toBeLessThan(200);
  });

  test('a file of generated code yields at most 200 definitions', () => {
    const source = Array.from({ length: 5000 }, (_, i) => `def f${i}():\n    pass`).join('\n');
    const found = extractDefinitions('python', source);
    expect(found).toHaveLength(200);
    expect(found[199]).toEqual({ kind: 'def', name: 'f199' });
  });

  test('languages by extension; binary content by a NUL byte near the start', () => {
    expect(languageOf('billing/invoice.py')).toBe('python');
    expect(languageOf('types/index.d.ts')).toBe('typescript');
    expect(languageOf('src/App.TSX')).toBe('typescript');
    expect(languageOf('lib/server.mjs')).toBe('javascript');
    expect(languageOf('README.md')).toBeNull();
    expect(languageOf('.py')).toBeNull();
    expect(languageOf('Makefile')).toBeNull();
    expect(isBinary(Buffer.from([0x7f, 0x45, 0x4c, 0x46, 0x00, 0x01]))).toBe(true);
    expect(isBinary(Buffer.from('def a():\n    pass\n'))).toBe(false);
  });
});
