/**
 * The synthesis engine: the one door into model/. It owns the worker pools, the voice catalog and
 * the model facts, and turns a request into encoded audio, sentence by sentence:
 * text → sentences (here) → [inference worker: normalize → phonemes → ids → ONNX] → samples →
 * [encoder] → bytes. The server imports nothing else from model/: what it needs of the model's
 * vocabulary (dtypes, devices, voice errors, the warm-up setting) is re-exported at the end.
 */
import { readFileSync } from 'node:fs';
import { basename } from 'node:path';
import { FORMATS, type AudioFormat, type FormatInfo } from '../protocol/formats.ts';
import { ffmpegAvailable } from './audio/aac.ts';
import { EncoderPool } from './audio/encoder-pool.ts';
import type { StreamEncoder } from './audio/encoder.ts';
import { isPassthrough } from './audio/formats.ts';
import { PcmEncoder, WavEncoder } from './audio/wav.ts';
import type { Device, ModelContract, Provider } from './inference/ort-session.ts';
import { applyOrtTelemetry, type OrtTelemetry } from './inference/ort-telemetry.ts';
import type { WarmupSetting, WarmupStep } from './inference/warmup.ts';
import type { PolicyName } from './inference/dispatch.ts';
import type { PhonemizeInput, WorkerInit } from './inference/messages.ts';
import { WorkerPool, type PoolEvents } from './inference/worker-pool.ts';
import { SAMPLE_RATE, type Dtype, type LanguageCode } from './kokoro/constants.ts';
import { locateModel, type ModelFiles } from './kokoro/model-dir.ts';
import { VoiceCatalog, type ResolvedVoice } from './kokoro/voices.ts';
import { sentenceJob, type SynthesisRequest } from './synthesis/request.ts';
import { runSynthesis, type AudioChunk, type OutputFormat, type SynthesisRun } from './synthesis/run.ts';
import {
  frontEndPieces,
  segmentSource,
  streamedFirstChunkMinChars,
  type FirstChunkSettings,
} from './synthesis/sentences.ts';
import { RequestWindow } from './synthesis/window.ts';
import {
  scriptOf,
  Segmenter,
  textParts,
  textTooLongOnceRead,
  type ScriptSettings,
  type Segment,
} from './synthesis/script.ts';
import { displayText, isPlain, spokenChars } from './text/parts.ts';
import { phonemesToIds } from './text/tokens.ts';
import type { NormalizationOptions } from './text/normalization-options.ts';
import { hasLexicon, type EnglishFrontEnd } from './text/en/english.ts';
import { hasMarkup, type MarkupLimits, type MarkupMode } from './text/markup.ts';
import {
  compilePronunciations,
  mergePronunciations,
  parsePronunciationFile,
  type PronunciationMatcher,
} from './text/pronunciations/index.ts';
import { frontEndName as frontEndOf } from './text/phonemes.ts';
import { languageName, languageTag, voiceLanguages } from './text/languages/index.ts';

/**
 * What the engine is built with. Every option the server's settings fill is required and named as
 * the field that fills it (server/config/), so its default is stated once, in the settings table;
 * a caller that is not the server (a test, a script) builds these from a configuration too.
 */
