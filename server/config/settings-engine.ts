/**
 * The settings of the engine (the model and its runtime, the text front end, the encoders, how
 * sentences are cut and scheduled), with fetching the model and the allocator's pin beside them.
 * `engineOptions` (config.ts) hands the configuration to the engine, which takes each of its
 * options under the name of the field that fills it.
 */
import { join } from 'node:path';
import {
  DEFAULT_DTYPE,
  DEFAULT_FFMPEG,
  DEFAULT_MARKUP_LIMITS,
  DTYPE_FILES,
  isSupportedLanguage,
  SERVED_LANGUAGES,
  parseLanguage,
  parseWarmupSetting,
  type Dtype,
  type LanguageCode,
  type WarmupSetting,
} from '../../model/engine.ts';
import {
  bool,
  custom,
  int,
  listItems,
  oneOf,
  problem,
  text,
  type Parsed,
  type Scope,
} from './setting-kinds.ts';

/** Read by the allocator before the configuration (it may re-execute the process); in the table too. */
export const MALLOC_PIN = bool({
  name: 'KOKORO_MALLOC_PIN',
  key: undefined,
  default: true,
  description:
    "the server re-executes itself once at startup with glibc's mmap threshold pinned (`MALLOC_MMAP_THRESHOLD_`), so large freed blocks go back to the kernel (see [Memory after a burst](performance.md#memory-after-a-burst)); `false` leaves glibc's moving threshold alone; a `MALLOC_MMAP_THRESHOLD_` you set is kept",
});

const MODEL_DIR = text({
  name: 'KOKORO_MODEL_DIR',
  key: 'modelDir',
  default: '/opt/ml/model',
  description: "model directory, SageMaker's mount by default (see [Real model](../README.md#real-model))",
});

const DEVICE = oneOf({
  name: 'KOKORO_DEVICE',
  key: 'device',
  values: ['auto', 'cuda', 'cpu'],
  default: 'auto',
  description:
    '`auto`: CUDA if it starts, else CPU with a warning; `cuda`: CUDA or fail (see [GPU](deploy.md#gpu))',
});

const WORKERS = int({
  name: 'KOKORO_WORKERS',
  key: 'workers',
  min: 1,
  max: 64,
  // One worker per core pair is plenty on CPU.
  default: { doc: '`min(2, cores)`', compute: (s) => Math.max(1, Math.min(2, s.cores)) },
  description: 'inference worker threads, each with its own ONNX Runtime session',
});

const INTRA_OP_THREADS = int({
  name: 'KOKORO_INTRA_OP_THREADS',
  key: 'intraOpThreads',
  min: 1,
  max: 256,
  default: {
    doc: '`cores / workers`',
    compute: (s) => Math.max(1, Math.floor(s.cores / s.get(WORKERS))),
  },
  description: 'ONNX Runtime threads per worker',
});

