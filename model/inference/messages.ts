/**
 * Messages between the server's main thread and an inference worker. Plain data only: they cross
 * a `worker_threads` boundary by structured clone (audio buffers are transferred, not copied).
 */
import type { LanguageCode } from '../kokoro/constants.ts';
import type { ModelContract, Device, Provider, ModelInput } from './ort-session.ts';
import type { ResolvedVoice } from '../kokoro/voices.ts';
import type { WarmupSetting, WarmupStep } from './warmup.ts';
import type { WordTiming } from '../text/alignment.ts';
import type { PhonemeTiming } from '../text/phoneme-timing.ts';
import type { NormalizationOptions } from '../text/normalization-options.ts';
import type { SpeechPart } from '../text/parts.ts';

export interface WorkerInit {
  readonly modelFile: string;
  readonly device: Device;
  readonly intraOpThreads: number;
  /**
   * Threads of a second, "solo" session (0: none). A sentence the pool runs while every other
   * worker is idle and nothing else waits uses it, so a lone request gets every core; on CUDA it is
   * not created (one session already has the GPU).
   */
  readonly soloThreads: number;
  readonly allowSpinning: boolean;
  /** ONNX Runtime's CPU memory arena (see ort-session.ts). */
  readonly cpuArena: boolean;
  /** misaki's English lexicons (KOKORO_LEXICON_DIR); undefined or missing: misaki's espeak mapping. */
  readonly lexiconDir: string | undefined;
  readonly logSeverity: 0 | 1 | 2 | 3 | 4;
  /** Voice used for the warm-up inference. */
  readonly warmupVoice: ResolvedVoice;
  /** The ladder of input lengths to warm before the worker is ready (see warmup.ts). */
  readonly warmupLengths: WarmupSetting;
  /** Languages whose text front end is loaded and warmed before the worker is ready; the others load at first use. */
  readonly warmLanguages: readonly LanguageCode[];
  /**
   * Tests only: a sentence containing `__crash_worker__` ends the worker thread, one containing
   * `__fail_inference__` fails its inference. Never set in production.
   */
  readonly faultInjection?: boolean;
}

export interface SentenceJob {
  readonly type: 'job';
  readonly id: number;
  readonly text: string;
  readonly lang: LanguageCode;
  readonly voice: ResolvedVoice;
  readonly speed: number;
  /** Time the words (the model must have a durations output). */
  readonly timestamps?: boolean;
  /** Time the sounds, with their visemes (the model must have a durations output). */
  readonly phonemeTimestamps?: boolean;
  /** Run on the solo session (every core): the pool is otherwise idle. */
  readonly solo?: boolean;
  /** `text` is Kokoro phonemes already (checked against the vocabulary): no front end. */
  readonly phonemes?: boolean;
  /**
   * The sentence in parts, when some of it has a fixed reading (markup, a pronunciation
   * dictionary): `text` is then what the user wrote, the parts' texts joined.
   */
  readonly parts?: readonly SpeechPart[];
  /** The normalizer's switches (the request's `normalization_options`); absent: the defaults. */
  readonly normalization?: NormalizationOptions;
  /** Where `text` starts in the request's text (UTF-16), for the words' offsets; parts carry their own. */
  readonly at?: number;
}

/**
 * Text → phonemes and ids only: a job of its own, which the pool sends where the dispatch policy
 * says (below every next-needed sentence), numbered with the sentences.
 */
export interface PhonemizeMessage {
  readonly type: 'phonemize';
  readonly id: number;
  readonly text: string;
  readonly lang: LanguageCode;
  /** As SentenceJob's. */
  readonly parts?: readonly SpeechPart[];
  readonly normalization?: NormalizationOptions;
}

/** What the front end is asked to read alone (`POST /v1/phonemize`). */
export type PhonemizeInput = Omit<PhonemizeMessage, 'type' | 'id'>;

/** What the front end made of a text: Kokoro's phonemes, their ids, and which front end it was. */
export interface PhonemizeResult {
  readonly phonemes: string;
  readonly ids: readonly number[];
  readonly frontEnd: string;
}

/**
 * Asks the worker to end its thread as soon as no native call is running. A worker must never be
 * terminated from outside while ONNX Runtime works: onnxruntime-node then throws from native code
 * and the whole process aborts (SIGABRT), so stopping is always cooperative.
 */
export interface StopMessage {
  readonly type: 'stop';
}

/** The job's remaining pieces are dropped; it ends with `end` after the call in progress. */
export interface CancelMessage {
  readonly type: 'cancel';
  readonly id: number;
}

export type ToWorker = SentenceJob | StopMessage | CancelMessage | PhonemizeMessage;

export type FromWorker =
  | {
      readonly type: 'ready';
      readonly provider: Provider;
      readonly contract: ModelContract;
      readonly fallbackReason?: string;
      readonly warmupMs: number;
      readonly ladder: readonly WarmupStep[];
      /** The warm-up sentence's inference time on the pool session, per character of its text. */
      readonly msPerChar: number;
      /** The same on the solo session, when the worker has one. */
      readonly soloMsPerChar?: number;
    }
  | { readonly type: 'fatal'; readonly message: string }
  /** Something a library printed in the worker (espeak-ng does), for the server's log. */
  | { readonly type: 'log'; readonly message: string }
  /** Symbols a sentence's phonemes had that Kokoro's vocabulary lacks (dropped), with counts. */
  | {
      readonly type: 'unknown-phonemes';
      readonly lang: LanguageCode;
      readonly symbols: Readonly<Record<string, number>>;
    }
  /** What one run fed the model, when the model hands it back (the echo stand-in only). */
  | { readonly type: 'model-input'; readonly phonemes: string; readonly input: ModelInput }
  | ({ readonly type: 'phonemized'; readonly id: number } & PhonemizeResult)
  | { readonly type: 'phonemize-failed'; readonly id: number; readonly message: string }
  | {
      readonly type: 'chunk';
      readonly id: number;
      /** PCM16: converted in the worker, so the main thread only moves bytes. */
      readonly samples: Int16Array;
      readonly phonemeCount: number;
      readonly inferenceMs: number;
      /** Normalization and phonemization of the whole sentence; set on its first chunk only. */
      readonly frontEndMs?: number;
      /** With `timestamps`: the words that end in this chunk, timed from its start. */
      readonly words?: readonly WordTiming[];
      /** With `phonemeTimestamps`: the chunk's sounds, timed from its start. */
      readonly phonemes?: readonly PhonemeTiming[];
    }
  /** `pieces`: inferences run for the job (fewer than its pieces when it was cancelled). */
  | { readonly type: 'end'; readonly id: number; readonly frontEndMs: number; readonly pieces: number }
  | { readonly type: 'error'; readonly id: number; readonly message: string };