export interface EngineOptions {
  readonly modelDir: string;
  readonly dtype: Dtype;
  readonly device: Device;
  readonly workers: number;
  readonly intraOpThreads: number;
  /**
   * Threads of worker 0's solo session, which runs a sentence when the pool is otherwise idle (a
   * lone request then uses every core); 0: none. Created on CPU only.
   */
  readonly soloThreads: number;
  /**
   * A lone sentence goes to the solo session only if one pool session would take at least this
   * many milliseconds over it (estimated from the warm-up and the sentences run since).
   */
  readonly soloMinMs: number;
  /**
   * How the pool orders the sentences waiting (inference/dispatch.ts): by when their listeners
   * need them (`deadline`), or next-needed first come first served (`fifo`).
   */
  readonly dispatchPolicy: PolicyName;
  /**
   * A request whose first audio is predicted later than this (ms), by the work queued ahead of it
   * and the cost estimates, is refused as busy at once rather than kept waiting; 0: never.
   */
  readonly maxFirstAudioMs: number;
  /** ONNX Runtime's thread spinning after each run (see ort-session.ts). */
  readonly ortSpinning: boolean;
  /** ONNX Runtime's CPU memory arena (see ort-session.ts). */
  readonly ortCpuArena: boolean;
  /** misaki's English lexicon files (see text/en/english.ts). */
  readonly lexiconDir: string;
  /** Leave ONNX Runtime's telemetry on (see inference/ort-telemetry.ts). */
  readonly ortTelemetry: boolean;
  readonly maxQueuedJobs: number;
  readonly defaultVoice: string;
  /** ORT's log severity (0 verbose … 4 fatal). */
  readonly logSeverity: 0 | 1 | 2 | 3 | 4;
  /** Input lengths warmed before the engine is ready; `auto`: a ladder on CUDA only. */
  readonly warmupLengths: WarmupSetting;
  /**
   * Languages whose text front end every worker loads and warms before the engine is ready; any
   * other language loads in a worker at its first sentence there.
   */
  readonly warmLanguages: readonly LanguageCode[];
  /** Encoder worker threads (MP3, Opus, FLAC, μ-law, AAC, resampling). */
  readonly encoderWorkers: number;
  /** The ffmpeg binary for AAC; AAC is offered only when it runs. */
  readonly ffmpegPath: string;
  /**
   * Sentences of one request that may be computed ahead of the one its listener waits for, at a
   * lower priority than any request's next-needed sentence (0: none).
   */
  readonly lookaheadSentences: number;
  /**
   * The first chunk of a text is cut at its first clause mark once it holds this many characters
   * (numbers, abbreviations and quotations are never cut); 0: at the first sentence end only.
   */
  readonly firstChunkMinChars: number;
  /**
   * A whole text's first sentence is cut at a clause mark only when synthesizing it whole would
   * take longer than this many milliseconds on one pool session (estimated per character from the
   * pool's own runs): on a device fast enough the first sentence stays whole, with no seam. 0: cut
   * whenever `firstChunkMinChars` allows. Streamed text, whose first sentence is not known ahead,
   * see `Engine.streamedFirstChunkMinChars`.
   */
  readonly firstChunkBudgetMs: number;
  /**
   * A pronunciation dictionary file (JSON or PLS, see text/pronunciations/), read and checked
   * when the engine starts: every sentence of every language is read through it. None: undefined.
   */
  readonly pronunciationsFile: string | undefined;
  /** Markup's bounds: the longest pause; nesting and tag length keep text/markup.ts's defaults. */
  readonly markupLimits: Partial<MarkupLimits> & Pick<MarkupLimits, 'maxPauseMs'>;
  /**
   * The most characters a text may speak once pronunciations and aliases are applied (a streamed
   * text: the most they may add to what was written).
   */
  readonly maxTextChars: number;
  /** Seconds of audio one request may make, pauses included. */
  readonly maxAudioS: number;
  /** Tests only: see WorkerInit.faultInjection. */
  readonly faultInjection?: boolean;
}

/** How a request's text is read: its voice and speed, its markup mode, its own dictionary entries. */
export interface TextSettings {
  readonly voice: ResolvedVoice;
  readonly speed: number;
  /** The request's `lang`, when it named one. */
  readonly lang?: string;
  readonly markup: MarkupMode;
  readonly firstChunk: 'clause' | 'sentence';
  /** The request's `pronunciations` (parseRequestPronunciations), over the server's file. */
  readonly pronunciations?: PronunciationMatcher;
}

/** A text's phonemes, segment by segment (`POST /v1/phonemize`). */
export interface PhonemizedText {
  readonly phonemes: string;
  readonly ids: readonly number[];
  readonly frontEnd: string;
  readonly lang: LanguageCode;
  readonly segments: readonly (
    | {
        readonly phonemes: string;
        readonly lang: LanguageCode;
        readonly voice: string;
        readonly speed: number;
      }
    | { readonly pause_ms: number }
    | { readonly mark: string }
  )[];
  readonly warnings: readonly string[];
}

/** A whole text read: its segments when it holds markup. */
export interface ReadText {
  /** Absent for a text without markup: the engine splits it itself. */
  readonly segments?: readonly Segment[];
  readonly warnings: readonly string[];
}

