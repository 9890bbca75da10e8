/**
 * A pool of inference workers: it queues sentences and phonemize jobs, starts them where the
 * dispatch policy (dispatch.ts) says, and hands each inference's samples (or the front end's
 * phonemes) back. It decides nothing itself; the workers' threads (start, replacement with
 * backoff, cooperative stop) live in worker-threads.ts.
 */
import { SAMPLE_RATE, type LanguageCode } from '../kokoro/constants.ts';
import type { ResolvedVoice } from '../kokoro/voices.ts';
import type { WordTiming } from '../text/alignment.ts';
import type { PhonemeTiming } from '../text/phoneme-timing.ts';
import { abortError, ttsError } from '../../protocol/errors.ts';
import {
  CostModel,
  decide,
  predictFirstAudio,
  type PolicyName,
  type PolicySettings,
  type PoolSnapshot,
  type WaitingJob,
  type WorkerState,
} from './dispatch.ts';
import type {
  FromWorker,
  PhonemizeInput,
  PhonemizeMessage,
  PhonemizeResult,
  SentenceJob,
  WorkerInit,
} from './messages.ts';
import type { ModelInput } from './ort-session.ts';
import { InferenceThreads, type PoolInfo, type ThreadEvents } from './worker-threads.ts';

export type { PoolInfo } from './worker-threads.ts';

const SAMPLES_PER_MS = SAMPLE_RATE / 1000;

export interface SentenceRequest {
  readonly text: string;
  readonly lang: LanguageCode;
  readonly voice: ResolvedVoice;
  readonly speed: number;
  readonly timestamps?: boolean;
  readonly phonemeTimestamps?: boolean;
  /** `text` is Kokoro phonemes already: the worker skips its front end. */
  readonly phonemes?: boolean;
  /** As SentenceJob's: the sentence in parts, and the normalizer's switches. */
  readonly parts?: SentenceJob['parts'];
  readonly normalization?: SentenceJob['normalization'];
  readonly at?: number;
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
  /** The piece's sounds, timed from its start (phoneme timestamps requested). */
  readonly phonemes?: readonly PhonemeTiming[];
}

export interface PoolEvents extends ThreadEvents {
  /** A sentence's phonemes had symbols Kokoro's vocabulary lacks: dropped, counted here. */
  onUnknownPhonemes?(info: {
    index: number;
    lang: LanguageCode;
    symbols: Readonly<Record<string, number>>;
  }): void;
  /**
   * A worker took a sentence: `solo` when it runs on the solo session (every core), `ahead` when it
   * was look-ahead then.
   */
  onDispatch?(info: { index: number; jobId: number; solo: boolean; ahead: boolean }): void;
  /**
   * A request was refused as busy before any work: the queue was full, or its first audio was
   * predicted past `maxFirstAudioMs` (`predictedMs`).
   */
  onRefused?(info: { reason: 'queue' | 'first_audio'; predictedMs?: number }): void;
  /** What one run fed the model, when the model hands it back (the echo stand-in only). */
  onModelInput?(info: { index: number; phonemes: string; input: ModelInput }): void;
}

export interface PoolOptions {
  readonly size: number;
  /** Next-needed sentences that may wait before a new request is refused as busy. */
  readonly maxQueued: number;
  /** See PolicySettings.soloMinMs. */
  readonly soloMinMs: number;
  /** See PolicySettings.policy. */
  readonly policy: PolicyName;
  /**
   * A request whose first audio is predicted (dispatch.ts, `predictFirstAudio`) later than this
   * many ms, while work waits ahead of it, is refused as busy at once; 0: never.
   */
  readonly maxFirstAudioMs: number;
}

/** A submitted sentence: its outcome, and a way to make it next-needed. */
export interface JobHandle {
  readonly done: Promise<{ frontEndMs: number; pieces: number }>;
  /** Makes a look-ahead sentence next-needed (no-op once it runs or has ended). */
  promote(): void;
}

