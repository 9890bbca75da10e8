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
