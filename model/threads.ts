/** Starting worker threads from this package, whether it runs as TypeScript or as built JS. */
import { Worker, type WorkerOptions } from 'node:worker_threads';

/**
 * The URL of a sibling worker module, `.ts` when running from sources and `.js` when built.
 * `base` is the caller's `import.meta.url`.
 */
export function siblingModule(base: string, name: string): URL {
  return new URL(`./${name}${base.endsWith('.ts') ? '.ts' : '.js'}`, base);
}

/**
 * Starts a worker. From TypeScript sources (development, tests, `npm start`) the worker registers
 * tsx itself: Node 20 does not apply `--import` hooks to a worker's entry module.
 */
export function startWorker(url: URL, options: WorkerOptions): Worker {
  if (!url.pathname.endsWith('.ts')) return new Worker(url, options);
  return new Worker(
    `import('tsx/esm/api').then((m) => { m.register(); return import(${JSON.stringify(url.href)}); })`,
    { ...options, eval: true },
  );
}
