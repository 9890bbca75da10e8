/**
 * Every setting the server takes from the environment, in one table: the variable, the `Config`
 * field it fills, its kind and bounds, its default and what it is for. `parseConfig` (config.ts)
 * reads the table; `npm run docs:config` writes the README's configuration table from it.
 */
import { join } from 'node:path';
import {
  DTYPE_FILES,
  isSupportedLanguage,
  parseLanguage,
  parseWarmupSetting,
  type LanguageCode,
  type PolicyName,
  type Device,
  type Dtype,
  type WarmupSetting,
} from '../../model/engine.ts';
import { parseDimensions } from '../emf.ts';
import { LOG_LEVELS, type LogLevel } from '../logger.ts';
import {
  problem,
  listItems,
  type BoolSetting,
  type CustomSetting,
  type IntSetting,
  type ListSetting,
  type OneOfSetting,
  type Scope,
  type Setting,
  type TextSetting,
} from './setting-kinds.ts';

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
  /** Maximum text length per message, in Unicode code points (also after pronunciations and aliases). */
  readonly maxTextChars: number;
  /** Seconds of audio one request or utterance may make, pauses included. */
  readonly maxAudioS: number;
  /** Bytes a `stream: false` reply may hold before it is sent. */
  readonly maxCompleteReplyBytes: number;
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
  /** Contexts one session may have open at once (sessions with contexts: ours, ElevenLabs', Cartesia's). */
  readonly wsMaxContexts: number;
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
  /** The order of the sentences waiting: by when their listeners need them, or next-needed first come first served. */
  readonly dispatchPolicy: PolicyName;
  /** A request whose first audio is predicted later than this (ms) is refused with `busy` at once; 0: never. */
  readonly maxFirstAudioMs: number;
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
  /** POST /v1/phonemize requests in flight at once; more are refused with 503 `busy`. */
  readonly phonemizeMaxQueued: number;
  /** POST /v1/phonemize requests in flight at once from one remote address; more get 429. */
  readonly phonemizeMaxPerClient: number;
  /** CloudWatch Embedded Metric Format lines on stdout (on in the images). */
  readonly metricsEmf: boolean;
  readonly metricsEmfNamespace: string;
  readonly metricsEmfDimensions: Readonly<Record<string, string>>;
  readonly metricsEmfIntervalS: number;
  /** Where to fetch from: a Hugging Face mirror, when set (HF_ENDPOINT). */
  readonly hfEndpoint: string | undefined;
  /** The server's pronunciation dictionary (JSON or PLS), checked at startup. */
  readonly pronunciationsFile: string | undefined;
  /** The longest pause markup may ask for, in seconds. */
  readonly maxPauseS: number;
}

/** Fields of type exactly `V`, which a kind that yields `V` can fill. */
type FieldOf<V> = {
  [K in keyof Config]-?: [V] extends [Config[K]] ? ([Config[K]] extends [V] ? K : never) : never;
}[keyof Config];
/** Fields that free text can fill. */
type TextField = { [K in keyof Config]-?: string extends Config[K] ? K : never }[keyof Config];
/** Fields that hold one of a list of words. */
type WordField = { [K in keyof Config]-?: Config[K] extends string ? K : never }[keyof Config];

