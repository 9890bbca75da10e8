/** Starting worker threads from this package, and replacing one that died. Workers always run the compiled JavaScript in dist/. */
import { Worker, type WorkerOptions } from 'node:worker_threads';

/**
 * The wait before the `attempt`-th try at replacing a worker that died: at once, then 0.5 s
 * doubling up to 30 s, so that a worker that cannot start (a model file gone, memory short) is
 * retried without a busy loop.
 */
export function restartDelayMs(attempt: number): number {
  return attempt === 0 ? 0 : Math.min(30_000, 500 * 2 ** (attempt - 1));
}

/**
 * Starts the worker module `name` that sits beside the caller (`base` is the caller's
 * `import.meta.url`). The caller must itself be compiled JavaScript: a worker runs exactly what
 * ships, with no TypeScript loader in between, so code imported from the TypeScript sources (a test
 * that should import from dist/) is told so instead of starting a worker that cannot load.
 */
export function startWorker(base: string, name: string, options: WorkerOptions): Worker {
  if (!base.endsWith('.js')) {
    throw new Error(
      `${base} is not compiled JavaScript, and worker threads start only from the compiled files: run \`npm run build\` and import from dist/`,
    );
  }
  return new Worker(new URL(`./${name}.js`, base), options);
}
