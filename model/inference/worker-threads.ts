/**
 * The inference workers' threads: starting them, replacing one that dies (with backoff, while the
 * others serve on), and stopping them. A worker is stopped by a message, never terminated while
 * ONNX Runtime runs (see StopMessage). What runs where is the pool's business (worker-pool.ts);
 * this file only keeps the threads.
 */
import type { Worker } from 'node:worker_threads';
import { restartDelayMs, startWorker } from '../threads.ts';
import type { FromWorker, ToWorker, WorkerInit } from './messages.ts';
import type { ModelContract, Provider } from './ort-session.ts';
import type { WarmupStep } from './warmup.ts';

export interface PoolInfo {
  readonly provider: Provider;
  readonly contract: ModelContract;
  readonly fallbackReason?: string;
  readonly warmupMs: number;
  /** The warm-up ladder of the first worker that became ready. */
  readonly ladder: readonly WarmupStep[];
}

export interface ThreadEvents {
  /** A worker died outside of shutdown; it is being replaced. */
  onWorkerExit?(info: { index: number; reason: string }): void;
  onWorkerReady?(info: { index: number; warmupMs: number }): void;
  /** A library in a worker printed something (espeak-ng's warnings, say). */
  onWorkerLog?(info: { index: number; message: string }): void;
  /** At close, a worker was still inside an inference call after the timeout: it is terminated. */
  onStopTimeout?(info: { index: number; timeoutMs: number }): void;
}

/** A worker's warm-up measures: a sentence's inference time per character of text, per session. */
export interface Readiness {
  readonly index: number;
  readonly info: PoolInfo;
  readonly msPerChar: number;
  readonly soloMsPerChar?: number;
}

interface Hooks extends ThreadEvents {
  /** A worker finished starting (at first, or as a replacement). */
  onReady(ready: Readiness): void;
  /** A message about a job (or what the worker saw while running one). */
  onMessage(index: number, message: FromWorker): void;
  /** A ready worker died outside of shutdown; what it ran is lost. */
  onGone(index: number, reason: string): void;
}

interface Slot {
  readonly worker: Worker;
  ready: boolean;
  /** The thread has ended. */
  exited: boolean;
  /** The worker has a solo session (worker 0 on CPU, when solo threads are configured). */
  hasSolo: boolean;
}

/** How long `stop` waits for a running inference call before terminating its worker. */
export const DEFAULT_STOP_TIMEOUT_MS = 10_000;

export class InferenceThreads {
  readonly #init: WorkerInit;
  readonly #hooks: Hooks;
  readonly #slots: Slot[] = [];
  #stopping = false;
  #info: PoolInfo | undefined;

  private constructor(init: WorkerInit, hooks: Hooks) {
    this.#init = init;
    this.#hooks = hooks;
  }

