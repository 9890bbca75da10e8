import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    globalSetup: ['./test/lexicon-setup.ts'],
    reporters: ['default', './test/summary-reporter.ts'],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    // Server tests start worker pools; two cores do not gain from running many files at once.
    fileParallelism: false,
  },
});