// Each kind's builder ties the field to the type of value the kind yields, so an entry that would
// put a number into a string field does not compile.
const int = <K extends FieldOf<number>>(s: Omit<IntSetting<Config, K>, 'kind'>): IntSetting<Config, K> => ({
  kind: 'int',
  ...s,
});
const bool = <K extends FieldOf<boolean> | undefined>(
  s: Omit<BoolSetting<Config, K>, 'kind'>,
): BoolSetting<Config, K> => ({ kind: 'bool', ...s });
const oneOf = <K extends WordField>(
  s: Omit<OneOfSetting<Config, K, Config[K]>, 'kind'>,
): OneOfSetting<Config, K, Config[K]> => ({ kind: 'oneOf', ...s });
const text = <K extends TextField>(
  s: Omit<TextSetting<Config, K, Config[K]>, 'kind'>,
): TextSetting<Config, K, Config[K]> => ({ kind: 'text', ...s });
const list = <K extends FieldOf<readonly string[]>>(
  s: Omit<ListSetting<Config, K>, 'kind'>,
): ListSetting<Config, K> => ({ kind: 'list', ...s });
const custom = <K extends keyof Config>(
  s: Omit<CustomSetting<Config, K, Config[K]>, 'kind'>,
): CustomSetting<Config, K, Config[K]> => ({ kind: 'custom', ...s });

/** The field a table leaves unfilled; `never` when it fills every one. */
type Unfilled<T extends readonly Setting<Config>[]> = Exclude<keyof Config, T[number]['key']>;

/** The table, which must fill every field of Config: a compile error names the one it misses. */
function everyField<T extends readonly Setting<Config>[]>(
  table: T & ([Unfilled<T>] extends [never] ? unknown : { readonly unfilled: Unfilled<T> }),
): T {
  return table;
}

const KIB = 1024;
const MIB = 1024 * KIB;

/** Read by the allocator before the configuration (it may re-execute the process); in the table too. */
export const MALLOC_PIN = bool({
  name: 'KOKORO_MALLOC_PIN',
  key: undefined,
  default: true,
  description:
    "the server re-executes itself once at startup with glibc's mmap threshold pinned (`MALLOC_MMAP_THRESHOLD_`), so large freed blocks go back to the kernel (see [Memory after a burst](#memory-after-a-burst)); `false` leaves glibc's moving threshold alone; a `MALLOC_MMAP_THRESHOLD_` you set is kept",
});

const ALL_LANGUAGES = (['a', 'b', 'e', 'f', 'h', 'i', 'j', 'p', 'z'] as const).filter((l) =>
  isSupportedLanguage(l),
);

/**
 * The settings, in the README's order. When several variables fill one field, the first in the
 * table fills it and its default reads the next (`SAGEMAKER_BIND_TO_PORT`, unset, is `PORT`).
 */