  /** Starts `size` workers; resolves once every one is ready, or stops them all if one fails. */
  static async start(init: WorkerInit, size: number, hooks: Hooks): Promise<InferenceThreads> {
    const threads = new InferenceThreads(init, hooks);
    // Every worker is let finish loading (or fail) before any is stopped: a thread ended while
    // ONNX Runtime creates its session aborts the process.
    const started = await Promise.allSettled(Array.from({ length: size }, (_, i) => threads.#spawn(i)));
    const failed = started.find((s): s is PromiseRejectedResult => s.status === 'rejected');
    if (failed) {
      await threads.stop();
      throw failed.reason;
    }
    return threads;
  }

  get info(): PoolInfo {
    if (!this.#info) throw new Error('no inference worker has started');
    return this.#info;
  }

  get readyCount(): number {
    return this.#slots.filter((s) => s.ready).length;
  }

  readyIndexes(): number[] {
    return this.#slots.flatMap((s, index) => (s.ready ? [index] : []));
  }

  states(): { ready: boolean; hasSolo: boolean }[] {
    return this.#slots.map(({ ready, hasSolo }) => ({ ready, hasSolo }));
  }

  post(index: number, message: ToWorker): void {
    this.#slots[index]?.worker.postMessage(message);
  }

  /**
   * Stops every worker: each ends its thread itself between two ONNX Runtime calls; one still
   * inside a call after `timeoutMs` is terminated, which may abort the process, and
   * `onStopTimeout` says so first.
   */
  async stop(timeoutMs = DEFAULT_STOP_TIMEOUT_MS): Promise<void> {
    this.#stopping = true;
    await Promise.all(
      this.#slots.map(
        (slot, index) =>
          new Promise<void>((resolve) => {
            if (slot.exited) return resolve();
            const timer = setTimeout(() => {
              this.#hooks.onStopTimeout?.({ index, timeoutMs });
              void slot.worker.terminate();
            }, timeoutMs);
            slot.worker.once('exit', () => {
              clearTimeout(timer);
              resolve();
            });
            slot.worker.postMessage({ type: 'stop' } satisfies ToWorker);
          }),
      ),
    );
  }

  #spawn(index: number): Promise<Readiness> {
    // Only worker 0 holds a solo session: one lone sentence at a time can use it, and each
    // session of the real model costs about 325 MB (fp32).
    const worker = startWorker(import.meta.url, 'inference-worker', {
      workerData: index === 0 ? this.#init : { ...this.#init, soloThreads: 0 },
      name: `kokoro-inference-${index}`,
    });
    const slot: Slot = { worker, ready: false, exited: false, hasSolo: false };
    this.#slots[index] = slot;
    return new Promise<Readiness>((resolve, reject) => {
      worker.on('message', (message: FromWorker) => {
        switch (message.type) {
          case 'ready': {
            slot.ready = true;
            slot.hasSolo = message.soloMsPerChar !== undefined;
            const info: PoolInfo = {
              provider: message.provider,
              contract: message.contract,
              warmupMs: message.warmupMs,
              ladder: message.ladder,
              ...(message.fallbackReason ? { fallbackReason: message.fallbackReason } : {}),
            };
            this.#info ??= info;
            const ready: Readiness = {
              index,
              info,
              msPerChar: message.msPerChar,
              ...(message.soloMsPerChar !== undefined ? { soloMsPerChar: message.soloMsPerChar } : {}),
            };
            this.#hooks.onWorkerReady?.({ index, warmupMs: message.warmupMs });
            resolve(ready);
            this.#hooks.onReady(ready);
            return;
          }
          case 'log':
            this.#hooks.onWorkerLog?.({ index, message: message.message });
            return;
          case 'fatal':
            reject(new Error(message.message));
            worker.postMessage({ type: 'stop' } satisfies ToWorker);
            return;
          default:
            this.#hooks.onMessage(index, message);
        }
      });
      worker.on('error', (err) => {
        if (!slot.ready) reject(err);
        this.#gone(index, slot, err.message);
      });
      worker.on('exit', (code) => {
        slot.exited = true;
        if (!slot.ready) reject(new Error(`inference worker exited with code ${code} while starting`));
        this.#gone(index, slot, `exited with code ${code}`);
      });
    });
  }

  #gone(index: number, slot: Slot, reason: string): void {
    if (this.#slots[index] !== slot || !slot.ready) return;
    slot.ready = false;
    if (this.#stopping) return;
    this.#hooks.onGone(index, reason);
    this.#hooks.onWorkerExit?.({ index, reason });
    this.#respawn(index, 0);
  }

  /** Replaces a worker; the others keep serving meanwhile. Retries with backoff if it fails. */
  #respawn(index: number, attempt: number): void {
    setTimeout(() => {
      if (this.#stopping) return;
      this.#spawn(index).catch((err: Error) => {
        if (this.#stopping) return;
        this.#hooks.onWorkerExit?.({ index, reason: `restart failed: ${err.message}` });
        this.#respawn(index, attempt + 1);
      });
    }, restartDelayMs(attempt)).unref();
  }
}
