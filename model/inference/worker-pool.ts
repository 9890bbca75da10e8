/**
 * A pool of inference workers fed through two FIFO queues of sentence jobs. The first holds each
 * request's next-needed sentence (the one its listener waits for); with several requests it
 * interleaves them sentence by sentence, so a new request's first sentence waits for at most one
 * sentence of each other request, never for another request's whole paragraph. The second holds
 * look-ahead: sentences a request will need later, computed only by a worker that would otherwise
 * idle. A look-ahead job that becomes needed is promoted to the back of the first queue.
 */
import type { Worker } from 'node:worker_threads';
import type { LanguageCode } from '../kokoro/constants.ts';
import { startWorker } from '../threads.ts';
import type { ModelContract, ModelInput, Provider } from './ort-session.ts';
import type { ResolvedVoice } from '../kokoro/voices.ts';
import type { WarmupStep } from './warmup.ts';
import type { WordTiming } from '../text/alignment.ts';
import type { FromWorker, PhonemizeResult, SentenceJob, ToWorker, WorkerInit } from './messages.ts';

export interface SentenceRequest {
  readonly text: string;
  readonly lang: LanguageCode;
  readonly voice: ResolvedVoice;
  readonly speed: number;
  readonly timestamps?: boolean;
  /** `text` is Kokoro phonemes already: the worker skips its front end. */
  readonly phonemes?: boolean;
}

export interface PieceResult {
  /** Mono PCM16 at 24 kHz. */
  readonly samples: Int16Array;
  readonly phonemeCount: number;
  readonly inferenceMs: number;
  /** Text front end time for the sentence, on its first piece. */
  readonly frontEndMs?: number;
  /** On its first piece: how long the sentence waited in the pool for a worker. */
  readonly queueMs?: number;
  /** The words ending in this piece, timed from its start (timestamps requested). */
  readonly words?: readonly WordTiming[];
}

export interface PoolInfo {
  readonly provider: Provider;
  readonly contract: ModelContract;
  readonly fallbackReason?: string;
  readonly warmupMs: number;
  /** The warm-up ladder of the first worker that became ready. */
  readonly ladder: readonly WarmupStep[];
}

export interface PoolEvents {
  /** A worker died outside of shutdown; it is being replaced. */
  onWorkerExit?(info: { index: number; reason: string }): void;
  onWorkerReady?(info: { index: number; warmupMs: number }): void;
  /** A library in a worker printed something (espeak-ng's warnings, say). */
  onWorkerLog?(info: { index: number; message: string }): void;
  /** A sentence's phonemes had symbols Kokoro's vocabulary lacks: dropped, counted here. */
  onUnknownPhonemes?(info: {
    index: number;
    lang: LanguageCode;
    symbols: Readonly<Record<string, number>>;
  }): void;
  /** At close, a worker was still inside an inference call after the timeout: it is terminated. */
  onStopTimeout?(info: { index: number; timeoutMs: number }): void;
  /**
   * A worker took a sentence: `solo` when it runs on the solo session (every core, the pool
   * otherwise idle); `ahead` when it was queued as look-ahead.
   */
  onDispatch?(info: { index: number; jobId: number; solo: boolean; ahead: boolean }): void;
  /** What one run fed the model, when the model hands it back (the echo stand-in only). */
  onModelInput?(info: { index: number; phonemes: string; input: ModelInput }): void;
}

/** Why a job failed; `kind` lets the caller map it to a client-facing error. */
export class JobError extends Error {
  constructor(
    readonly kind: 'busy' | 'cancelled' | 'inference' | 'closed',
    message: string,
  ) {
    super(message);
    this.name = 'JobError';
  }
}

interface Pending {
  readonly job: SentenceJob;
  readonly onPiece: (piece: PieceResult) => void;
  readonly resolve: (stats: { frontEndMs: number; pieces: number }) => void;
  readonly reject: (err: Error) => void;
  readonly signal: AbortSignal | undefined;
  readonly onAbort: () => void;
  /** Settled (finished, failed or cancelled); later messages for it are ignored. */
  done: boolean;
  /** Queued as look-ahead (lower priority), until promoted. */
  ahead: boolean;
  /** When it was queued (performance.now()). */
  readonly queuedAt: number;
  /** Inference time of its pieces so far. */
  inferenceMs: number;
  /** How long it waited for a worker: set when a worker takes it, reported with its first piece. */
  queueMs: number | undefined;
}

