import js from '@eslint/js';
import globals from 'globals';
import tseslint from 'typescript-eslint';
import noImportCycle from './scripts/lint/no-import-cycle.js';

export default tseslint.config(
  { ignores: ['**/dist/', 'node_modules/', 'models/', 'test/fixtures/'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_' }],
    },
  },
  {
    // No import cycles, type-only ones included: each module sits on the ones below it.
    files: ['**/*.ts'],
    plugins: { project: { rules: { 'no-import-cycle': noImportCycle } } },
    rules: { 'project/no-import-cycle': 'error' },
  },
  {
    // The browser page: plain scripts for the browser, no build step.
    files: ['web/**/*.js'],
    languageOptions: { globals: globals.browser },
  },
  {
    // The server logs through pino only; scripts are command-line tools and print.
    files: ['server/**/*.ts', 'model/**/*.ts', 'protocol/**/*.ts'],
    rules: { 'no-console': 'error' },
  },
);