/** What the engine tells its owner as it runs: the server turns these into logs and metrics. */
export interface EngineEvents extends PoolEvents {
  /** An encoder worker died and is being replaced. */
  onEncoderWorkerExit?(reason: string): void;
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
   * A request's encoded audio, in order, and its figures. Failures are TtsErrors; aborting
   * `signal` (the client went away) cancels the work queued and running for it, and the audio ends
   * with an AbortError. Time to first audio counts from `startedAt` (`performance.now()` when the
   * request arrived; now by default).
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
    input: PhonemizeInput,
  ): Promise<{ phonemes: string; ids: readonly number[]; frontEnd: string; lang: LanguageCode }>;
  /**
   * What a request's text would feed the model, with all its reading applied (markup, the
   * dictionaries, the normalizer's switches): per segment, and the phonemes of all its speech.
   */
  phonemizeText(
    text: string,
    settings: TextSettings,
    normalization?: NormalizationOptions,
  ): Promise<PhonemizedText>;
  /**
   * The early-release threshold for streamed text, whose first sentence is not known ahead: the
   * first chunk is cut at a clause mark only once the text before it would already take longer
   * than `firstChunkBudgetMs` whole, and never before `firstChunkMinChars` (0: off).
   */
  streamedFirstChunkMinChars(): number;
  /**
   * Reads a whole text's markup (text/markup.ts) into segments, checking it all before any audio:
   * a TtsError (`invalid_markup`, `voice_not_found`, …) says what is wrong.
   */
  readText(text: string, settings: TextSettings): ReadText;
  /** The reader of a streamed text (an utterance): its markup read as it is written. */
  segmenter(settings: TextSettings): Segmenter;
  /**
   * Stops every worker. An inference call cannot be interrupted, so this waits for running ones
   * to return, up to `timeoutMs` (default 10 s), before terminating their threads.
   */
  dispose(options?: { timeoutMs?: number }): Promise<void>;
}

/**
 * Locates the model, starts and warms every worker, and returns the engine: the pools, the voice
 * catalog and the request window wired together; the decisions live in their own modules (the
 * dispatch policy in inference/dispatch.ts, the first chunk in synthesis/sentences.ts). Throws a
 * readable error (ModelDirError, ModelContractError, ProviderError, or a TtsError for the default
 * voice) when it cannot start.
 */