/** A submitted sentence: its outcome, and a way to make it next-needed. */
export interface JobHandle {
  readonly done: Promise<{ frontEndMs: number; pieces: number }>;
  /** Moves a look-ahead job that is still waiting to the next-needed queue (no-op otherwise). */
  promote(): void;
}

interface Slot {
  worker: Worker;
  ready: boolean;
  /** The thread has ended. */
  exited: boolean;
  current: Pending | undefined;
  /** The worker has a solo session (worker 0 on CPU, when solo threads are configured). */
  solo: boolean;
}

/** How long `close` waits for a running inference call before terminating its worker. */
export const DEFAULT_STOP_TIMEOUT_MS = 10_000;

export class WorkerPool {
  readonly #init: WorkerInit;
  readonly #maxQueued: number;
  readonly #events: PoolEvents;
  readonly #slots: Slot[] = [];
  readonly #queue: Pending[] = [];
  /** Look-ahead jobs: taken only when #queue is empty. */
  readonly #ahead: Pending[] = [];
  #nextId = 1;
  /** Front-end-only requests (`phonemize`) waiting for their worker's answer. */
  readonly #phonemizing = new Map<
    number,
    { slot: Slot; resolve: (r: PhonemizeResult) => void; reject: (e: Error) => void }
  >();
  #nextPhonemizeId = 1;
  #completed = 0;
  #inferences = 0;
  #closed = false;
  #info: PoolInfo | undefined;
  /** The sentence running on the solo session, if one is: look-ahead waits until it ends. */
  #soloRunning: Pending | undefined;
  /** A lone sentence goes to the solo session only if one pool session would take this long. */
  #soloMinMs = 0;
  /** Whether the solo session may be used now (the engine allows it while one request is open). */
  soloAllowed: () => boolean = () => true;
  /**
   * Inference time per character of text on one pool session: measured by each worker at warm-up,
   * then followed (a moving average) over the sentences the pool sessions run.
   */
  #msPerChar: number | undefined;

  private constructor(init: WorkerInit, maxQueued: number, events: PoolEvents) {
    this.#init = init;
    this.#maxQueued = maxQueued;
    this.#events = events;
  }