const TABLE = [
  int({
    name: 'SAGEMAKER_BIND_TO_PORT',
    key: 'port',
    min: 1,
    max: 65535,
    default: { doc: '`PORT`', compute: (s) => s.variable('PORT', 'port') },
    description: 'the port SageMaker gives the container; when set it wins over `PORT`',
  }),
  int({ name: 'PORT', key: 'port', min: 0, max: 65535, default: 8080, description: 'listening port' }),
  text({ name: 'HOST', key: 'host', default: '0.0.0.0', description: 'listening address' }),
  text({
    name: 'KOKORO_MODEL_DIR',
    key: 'modelDir',
    default: '/opt/ml/model',
    description: "model directory, SageMaker's mount by default (see [Real model](#real-model))",
  }),
  oneOf({
    name: 'KOKORO_DTYPE',
    key: 'dtype',
    values: Object.keys(DTYPE_FILES) as Dtype[],
    default: 'fp32',
    description: 'which onnx-community model file to load',
  }),
  oneOf({
    name: 'KOKORO_DEVICE',
    key: 'device',
    values: ['auto', 'cuda', 'cpu'],
    default: 'auto',
    description: '`auto`: CUDA if it starts, else CPU with a warning; `cuda`: CUDA or fail (see [GPU](#gpu))',
  }),
  custom({
    name: 'KOKORO_WARMUP_LENGTHS',
    key: 'warmupLengths',
    default: 'auto',
    parse(raw) {
      const setting = parseWarmupSetting(raw);
      return typeof setting === 'object' && 'problem' in setting
        ? { problems: [problem('KOKORO_WARMUP_LENGTHS', raw, setting.problem)] }
        : { value: setting };
    },
    format: (setting: WarmupSetting) =>
      setting === 'auto' ? 'auto' : setting.length === 0 ? 'none' : setting.join(','),
    description:
      'input lengths (phoneme ids, 1–510, comma-separated) each worker runs twice before `/ping` says 200; `auto`: 8 to 510 in ten steps on CUDA, none on CPU; `none` (see [GPU](#gpu))',
  }),
  custom({
    name: 'KOKORO_WARM_LANGUAGES',
    key: 'warmLanguages',
    default: ['a', 'b'],
    parse: parseWarmLanguages,
    format: (langs) => langs.join(','),
    description:
      "languages every worker loads and warms before `/ping` says 200, as Kokoro's letters or tags (`a,b,e`, `es,fr-FR`) or `all`; any other supported language loads in a worker at its first sentence there (see [Languages](#languages))",
  }),
  int({
    name: 'KOKORO_WORKERS',
    key: 'workers',
    min: 1,
    max: 64,
    // One worker per core pair is plenty on CPU.
    default: { doc: '`min(2, cores)`', compute: (s) => Math.max(1, Math.min(2, s.cores)) },
    description: 'inference worker threads, each with its own ONNX Runtime session',
  }),
  int({
    name: 'KOKORO_INTRA_OP_THREADS',
    key: 'intraOpThreads',
    min: 1,
    max: 256,
    default: {
      doc: '`cores / workers`',
      compute: (s) => Math.max(1, Math.floor(s.cores / s.get('workers'))),
    },
    description: 'ONNX Runtime threads per worker',
  }),
  int({
    name: 'KOKORO_SOLO_THREADS',
    key: 'soloThreads',
    min: 0,
    max: 256,
    auto: true,
    default: { doc: '`auto`', compute: soloThreads },
    description:
      'threads of worker 0\'s second, "solo" session: a sentence that arrives while every worker is idle, nothing else waits and no other request is open runs on it, so a lone request uses every core (its look-ahead waits for it; another request\'s sentence does not). `auto`: every core when there are several workers with fewer threads each, on CPU; `0` on CUDA (one session already has the GPU) and with one worker. Costs one more model session in memory',
  }),
  int({
    name: 'KOKORO_SOLO_MIN_MS',
    key: 'soloMinMs',
    min: 0,
    max: 600_000,
    default: 50,
    description:
      "a lone sentence goes to the solo session only if one pool session would take at least this many milliseconds over it (estimated per character of text from each worker's warm-up run, then from the sentences the pool runs); below that, waking every core's threads costs more than it wins ([docs/experiments.md](docs/experiments.md#the-solo-session)). `0`: every lone sentence",
  }),
  bool({
    name: 'KOKORO_ORT_SPINNING',
    key: 'ortSpinning',
    default: false,
    description:
      "let ONNX Runtime's pool threads spin after each run (its own default); off, because spinning threads take the cores the server's other threads need and slow each chunk's hand-off (see [Performance](#performance))",
  }),
  bool({
    name: 'KOKORO_ORT_CPU_ARENA',
    key: 'ortCpuArena',
    default: false,
    description:
      "ONNX Runtime's CPU memory arena (its own default); off, because the arena grows to the largest input a session has run and never gives the memory back (see [Memory after a burst](#memory-after-a-burst))",
  }),
  bool({
    name: 'KOKORO_ORT_TELEMETRY',
    key: 'ortTelemetry',
    default: false,
    description:
      "leave ONNX Runtime's telemetry on (Microsoft's event uploader, see [Privacy](#privacy)); off unless set, whatever `ORT_DISABLE_TELEMETRY` says",
  }),
  MALLOC_PIN,
  text({
    name: 'KOKORO_LEXICON_DIR',
    key: 'lexiconDir',
    default: { doc: '`$KOKORO_MODEL_DIR/misaki`', compute: (s) => join(s.get('modelDir'), 'misaki') },
    description:
      "misaki's English lexicons (`us_gold.json`, `us_silver.json`, `gb_gold.json`, `gb_silver.json`; `npm run fetch-model` fetches them there). Missing: English runs misaki's espeak mapping alone (still only misaki's symbols), and the `ready` log and `/ping`'s `english_front_end` say `misaki-espeak`",
  }),
  text({
    name: 'KOKORO_PRONUNCIATIONS',
    key: 'pronunciationsFile',
    default: undefined,
    description:
      "a pronunciation dictionary, JSON or PLS ([docs/protocol.md](docs/protocol.md#pronunciation-dictionaries)), read at startup: every text in its languages is read through it (a request's `pronunciations` over it); a problem in it stops the server with its line",
  }),
  int({
    name: 'MAX_PAUSE_S',
    key: 'maxPauseS',
    min: 1,
    max: 600,
    default: 10,
    description:
      'the longest pause markup may ask for (`[pause:…]`, `<break time>`); a longer one is an `invalid_markup` error, never cut short',
  }),
  text({
    name: 'KOKORO_DEFAULT_VOICE',
    key: 'defaultVoice',
    default: 'af_heart',
    description: 'voice when a request names none',
  }),
  int({
    name: 'ENCODER_WORKERS',
    key: 'encoderWorkers',
    min: 1,
    max: 16,
    default: 1,
    description: 'encoder worker threads, for compressed formats and resampling',
  }),
  text({
    name: 'FFMPEG_PATH',
    key: 'ffmpegPath',
    default: 'ffmpeg',
    description: 'ffmpeg binary for AAC; AAC is offered only when it runs',
  }),
  bool({
    name: 'KOKORO_FETCH_MODEL',
    key: 'fetchModel',
    default: false,
    description: 'fetch the model into `KOKORO_MODEL_DIR` at startup if it is missing',
  }),
  text({
    name: 'HF_ENDPOINT',
    key: 'hfEndpoint',
    default: undefined,
    description:
      'a mirror that `KOKORO_FETCH_MODEL` and `npm run fetch-model` download from instead of `https://huggingface.co`',
  }),
  int({
    name: 'MAX_TEXT_CHARS',
    key: 'maxTextChars',
    min: 1,
    max: 1_000_000,
    default: 4096,
    description:
      'text limit per message, in code points; it holds after pronunciations and `sub`/alias readings are applied too (an utterance may speak this many more than it was sent), `text_too_long` past it',
  }),
  int({
    name: 'MAX_AUDIO_S',
    key: 'maxAudioS',
    min: 1,
    max: 86_400,
    default: 600,
    description:
      'seconds of audio one request or streamed utterance may make, pauses, aliases and rate changes included; a request whose pauses alone pass it is refused before any audio, and a run that reaches it ends with `audio_too_long`',
  }),
  int({
    name: 'MAX_COMPLETE_REPLY_BYTES',
    key: 'maxCompleteReplyBytes',
    min: MIB,
    max: 1024 * MIB,
    default: 32 * MIB,
    description:
      'bytes a `stream: false` reply (one whole file, held until complete) may reach; past it the request ends with `audio_too_long` (ask for a stream instead)',
  }),
  int({
    name: 'MAX_REQUEST_AGE_S',
    key: 'maxRequestAgeS',
    min: 1,
    max: 86_400,
    default: 56,
    description: 'requests older than this (by `request_timestamp`) are refused',
  }),
  int({
    name: 'MAX_BODY_BYTES',
    key: 'maxBodyBytes',
    min: KIB,
    max: 64 * MIB,
    default: MIB,
    description: 'POST body limit',
  }),
  int({
    name: 'WS_MAX_MESSAGE_BYTES',
    key: 'wsMaxMessageBytes',
    min: MIB,
    max: 64 * MIB,
    default: 4 * MIB,
    description: 'WebSocket messages above this close the session with 1009; smaller ones get an answer',
  }),
  int({
    name: 'WS_MAX_PENDING',
    key: 'wsMaxPending',
    min: 1,
    max: 10_000,
    default: 64,
    description: 'messages a session may have waiting; more get `busy`',
  }),
  int({
    name: 'WS_MAX_PENDING_BYTES',
    key: 'wsMaxPendingBytes',
    min: MIB,
    max: 1024 * MIB,
    default: 8 * MIB,
    description: 'bytes of messages a session may have waiting, which bounds its memory; more get `busy`',
  }),
  int({
    name: 'WS_MAX_CONTEXTS',
    key: 'wsMaxContexts',
    min: 1,
    max: 256,
    default: 5,
    description:
      "contexts a session may have open at once (`contexts=true`, ElevenLabs multi-stream, Cartesia); one more gets `too_many_contexts` (5: ElevenLabs' own limit)",
  }),
  int({
    name: 'WS_IDLE_TIMEOUT_S',
    key: 'wsIdleTimeoutS',
    min: 0,
    max: 86_400,
    default: 300,
    description:
      'a session with no message and no ping for this long is closed with 1000 and the reason `idle` (never while it synthesizes); `0` keeps idle sessions open',
  }),
  int({
    name: 'UTTERANCE_MAX_BUFFER_BYTES',
    key: 'utteranceMaxBufferBytes',
    min: KIB,
    max: 64 * MIB,
    default: 64 * KIB,
    description:
      "streamed text input: bytes of an open utterance's text received but not yet synthesized; an `append` past it gets `text_too_long` and is not added, and the utterance stays open",
  }),
  int({
    name: 'UTTERANCE_IDLE_FLUSH_S',
    key: 'utteranceIdleFlushS',
    min: 0,
    max: 3600,
    default: 5,
    description:
      'streamed text input: after this long without an `append`, the unfinished tail of the utterance is spoken (the utterance stays open until `flush`); `0`: never',
  }),
  int({
    name: 'HTTP_MAX_PIPELINED',
    key: 'httpMaxPipelined',
    min: 1,
    max: 1000,
    default: 16,
    description:
      'requests one HTTP connection may have unanswered at once; a client pipelining past that without reading is disconnected',
  }),
  int({
    name: 'HTTP_STALL_TIMEOUT_S',
    key: 'httpStallTimeoutS',
    min: 1,
    max: 3600,
    default: 60,
    description:
      'an HTTP connection on which no byte moves either way for this long (a client that stopped reading) is closed',
  }),
  int({
    name: 'FIRST_CHUNK_MIN_CHARS',
    key: 'firstChunkMinChars',
    min: 0,
    max: 400,
    default: 24,
    description:
      'a request\'s (or utterance\'s) first chunk ends at its first clause mark once it holds this many characters (never inside a number, after an abbreviation or inside a quotation); later chunks are whole sentences; `0`: sentences only. A request opts out with `"first_chunk":"sentence"`',
  }),
  int({
    name: 'FIRST_CHUNK_BUDGET_MS',
    key: 'firstChunkBudgetMs',
    min: 0,
    max: 60_000,
    default: 250,
    description:
      "a whole text's first sentence is cut at a clause mark (as `FIRST_CHUNK_MIN_CHARS` says) only when synthesizing it whole would take longer than this on one pool session, estimated per character from the pool's own runs: where the model is fast enough the first sentence stays whole, with no seam ([docs/experiments.md](docs/experiments.md#the-first-chunk-budget)). Streamed text, whose first sentence is not known ahead, is cut at a clause mark only once the text before it would already take longer than the budget (and holds `FIRST_CHUNK_MIN_CHARS`). `0`: always cut",
  }),
  int({
    name: 'LOOKAHEAD_SENTENCES',
    key: 'lookaheadSentences',
    min: 0,
    max: 16,
    default: 2,
    description:
      "sentences of one request that workers may compute ahead of the one its listener waits for (each due when the audio before it will have played out, so it runs when nothing due sooner waits, and under `DISPATCH_POLICY=fifo` below every request's next-needed sentence; dropped with the request); `0`: one sentence at a time",
  }),
  oneOf({
    name: 'DISPATCH_POLICY',
    key: 'dispatchPolicy',
    values: ['deadline', 'fifo'],
    default: 'deadline',
    description:
      "the order in which waiting sentences get a worker ([docs/architecture.md](docs/architecture.md#where-scheduling-is-decided)). `deadline`: by when each one's listener needs it (a request's first sentence at once; a later one when the audio already sent for its request will have played out), so a new request's first sentence goes before a request with seconds of audio buffered; `fifo`: the policy before it, every request's next sentence first come first served, kept to compare against (`npm run bench -- loaded`)",
  }),
  int({
    name: 'MAX_FIRST_AUDIO_MS',
    key: 'maxFirstAudioMs',
    min: 0,
    max: 600_000,
    default: 0,
    description:
      "admission by predicted first audio: a request whose first audio is predicted later than this many milliseconds (the sentences that would run before its first one, spread over the workers, and its own run, by the pool's cost estimates) is refused at once with 503 `busy` and `Retry-After: 1` (the WebSocket's and each dialect's `busy` error), so that a load balancer or SageMaker client can retry on another instance rather than wait; counted in `/metrics` as `tts_admission_refused_total` with `reason` `first_audio`. An idle server refuses nothing. `0`: off",
  }),
  int({
    name: 'MAX_QUEUED_JOBS',
    key: 'maxQueuedJobs',
    min: 1,
    max: 100_000,
    default: 256,
    description: 'sentences waiting for a worker across all sessions; more get `busy`',
  }),
  int({
    name: 'MAX_SESSIONS',
    key: 'maxSessions',
    min: 1,
    max: 100_000,
    default: 256,
    description: 'open WebSocket sessions at once; more are closed with 1013, try again later',
  }),
  int({
    name: 'MAX_HTTP_STREAMS',
    key: 'maxHttpStreams',
    min: 1,
    max: 100_000,
    default: 256,
    description:
      "streaming POSTs (`/invocations` and `/v1/audio/speech`) in flight at once, set from the autoscaling plan's Q_max (see [Autoscaling](#autoscaling)); more are refused at once with 503 `busy` and `Retry-After: 1`",
  }),
  int({
    name: 'PHONEMIZE_MAX_QUEUED',
    key: 'phonemizeMaxQueued',
    min: 1,
    max: 100_000,
    default: 32,
    description:
      '`POST /v1/phonemize` requests in flight at once, all clients together (each holds at most one sentence-sized piece in the inference queue, below every next-needed sentence); more are refused at once with 503 `busy` and `Retry-After: 1`',
  }),
  int({
    name: 'PHONEMIZE_MAX_PER_CLIENT',
    key: 'phonemizeMaxPerClient',
    min: 1,
    max: 100_000,
    default: 4,
    description:
      '`POST /v1/phonemize` requests in flight at once from one remote address (behind a proxy, every client shares its address); more are refused at once with 429 `too_many_requests` and `Retry-After: 1`',
  }),
  text({
    name: 'AUTH_TOKEN',
    key: 'authToken',
    default: undefined,
    description:
      "when set, every route but `/ping` (and the page's static files) requires `Authorization: Bearer <token>` (for use outside SageMaker; a browser's WebSocket may carry it as a `bearer.<base64url token>` subprotocol)",
  }),
  list({
    name: 'CORS_ORIGINS',
    key: 'corsOrigins',
    default: [],
    description: 'comma-separated origins (or `*`) allowed by CORS; unset sends no CORS headers',
  }),
  bool({
    name: 'WEB_PAGE',
    key: 'webPage',
    default: true,
    description: 'serve the [browser page](#browser-page) at `GET /` (`false` in both images)',
  }),
  int({
    name: 'SHUTDOWN_GRACE_S',
    key: 'shutdownGraceS',
    min: 0,
    max: 600,
    default: 25,
    description:
      "on SIGTERM, the deadline for finishing accepted work; then what remains is cut (close frames 1001, then every connection destroyed within 1 s more) and logged by request id, so the process exits before SageMaker's SIGKILL at 30 s",
  }),
  oneOf({
    name: 'LOG_LEVEL',
    key: 'logLevel',
    values: LOG_LEVELS,
    default: 'info',
    description: "pino level; ONNX Runtime's own log is kept to errors unless `debug`/`trace`",
  }),
  bool({
    name: 'METRICS_EMF',
    key: 'metricsEmf',
    default: false,
    note: '`true` in the images',
    description:
      'per-instance metrics as CloudWatch Embedded Metric Format lines on stdout (see [Autoscaling](#autoscaling))',
  }),
  custom({
    name: 'METRICS_EMF_NAMESPACE',
    key: 'metricsEmfNamespace',
    default: 'KokoroTTS',
    parse: (raw) => {
      const value = raw.trim();
      return value.length > 255 || value.startsWith('AWS/')
        ? {
            problems: [
              problem(
                'METRICS_EMF_NAMESPACE',
                raw,
                'should be at most 255 characters and not start with AWS/',
              ),
            ],
          }
        : { value };
    },
    format: (namespace) => namespace,
    description: 'their CloudWatch namespace',
  }),
  custom({
    name: 'METRICS_EMF_DIMENSIONS',
    key: 'metricsEmfDimensions',
    default: { Service: 'kokoro-tts' },
    parse: (raw) => {
      const dimensions = parseDimensions(raw);
      return 'problem' in dimensions
        ? { problems: [problem('METRICS_EMF_DIMENSIONS', raw, dimensions.problem)] }
        : { value: dimensions };
    },
    format: (dimensions) =>
      Object.entries(dimensions)
        .map(([name, value]) => `${name}=${value}`)
        .join(','),
    description:
      'their dimensions, `Name=Value,…` (the deploy tooling sets `EndpointName` and `VariantName`)',
  }),
  int({
    name: 'METRICS_EMF_INTERVAL_S',
    key: 'metricsEmfIntervalS',
    min: 1,
    max: 3600,
    default: 60,
    description: "how often they are written: latencies as every request's value, counts per interval",
  }),
];

