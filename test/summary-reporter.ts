/**
 * Adds one plain closing line to vitest's output, `tests: N passed, N failed, N skipped`, which
 * log readers that do not know vitest's own summary can count. With TEST_SUMMARY_FILE set, the
 * three counts are also appended to that file as one line, `N N N`: scripts/checks.sh runs the
 * unit project in a vitest of its own and closes the log with the sum of both.
 */
import { appendFileSync } from 'node:fs';
import type { Reporter, TestModule } from 'vitest/node';

export default class SummaryReporter implements Reporter {
  onTestRunEnd(testModules: ReadonlyArray<TestModule>): void {
    let passed = 0;
    let failed = 0;
    let skipped = 0;
    for (const module of testModules) {
      for (const test of module.children.allTests()) {
        const state = test.result().state;
        if (state === 'passed') passed++;
        else if (state === 'failed') failed++;
        else skipped++;
      }
      if (module.state() === 'failed' && [...module.children.allTests()].length === 0) failed++;
    }
    process.stdout.write(`\ntests: ${passed} passed, ${failed} failed, ${skipped} skipped\n`);
    const file = process.env.TEST_SUMMARY_FILE;
    if (file) appendFileSync(file, `${passed} ${failed} ${skipped}\n`);
  }
}
