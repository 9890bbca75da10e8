/**
 * The synthesis engine: the one door into model/. It owns the worker pools, the voice catalog and
 * the model facts, and turns a request into encoded audio, sentence by sentence:
 * text → sentences (here) → [inference worker: normalize → phonemes → ids → ONNX] → samples →
 * [encoder] → bytes. The server imports nothing else from model/: what it needs of the model's
 * vocabulary (dtypes, devices, voice errors, the warm-up setting) is re-exported at the end.
 */
import { join } from 'node:path';
import { LANGUAGES, LANGUAGE_TAGS, type Dtype, type LanguageCode } from './kokoro/constants.ts';
import { locateModel, type ModelFiles } from './kokoro/model-dir.ts';
import type { Device, ModelContract, Provider } from './inference/ort-session.ts';
import { applyOrtTelemetry, type OrtTelemetry } from './inference/ort-telemetry.ts';
import { isSupportedLanguage } from './text/phonemes.ts';
import { hasLexicon, type EnglishFrontEnd } from './text/en/english.ts';
import { WorkerPool, type JobHandle, type PoolEvents } from './inference/worker-pool.ts';
import { splitSentences } from './text/sentences.ts';
import { VoiceCatalog, type ResolvedVoice } from './kokoro/voices.ts';
import type { WarmupSetting, WarmupStep } from './inference/warmup.ts';
import { ffmpegAvailable } from './audio/aac.ts';
import { FORMATS, type AudioFormat, type FormatInfo } from '../protocol/formats.ts';
import { isPassthrough } from './audio/formats.ts';
import { EncoderPool } from './audio/encoder-pool.ts';
import type { StreamEncoder } from './audio/encoder.ts';
import { PcmEncoder, WavEncoder } from './audio/wav.ts';
import {
  runSynthesis,
  toSynthesisError,
  type AudioChunk,
  type OutputFormat,
  type SynthesisRun,
} from './synthesis-run.ts';

/** Sentences computed ahead of the one a listener waits for, unless configured. */
export const DEFAULT_LOOKAHEAD = 2;

export interface EngineOptions extends PoolEvents {
  readonly modelDir: string;
  readonly dtype: Dtype;
  readonly device: Device;
  readonly workers: number;
  readonly intraOpThreads: number;
  /**
   * Threads of worker 0's solo session, which runs a sentence when the pool is otherwise idle (a
   * lone request then uses every core); 0: none. Created on CPU only.
   */
  readonly soloThreads?: number;
  /**
   * A lone sentence goes to the solo session only if one pool session would take at least this
   * many milliseconds over it (estimated from the warm-up and the sentences run since); default 0.
   */
  readonly soloMinMs?: number;
  /** ONNX Runtime's thread spinning after each run (default off; see ort-session.ts). */
  readonly ortSpinning?: boolean;
  /** ONNX Runtime's CPU memory arena (default off; see ort-session.ts). */
  readonly ortCpuArena?: boolean;
  /** misaki's English lexicon files (see text/en/english.ts); default `<modelDir>/misaki`. */
  readonly lexiconDir?: string;
  /** Leave ONNX Runtime's telemetry on (default off; see inference/ort-telemetry.ts). */
  readonly ortTelemetry?: boolean;
  readonly maxQueuedJobs: number;
  readonly defaultVoice: string;
  /** ORT's log severity (0 verbose … 4 fatal). */
  readonly logSeverity: 0 | 1 | 2 | 3 | 4;
  /** Input lengths warmed before the engine is ready; `auto` (the default): a ladder on CUDA only. */
  readonly warmupLengths?: WarmupSetting;
  /**
   * Languages whose text front end every worker loads and warms before the engine is ready
   * (default: English); any other language loads in a worker at its first sentence there.
   */
  readonly warmLanguages?: readonly LanguageCode[];
  /** Encoder worker threads (MP3, Opus, FLAC, μ-law, AAC, resampling). */
  readonly encoderWorkers?: number;
  /** The ffmpeg binary for AAC; AAC is offered only when it runs. */
  readonly ffmpegPath?: string;
  /**
   * Sentences of one request that may be computed ahead of the one its listener waits for, at a
   * lower priority than any request's next-needed sentence (default 2; 0: none).
   */
  readonly lookahead?: number;
  /**
   * The first chunk of a text is cut at its first clause mark once it holds this many characters
   * (numbers, abbreviations and quotations are never cut); 0: at the first sentence end only.
   */
  readonly firstChunkMinChars?: number;
  /**
   * A whole text's first sentence is cut at a clause mark only when synthesizing it whole would
   * take longer than this many milliseconds on one pool session (estimated per character from the
   * pool's own runs): on a device fast enough the first sentence stays whole, with no seam. 0: cut
   * whenever `firstChunkMinChars` allows. Streamed text, whose first sentence is not known ahead,
   * see `Engine.streamedFirstChunkMinChars`.
   */
  readonly firstChunkBudgetMs?: number;
  /** Tests only: see WorkerInit.faultInjection. */
  readonly faultInjection?: boolean;
  /** An encoder worker died and is being replaced. */
  onEncoderWorkerExit?(reason: string): void;
}