/** How a sentence is queued: whether its listener waits for it, and when it will. */
export interface SubmitOptions {
  /** Its listener waits for it; otherwise it is look-ahead until {@link JobHandle.promote}. */
  readonly needed: boolean;
  /**
   * When its listener needs it, on `performance.now()`'s clock (ms): asked each time the policy
   * decides, so it follows the audio handed over meanwhile (dispatch.ts, rule 1).
   */
  readonly due: () => number;
}

/** One request's door into the pool: its sentences, counted as one open request until closed. */
export interface PoolRequest {
  /**
   * Queues one sentence. `onPiece` gets each inference's samples as soon as they exist (a
   * sentence over 510 phoneme ids gives several). `done` rejects with a TtsError (`busy` only
   * for the request's first sentence: a request under way is never cut short), or an AbortError
   * once the request is closed.
   */
  submit(sentence: SentenceRequest, onPiece: (piece: PieceResult) => void, options: SubmitOptions): JobHandle;
  /** Audio a sentence of `chars` characters is expected to make at `speed` (ms; 0 before any has run). */
  audioMs(chars: number, speed: number): number;
  /** Drops its queued sentences and abandons its running one; no-op after the first call. */
  close(): void;
}

interface QueuedJob {
  readonly reject: (err: Error) => void;
  readonly queuedAt: number;
  /** Set when a worker takes it. */
  running?: { readonly worker: number; readonly solo: boolean; readonly startedAt: number };
  settled: boolean;
}

interface SentenceWork extends QueuedJob {
  readonly kind: 'sentence';
  readonly message: SentenceJob;
  readonly request: number;
  readonly onPiece: (piece: PieceResult) => void;
  readonly resolve: (stats: { frontEndMs: number; pieces: number }) => void;
  readonly due: () => number;
  needed: boolean;
  /** Inference time of its pieces so far. */
  inferenceMs: number;
  /** Samples of its pieces so far. */
  samples: number;
}

interface PhonemizeWork extends QueuedJob {
  readonly kind: 'phonemize';
  readonly message: PhonemizeMessage;
  readonly resolve: (result: PhonemizeResult) => void;
}

type Job = SentenceWork | PhonemizeWork;

export class WorkerPool {
  readonly #options: PoolOptions;
  readonly #events: PoolEvents;
  /** Set once every worker has started. */
  #threads!: InferenceThreads;
  /** What sentences cost: seeded at warm-up, followed since; the policy and the engine read it. */
  readonly costs = new CostModel();
  /** Queued, in arrival order. */
  readonly #waiting: Job[] = [];
  /** By worker index. */
  readonly #running: (Job | undefined)[] = [];
  /** Open requests, and whether each one's first sentence is done. */
  readonly #open = new Map<number, { firstDone: boolean }>();
  #nextJob = 1;
  #nextRequest = 1;
  #completed = 0;
  #inferences = 0;
  #closed = false;
  #recheck: NodeJS.Timeout | undefined;

  private constructor(options: PoolOptions, events: PoolEvents) {
    this.#options = options;
    this.#events = events;
  }