export async function createEngine(options: EngineOptions, events: EngineEvents = {}): Promise<Engine> {
  // In this (main) thread, before any worker starts: its environment is the one the runtime reads.
  const telemetry = applyOrtTelemetry(options.ortTelemetry);
  const files = locateModel(options.modelDir, options.dtype);
  const voices = new VoiceCatalog(files.voiceDirs, voiceLanguages());
  const pool = await WorkerPool.create(
    workerInit(options, files, voices.resolve(options.defaultVoice)),
    {
      size: options.workers,
      maxQueued: options.maxQueuedJobs,
      soloMinMs: options.soloMinMs,
      policy: options.dispatchPolicy,
      maxFirstAudioMs: options.maxFirstAudioMs,
    },
    events,
  );
  let encoders: EncoderPool;
  try {
    encoders = await EncoderPool.create(
      options.encoderWorkers,
      {
        ffmpegPath: options.ffmpegPath,
        ...(options.faultInjection ? { faultInjection: true } : {}),
      },
      events.onEncoderWorkerExit,
    );
  } catch (err) {
    await pool.close();
    throw err;
  }
  const info = engineInfo(options, files, pool, voices, telemetry);
  const dictionaries = loadDictionaries(options.pronunciationsFile);
  const firstChunk: FirstChunkSettings = {
    minChars: options.firstChunkMinChars,
    budgetMs: options.firstChunkBudgetMs,
  };

  async function* stream(request: SynthesisRequest, signal?: AbortSignal): AsyncGenerator<AudioChunk> {
    // Ours too, so that a consumer that stops iterating also stops the text being waited for.
    const own = new AbortController();
    const aborted = signal ? AbortSignal.any([signal, own.signal]) : own.signal;
    try {
      // A plain text's sentences are read through the server's dictionary, the request's over it.
      const dictionary = dictionaries.of(request.voice.lang, request.pronunciations);
      const segments = segmentSource(request, dictionary, firstChunk, pool.costs, aborted);
      const window = new RequestWindow(
        pool.open(),
        segments,
        (s) => sentenceJob(request, s),
        options.lookaheadSentences,
        aborted,
        options.maxAudioS * SAMPLE_RATE,
      );
      yield* window.audio();
    } finally {
      own.abort();
    }
  }

  function readText(text: string, settings: TextSettings): ReadText {
    if (hasMarkup(text, settings.markup)) return scriptOf(text, scriptSettings(settings, false));
    // Plain text: only a dictionary can make it speak more than it holds.
    const dictionary = dictionaries.of(settings.voice.lang, settings.pronunciations);
    if (dictionary !== undefined) {
      const spoken = spokenChars(textParts(text, dictionary));
      if (spoken > options.maxTextChars) throw textTooLongOnceRead(spoken, options.maxTextChars);
    }
    return { warnings: [] };
  }

  function scriptSettings(settings: TextSettings, streamed: boolean): ScriptSettings {
    return {
      voice: settings.voice,
      speed: settings.speed,
      ...(settings.lang !== undefined ? { lang: settings.lang } : {}),
      resolveVoice: (spec, lang) => voices.resolve(spec, lang),
      pronunciations: (lang) => dictionaries.of(lang, settings.pronunciations),
      firstChunkMinChars:
        settings.firstChunk === 'sentence' ? 0 : streamedFirstChunkMinChars(firstChunk, pool.costs),
      mode: settings.markup,
      limits: options.markupLimits,
      bounds: {
        chars: options.maxTextChars,
        pauseMs: options.maxAudioS * 1000,
        streamed,
      },
    };
  }

  // Raw PCM and WAV at 24 kHz are encoded in place; everything else in an encoder worker.
  const openEncoder =
    (crash: boolean) =>
    (format: AudioFormat, sampleRate: number): StreamEncoder => {
      if (!isPassthrough(format, sampleRate)) return encoders.open(format, sampleRate, crash);
      return format === 'wav' ? new WavEncoder(sampleRate) : new PcmEncoder();
    };
  // Tests only: a text asking for it crashes its encoder worker (see WorkerInit.faultInjection).
  const crashes = (request: SynthesisRequest) =>
    options.faultInjection === true &&
    typeof request.text === 'string' &&
    request.text.includes('__crash_encoder__');

  return {
    info,
    voices,
    load: () => ({ ...pool.load(), workers: pool.size }),
    synthesize: (request, output, { signal, startedAt } = {}) =>
      runSynthesis(
        stream(request, signal),
        openEncoder(crashes(request)),
        output,
        startedAt ?? performance.now(),
      ),
    stream,
    streamedFirstChunkMinChars: () => streamedFirstChunkMinChars(firstChunk, pool.costs),
    phonemize: async (input) => ({ ...(await pool.phonemize(input)), lang: input.lang }),
    readText,
    segmenter: (settings) => new Segmenter(scriptSettings(settings, true)),
    phonemizeText: async (text, settings, normalization) => {
      const read = readText(text, settings);
      const dictionary = dictionaries.of(settings.voice.lang, settings.pronunciations);
      const segments = read.segments ?? [
        { kind: 'speech', parts: [{ text }], voice: settings.voice, speed: settings.speed },
      ];
      const out: PhonemizedText['segments'][number][] = [];
      const spoken: string[] = [];
      const ids: number[] = [];
      let frontEnd = '';
      for (const segment of segments) {
        if (segment.kind === 'pause') out.push({ pause_ms: segment.ms });
        else if (segment.kind === 'mark') out.push({ mark: segment.name });
        else {
          const lang = segment.voice.lang;
          // Markup's segments are sentences already; a plain text (one segment still) is read in
          // pieces no longer than a sentence may be. One pool job a piece, one at a time, so that
          // phonemize work holds a worker for a sentence's time at most, below every listener's
          // next sentence (inference/dispatch.ts).
          const pieces = read.segments
            ? [segment.parts]
            : frontEndPieces(text).map((piece) => textParts(piece, dictionary));
          const phonemes: string[] = [];
          for (const parts of pieces) {
            const result = await pool.phonemize({
              text: displayText(parts),
              lang,
              ...(isPlain(parts) ? {} : { parts }),
              ...(normalization ? { normalization } : {}),
            });
            phonemes.push(result.phonemes);
            frontEnd ||= result.frontEnd;
          }
          const joined = phonemes.join(' ');
          out.push({ phonemes: joined, lang, voice: segment.voice.key, speed: segment.speed });
          spoken.push(joined);
          // Not ids.push(...): a long text's ids are more arguments than a call takes.
          for (const id of phonemesToIds(joined)) ids.push(id);
        }
      }
      return {
        phonemes: spoken.join(' '),
        ids,
        // Nothing spoken (a pause alone): the front end that would have read it.
        frontEnd:
          frontEnd ||
          (['a', 'b'].includes(settings.voice.lang)
            ? info.english.frontEnd
            : frontEndOf(settings.voice.lang)),
        lang: settings.voice.lang,
        segments: out,
        warnings: read.warnings,
      };
    },
    dispose: async ({ timeoutMs } = {}) => {
      await Promise.all([pool.close(timeoutMs), encoders.close()]);
    },
  };
}

/** The server's dictionary file, compiled per language at first use. */
function loadDictionaries(file: string | undefined): {
  of(lang: LanguageCode, request?: PronunciationMatcher): PronunciationMatcher | undefined;
} {
  const parsed =
    file === undefined ? undefined : parsePronunciationFile(readFileSync(file, 'utf8'), basename(file));
  const compiled = new Map<LanguageCode, PronunciationMatcher | undefined>();
  const base = (lang: LanguageCode) => {
    if (!parsed) return undefined;
    if (!compiled.has(lang)) compiled.set(lang, compilePronunciations(parsed.entries, lang, parsed.name));
    return compiled.get(lang);
  };
  return {
    of: (lang, request) =>
      mergePronunciations(base(lang), request && request.lang === lang ? request : undefined),
  };
}

