/**
 * The layer rule of .dependency-cruiser.cjs fires: a middle layer (agents, tools, sandbox, repo,
 * memory, store, eval, llm, repo-map, mcp, temporal, preflight) that imports activities,
 * workflows, api or cli is refused, a type-only import as much as a value one, while the layers
 * above still import the middle ones.
 * depcruise runs with the project's own rules on a fixture tree in a temporary folder, so the
 * fixture's imports never sit in the paths `npm run lint` checks.
 */
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { tempDirs } from '../helpers/temp-dirs';

const ROOT = path.resolve(__dirname, '../..');
const RULE = 'middle-layers-import-no-upper-layer';
const MIDDLE = [
  'agents',
  'tools',
  'sandbox',
  'repo',
  'memory',
  'store',
  'eval',
  'llm',
  'repo-map',
  'mcp',
  'temporal',
  'preflight',
];
const UPPER = ['activities', 'workflows', 'api', 'cli'];

const tempDir = tempDirs('aca-layer-rule-');

interface Violation {
  from: string;
  to: string;
  rule: { name: string };
}

function write(root: string, files: Record<string, string>): void {
  for (const [name, text] of Object.entries(files)) {
    fs.mkdirSync(path.dirname(path.join(root, name)), { recursive: true });
    fs.writeFileSync(path.join(root, name), text);
  }
}

/** The violations of the layer rule depcruise reports on the fixture tree, as "from -> to". */
function layerViolations(root: string): string[] {
  const cli = path.join(ROOT, 'node_modules/dependency-cruiser/bin/dependency-cruise.mjs');
  const config = path.join(ROOT, '.dependency-cruiser.cjs');
  const result = spawnSync(process.execPath, [cli, 'src', '--config', config, '--output-type', 'json'], {
    cwd: root,
    encoding: 'utf8',
  });
  if (!result.stdout) throw new Error(`depcruise printed nothing: ${result.stderr}`);
  const violations = (JSON.parse(result.stdout) as { summary: { violations: Violation[] } }).summary
    .violations;
  return violations
    .filter((v) => v.rule.name === RULE)
    .map((v) => `${v.from} -> ${v.to}`)
    .sort();
}

describe('the layer rule', () => {
  test('refuses every middle layer reaching up, and lets the layers above reach down', () => {
    const root = tempDir();
    const files: Record<string, string> = {
      'tsconfig.json': JSON.stringify({ compilerOptions: { module: 'commonjs', moduleResolution: 'node' } }),
    };
    for (const upper of UPPER) {
      files[`src/${upper}/entry.ts`] = 'export interface Entry { name: string }\nexport const entry = 1;\n';
      // The layers above may import the middle ones: none of these is a violation of the rule.
      files[`src/${upper}/uses-middle.ts`] = MIDDLE.map(
        (m, i) => `import { part } from '../${m}/part';\nexport const use${i} = part;\n`,
      ).join('');
    }
    for (const middle of MIDDLE) {
      files[`src/${middle}/part.ts`] = 'export const part = 2;\n';
      files[`src/${middle}/reaches-up.ts`] = UPPER.map(
        (u) => `import { entry as ${u} } from '../${u}/entry';\n`,
      )
        .concat([`export const all = [${UPPER.join(', ')}];\n`])
        .join('');
      files[`src/${middle}/types-only.ts`] =
        "import type { Entry } from '../workflows/entry';\nexport const e: Entry = { name: 'x' };\n";
      // Another middle layer beside it is not above it.
      files[`src/${middle}/beside.ts`] =
        `import { part } from '../${MIDDLE[(MIDDLE.indexOf(middle) + 1) % MIDDLE.length]}/part';\nexport const b = part;\n`;
    }
    write(root, files);

    const expected = MIDDLE.flatMap((m) => [
      ...UPPER.map((u) => `src/${m}/reaches-up.ts -> src/${u}/entry.ts`),
      `src/${m}/types-only.ts -> src/workflows/entry.ts`,
    ]).sort();
    expect(layerViolations(root)).toEqual(expected);
  });
});