export interface SynthesisRequest {
  /**
   * The whole text, split into sentences here; or sentences as they are written (streamed text
   * input), each synthesized as soon as it arrives, until the iterable ends.
   */
  readonly text: string | AsyncIterable<string>;
  readonly voice: ResolvedVoice;
  readonly speed: number;
  /** Time the words (only when `info.capabilities.timestamps`). */
  readonly timestamps?: boolean;
  /**
   * `clause` (default): a whole text's first chunk is released early (see
   * `EngineOptions.firstChunkMinChars`); `sentence`: it ends at the first sentence end.
   */
  readonly firstChunk?: 'clause' | 'sentence';
  /**
   * `text` is Kokoro phonemes, every symbol in its vocabulary (the caller checks): no front end;
   * split after each `.`, `!`, `?` or `…` followed by a space, and at 510 ids.
   */
  readonly phonemes?: boolean;
}

export interface EngineInfo {
  readonly provider: Provider;
  readonly fallbackReason?: string;
  readonly modelFile: string;
  readonly layout: ModelFiles['layout'];
  readonly dtype: Dtype;
  readonly workers: number;
  readonly contract: ModelContract;
  readonly warmupMs: number;
  /** The warm-up ladder: per input length, the first and a repeated inference (see warmup.ts). */
  readonly warmupLadder: readonly WarmupStep[];
  readonly voices: number;
  /** The languages this server phonemizes: Kokoro's letter, BCP 47 tag and name. */
  readonly languages: readonly { readonly code: LanguageCode; readonly tag: string; readonly name: string }[];
  /** Output formats available on this machine (AAC needs ffmpeg). */
  readonly formats: readonly AudioFormat[];
  /** What the loaded export can do beyond audio: word timestamps need its durations output. */
  readonly capabilities: { readonly timestamps: boolean };
  /** ONNX Runtime's telemetry: `off` unless the operator opted in. */
  readonly telemetry: OrtTelemetry;
  /**
   * English's front end: misaki with its lexicons, or (without them) misaki's espeak mapping, and
   * where the lexicons were looked for.
   */
  readonly english: { readonly frontEnd: EnglishFrontEnd; readonly lexiconDir: string };
}

