import { defineConfig } from 'vitest/config';

/**
 * Server test files whose verdicts are latencies or orders under load (first audio, /ping while a
 * session floods, which sentence a worker runs next, an upgrade during inference): they run one at
 * a time, first, with no other test file of this vitest beside them. They keep about one core
 * busy; what `npm test` runs beside vitest at a lower priority (scripts/checks.sh: the static
 * checks and the unit project) takes the other.
 */
const SERIAL_SERVER_FILES = [
  'capacity',
  'container',
  'contexts',
  'first-audio-admission',
  'first-chunk',
  'floods',
  'phonemize-flood',
  'scheduling',
].map((name) => `test/server/${name}.test.ts`);

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
          // files run side by side on every core. `npm test` runs this project in a vitest of its
          // own at a lower priority, beside the other two (scripts/checks.sh); here it runs last.
          name: 'unit',
          include: ['test/unit/**/*.test.ts', 'test/app/**/*.test.ts'],
          maxWorkers: 2,
          isolate: false,
          sequence: { groupOrder: 3 },
        },
      },
      {
        extends: true,
        test: {
          // Black-box tests against the built server whose verdicts do not depend on having the
          // cores: three files at a time on two cores (much of their time is spent waiting on
          // timers, child processes and sockets), after the serial project. Each of the three
          // processes loads the modules once and keeps its shared servers (harness.ts) for the
          // files it runs.
          name: 'server',
          include: ['test/server/**/*.test.ts'],
          exclude: SERIAL_SERVER_FILES,
          maxWorkers: 3,
          isolate: false,
          sequence: { groupOrder: 2 },
        },
      },
      {
        extends: true,
        test: {
          // The timing-sensitive ones (SERIAL_SERVER_FILES), first, one file at a time in one process.
          name: 'server-serial',
          include: SERIAL_SERVER_FILES,
          fileParallelism: false,
          isolate: false,
          sequence: { groupOrder: 1 },
        },
      },
    ],
  },
});
