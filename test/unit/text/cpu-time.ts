/**
 * Best of five, in milliseconds of this process's CPU time (so another process taking the core
 * meanwhile does not count), and never below 1 ms: below that, timer noise would decide. For the
 * linear-time tests, which compare two sizes' times as a ratio, never against a bound in ms.
 */
export function cpuTimeMs(run: () => unknown): number {
  let best = Infinity;
  for (let i = 0; i < 5; i++) {
    const started = process.cpuUsage();
    run();
    const used = process.cpuUsage(started);
    best = Math.min(best, (used.user + used.system) / 1000);
  }
  return Math.max(best, 1);
}

/** One run's CPU time of this process, in milliseconds. */
function cpuOnceMs(run: () => unknown): number {
  const started = process.cpuUsage();
  run();
  const used = process.cpuUsage(started);
  return (used.user + used.system) / 1000;
}

/**
 * `large`'s CPU time over `small`'s, each as `cpuTimeMs` takes it (best of five, at least 1 ms),
 * with the same verdict against `bound` for fewer runs of the large input: its runs stop at the
 * first that brings the ratio within `bound`, since the best of five could only be lower. A ratio
 * past the bound is the best of all five.
 */
export function cpuRatio(large: () => unknown, small: () => unknown, bound: number): number {
  const smallMs = cpuTimeMs(small);
  let best = Infinity;
  for (let i = 0; i < 5; i++) {
    best = Math.min(best, cpuOnceMs(large));
    if (Math.max(best, 1) / smallMs <= bound) break;
  }
  return Math.max(best, 1) / smallMs;
}
