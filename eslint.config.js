import js from '@eslint/js';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['dist/', 'node_modules/', 'models/', 'test/fixtures/'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_' }],
    },
  },
  {
    // The server logs through pino only; scripts are command-line tools and print.
    files: ['server/**/*.ts', 'model/**/*.ts', 'protocol/**/*.ts'],
    rules: { 'no-console': 'error' },
  },
);