  /** Starts the workers and resolves once every one has loaded and warmed up its model. */
  static async create(init: WorkerInit, options: PoolOptions, events: PoolEvents = {}): Promise<WorkerPool> {
    const pool = new WorkerPool(options, events);
    pool.#threads = await InferenceThreads.start(init, options.size, {
      ...events,
      onReady: (ready) => {
        pool.costs.seed(ready.msPerChar, ready.soloMsPerChar);
        // A replacement worker takes what waits; at the first start there is nothing yet.
        if (pool.#threads) pool.#dispatch();
      },
      onMessage: (index, message) => pool.#onMessage(index, message),
      onGone: (index, reason) => pool.#onWorkerGone(index, reason),
    });
    return pool;
  }

  get info(): PoolInfo {
    return this.#threads.info;
  }

  /** Workers loaded and able to take work (fewer than configured while one is being replaced). */
  get size(): number {
    return this.#threads.readyCount;
  }

  /**
   * Next-needed sentences waiting, look-ahead waiting, phonemize jobs waiting, workers busy,
   * sentences and inferences done.
   */
  load(): {
    queued: number;
    ahead: number;
    phonemize: number;
    busy: number;
    completed: number;
    inferences: number;
  } {
    const sentences = this.#waiting.filter((job) => job.kind === 'sentence');
    const queued = sentences.filter((job) => job.needed).length;
    return {
      queued,
      ahead: sentences.length - queued,
      phonemize: this.#waiting.length - sentences.length,
      busy: this.#running.filter(Boolean).length,
      completed: this.#completed,
      inferences: this.#inferences,
    };
  }

  /** Opens a request: the policy counts it as open until it is closed. */
  open(): PoolRequest {
    const request = this.#nextRequest++;
    this.#open.set(request, { firstDone: false });
    let submitted = 0;
    let closed = false;
    return {
      submit: (sentence, onPiece, options) =>
        this.#submit(request, submitted++ > 0, sentence, onPiece, options),
      audioMs: (chars, speed) => this.costs.audioMs(chars, speed),
      close: () => {
        if (closed) return;
        closed = true;
        this.#open.delete(request);
        this.#cancel(request);
        this.#dispatch();
      },
    };
  }

  /**
   * The front end alone: what a sentence of `text` would feed the model. A job of its own, which
   * the policy runs below every next-needed sentence (dispatch.ts, rule 4) and holds a worker
   * while it runs: send a long text in sentence-sized pieces. Unbounded here; its caller bounds it.
   */
  phonemize(input: PhonemizeInput): Promise<PhonemizeResult> {
    if (this.#closed) return Promise.reject(shuttingDown());
    return new Promise((resolve, reject) => {
      this.#waiting.push({
        kind: 'phonemize',
        message: { type: 'phonemize', id: this.#nextJob++, ...input },
        resolve,
        reject,
        queuedAt: performance.now(),
        settled: false,
      });
      this.#dispatch();
    });
  }

  /**
   * Stops every worker. Queued sentences are rejected, running ones abandoned; a worker ends its
   * thread itself between two ONNX Runtime calls, or is terminated after `timeoutMs`.
   */
  async close(timeoutMs?: number): Promise<void> {
    this.#closed = true;
    clearTimeout(this.#recheck);
    for (const job of [...this.#waiting.splice(0), ...this.#running.filter((j) => j !== undefined)])
      this.#settle(job, shuttingDown());
    this.#running.length = 0;
    await this.#threads.stop(timeoutMs);
  }

  #submit(
    request: number,
    admitted: boolean,
    sentence: SentenceRequest,
    onPiece: (piece: PieceResult) => void,
    { needed, due }: SubmitOptions,
  ): JobHandle {
    const refuse = (err: Error): JobHandle => ({ done: Promise.reject(err), promote: () => {} });
    if (this.#closed) return refuse(shuttingDown());
    if (!this.#open.has(request)) return refuse(abortError());
    if (!admitted) {
      const busy = this.#admission(sentence.text.length);
      if (busy) return refuse(busy);
    }
    let job!: SentenceWork;
    const done = new Promise<{ frontEndMs: number; pieces: number }>((resolve, reject) => {
      job = {
        kind: 'sentence',
        message: { type: 'job', id: this.#nextJob++, ...sentence },
        request,
        onPiece,
        resolve,
        reject,
        needed,
        due,
        queuedAt: performance.now(),
        inferenceMs: 0,
        samples: 0,
        settled: false,
      };
    });
    this.#waiting.push(job);
    this.#dispatch();
    return {
      done,
      promote: () => {
        if (job.needed || job.settled) return;
        job.needed = true;
        if (!job.running) this.#dispatch();
      },
    };
  }

  /**
   * Why a new request's first sentence of `chars` characters is refused, if it is: the queue of
   * next-needed sentences is full, or its first audio is predicted past `maxFirstAudioMs` while
   * work waits ahead of it (an idle server refuses nothing: another could not do better).
   */
  #admission(chars: number): Error | undefined {
    const queued = this.#waiting.filter((job) => job.kind === 'sentence' && job.needed).length;
    if (queued >= this.#options.maxQueued) {
      this.#events.onRefused?.({ reason: 'queue' });
      return ttsError(
        'TTS_ERR_BUSY',
        `The server is at capacity: the inference queue is full (${this.#options.maxQueued} sentences waiting); retry shortly`,
      );
    }
    const bound = this.#options.maxFirstAudioMs;
    if (bound <= 0) return undefined;
    const { wait, total } = predictFirstAudio(
      this.#snapshot(performance.now()),
      this.costs,
      this.#policy,
      chars,
    );
    if (!(wait > 0 && total > bound && Number.isFinite(total))) return undefined;
    this.#events.onRefused?.({ reason: 'first_audio', predictedMs: Math.round(total) });
    return ttsError(
      'TTS_ERR_BUSY',
      `The server is at capacity: this request's first audio would take about ${(total / 1000).toFixed(1)} s, past its bound of ${bound / 1000} s; retry shortly, or on another instance`,
      { data: { retryAfterS: 1 } },
    );
  }

  get #policy(): PolicySettings {
    return { soloMinMs: this.#options.soloMinMs, policy: this.#options.policy };
  }

  /** The pool as the policy sees it now: what waits (with each sentence's deadline), what runs. */
  #snapshot(now: number): PoolSnapshot {
    const workers: WorkerState[] = this.#threads.states().map(({ ready, hasSolo }, index) => {
      const job = this.#running[index];
      return {
        ready,
        hasSolo,
        ...(job?.running
          ? {
              running: {
                kind: job.kind,
                solo: job.running.solo,
                startedAt: job.running.startedAt,
                chars: job.message.text.length,
              },
            }
          : {}),
      };
    });
    return {
      now,
      waiting: this.#waiting.map(
        (job): WaitingJob =>
          job.kind === 'phonemize'
            ? {
                kind: 'phonemize',
                id: job.message.id,
                queuedAt: job.queuedAt,
                chars: job.message.text.length,
              }
            : {
                kind: 'sentence',
                id: job.message.id,
                request: job.request,
                needed: job.needed,
                queuedAt: job.queuedAt,
                chars: job.message.text.length,
                afterFirst: this.#open.get(job.request)?.firstDone ?? true,
                deadline: job.due(),
              },
      ),
      workers,
      openRequests: this.#open.size,
    };
  }

  /** Asks the policy what to start, and starts it. */
  #dispatch(): void {
    if (this.#closed) return;
    clearTimeout(this.#recheck);
    const now = performance.now();
    const decision = decide(this.#snapshot(now), this.costs, this.#policy);
    for (const { job: id, worker, solo } of decision.start) {
      const index = this.#waiting.findIndex((job) => job.message.id === id);
      const [job] = this.#waiting.splice(index, 1);
      if (job) this.#start(job, worker, solo, now);
    }
    if (decision.recheckAt !== undefined)
      this.#recheck = setTimeout(() => this.#dispatch(), Math.max(0, decision.recheckAt - now)).unref();
  }

  #start(job: Job, worker: number, solo: boolean, now: number): void {
    job.running = { worker, solo, startedAt: now };
    this.#running[worker] = job;
    if (job.kind === 'phonemize') {
      this.#threads.post(worker, job.message);
      return;
    }
    this.#threads.post(worker, solo ? { ...job.message, solo: true } : job.message);
    this.#events.onDispatch?.({ index: worker, jobId: job.message.id, solo, ahead: !job.needed });
  }

  #onMessage(index: number, message: FromWorker): void {
    switch (message.type) {
      case 'unknown-phonemes':
        this.#events.onUnknownPhonemes?.({ index, lang: message.lang, symbols: message.symbols });
        return;
      case 'model-input':
        this.#events.onModelInput?.({ index, phonemes: message.phonemes, input: message.input });
        return;
      case 'chunk':
      case 'end':
      case 'error':
      case 'phonemized':
      case 'phonemize-failed':
        break;
      default:
        return;
    }
    const job = this.#running[index];
    if (!job || job.message.id !== message.id) return; // the tail of an abandoned job
    if (job.kind === 'phonemize') {
      if (message.type !== 'phonemized' && message.type !== 'phonemize-failed') return;
      this.#running[index] = undefined;
      // How long it held the worker: what the policy weighs a running phonemize job by.
      this.costs.observeFrontEnd(job.message.text.length, performance.now() - job.running!.startedAt);
      if (message.type === 'phonemized') {
        const { phonemes, ids, frontEnd } = message;
        this.#settle(job, undefined, () => job.resolve({ phonemes, ids, frontEnd }));
      } else this.#settle(job, frontEndFailed(message.message));
      this.#dispatch();
      return;
    }
    switch (message.type) {
      case 'chunk': {
        job.inferenceMs += message.inferenceMs;
        job.samples += message.samples.length;
        if (job.settled) return;
        const first = message.frontEndMs !== undefined;
        job.onPiece({
          samples: message.samples,
          phonemeCount: message.phonemeCount,
          inferenceMs: message.inferenceMs,
          ...(first
            ? { frontEndMs: message.frontEndMs, queueMs: job.running!.startedAt - job.queuedAt }
            : {}),
          ...(message.words ? { words: message.words } : {}),
          ...(message.phonemes ? { phonemes: message.phonemes } : {}),
        });
        return;
      }
      case 'end':
        this.#running[index] = undefined;
        if (message.pieces > 0) {
          this.costs.observe(job.running!.solo, job.message.text.length, job.inferenceMs);
          this.costs.observeAudio(job.message.text.length, job.samples / SAMPLES_PER_MS, job.message.speed);
        }
        this.#inferences += message.pieces;
        if (!job.settled) this.#completed++;
        this.#settle(job, undefined, () =>
          job.resolve({ frontEndMs: message.frontEndMs, pieces: message.pieces }),
        );
        this.#dispatch();
        return;
      case 'error':
        this.#running[index] = undefined;
        this.#settle(job, inferenceFailed(message.message));
        this.#dispatch();
        return;
    }
  }

  #onWorkerGone(index: number, reason: string): void {
    const job = this.#running[index];
    this.#running[index] = undefined;
    const failed = job?.kind === 'phonemize' ? frontEndFailed : inferenceFailed;
    if (job) this.#settle(job, failed(`inference worker failed: ${reason}`));
    this.#dispatch();
  }

  /** A closed request: its queued sentences go, its running one's remaining pieces are dropped. */
  #cancel(request: number): void {
    for (let i = this.#waiting.length - 1; i >= 0; i--) {
      const job = this.#waiting[i]!;
      if (job.kind !== 'sentence' || job.request !== request) continue;
      this.#waiting.splice(i, 1);
      this.#settle(job, abortError());
    }
    for (const [index, job] of this.#running.entries()) {
      if (job?.kind !== 'sentence' || job.request !== request || job.settled) continue;
      // The call in progress cannot be interrupted (one native call): its result is discarded,
      // and the worker takes the next sentence when it returns.
      this.#threads.post(index, { type: 'cancel', id: job.message.id });
      this.#settle(job, abortError());
    }
  }

  /** Ends a job once: with `err`, or by `resolve`. A sentence's end marks its request's first done. */
  #settle(job: Job, err: Error | undefined, resolve?: () => void): void {
    if (job.settled) return;
    job.settled = true;
    const open = job.kind === 'sentence' ? this.#open.get(job.request) : undefined;
    if (open) open.firstDone = true;
    if (err) job.reject(err);
    else resolve?.();
  }
}

const shuttingDown = () =>
  ttsError('TTS_ERR_SHUTTING_DOWN', 'The server is shutting down and takes no new requests');

/** The front end failed on a phonemize job: as below. */
const frontEndFailed = (detail: string) =>
  ttsError('TTS_ERR_INFERENCE', 'The text front end failed; the error has been logged', {
    cause: new Error(detail),
  });

/** The model failed on a sentence: the client gets a fixed message, the log gets the detail. */
const inferenceFailed = (detail: string) =>
  ttsError('TTS_ERR_INFERENCE', 'Synthesis failed inside the model; the error has been logged', {
    cause: new Error(detail),
  });
