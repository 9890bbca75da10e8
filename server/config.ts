/**
 * Configuration: read from the environment once, validated, frozen. No other module reads
 * `process.env`; everything else receives a `Config`.
 */
import { join } from 'node:path';
import { availableParallelism } from 'node:os';
import {
  DTYPE_FILES,
  isSupportedLanguage,
  parseLanguage,
  parseWarmupSetting,
  type LanguageCode,
  type Device,
  type Dtype,
  type EngineOptions,
  type WarmupSetting,
} from '../model/engine.ts';
import { parseDimensions } from './emf.ts';
import { LOG_LEVELS, ortSeverity, type LogLevel } from './logger.ts';

export interface Config {
  /** TCP port; SageMaker's SAGEMAKER_BIND_TO_PORT wins over PORT. */
  readonly port: number;
  readonly host: string;
  readonly modelDir: string;
  readonly dtype: Dtype;
  readonly device: Device;
  /** Inference workers (worker threads), each with its own ONNX session. */
  readonly workers: number;
  /** ONNX Runtime intra-op threads per worker. */
  readonly intraOpThreads: number;
  /**
   * Threads of worker 0's solo session, which takes a sentence while every other worker is idle
   * and nothing else waits, so a lone request uses every core (0: none; CPU only).
   */
  readonly soloThreads: number;
  /** A lone sentence uses the solo session only if one pool session would take at least this long (ms). */
  readonly soloMinMs: number;
  /** ONNX Runtime's pool threads spin after each run (its default); off here, see the README. */
  readonly ortSpinning: boolean;
  /** ONNX Runtime's CPU memory arena (its default); off here, so memory a long input took comes back. */
  readonly ortCpuArena: boolean;
  /** misaki's English lexicon files (us_gold.json …); default `<modelDir>/misaki`. */
  readonly lexiconDir: string;
  /** Leave ONNX Runtime's telemetry (Microsoft's 1DS uploader) on; off unless this is set. */
  readonly ortTelemetry: boolean;
  /** Input lengths each worker warms before /ping says 200 (`auto`: a ladder on CUDA only). */
  readonly warmupLengths: WarmupSetting;
  /** Languages every worker loads and warms before /ping says 200; the others load at first use. */
  readonly warmLanguages: readonly LanguageCode[];
  /** Encoder worker threads (compressed formats and resampling). */
  readonly encoderWorkers: number;
  /** The ffmpeg binary, used for AAC only; AAC is offered when it runs. */
  readonly ffmpegPath: string;
  readonly defaultVoice: string;
  /** Maximum text length per message, in Unicode code points. */
  readonly maxTextChars: number;
  /** Requests whose request_timestamp is older than this many seconds are refused as stale. */
  readonly maxRequestAgeS: number;
  /** Largest POST body accepted. */
  readonly maxBodyBytes: number;
  /** WebSocket messages above this size close the session with 1009; smaller ones get an answer. */
  readonly wsMaxMessageBytes: number;
  /** Messages a WebSocket session may have waiting before it gets `busy` errors. */
  readonly wsMaxPending: number;
  /** Bytes of messages a WebSocket session may have waiting, so memory stays bounded. */
  readonly wsMaxPendingBytes: number;
  /** Requests one HTTP connection may have unanswered at once (pipelining); past that it is closed. */
  readonly httpMaxPipelined: number;
  /** An HTTP connection with no byte moving either way for this long is closed (a client that never reads). */
  readonly httpStallTimeoutS: number;
  /** A session with no message and no ping for this many seconds is closed (1000, "idle"); 0: never. */
  readonly wsIdleTimeoutS: number;
  /** Streamed text input: UTF-8 bytes of an utterance's text received but not yet synthesized. */
  readonly utteranceMaxBufferBytes: number;
  /** Streamed text input: after this many seconds without an append, the buffered tail is spoken; 0: never. */
  readonly utteranceIdleFlushS: number;
  /** Sentences waiting for a worker, across all sessions, before new requests get `busy`. */
  readonly maxQueuedJobs: number;
  /** Sentences of a request computed ahead of the one its listener waits for, by idle workers. */
  readonly lookaheadSentences: number;
  /** A request's first chunk ends at its first clause mark once it holds this many characters; 0: off. */
  readonly firstChunkMinChars: number;
  /** A whole text's first sentence is cut at a clause only if it would take longer than this (ms) whole. */
  readonly firstChunkBudgetMs: number;
  /** Seconds given to requests in flight after SIGTERM (SageMaker kills 30 s after SIGTERM). */
  readonly shutdownGraceS: number;
  readonly logLevel: LogLevel;
  /** Fetch the model into modelDir at startup when it is missing (explicit consent). */
  readonly fetchModel: boolean;
  /** Open WebSocket sessions allowed at once; more are closed with 1013 (try again later). */
  readonly maxSessions: number;
  /** When set, every route but /ping needs `Authorization: Bearer <token>`. */
  readonly authToken: string | undefined;
  /** Origins allowed by CORS (`*` for any); empty: no CORS headers. */
  readonly corsOrigins: readonly string[];
  /** Serve the browser page at `GET /` (off in the production images). */
  readonly webPage: boolean;
  /** Streaming POSTs (either route) in flight at once; more are refused with 503 `busy`. */
  readonly maxHttpStreams: number;
  /** CloudWatch Embedded Metric Format lines on stdout (on in the images). */
  readonly metricsEmf: boolean;
  readonly metricsEmfNamespace: string;
  readonly metricsEmfDimensions: Readonly<Record<string, string>>;
  readonly metricsEmfIntervalS: number;
  /** Where to fetch from: a Hugging Face mirror, when set (HF_ENDPOINT). */
  readonly hfEndpoint: string | undefined;
}

