import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    globalSetup: ['./test/lexicon-setup.ts'],
    reporters: ['default', './test/summary-reporter.ts'],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    projects: [
      {
        extends: true,
        test: {
          // Pure parts, and the HTTP layer in-process over a fake engine: no model, no timing, so
          // files run side by side on every core.
          name: 'unit',
          include: ['test/unit/**/*.test.ts', 'test/app/**/*.test.ts'],
          maxWorkers: 2,
          isolate: false,
        },
      },
      {
        extends: true,
        test: {
          // Black-box tests against the built server: each starts worker pools that want the
          // cores to themselves, so they run one file at a time, after the unit project, in one
          // process (modules loaded once; every file builds its own servers).
          name: 'server',
          include: ['test/server/**/*.test.ts'],
          fileParallelism: false,
          isolate: false,
          sequence: { groupOrder: 1 },
        },
      },
    ],
  },
});