export interface Engine {
  readonly info: EngineInfo;
  readonly voices: VoiceCatalog;
  /**
   * Sentences waiting for a worker, workers busy now, sentences completed so far, and inferences
   * run so far (a sentence over 510 phoneme ids takes several; a cancelled one stops early).
   */
  load(): {
    queued: number;
    /** Look-ahead sentences waiting for an idle worker. */
    ahead: number;
    busy: number;
    workers: number;
    completed: number;
    inferences: number;
  };
  /**
   * A request's encoded audio, in order, and its figures. Failures are SynthesisErrors; aborting
   * `signal` (the client went away) cancels the work queued and running for it. Time to first
   * audio counts from `startedAt` (`performance.now()` when the request arrived; now by default).
   */
  synthesize(
    request: SynthesisRequest,
    output: OutputFormat,
    options?: { signal?: AbortSignal; startedAt?: number },
  ): SynthesisRun;
  /** A request's raw audio, PCM16 at 24 kHz, one chunk per inference, in order (for measurements). */
  stream(request: SynthesisRequest, signal?: AbortSignal): AsyncGenerator<AudioChunk>;
  /**
   * What the front end makes of `text` in `lang`, in a worker: Kokoro's phonemes, their ids, and
   * which front end read them (`misaki` for English with its lexicons).
   */
  phonemize(
    text: string,
    lang: LanguageCode,
  ): Promise<{ phonemes: string; ids: readonly number[]; frontEnd: string; lang: LanguageCode }>;
  /**
   * The early-release threshold for streamed text, whose first sentence is not known ahead: the
   * first chunk is cut at a clause mark only once the text before it would already take longer
   * than `firstChunkBudgetMs` whole, and never before `firstChunkMinChars` (0: off).
   */
  streamedFirstChunkMinChars(): number;
  /**
   * Stops every worker. An inference call cannot be interrupted, so this waits for running ones
   * to return, up to `timeoutMs` (default 10 s), before terminating their threads.
   */
  dispose(options?: { timeoutMs?: number }): Promise<void>;
}

/**
 * Locates the model, starts and warms every worker, and returns the engine. Throws a readable
 * error (ModelDirError, ModelContractError, ProviderError, VoiceSpecError) when it cannot.
 */