function workerInit(options: EngineOptions, files: ModelFiles, warmupVoice: ResolvedVoice): WorkerInit {
  return {
    modelFile: files.modelFile,
    device: options.device,
    intraOpThreads: options.intraOpThreads,
    soloThreads: options.soloThreads,
    allowSpinning: options.ortSpinning,
    cpuArena: options.ortCpuArena,
    lexiconDir: options.lexiconDir,
    logSeverity: options.logSeverity,
    warmupVoice,
    warmupLengths: options.warmupLengths,
    warmLanguages: options.warmLanguages,
    ...(options.faultInjection ? { faultInjection: true } : {}),
  };
}

function engineInfo(
  options: EngineOptions,
  files: ModelFiles,
  pool: WorkerPool,
  voices: VoiceCatalog,
  telemetry: OrtTelemetry,
): EngineInfo {
  const haveFfmpeg = ffmpegAvailable(options.ffmpegPath);
  const formats = (Object.keys(FORMATS) as AudioFormat[]).filter(
    (f) => !(FORMATS[f] as FormatInfo).needsFfmpeg || haveFfmpeg,
  );
  const { provider, fallbackReason, contract, warmupMs, ladder } = pool.info;
  return {
    provider,
    ...(fallbackReason ? { fallbackReason } : {}),
    modelFile: files.modelFile,
    layout: files.layout,
    dtype: options.dtype,
    workers: pool.size,
    contract,
    warmupMs,
    warmupLadder: ladder,
    voices: voices.ids.length,
    languages: voices.languages.map((code) => ({ code, tag: languageTag(code), name: languageName(code) })),
    formats,
    capabilities: { timestamps: contract.durations !== undefined },
    telemetry,
    english: {
      frontEnd: hasLexicon(options.lexiconDir, 'a') ? 'misaki' : 'misaki-espeak',
      lexiconDir: options.lexiconDir,
    },
  };
}

// The vocabulary of the model that the server and the scripts use, through this one door.
export type { SynthesisRequest } from './synthesis/request.ts';
export type { AudioChunk, OutputFormat, RunFigures, SynthesisRun } from './synthesis/run.ts';
export type { WordTiming } from './text/alignment.ts';
export type { PhonemeTiming } from './text/phoneme-timing.ts';
export { audioCuts, type AudioCuts } from './audio/cuts.ts';
export { DEFAULT_FFMPEG } from './audio/aac.ts';
export { DEFAULT_MARKUP_LIMITS } from './text/markup.ts';
export { DEFAULT_DTYPE, DTYPE_FILES, type Dtype, type LanguageCode } from './kokoro/constants.ts';
export {
  LANGUAGE_FACTS,
  SERVED_LANGUAGES,
  isSupportedLanguage,
  parseLanguage,
  type LanguageFacts,
} from './text/languages/index.ts';
export { KOKORO_VOCAB } from './text/tokens.ts';
export { ModelDirError, locateModel } from './kokoro/model-dir.ts';
export type { ResolvedVoice, VoiceFacts } from './kokoro/voices.ts';
export { IncrementalSentenceChunker } from './text/sentences.ts';
export type { Segment, Segmenter } from './synthesis/script.ts';
export { spokenText } from './text/parts.ts';
export type { MarkupMode } from './text/markup.ts';
export type { PronunciationMatcher } from './text/pronunciations/index.ts';
export { parseRequestPronunciations } from './text/pronunciations/index.ts';
export { foreignPhonemeSymbols } from './text/ipa.ts';
export type { NormalizationOptions } from './text/normalization-options.ts';
export { parseNormalizationOptions } from './text/normalization-options.ts';
export type { Device, Provider } from './inference/ort-session.ts';
export type { PolicyName } from './inference/dispatch.ts';
export { parseWarmupSetting, type WarmupSetting, type WarmupStep } from './inference/warmup.ts';
export type { FetchModelOptions } from './kokoro/download.ts';

/** Downloads the model files (loaded only when called: the server needs it only with KOKORO_FETCH_MODEL). */
export async function fetchModel(
  options: import('./kokoro/download.ts').FetchModelOptions,
): ReturnType<typeof import('./kokoro/download.ts').fetchModel> {
  const download = await import('./kokoro/download.ts');
  return download.fetchModel(options);
}