export const SETTINGS: readonly Setting<Config>[] = everyField(TABLE);

/**
 * `auto` solo threads: every core for a lone sentence when the pool's own sessions each have fewer
 * (several workers on CPU); on CUDA the one session already has the whole GPU.
 */
function soloThreads(s: Scope<Config>): number {
  return s.get('device') !== 'cuda' && s.get('workers') > 1 && s.get('intraOpThreads') < s.cores
    ? s.cores
    : 0;
}

/** KOKORO_WARM_LANGUAGES: Kokoro's letters or tags (`a,b,e`, `en-US,es,fr-FR`), or `all`. */
function parseWarmLanguages(raw: string): { value: LanguageCode[] } | { problems: string[] } {
  if (raw.trim().toLowerCase() === 'all') return { value: [...ALL_LANGUAGES] };
  const langs: LanguageCode[] = [];
  const problems: string[] = [];
  for (const name of listItems(raw)) {
    const lang = parseLanguage(name);
    if (lang === undefined || !isSupportedLanguage(lang)) {
      problems.push(
        `KOKORO_WARM_LANGUAGES names ${JSON.stringify(name)}, which is not a language this server phonemizes; use \`all\` or some of: ${ALL_LANGUAGES.join(', ')}`,
      );
    } else if (!langs.includes(lang)) langs.push(lang);
  }
  return problems.length > 0 ? { problems } : { value: langs };
}