export async function createEngine(options: EngineOptions): Promise<Engine> {
  // In this (main) thread, before any worker starts: its environment is the one the runtime reads.
  const telemetry = applyOrtTelemetry(options.ortTelemetry ?? false);
  const files = locateModel(options.modelDir, options.dtype);
  const lexiconDir = options.lexiconDir ?? join(options.modelDir, 'misaki');
  const voices = new VoiceCatalog(files.voiceDirs, (lang) => isSupportedLanguage(lang));
  const warmupVoice = voices.resolve(options.defaultVoice);
  const pool = await WorkerPool.create(
    {
      modelFile: files.modelFile,
      device: options.device,
      intraOpThreads: options.intraOpThreads,
      soloThreads: options.soloThreads ?? 0,
      allowSpinning: options.ortSpinning ?? false,
      cpuArena: options.ortCpuArena ?? false,
      lexiconDir,
      logSeverity: options.logSeverity,
      warmupVoice,
      warmupLengths: options.warmupLengths ?? 'auto',
      warmLanguages: options.warmLanguages ?? ['a', 'b'],
      ...(options.faultInjection ? { faultInjection: true } : {}),
    },
    options.workers,
    options.maxQueuedJobs,
    options,
    options.soloMinMs ?? 0,
  );
  let encoders: EncoderPool;
  try {
    encoders = await EncoderPool.create(
      options.encoderWorkers ?? 1,
      { ffmpegPath: options.ffmpegPath ?? 'ffmpeg' },
      options.onEncoderWorkerExit,
    );
  } catch (err) {
    await pool.close();
    throw err;
  }
  const haveFfmpeg = ffmpegAvailable(options.ffmpegPath ?? 'ffmpeg');
  const formats = (Object.keys(FORMATS) as AudioFormat[]).filter(
    (f) => !(FORMATS[f] as FormatInfo).needsFfmpeg || haveFfmpeg,
  );
  const poolInfo = pool.info;
  const info: EngineInfo = {
    provider: poolInfo.provider,
    ...(poolInfo.fallbackReason ? { fallbackReason: poolInfo.fallbackReason } : {}),
    modelFile: files.modelFile,
    layout: files.layout,
    dtype: options.dtype,
    workers: pool.size,
    contract: poolInfo.contract,
    warmupMs: poolInfo.warmupMs,
    warmupLadder: poolInfo.ladder,
    voices: voices.ids.length,
    languages: voices.languages.map((code) => ({ code, tag: LANGUAGE_TAGS[code], name: LANGUAGES[code] })),
    formats,
    capabilities: { timestamps: poolInfo.contract.durations !== undefined },
    telemetry,
    english: { frontEnd: hasLexicon(lexiconDir, 'a') ? 'misaki' : 'misaki-espeak', lexiconDir },
  };

  const lookahead = options.lookahead ?? DEFAULT_LOOKAHEAD;
  /**
   * Requests being synthesized now. The solo session is for a request alone: while several are
   * open, a moment when only one sentence waits (one stream between sentences) is no reason to
   * take every core from the others.
   */
  let open = 0;
  pool.soloAllowed = () => open <= 1;
  const firstChunkMinChars = options.firstChunkMinChars ?? 0;
  const firstChunkBudgetMs = options.firstChunkBudgetMs ?? 0;

  /** The sentences of a whole text, its first cut at a clause only if it would be slow whole. */
  const textSentences = (text: string): string[] => {
    const whole = splitSentences(text, { firstChunkMinChars: 0 });
    if (firstChunkMinChars === 0 || whole.length === 0) return whole;
    if (firstChunkBudgetMs > 0 && pool.estimateMs(whole[0]!) <= firstChunkBudgetMs) return whole;
    return splitSentences(text, { firstChunkMinChars });
  };

  /**
   * A request's audio, sentence by sentence in order. The next-needed sentence is queued as such;
   * up to `lookahead` sentences after it are queued as look-ahead, which an otherwise idle worker
   * computes into this window (so one long request uses every free worker, and a listener that
   * stops reading stops the work after the window). Each sentence becomes next-needed when the one
   * before it has been handed over.
   */
  async function* stream(request: SynthesisRequest, signal?: AbortSignal): AsyncGenerator<AudioChunk> {
    // Our own controller, so that a consumer that stops iterating also cancels the work in flight.
    const controller = new AbortController();
    const forward = () => controller.abort();
    signal?.addEventListener('abort', forward, { once: true });
    const text = request.text;
    const sentences = (
      typeof text !== 'string'
        ? streamedSentences(text, controller.signal)
        : request.phonemes
          ? phonemeSentences(text)
          : listed(request.firstChunk === 'sentence' ? splitSentences(text) : textSentences(text))
    )[Symbol.asyncIterator]();
    interface Sentence {
      readonly ready: AudioChunk[];
      finished: boolean;
      failure?: unknown;
      readonly job: JobHandle;
    }
    const window: Sentence[] = [];
    let count = 0;
    let exhausted = false;
    let pulling = false;
    let sourceFailure: unknown;
    let wake: (() => void) | undefined;
    const notify = () => {
      const w = wake;
      wake = undefined;
      w?.();
    };
    const submit = (text: string) => {
      const index = count++;
      const ready: AudioChunk[] = [];
      const job = pool.submit(
        {
          text,
          lang: request.voice.lang,
          voice: request.voice,
          speed: request.speed,
          ...(request.timestamps ? { timestamps: true } : {}),
          ...(request.phonemes ? { phonemes: true } : {}),
        },
        (piece) => {
          ready.push({ ...piece, sentence: index });
          notify();
        },
        controller.signal,
        { admitted: index > 0, ahead: window.length > 0 },
      );
      const entry: Sentence = { ready, finished: false, job };
      job.done
        .then(
          () => (entry.finished = true),
          (err: unknown) => {
            entry.failure = err;
            entry.finished = true;
          },
        )
        .finally(notify);
      window.push(entry);
    };
    /** Takes the next sentence from the text when the window has room (one pull at a time). */
    const pull = () => {
      if (pulling || exhausted || window.length > lookahead || controller.signal.aborted) return;
      pulling = true;
      sentences.next().then(
        (result) => {
          pulling = false;
          if (result.done) exhausted = true;
          else submit(result.value);
          notify();
          pull();
        },
        (err: unknown) => {
          pulling = false;
          exhausted = true;
          sourceFailure = err;
          notify();
        },
      );
    };
    open++;
    try {
      pull();
      for (;;) {
        const head = window[0];
        const chunk = head?.ready.shift();
        if (chunk) {
          yield chunk;
          continue;
        }
        if (head?.finished) {
          if (head.failure) throw head.failure;
          window.shift();
          window[0]?.job.promote();
          pull();
          continue;
        }
        if (!head && exhausted && !pulling) {
          if (sourceFailure) throw sourceFailure;
          break;
        }
        await new Promise<void>((resolve) => (wake = resolve));
      }
    } finally {
      open--;
      signal?.removeEventListener('abort', forward);
      controller.abort();
    }
  }

  return {
    info,
    voices,
    load: () => ({
      queued: pool.queued,
      ahead: pool.queuedAhead,
      busy: pool.busy,
      workers: pool.size,
      completed: pool.completed,
      inferences: pool.inferences,
    }),
    synthesize: (request, output, options = {}) => {
      // Raw PCM and WAV at 24 kHz are encoded in place; everything else in an encoder worker.
      const open = (format: AudioFormat, sampleRate: number): StreamEncoder => {
        if (isPassthrough(format, sampleRate))
          return format === 'wav' ? new WavEncoder(sampleRate) : new PcmEncoder();
        return encoders.open(format, sampleRate);
      };
      return runSynthesis(
        stream(request, options.signal),
        open,
        output,
        options.startedAt ?? performance.now(),
      );
    },
    stream,
    streamedFirstChunkMinChars: () => {
      if (firstChunkMinChars === 0 || firstChunkBudgetMs === 0) return firstChunkMinChars;
      const perChar = pool.estimateMs('x');
      // Above the chunker's 400-character limit a sentence is cut there anyway.
      const chars = Number.isFinite(perChar) && perChar > 0 ? Math.ceil(firstChunkBudgetMs / perChar) : 0;
      return Math.min(Math.max(firstChunkMinChars, chars), 400);
    },
    phonemize: async (text, lang) => {
      try {
        return { ...(await pool.phonemize(text, lang)), lang };
      } catch (err) {
        throw toSynthesisError(err);
      }
    },
    dispose: async ({ timeoutMs } = {}) => {
      await Promise.all([pool.close(timeoutMs), encoders.close()]);
    },
  };
}

