// ESLint flat config: ESLint 10 + typescript-eslint 8 (type-aware rules) + eslint-config-prettier. Formatting is
// Prettier's (.prettierrc.json): eslint-config-prettier turns off every ESLint rule that would fight it. Type-aware
// rules run on the TypeScript files (src/, test/, bench/*.ts, the vitest configs) through the project service, which
// reads tsconfig.json; the .mjs/.js scripts get the untyped rules.
import js from '@eslint/js';
import stylistic from '@stylistic/eslint-plugin';
import { defineConfig } from 'eslint/config';
import prettier from 'eslint-config-prettier';
import simpleImportSort from 'eslint-plugin-simple-import-sort';
import globals from 'globals';
import tseslint from 'typescript-eslint';

const TS = ['**/*.ts', '**/*.mts'];

export default defineConfig(
  {
    // Build output and dependencies; skills and fixtures are data, read (and compared byte for byte) by the tests.
    ignores: ['dist/', 'node_modules/', 'coverage/', '.bench/', 'sample-skills/', 'test/fixtures/'],
  },
  {
    linterOptions: { reportUnusedDisableDirectives: 'error' },
    languageOptions: { ecmaVersion: 2024, sourceType: 'module', globals: { ...globals.node } },
  },
  js.configs.recommended,
  {
    files: TS,
    extends: [tseslint.configs.recommendedTypeChecked],
    languageOptions: { parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname } },
    rules: {
      // The server is async handlers all the way down: a promise nobody awaits or catches loses its rejection, and
      // an async callback where a void one is expected (an event listener, a timer) rejects into nothing.
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': 'error',
      // esbuild compiles file by file, without types: type-only imports must say so (inline, as the code does).
      '@typescript-eslint/consistent-type-imports': [
        'error',
        { prefer: 'type-imports', fixStyle: 'inline-type-imports', disallowTypeAnnotations: false },
      ],
      // Off: an `async` method without `await` is how this code implements a Promise-returning interface (a
      // Transport's start/close, a source's methods) so that a throw becomes a rejection, not a synchronous throw.
      '@typescript-eslint/require-await': 'off',
      '@typescript-eslint/no-unused-vars': ['error', { ignoreRestSiblings: true }],
    },
  },
  {
    files: ['test/**'],
    // vitest's asymmetric matchers (expect.stringMatching, expect.any, …) are typed `any`.
    rules: { '@typescript-eslint/no-unsafe-assignment': 'off' },
  },
  {
    files: ['**/*.js', '**/*.mjs'],
    // `const { dropped: _dropped, ...rest } = value` is how the code omits a property (the TypeScript rule above too).
    rules: { 'no-unused-vars': ['error', { ignoreRestSiblings: true }] },
  },
  {
    rules: { eqeqeq: ['error', 'always'] },
  },
  {
    // One order for every import block (`eslint --fix` sorts them): packages first, then the project's own modules.
    plugins: { 'simple-import-sort': simpleImportSort },
    rules: { 'simple-import-sort/imports': 'error', 'simple-import-sort/exports': 'error' },
  },
  {
    // stdout is the JSON-RPC channel: the server logs through pino to stderr, never through console.
    files: ['src/**'],
    rules: {
      'no-console': 'error',
      // Config is resolved once (docs/ARCHITECTURE.md, "Invariants"): only the command line reads the environment
      // and argv; everything else is handed what it needs.
      'no-restricted-properties': [
        'error',
        { object: 'process', property: 'env', message: 'Only src/cli/ reads the environment: take it from Config.' },
        { object: 'process', property: 'argv', message: 'Only src/cli/ reads argv: take it from Config.' },
      ],
    },
  },
  {
    files: ['src/cli/**'],
    rules: { 'no-restricted-properties': 'off' },
  },
  prettier,
  {
    // Lines ≤ 120 (issue 12). Prettier wraps code at 120; this holds comments to it as well. Strings, template
    // literals, regular expressions and URLs are exempt: splitting a message or an expected value only hides it from
    // grep. After eslint-config-prettier, which turns this rule off.
    plugins: { '@stylistic': stylistic },
    rules: {
      '@stylistic/max-len': [
        'error',
        {
          code: 120,
          tabWidth: 2,
          ignoreUrls: true,
          ignoreStrings: true,
          ignoreTemplateLiterals: true,
          ignoreRegExpLiterals: true,
        },
      ],
    },
  },
);