/** The model, its runtime and the front end: what a worker needs to start. */
export const MODEL = [
  MODEL_DIR,
  oneOf({
    name: 'KOKORO_DTYPE',
    key: 'dtype',
    values: Object.keys(DTYPE_FILES) as Dtype[],
    default: DEFAULT_DTYPE,
    description: 'which onnx-community model file to load',
  }),
  DEVICE,
  custom({
    name: 'KOKORO_WARMUP_LENGTHS',
    key: 'warmupLengths',
    default: 'auto',
    parse(raw): Parsed<WarmupSetting> {
      const setting = parseWarmupSetting(raw);
      return typeof setting === 'object' && 'problem' in setting
        ? { problems: [problem('KOKORO_WARMUP_LENGTHS', raw, setting.problem)] }
        : { value: setting };
    },
    format: (setting: WarmupSetting) =>
      setting === 'auto' ? 'auto' : setting.length === 0 ? 'none' : setting.join(','),
    description:
      'input lengths (phoneme ids, 1–510, comma-separated) each worker runs twice before `/ping` says 200; `auto`: 8 to 510 in ten steps on CUDA, none on CPU; `none` (see [GPU](deploy.md#gpu))',
  }),
  custom({
    name: 'KOKORO_WARM_LANGUAGES',
    key: 'warmLanguages',
    default: ['a', 'b'],
    parse: parseWarmLanguages,
    format: (langs) => langs.join(','),
    description:
      "languages every worker loads and warms before `/ping` says 200, as Kokoro's letters or tags (`a,b,e`, `es,fr-FR`) or `all`; any other supported language loads in a worker at its first sentence there (see [Languages](languages.md#languages))",
  }),
  WORKERS,
  INTRA_OP_THREADS,
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
      "a lone sentence goes to the solo session only if one pool session would take at least this many milliseconds over it (estimated per character of text from each worker's warm-up run, then from the sentences the pool runs); below that, waking every core's threads costs more than it wins ([docs/experiments.md](experiments.md#the-solo-session)). `0`: every lone sentence",
  }),
  bool({
    name: 'KOKORO_ORT_SPINNING',
    key: 'ortSpinning',
    default: false,
    description:
      "let ONNX Runtime's pool threads spin after each run (its own default); off, because spinning threads take the cores the server's other threads need and slow each chunk's hand-off (see [Performance](performance.md))",
  }),
  bool({
    name: 'KOKORO_ORT_CPU_ARENA',
    key: 'ortCpuArena',
    default: false,
    description:
      "ONNX Runtime's CPU memory arena (its own default); off, because the arena grows to the largest input a session has run and never gives the memory back (see [Memory after a burst](performance.md#memory-after-a-burst))",
  }),
  bool({
    name: 'KOKORO_ORT_TELEMETRY',
    key: 'ortTelemetry',
    default: false,
    description:
      "leave ONNX Runtime's telemetry on (Microsoft's event uploader, see [Privacy](deploy.md#privacy)); off unless set, whatever `ORT_DISABLE_TELEMETRY` says",
  }),
  MALLOC_PIN,
  text({
    name: 'KOKORO_LEXICON_DIR',
    key: 'lexiconDir',
    default: { doc: '`$KOKORO_MODEL_DIR/misaki`', compute: (s) => join(s.get(MODEL_DIR), 'misaki') },
    description:
      "misaki's English lexicons (`us_gold.json`, `us_silver.json`, `gb_gold.json`, `gb_silver.json`; `npm run fetch-model` fetches them there). Missing: English runs misaki's espeak mapping alone (still only misaki's symbols), and the `ready` log and `/ping`'s `english_front_end` say `misaki-espeak`",
  }),
  text({
    name: 'KOKORO_PRONUNCIATIONS',
    key: 'pronunciationsFile',
    default: undefined,
    description:
      "a pronunciation dictionary, JSON or PLS ([docs/protocol.md](protocol.md#pronunciation-dictionaries)), read at startup: every text in its languages is read through it (a request's `pronunciations` over it); a problem in it stops the server with its line",
  }),
  int({
    name: 'MAX_PAUSE_S',
    key: 'maxPauseS',
    min: 1,
    max: 600,
    default: DEFAULT_MARKUP_LIMITS.maxPauseMs / 1000,
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
    default: DEFAULT_FFMPEG,
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
] as const;

/** How a request's sentences are cut, and in which order the waiting ones get a worker. */
export const SCHEDULING = [
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
      "a whole text's first sentence is cut at a clause mark (as `FIRST_CHUNK_MIN_CHARS` says) only when synthesizing it whole would take longer than this on one pool session, estimated per character from the pool's own runs: where the model is fast enough the first sentence stays whole, with no seam ([docs/experiments.md](experiments.md#the-first-chunk-budget)). Streamed text, whose first sentence is not known ahead, is cut at a clause mark only once the text before it would already take longer than the budget (and holds `FIRST_CHUNK_MIN_CHARS`). `0`: always cut",
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
      "the order in which waiting sentences get a worker ([docs/architecture.md](architecture.md#where-scheduling-is-decided)). `deadline`: by when each one's listener needs it (a request's first sentence at once; a later one when the audio already sent for its request will have played out), so a new request's first sentence goes before a request with seconds of audio buffered; `fifo`: the policy before it, every request's next sentence first come first served, kept to compare against (`npm run bench -- loaded`)",
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
] as const;

/**
 * `auto` solo threads: every core for a lone sentence when the pool's own sessions each have fewer
 * (several workers on CPU); on CUDA the one session already has the whole GPU.
 */
function soloThreads(s: Scope): number {
  return s.get(DEVICE) !== 'cuda' && s.get(WORKERS) > 1 && s.get(INTRA_OP_THREADS) < s.cores ? s.cores : 0;
}

/** KOKORO_WARM_LANGUAGES: Kokoro's letters or tags (`a,b,e`, `en-US,es,fr-FR`), or `all`. */
function parseWarmLanguages(raw: string): Parsed<readonly LanguageCode[]> {
  if (raw.trim().toLowerCase() === 'all') return { value: [...SERVED_LANGUAGES] };
  const langs: LanguageCode[] = [];
  const problems: string[] = [];
  for (const name of listItems(raw)) {
    const lang = parseLanguage(name);
    if (lang === undefined || !isSupportedLanguage(lang)) {
      problems.push(
        `KOKORO_WARM_LANGUAGES names ${JSON.stringify(name)}, which is not a language this server phonemizes; use \`all\` or some of: ${SERVED_LANGUAGES.join(', ')}`,
      );
    } else if (!langs.includes(lang)) langs.push(lang);
  }
  return problems.length > 0 ? { problems } : { value: langs };
}