/** The engine settings a configuration implies (callers add their event handlers). */
export function engineOptions(config: Config): EngineOptions {
  return {
    modelDir: config.modelDir,
    dtype: config.dtype,
    device: config.device,
    workers: config.workers,
    intraOpThreads: config.intraOpThreads,
    soloThreads: config.soloThreads,
    soloMinMs: config.soloMinMs,
    ortSpinning: config.ortSpinning,
    ortCpuArena: config.ortCpuArena,
    lexiconDir: config.lexiconDir,
    ortTelemetry: config.ortTelemetry,
    warmupLengths: config.warmupLengths,
    warmLanguages: config.warmLanguages,
    maxQueuedJobs: config.maxQueuedJobs,
    defaultVoice: config.defaultVoice,
    logSeverity: ortSeverity(config.logLevel),
    encoderWorkers: config.encoderWorkers,
    ffmpegPath: config.ffmpegPath,
    lookahead: config.lookaheadSentences,
    firstChunkMinChars: config.firstChunkMinChars,
    firstChunkBudgetMs: config.firstChunkBudgetMs,
  };
}

export class ConfigError extends Error {
  constructor(readonly problems: readonly string[]) {
    super(`Invalid configuration:\n  - ${problems.join('\n  - ')}`);
    this.name = 'ConfigError';
  }
}

type Env = Readonly<Record<string, string | undefined>>;

/** Defaults that depend on the machine: one worker per core pair is plenty on CPU. */
function defaultWorkers(): number {
  return Math.max(1, Math.min(2, availableParallelism()));
}

/**
 * Validates the environment into a frozen Config. Collects every problem before throwing so that
 * a misconfigured container says everything that is wrong in one start.
 */
