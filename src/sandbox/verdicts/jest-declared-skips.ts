import * as fs from 'node:fs';
import * as path from 'node:path';
import type * as TS from 'typescript';

/**
 * Which skipped Jest tests the user's acceptance files skip themselves: read from each file's
 * syntax (nothing is run), so code under test cannot add to it. A test counts as declared skipped
 * when it is written `it.skip`, `test.skip`, `xit`, `xtest`, `test.todo` (with `.each` or
 * `.concurrent` too), sits in a `describe.skip` or `xdescribe`, or sits in a file with a `.only`
 * (`fit`, `fdescribe`, `describe.only`…) outside every one of them, as Jest then skips it.
 *
 * Names are matched as Jest builds them (describe titles and the test's title joined by spaces);
 * a title Jest computes at run time (a `.each` placeholder, a template's expression, a variable)
 * matches any text in its place.
 */
export type HonestSkip = (caseName: string) => boolean;

interface Declared {
  pattern: RegExp;
  skipped: boolean;
  only: boolean;
}

const BASES: Record<string, { describe: boolean; skip: boolean; only: boolean }> = {
  test: { describe: false, skip: false, only: false },
  it: { describe: false, skip: false, only: false },
  xit: { describe: false, skip: true, only: false },
  xtest: { describe: false, skip: true, only: false },
  fit: { describe: false, skip: false, only: true },
  describe: { describe: true, skip: false, only: false },
  xdescribe: { describe: true, skip: true, only: false },
  fdescribe: { describe: true, skip: false, only: true },
};
const MODIFIERS = new Set(['skip', 'only', 'todo', 'each', 'concurrent', 'failing']);
const ANY = '[\\s\\S]*';

export async function declaredJestSkips(sourceDir: string, testFiles: string[]): Promise<HonestSkip> {
  const ts = await import('typescript');
  const byFile = new Map<string, Declared[]>();
  for (const file of testFiles) {
    let text: string;
    try {
      text = fs.readFileSync(path.join(sourceDir, file), 'utf8');
    } catch {
      continue;
    }
    byFile.set(file, skippableTests(ts, file, text));
  }
  return (caseName) => {
    const at = caseName.indexOf('::');
    if (at < 0) return false;
    const declared = byFile.get(caseName.slice(0, at)) ?? [];
    const fullName = caseName.slice(at + 2);
    return declared.some((d) => d.pattern.test(fullName));
  };
}

/** The tests of one file that Jest may honestly report skipped. */
export function skippableTests(ts: typeof TS, file: string, text: string): Declared[] {
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true, scriptKind(ts, file));
  const aliases = new Map<string, string>(Object.keys(BASES).map((name) => [name, name]));
  const namespaces = new Set<string>();
  for (const statement of source.statements) {
    if (!ts.isImportDeclaration(statement) || !ts.isStringLiteral(statement.moduleSpecifier)) continue;
    if (statement.moduleSpecifier.text !== '@jest/globals') continue;
    const bindings = statement.importClause?.namedBindings;
    if (bindings && ts.isNamespaceImport(bindings)) namespaces.add(bindings.name.text);
    if (bindings && ts.isNamedImports(bindings)) {
      for (const el of bindings.elements) {
        const imported = (el.propertyName ?? el.name).text;
        if (imported in BASES) aliases.set(el.name.text, imported);
      }
    }
  }

  const chainOf = (expr: TS.Expression): { base: string; modifiers: string[] } | null => {
    const names: string[] = [];
    let node: TS.Expression = expr;
    while (ts.isPropertyAccessExpression(node)) {
      names.unshift(node.name.text);
      node = node.expression;
    }
    if (!ts.isIdentifier(node)) return null;
    let root = node.text;
    if (namespaces.has(root)) {
      const first = names.shift();
      if (first === undefined) return null;
      root = first;
    }
    const base = aliases.get(root);
    if (base === undefined || !names.every((n) => MODIFIERS.has(n))) return null;
    return { base, modifiers: names };
  };

  const titlePattern = (arg: TS.Expression | undefined, each: boolean): string => {
    if (arg === undefined) return ANY;
    if (ts.isStringLiteral(arg) || ts.isNoSubstitutionTemplateLiteral(arg)) {
      return each ? eachTitle(arg.text) : escape(arg.text);
    }
    if (ts.isTemplateExpression(arg)) {
      const parts = [arg.head.text, ...arg.templateSpans.map((span) => span.literal.text)];
      return parts.map((p) => (each ? eachTitle(p) : escape(p))).join(ANY);
    }
    return ANY;
  };

  const tests: { titles: string[]; skipped: boolean; only: boolean }[] = [];
  let fileHasOnly = false;
  interface Scope {
    titles: string[];
    skipped: boolean;
    only: boolean;
  }

  const visit = (node: TS.Node, scope: Scope): void => {
    if (ts.isCallExpression(node)) {
      let callee = node.expression;
      let each = false;
      if (ts.isCallExpression(callee) || ts.isTaggedTemplateExpression(callee)) {
        const inner = ts.isCallExpression(callee) ? callee.expression : callee.tag;
        const chain = chainOf(inner);
        if (chain?.modifiers.at(-1) === 'each') {
          each = true;
          callee = inner;
        }
      }
      const chain = each || !ts.isCallExpression(callee) ? chainOf(callee) : null;
      if (chain) {
        const base = BASES[chain.base];
        const has = (m: string): boolean => chain.modifiers.includes(m);
        const skipped = base.skip || has('skip') || (!base.describe && has('todo'));
        const only = base.only || has('only');
        fileHasOnly ||= only;
        const title = titlePattern(node.arguments[0], each);
        if (base.describe) {
          const inner: Scope = {
            titles: [...scope.titles, title],
            skipped: scope.skipped || skipped,
            only: scope.only || only,
          };
          for (const arg of node.arguments.slice(1)) visit(arg, inner);
          return;
        }
        tests.push({
          titles: [...scope.titles, title],
          skipped: scope.skipped || skipped,
          only: scope.only || only,
        });
        return;
      }
    }
    ts.forEachChild(node, (child) => visit(child, scope));
  };
  visit(source, { titles: [], skipped: false, only: false });

  return tests
    .map((t) => ({
      pattern: new RegExp(`^${t.titles.join(' ')}$`),
      skipped: t.skipped,
      only: t.only,
    }))
    .filter((t) => t.skipped || (fileHasOnly && !t.only));
}

function scriptKind(ts: typeof TS, file: string): TS.ScriptKind {
  if (file.endsWith('.tsx')) return ts.ScriptKind.TSX;
  if (file.endsWith('.jsx')) return ts.ScriptKind.JSX;
  if (file.endsWith('.js')) return ts.ScriptKind.JS;
  return ts.ScriptKind.TS;
}

function escape(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/** A `.each` title: printf placeholders and `$variable` references become any text. */
function eachTitle(text: string): string {
  return text
    .split(/%[sdifjoOp#]|\$[A-Za-z_][\w.]*/)
    .map(escape)
    .join(ANY);
}
