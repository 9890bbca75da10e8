/** Starting worker threads from this package. Workers always run the compiled JavaScript in dist/. */
import { Worker, type WorkerOptions } from 'node:worker_threads';

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