export function parseConfig(env: Env, overrides: Partial<Config> = {}): Config {
  const problems: string[] = [];

  const int = (name: string, fallback: number, min: number, max: number): number => {
    const raw = env[name];
    if (raw === undefined || raw.trim() === '') return fallback;
    const value = Number(raw);
    if (!Number.isInteger(value) || value < min || value > max) {
      problems.push(`${name}=${JSON.stringify(raw)} should be a whole number from ${min} to ${max}`);
      return fallback;
    }
    return value;
  };
  const oneOf = <T extends string>(name: string, fallback: T, allowed: readonly T[]): T => {
    const raw = env[name];
    if (raw === undefined || raw.trim() === '') return fallback;
    const value = raw.trim().toLowerCase() as T;
    if (!allowed.includes(value)) {
      problems.push(`${name}=${JSON.stringify(raw)} should be one of: ${allowed.join(', ')}`);
      return fallback;
    }
    return value;
  };
  const bool = (name: string, fallback = false): boolean => {
    const raw = env[name]?.trim().toLowerCase();
    if (raw === undefined || raw === '') return fallback;
    if (['1', 'true', 'yes', 'on'].includes(raw)) return true;
    if (['0', 'false', 'no', 'off'].includes(raw)) return false;
    problems.push(`${name}=${JSON.stringify(env[name])} should be true or false`);
    return fallback;
  };

  const port =
    env.SAGEMAKER_BIND_TO_PORT !== undefined && env.SAGEMAKER_BIND_TO_PORT !== ''
      ? int('SAGEMAKER_BIND_TO_PORT', 8080, 1, 65535)
      : int('PORT', 8080, 0, 65535);
  const workers = int('KOKORO_WORKERS', defaultWorkers(), 1, 64);
  const warmup = parseWarmupSetting(env.KOKORO_WARMUP_LENGTHS ?? '');
  if (typeof warmup === 'object' && 'problem' in warmup) {
    problems.push(`KOKORO_WARMUP_LENGTHS=${JSON.stringify(env.KOKORO_WARMUP_LENGTHS)} ${warmup.problem}`);
  }
  const cores = availableParallelism();
  const intraOpThreads = int('KOKORO_INTRA_OP_THREADS', Math.max(1, Math.floor(cores / workers)), 1, 256);
  // auto: every core for a lone sentence, when the pool's own sessions each have fewer (several
  // workers on CPU); on CUDA the one session already has the whole GPU.
  const soloAuto =
    env.KOKORO_DEVICE?.trim().toLowerCase() !== 'cuda' && workers > 1 && intraOpThreads < cores ? cores : 0;
  const soloThreads =
    (env.KOKORO_SOLO_THREADS ?? '').trim().toLowerCase() === 'auto'
      ? soloAuto
      : int('KOKORO_SOLO_THREADS', soloAuto, 0, 256);
  const warmLanguages = parseWarmLanguages(env.KOKORO_WARM_LANGUAGES, problems);
  const dimensions = parseDimensions(env.METRICS_EMF_DIMENSIONS ?? 'Service=kokoro-tts');
  if ('problem' in dimensions) {
    problems.push(
      `METRICS_EMF_DIMENSIONS=${JSON.stringify(env.METRICS_EMF_DIMENSIONS)} ${dimensions.problem}`,
    );
  }
  const namespace = env.METRICS_EMF_NAMESPACE?.trim() || 'KokoroTTS';
  if (namespace.length > 255 || namespace.startsWith('AWS/')) {
    problems.push(
      `METRICS_EMF_NAMESPACE=${JSON.stringify(env.METRICS_EMF_NAMESPACE)} should be at most 255 characters and not start with AWS/`,
    );
  }

  const modelDir = env.KOKORO_MODEL_DIR?.trim() || '/opt/ml/model';
  const config: Config = {
    port,
    host: env.HOST?.trim() || '0.0.0.0',
    modelDir,
    lexiconDir: env.KOKORO_LEXICON_DIR?.trim() || join(modelDir, 'misaki'),
    dtype: oneOf('KOKORO_DTYPE', 'fp32', Object.keys(DTYPE_FILES) as Dtype[]),
    device: oneOf<Device>('KOKORO_DEVICE', 'auto', ['auto', 'cuda', 'cpu']),
    workers,
    intraOpThreads,
    soloThreads,
    soloMinMs: int('KOKORO_SOLO_MIN_MS', 50, 0, 600_000),
    ortSpinning: bool('KOKORO_ORT_SPINNING'),
    ortCpuArena: bool('KOKORO_ORT_CPU_ARENA'),
    ortTelemetry: bool('KOKORO_ORT_TELEMETRY'),
    warmupLengths: typeof warmup === 'object' && 'problem' in warmup ? 'auto' : warmup,
    warmLanguages,
    encoderWorkers: int('ENCODER_WORKERS', 1, 1, 16),
    ffmpegPath: env.FFMPEG_PATH?.trim() || 'ffmpeg',
    defaultVoice: env.KOKORO_DEFAULT_VOICE?.trim() || 'af_heart',
    maxTextChars: int('MAX_TEXT_CHARS', 4096, 1, 1_000_000),
    maxRequestAgeS: int('MAX_REQUEST_AGE_S', 56, 1, 86_400),
    maxBodyBytes: int('MAX_BODY_BYTES', 1024 * 1024, 1024, 64 * 1024 * 1024),
    wsMaxMessageBytes: int('WS_MAX_MESSAGE_BYTES', 4 * 1024 * 1024, 1024 * 1024, 64 * 1024 * 1024),
    wsMaxPending: int('WS_MAX_PENDING', 64, 1, 10_000),
    wsMaxPendingBytes: int('WS_MAX_PENDING_BYTES', 8 * 1024 * 1024, 1024 * 1024, 1024 * 1024 * 1024),
    wsIdleTimeoutS: int('WS_IDLE_TIMEOUT_S', 300, 0, 86_400),
    utteranceMaxBufferBytes: int('UTTERANCE_MAX_BUFFER_BYTES', 64 * 1024, 1024, 64 * 1024 * 1024),
    utteranceIdleFlushS: int('UTTERANCE_IDLE_FLUSH_S', 5, 0, 3600),
    httpMaxPipelined: int('HTTP_MAX_PIPELINED', 16, 1, 1000),
    httpStallTimeoutS: int('HTTP_STALL_TIMEOUT_S', 60, 1, 3600),
    maxQueuedJobs: int('MAX_QUEUED_JOBS', 256, 1, 100_000),
    lookaheadSentences: int('LOOKAHEAD_SENTENCES', 2, 0, 16),
    firstChunkMinChars: int('FIRST_CHUNK_MIN_CHARS', 24, 0, 400),
    firstChunkBudgetMs: int('FIRST_CHUNK_BUDGET_MS', 250, 0, 60_000),
    shutdownGraceS: int('SHUTDOWN_GRACE_S', 25, 0, 600),
    logLevel: oneOf<LogLevel>('LOG_LEVEL', 'info', LOG_LEVELS),
    fetchModel: bool('KOKORO_FETCH_MODEL'),
    hfEndpoint: env.HF_ENDPOINT?.trim() || undefined,
    maxSessions: int('MAX_SESSIONS', 256, 1, 100_000),
    authToken: env.AUTH_TOKEN?.trim() || undefined,
    corsOrigins: (env.CORS_ORIGINS ?? '')
      .split(',')
      .map((o) => o.trim())
      .filter(Boolean),
    webPage: bool('WEB_PAGE', true),
    maxHttpStreams: int('MAX_HTTP_STREAMS', 256, 1, 100_000),
    metricsEmf: bool('METRICS_EMF'),
    metricsEmfNamespace: namespace,
    metricsEmfDimensions: 'problem' in dimensions ? {} : dimensions,
    metricsEmfIntervalS: int('METRICS_EMF_INTERVAL_S', 60, 1, 3600),
    ...overrides,
  };

  if (problems.length > 0) throw new ConfigError(problems);
  return Object.freeze(config);
}

/**
 * KOKORO_WARM_LANGUAGES: languages to load and warm before /ping says 200, as a comma-separated
 * list of Kokoro's letters or tags (`a,b,e`, `en-US,es,fr-FR`) or `all`; English (`a,b`) by default.
 */
function parseWarmLanguages(raw: string | undefined, problems: string[]): LanguageCode[] {
  const value = (raw ?? '').trim();
  if (value === '') return ['a', 'b'];
  const all = (['a', 'b', 'e', 'f', 'h', 'i', 'j', 'p', 'z'] as const).filter((l) => isSupportedLanguage(l));
  if (value.toLowerCase() === 'all') return all;
  const langs: LanguageCode[] = [];
  for (const name of value
    .split(',')
    .map((n) => n.trim())
    .filter(Boolean)) {
    const lang = parseLanguage(name);
    if (lang === undefined || !isSupportedLanguage(lang)) {
      problems.push(
        `KOKORO_WARM_LANGUAGES names ${JSON.stringify(name)}, which is not a language this server phonemizes; use \`all\` or some of: ${all.join(', ')}`,
      );
    } else if (!langs.includes(lang)) langs.push(lang);
  }
  return langs;
}
