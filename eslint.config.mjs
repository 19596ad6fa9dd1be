import tseslint from 'typescript-eslint';
import { builtinModules } from 'node:module';

// Relative paths from anywhere under src/ to the top-level bench/ folder.
const BENCH_IMPORTS = ['**/bench', '**/bench/**'];

const nodeBuiltins = [...builtinModules, ...builtinModules.map((m) => `node:${m}`)];

export default tseslint.config(
  { ignores: ['dist/**', 'node_modules/**', 'bin/**', '*.config.js', '*.config.mjs'] },
  ...tseslint.configs.recommended,
  {
    files: ['src/**/*.ts', 'test/**/*.ts', 'bench/**/*.ts'],
    languageOptions: { parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname } },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_', destructuredArrayIgnorePattern: '^_' }],
    },
  },
  {
    // The benchmarks import the product, never the other way round: bench/ is not shipped.
    files: ['src/**/*.ts'],
    ignores: ['src/workflows/**/*.ts'],
    rules: {
      'no-restricted-imports': ['error', { patterns: [{ group: BENCH_IMPORTS, message: 'src/ never imports bench/.' }] }],
    },
  },
  {
    // Workflow code is replayed deterministically inside a sandboxed V8 isolate.
    files: ['src/workflows/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          paths: [
            ...nodeBuiltins.map((name) => ({ name, message: 'Node built-ins are not deterministic workflow code.' })),
            { name: 'openai', message: 'Model calls belong in activities.' },
            { name: 'pg', message: 'Database access belongs in activities.' },
            { name: 'zod', message: 'Keep the workflow bundle lean: validate in activities.' },
          ],
          patterns: [
            { group: ['../agents/*', '../tools/*', '../sandbox/*', '../memory/*', '../llm/*', '../cli/*'], message: 'Workflows import activity types only.' },
            { group: BENCH_IMPORTS, message: 'src/ never imports bench/.' },
          ],
        },
      ],
    },
  },
);