async function* listed(sentences: readonly string[]): AsyncGenerator<string> {
  yield* sentences;
}

/** Sentences of a phoneme string: after each `.`, `!`, `?` or `…` that a space follows. */
async function* phonemeSentences(phonemes: string): AsyncGenerator<string> {
  for (const s of phonemes.split(/(?<=[.!?…])\s+/)) if (s.trim() !== '') yield s.trim();
}

/**
 * A stream's sentences as they come (a whole text is split where it is synthesized). The stream
 * stops being waited for once `signal` aborts, even if it never ends by itself.
 */
async function* streamedSentences(text: AsyncIterable<string>, signal: AbortSignal): AsyncGenerator<string> {
  const iterator = text[Symbol.asyncIterator]();
  const aborted = new Promise<IteratorResult<string>>((resolve) => {
    const done = () => resolve({ value: undefined, done: true });
    if (signal.aborted) done();
    else signal.addEventListener('abort', done, { once: true });
  });
  for (;;) {
    const next = await Promise.race([iterator.next(), aborted]);
    if (next.done || signal.aborted) return;
    yield next.value;
  }
}

// The vocabulary of the model that the server and the scripts use, through this one door.
export type { AudioChunk, OutputFormat, RunFigures, SynthesisRun } from './synthesis-run.ts';
export type { WordTiming } from './text/alignment.ts';
export { SynthesisError } from './synthesis-run.ts';
export { DTYPE_FILES, type Dtype, type LanguageCode, parseLanguage } from './kokoro/constants.ts';
export { isSupportedLanguage } from './text/phonemes.ts';
export { KOKORO_VOCAB } from './text/tokens.ts';
export { ModelDirError, locateModel } from './kokoro/model-dir.ts';
export { VoiceSpecError, type ResolvedVoice, type VoiceFacts } from './kokoro/voices.ts';
export { IncrementalSentenceChunker } from './text/sentences.ts';
export type { Device, Provider } from './inference/ort-session.ts';
export { parseWarmupSetting, type WarmupSetting, type WarmupStep } from './inference/warmup.ts';
export type { FetchModelOptions } from './kokoro/download.ts';

/** Downloads the model files (loaded only when called: the server needs it only with KOKORO_FETCH_MODEL). */
export async function fetchModel(
  options: import('./kokoro/download.ts').FetchModelOptions,
): ReturnType<typeof import('./kokoro/download.ts').fetchModel> {
  const download = await import('./kokoro/download.ts');
  return download.fetchModel(options);
}
