import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import { builtinModules } from 'node:module';

// Relative paths from anywhere under src/ to the top-level bench/ folder.
const BENCH_IMPORTS = ['**/bench', '**/bench/**'];

// What Node gives a CommonJS module and the JavaScript under src/ uses.
const NODE_COMMONJS_GLOBALS = ['require', 'module', 'exports', '__dirname', '__filename', 'process', 'console', 'globalThis'];

const SANDBOX_INDEX = 'Import src/sandbox through its index.ts.';
const REPO_INDEX = 'Import src/repo through its index.ts.';

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
    // The JavaScript aca runs as files of its own: inside the test process (src/sandbox/
    // shipped-files.ts), the spawn helper and the embedded database's thread. CommonJS.
    files: ['src/**/*.cjs'],
    ...js.configs.recommended,
    languageOptions: {
      sourceType: 'commonjs',
      ecmaVersion: 2022,
      globals: Object.fromEntries(NODE_COMMONJS_GLOBALS.map((name) => [name, 'readonly'])),
    },
    rules: {
      ...js.configs.recommended.rules,
      '@typescript-eslint/no-require-imports': 'off',
      '@typescript-eslint/no-unused-vars': 'off',
      'no-unused-vars': ['error', { argsIgnorePattern: '^_', caughtErrors: 'none' }],
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
    // src/sandbox and src/repo have one way in each, their index.ts: the files behind it move
    // between their folders. Each may reach its own files directly, never the other's.
    files: ['src/**/*.ts'],
    ignores: ['src/workflows/**/*.ts', 'src/sandbox/**/*.ts', 'src/repo/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            { group: BENCH_IMPORTS, message: 'src/ never imports bench/.' },
            { group: ['**/sandbox/*'], message: SANDBOX_INDEX },
            { group: ['**/repo/*'], message: REPO_INDEX },
          ],
        },
      ],
    },
  },
  {
    files: ['src/sandbox/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            { group: BENCH_IMPORTS, message: 'src/ never imports bench/.' },
            { group: ['**/repo/*'], message: REPO_INDEX },
          ],
        },
      ],
    },
  },
  {
    files: ['src/repo/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            { group: BENCH_IMPORTS, message: 'src/ never imports bench/.' },
            { group: ['**/sandbox/*'], message: SANDBOX_INDEX },
          ],
        },
      ],
    },
  },
  {
    files: ['test/**/*.ts', 'bench/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            { group: ['**/src/sandbox/*'], message: SANDBOX_INDEX },
            { group: ['**/src/repo/*'], message: REPO_INDEX },
          ],
        },
      ],
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