  /**
   * The front end alone, in a worker (an idle one if there is one): what a sentence of `text`
   * would feed the model. Answered between two inference calls, never queued behind sentences.
   */
  phonemize(text: string, lang: LanguageCode): Promise<PhonemizeResult> {
    if (this.#closed) return Promise.reject(new JobError('closed', 'the pool is closed'));
    const ready = this.#slots.filter((s) => s.ready);
    const slot = ready.find((s) => !s.current) ?? ready[0];
    if (!slot) return Promise.reject(new JobError('busy', 'no inference worker is ready'));
    const id = this.#nextPhonemizeId++;
    return new Promise((resolve, reject) => {
      this.#phonemizing.set(id, { slot, resolve, reject });
      slot.worker.postMessage({ type: 'phonemize', id, text, lang } satisfies ToWorker);
    });
  }

  /** Starts `size` workers and resolves once every one has loaded and warmed up its model. */
  static async create(
    init: WorkerInit,
    size: number,
    maxQueued: number,
    events: PoolEvents = {},
    soloMinMs = 0,
  ): Promise<WorkerPool> {
    const pool = new WorkerPool(init, maxQueued, events);
    pool.#soloMinMs = soloMinMs;
    // Every worker is let finish loading (or fail) before any is stopped: a thread ended while
    // ONNX Runtime creates its session aborts the process.
    const started = await Promise.allSettled(Array.from({ length: size }, (_, i) => pool.#spawn(i)));
    const failed = started.find((s): s is PromiseRejectedResult => s.status === 'rejected');
    if (failed) {
      await pool.close();
      throw failed.reason;
    }
    pool.#info = (started[0] as PromiseFulfilledResult<PoolInfo>).value;
    return pool;
  }

  /**
   * How long `text` would take on one pool session, from the inference time per character the
   * workers measured at warm-up and the sentences run since (Infinity before any measure).
   */
  estimateMs(text: string): number {
    return (this.#msPerChar ?? Infinity) * text.length;
  }

  get info(): PoolInfo {
    if (!this.#info) throw new Error('pool not started');
    return this.#info;
  }

  /** Workers loaded and able to take work (fewer than configured while one is being replaced). */
  get size(): number {
    return this.#slots.filter((s) => s?.ready).length;
  }

  /** Next-needed sentences waiting for a worker (the queue that admission and `busy` look at). */
  get queued(): number {
    return this.#queue.length;
  }

  /** Look-ahead sentences waiting for an idle worker. */
  get queuedAhead(): number {
    return this.#ahead.length;
  }

  /** Sentences synthesized to the end since the pool started (cancelled ones are not counted). */
  get completed(): number {
    return this.#completed;
  }

  /** Inferences run to the end since the pool started, cancelled sentences' included. */
  get inferences(): number {
    return this.#inferences;
  }

  /** Workers running a sentence now. */
  get busy(): number {
    return this.#slots.filter((s) => s.current).length;
  }

  /**
   * Queues one sentence. `onPiece` receives each inference's samples as soon as it exists (a
   * sentence longer than 510 phoneme ids gives several); `done` rejects with JobError, `busy` only
   * for a request's first sentence (`admitted` marks the later ones). `ahead` queues it as
   * look-ahead: it runs only on a worker that no next-needed sentence is waiting for, until
   * {@link JobHandle.promote} makes it next-needed.
   */
  submit(
    request: SentenceRequest,
    onPiece: (piece: PieceResult) => void,
    signal?: AbortSignal,
    options: { admitted?: boolean; ahead?: boolean } = {},
  ): JobHandle {
    const refuse = (err: JobError): JobHandle => ({ done: Promise.reject(err), promote: () => {} });
    if (this.#closed) return refuse(new JobError('closed', 'the inference pool is shut down'));
    if (signal?.aborted) return refuse(new JobError('cancelled', 'cancelled'));
    // The cap admits requests, not sentences: a request already under way is never cut short.
    if (!options.admitted && this.#queue.length >= this.#maxQueued) {
      return refuse(
        new JobError('busy', `the inference queue is full (${this.#maxQueued} sentences waiting)`),
      );
    }
    let pending: Pending | undefined;
    const done = new Promise<{ frontEndMs: number; pieces: number }>((resolve, reject) => {
      const job: SentenceJob = { type: 'job', id: this.#nextId++, ...request };
      const p: Pending = {
        job,
        onPiece,
        resolve,
        reject,
        signal,
        onAbort: () => this.#cancel(p),
        done: false,
        ahead: options.ahead === true,
        queuedAt: performance.now(),
        inferenceMs: 0,
        queueMs: undefined,
      };
      pending = p;
      signal?.addEventListener('abort', p.onAbort, { once: true });
      (p.ahead ? this.#ahead : this.#queue).push(p);
      this.#dispatch();
    });
    return { done, promote: () => pending && this.#promote(pending) };
  }

  #promote(pending: Pending): void {
    if (!pending.ahead) return;
    pending.ahead = false;
    const i = this.#ahead.indexOf(pending);
    if (i < 0) return; // already running (or settled)
    this.#ahead.splice(i, 1);
    this.#queue.push(pending);
  }

  /**
   * Stops every worker. Queued jobs are rejected; running ones are abandoned. A worker ends its
   * thread itself, between two ONNX Runtime calls (see `StopMessage`); one still inside a call
   * after `timeoutMs` is terminated, which may abort the process, and `onStopTimeout` says so first.
   */
  async close(timeoutMs = DEFAULT_STOP_TIMEOUT_MS): Promise<void> {
    this.#closed = true;
    for (const p of [...this.#queue.splice(0), ...this.#ahead.splice(0)])
      this.#settle(p, new JobError('closed', 'the server is shutting down'));
    for (const waiting of this.#phonemizing.values())
      waiting.reject(new JobError('closed', 'the server is shutting down'));
    this.#phonemizing.clear();
    await Promise.all(
      this.#slots.map(async (slot, index) => {
        if (slot.current) this.#settle(slot.current, new JobError('closed', 'the server is shutting down'));
        slot.current = undefined;
        await this.#stop(index, slot, timeoutMs);
      }),
    );
  }

  async #stop(index: number, slot: Slot, timeoutMs: number): Promise<void> {
    await new Promise<void>((resolve) => {
      if (slot.exited) return resolve();
      const timer = setTimeout(() => {
        this.#events.onStopTimeout?.({ index, timeoutMs });
        void slot.worker.terminate();
      }, timeoutMs);
      slot.worker.once('exit', () => {
        clearTimeout(timer);
        resolve();
      });
      slot.worker.postMessage({ type: 'stop' } satisfies ToWorker);
    });
  }

  #spawn(index: number): Promise<PoolInfo> {
    // Only worker 0 holds a solo session: one lone sentence at a time can use it, and each
    // session of the real model costs about 325 MB (fp32).
    const worker = startWorker(import.meta.url, 'inference-worker', {
      workerData: index === 0 ? this.#init : { ...this.#init, soloThreads: 0 },
      name: `kokoro-inference-${index}`,
    });
    const slot: Slot = { worker, ready: false, exited: false, current: undefined, solo: false };
    this.#slots[index] = slot;
    return new Promise<PoolInfo>((resolve, reject) => {
      worker.on('message', (message: FromWorker) => {
        switch (message.type) {
          case 'ready': {
            slot.ready = true;
            slot.solo = message.solo;
            this.#msPerChar ??= message.msPerChar;
            const info: PoolInfo = {
              provider: message.provider,
              contract: message.contract,
              warmupMs: message.warmupMs,
              ladder: message.ladder,
              ...(message.fallbackReason ? { fallbackReason: message.fallbackReason } : {}),
            };
            this.#info ??= info;
            this.#events.onWorkerReady?.({ index, warmupMs: message.warmupMs });
            resolve(info);
            this.#dispatch();
            break;
          }
          case 'log':
            this.#events.onWorkerLog?.({ index, message: message.message });
            break;
          case 'unknown-phonemes':
            this.#events.onUnknownPhonemes?.({ index, lang: message.lang, symbols: message.symbols });
            break;
          case 'model-input':
            this.#events.onModelInput?.({ index, phonemes: message.phonemes, input: message.input });
            break;
          case 'phonemized': {
            const waiting = this.#phonemizing.get(message.id);
            this.#phonemizing.delete(message.id);
            waiting?.resolve({ phonemes: message.phonemes, ids: message.ids, frontEnd: message.frontEnd });
            break;
          }
          case 'phonemize-failed': {
            const waiting = this.#phonemizing.get(message.id);
            this.#phonemizing.delete(message.id);
            waiting?.reject(new JobError('inference', message.message));
            break;
          }
          case 'fatal':
            reject(new Error(message.message));
            worker.postMessage({ type: 'stop' } satisfies ToWorker);
            break;
          default:
            this.#onJobMessage(slot, message);
        }
      });
      worker.on('error', (err) => {
        if (!slot.ready) reject(err);
        this.#onWorkerGone(index, slot, err.message);
      });
      worker.on('exit', (code) => {
        slot.exited = true;
        if (!slot.ready) reject(new Error(`inference worker exited with code ${code} while starting`));
        this.#onWorkerGone(index, slot, `exited with code ${code}`);
      });
    });
  }

  #onJobMessage(
    slot: Slot,
    message: Exclude<
      FromWorker,
      {
        type:
          | 'ready'
          | 'fatal'
          | 'log'
          | 'unknown-phonemes'
          | 'model-input'
          | 'phonemized'
          | 'phonemize-failed';
      }
    >,
  ): void {
    const current = slot.current;
    if (!current || current.job.id !== message.id) return; // an abandoned (cancelled) job's tail
    switch (message.type) {
      case 'chunk':
        current.inferenceMs += message.inferenceMs;
        if (current.done) break;
        current.onPiece({
          samples: message.samples,
          phonemeCount: message.phonemeCount,
          inferenceMs: message.inferenceMs,
          ...(message.frontEndMs !== undefined ? { frontEndMs: message.frontEndMs } : {}),
          ...(message.frontEndMs !== undefined && current.queueMs !== undefined
            ? { queueMs: current.queueMs }
            : {}),
          ...(message.words ? { words: message.words } : {}),
        });
        break;
      case 'end': {
        slot.current = undefined;
        const solo = this.#soloRunning === current;
        if (solo) this.#soloRunning = undefined;
        if (!solo && message.pieces > 0 && current.job.text.length > 0) {
          const observed = current.inferenceMs / current.job.text.length;
          this.#msPerChar = this.#msPerChar === undefined ? observed : 0.8 * this.#msPerChar + 0.2 * observed;
        }
        this.#inferences += message.pieces;
        if (!current.done) this.#completed++;
        this.#settle(current, undefined, { frontEndMs: message.frontEndMs, pieces: message.pieces });
        this.#dispatch();
        break;
      }
      case 'error':
        slot.current = undefined;
        if (this.#soloRunning === current) this.#soloRunning = undefined;
        this.#settle(current, new JobError('inference', message.message));
        this.#dispatch();
        break;
    }
  }

  #onWorkerGone(index: number, slot: Slot, reason: string): void {
    if (this.#slots[index] !== slot || !slot.ready) return;
    slot.ready = false;
    if (slot.current)
      this.#settle(slot.current, new JobError('inference', `inference worker failed: ${reason}`));
    if (this.#soloRunning === slot.current) this.#soloRunning = undefined;
    slot.current = undefined;
    for (const [id, waiting] of this.#phonemizing) {
      if (waiting.slot !== slot) continue;
      this.#phonemizing.delete(id);
      waiting.reject(new JobError('inference', `inference worker failed: ${reason}`));
    }
    if (this.#closed) return;
    this.#events.onWorkerExit?.({ index, reason });
    this.#respawn(index, 0);
  }

  /** Replaces a worker; the others keep serving meanwhile. Retries with backoff if it fails. */
  #respawn(index: number, attempt: number): void {
    const delay = attempt === 0 ? 0 : Math.min(30_000, 500 * 2 ** (attempt - 1));
    setTimeout(() => {
      if (this.#closed) return;
      this.#spawn(index).catch((err: Error) => {
        if (this.#closed) return;
        this.#events.onWorkerExit?.({ index, reason: `restart failed: ${err.message}` });
        this.#respawn(index, attempt + 1);
      });
    }, delay).unref();
  }

  /**
   * Starts waiting sentences on idle workers. A lone sentence (every worker idle, nothing else
   * waiting, no other request open: see `soloAllowed`) runs on worker 0's solo session, with every
   * core, when one pool session would take at
   * least `soloMinMs` over it: one request alone is not held to one core's speed. A cheaper
   * sentence stays on a pool session, where waking every core's threads costs more than they win
   * (`npm run bench:solo`). While a solo run lasts, look-ahead waits (it would only take cores
   * from it), but another request's next-needed sentence starts at once on a free worker.
   */
  #dispatch(): void {
    const first = this.#slots[0];
    const idle = this.#slots.every((slot) => !slot?.current);
    const lone = this.#queue[0] ?? this.#ahead[0];
    if (
      first?.ready &&
      first.solo &&
      idle &&
      this.soloAllowed() &&
      lone &&
      this.#queue.length + this.#ahead.length === 1 &&
      (this.#msPerChar ?? Infinity) * lone.job.text.length >= this.#soloMinMs
    ) {
      this.#start(first, 0, (this.#queue.shift() ?? this.#ahead.shift())!, true);
      return;
    }
    for (const [index, slot] of this.#slots.entries()) {
      if (!slot || !slot.ready || slot.current) continue;
      const next = this.#queue.shift() ?? (this.#soloRunning ? undefined : this.#ahead.shift());
      if (!next) return;
      this.#start(slot, index, next, false);
    }
  }

  #start(slot: Slot, index: number, next: Pending, solo: boolean): void {
    slot.current = next;
    next.queueMs = performance.now() - next.queuedAt;
    if (solo) this.#soloRunning = next;
    slot.worker.postMessage(solo ? { ...next.job, solo: true } : next.job);
    this.#events.onDispatch?.({ index, jobId: next.job.id, solo, ahead: next.ahead });
  }

  #cancel(pending: Pending): void {
    const queue = pending.ahead ? this.#ahead : this.#queue;
    const i = queue.indexOf(pending);
    if (i >= 0) queue.splice(i, 1);
    else {
      // Running: the worker drops the pieces it has not started. The call in progress cannot be
      // interrupted (it is one native call); its result is discarded, and the worker takes the
      // next job when it ends.
      const slot = this.#slots.find((s) => s?.current === pending);
      slot?.worker.postMessage({ type: 'cancel', id: pending.job.id } satisfies ToWorker);
    }
    this.#settle(pending, new JobError('cancelled', 'cancelled'));
  }

  #settle(p: Pending, err: Error | undefined, stats?: { frontEndMs: number; pieces: number }): void {
    if (p.done) return;
    p.done = true;
    p.signal?.removeEventListener('abort', p.onAbort);
    if (err) p.reject(err);
    else p.resolve(stats!);
  }
}
