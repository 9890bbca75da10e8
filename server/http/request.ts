/**
 * The request parser, shared by POST /invocations and the WebSocket route: the wire's fields
 * (protocol/request.ts) validated into a request the engine can run, with one set of messages.
 * Wrong types and out-of-range values are errors, never clamped.
 */
import { randomUUID } from 'node:crypto';
import { FORMATS, isAudioFormat, type AudioFormat } from '../../protocol/formats.ts';
import {
  MAX_REQUEST_ID_CHARS,
  SPEED_MAX,
  SPEED_MIN,
  TRANSPORTS,
  codePointLength,
  type Transport,
} from '../../protocol/request.ts';
import {
  foreignPhonemeSymbols,
  parseNormalizationOptions,
  parseRequestPronunciations,
  type Engine,
  type MarkupMode,
  type NormalizationOptions,
  type PronunciationMatcher,
  type ReadText,
  type ResolvedVoice,
  type Segment,
  type SynthesisRequest,
  type TextSettings,
} from '../../model/engine.ts';
import type { Config } from '../config/config.ts';
import { describeValue } from '../../protocol/errors.ts';
import { ttsError } from './errors.ts';

export interface SynthesisOptions {
  readonly requestId: string;
  readonly text: string;
  /** Text length in Unicode code points. */
  readonly chars: number;
  readonly voice: ResolvedVoice;
  /** The voice as the request named it (or the default voice), echoed back exactly as given. */
  readonly voiceSpec: string;
  readonly speed: number;
  readonly format: AudioFormat;
  readonly sampleRate: number;
  /** POST only: false asks for one complete file. */
  readonly stream: boolean;
  /** POST only: raw audio bytes, or Server-Sent Events carrying base64 audio. */
  readonly transport: Transport;
  /**
   * `word_timestamps` frames (SSE events) before each chunk's audio: asked for, and the model can
   * time words (otherwise a warning says why none come).
   */
  readonly timestamps: boolean;
  /** `phoneme_timestamps` frames (SSE events) before each chunk's audio, as `timestamps`. */
  readonly phonemeTimestamps: boolean;
  /** `clause`: the first chunk is released at its first clause mark; `sentence`: at its end. */
  readonly firstChunk: 'clause' | 'sentence';
  /** `text` holds Kokoro phonemes (the request's `phonemes` field), checked against the vocabulary. */
  readonly phonemes: boolean;
  /** The request's `lang`, when it named one. */
  readonly lang?: string;
  /** How markup in the text is read (`markup`): `auto` (SSML when it starts with `<speak`), `ssml`, `none`. */
  readonly markup: MarkupMode;
  /** The whole text's segments, when it held markup (read here: bad markup is refused before audio). */
  readonly segments?: readonly Segment[];
  /**
   * What the request asked for and does not get, one sentence each: timestamps from a model that
   * cannot time them (the audio comes untimed), markup that was dropped (its text spoken).
   */
  readonly warnings: readonly string[];
  /** The request's own `pronunciations`, for its language (over the server's dictionary). */
  readonly pronunciations?: PronunciationMatcher;
  /** `normalization_options`, when given. */
  readonly normalization?: NormalizationOptions;
}

/** The values of the `markup` field. */
export const MARKUP_MODES: readonly MarkupMode[] = ['auto', 'ssml', 'none'];

export interface OptionContext {
  readonly route: 'http' | 'ws';
  readonly config: Config;
  readonly engine: Engine;
  /** Epoch milliseconds, injectable for tests. */
  readonly now?: number;
  /** POST: the transport when the body names none (`sse` for `Accept: text/event-stream`). */
  readonly defaultTransport?: Transport;
}

/** A text/plain body, kept apart from a JSON string body (which is an error, not text). */
export class PlainText {
  constructor(readonly text: string) {}
}

/** A value as an error message names it: `the string "…"`, `number 5`, `an array`. */
export const describe = describeValue;

/** A field with a wrong type or value; `param` names it, for the dialects that say which. */
function invalid(param: string, message: string): never {
  throw ttsError('TTS_ERR_INVALID_OPTION', message, { data: { param } });
}

/**
 * The sample rate asked for `format` (its default rate when `asked` is undefined), or what
 * `refuse` throws, given the rates the format is offered at (comma-separated) and the value asked.
 * Every route and dialect checks a rate here, each wording the refusal its own way.
 */
export function offeredRate(
  format: AudioFormat,
  asked: unknown,
  refuse: (rates: string, asked: unknown) => Error,
): number {
  const rate = asked === undefined ? FORMATS[format].defaultRate : asked;
  const rates = FORMATS[format].rates as readonly number[];
  if (typeof rate !== 'number' || !rates.includes(rate)) throw refuse(rates.join(', '), rate);
  return rate;
}

/** The request id to echo on errors, when the message carried a usable one. */
export function peekRequestId(body: Record<string, unknown>): string | undefined {
  const id = body.request_id;
  return typeof id === 'string' && id.length > 0 && id.length <= MAX_REQUEST_ID_CHARS ? id : undefined;
}

/** Validates a request object into SynthesisOptions, or throws a TtsError that says what is valid. */
export function parseOptions(body: Record<string, unknown>, ctx: OptionContext): SynthesisOptions {
  const { config, engine, route } = ctx;

  let requestId: string;
  if (body.request_id === undefined) requestId = randomUUID();
  else if (
    typeof body.request_id !== 'string' ||
    body.request_id.length === 0 ||
    body.request_id.length > MAX_REQUEST_ID_CHARS
  ) {
    invalid(
      'request_id',
      `request_id should be a non-empty string of at most ${MAX_REQUEST_ID_CHARS} characters; got ${describe(body.request_id)}`,
    );
  } else requestId = body.request_id;

  // Stale first: a request nobody is waiting for any more is refused before any other work.
  if (body.request_timestamp !== undefined) {
    const ts = body.request_timestamp;
    if (typeof ts !== 'number' || !Number.isFinite(ts) || ts < 0) {
      invalid(
        'request_timestamp',
        `request_timestamp should be epoch seconds (or milliseconds above 1e11) as a number; got ${describe(ts)}`,
      );
    }
    const sentMs = ts > 1e11 ? ts : ts * 1000;
    const ageS = ((ctx.now ?? Date.now()) - sentMs) / 1000;
    if (ageS > config.maxRequestAgeS) {
      throw ttsError(
        'TTS_ERR_REQUEST_STALE',
        `The request is ${ageS.toFixed(1)} s old (request_timestamp), over the ${config.maxRequestAgeS} s limit; it was not synthesized`,
      );
    }
  }

  const phonemes = body.phonemes !== undefined;
  if (phonemes && body.text !== undefined)
    invalid(
      'phonemes',
      'send either text or phonemes, not both: phonemes are read as they are, text goes through the front end',
    );
  const field = phonemes ? 'phonemes' : 'text';
  const text = phonemes ? body.phonemes : body.text;
  if (text === undefined)
    throw ttsError(
      'TTS_ERR_BAD_REQUEST',
      'The request has no text: send {"text": "…"} with the words to speak (or {"phonemes": "…"} in Kokoro\'s symbols)',
      { data: { param: 'text' } },
    );
  if (typeof text !== 'string')
    invalid(
      field,
      phonemes
        ? `phonemes should be a string of Kokoro's phoneme symbols (POST /v1/phonemize shows some); got ${describe(text)}`
        : `text should be a string; got ${describe(text)}`,
    );
  if (text.trim() === '')
    throw ttsError('TTS_ERR_EMPTY_TEXT', `${field} is empty: it should contain something to speak`, {
      data: { param: field },
    });
  const chars = codePointLength(text);
  if (chars > config.maxTextChars) {
    throw ttsError(
      'TTS_ERR_TEXT_TOO_LONG',
      `${field} has ${chars} characters, over the limit of ${config.maxTextChars} per message; split it into several messages`,
      { data: { param: field } },
    );
  }
  if (phonemes) {
    const foreign = foreignPhonemeSymbols(text);
    if (foreign.length > 0)
      invalid(
        'phonemes',
        `phonemes has symbols outside Kokoro's vocabulary: ${foreign.slice(0, 10).join(', ')}${foreign.length > 10 ? ', …' : ''}; ` +
          "send misaki's symbols (POST /v1/phonemize gives them for a text)",
      );
  }

  const voiceSpec = body.voice === undefined ? config.defaultVoice : body.voice;
  if (typeof voiceSpec !== 'string')
    invalid(
      'voice',
      `voice should be a string such as "af_heart" or "af_bella+af_sky"; got ${describe(voiceSpec)}`,
    );
  if (body.lang !== undefined && typeof body.lang !== 'string')
    invalid('lang', `lang should be a string such as "es" or "fr-FR"; got ${describe(body.lang)}`);
  const voice: ResolvedVoice = engine.voices.resolve(voiceSpec, body.lang);

  const speed = body.speed === undefined ? 1 : body.speed;
  if (typeof speed !== 'number' || !Number.isFinite(speed) || speed < SPEED_MIN || speed > SPEED_MAX) {
    invalid('speed', `speed should be a number from ${SPEED_MIN} to ${SPEED_MAX}; got ${describe(speed)}`);
  }
  if (engine.info.contract.speedType === 'int32' && !Number.isInteger(speed)) {
    invalid(
      'speed',
      `This model export takes whole-number speeds only (its speed input is int32): use 1 or 2; got ${speed}`,
    );
  }

  const formats = engine.info.formats;
  const format = body.format === undefined ? (route === 'http' ? 'wav' : 'pcm') : body.format;
  if (typeof format !== 'string' || !isAudioFormat(format) || !formats.includes(format)) {
    invalid('format', `format should be one of: ${formats.join(', ')}; got ${describe(format)}`);
  }

  const sampleRate = offeredRate(format, body.sample_rate, (rates, asked) =>
    invalid('sample_rate', `sample_rate for ${format} should be one of: ${rates}; got ${describe(asked)}`),
  );

  let stream = true;
  let transport: Transport = 'binary';
  if (route === 'http') {
    if (body.stream !== undefined && typeof body.stream !== 'boolean') {
      invalid('stream', `stream should be true or false; got ${describe(body.stream)}`);
    }
    stream = body.stream !== false;
    const requested = body.transport === undefined ? (ctx.defaultTransport ?? 'binary') : body.transport;
    if (typeof requested !== 'string' || !TRANSPORTS.includes(requested as Transport)) {
      invalid(
        'transport',
        `transport should be one of: ${TRANSPORTS.join(', ')}; got ${describe(requested)}`,
      );
    }
    transport = requested as Transport;
  }

  const firstChunk = body.first_chunk === undefined ? 'clause' : body.first_chunk;
  if (firstChunk !== 'clause' && firstChunk !== 'sentence') {
    invalid('first_chunk', `first_chunk should be "clause" or "sentence"; got ${describe(firstChunk)}`);
  }

  const timestamps = body.timestamps === undefined ? false : body.timestamps;
  if (typeof timestamps !== 'boolean')
    invalid('timestamps', `timestamps should be true or false; got ${describe(timestamps)}`);
  if (timestamps && phonemes) {
    invalid('timestamps', 'timestamps time the words of a text; a phonemes request has no words to time');
  }
  const phonemeTimestamps = body.phoneme_timestamps === undefined ? false : body.phoneme_timestamps;
  if (typeof phonemeTimestamps !== 'boolean')
    invalid(
      'phoneme_timestamps',
      `phoneme_timestamps should be true or false; got ${describe(phonemeTimestamps)}`,
    );
  for (const [asked, param, event] of [
    [timestamps, 'timestamps', 'word_timestamps'],
    [phonemeTimestamps, 'phoneme_timestamps', 'phoneme_timestamps'],
  ] as const) {
    if (asked && route === 'http' && transport !== 'sse') {
      invalid(
        param,
        `${param} on POST need "transport": "sse" (they come as ${event} events); raw audio bytes cannot carry them`,
      );
    }
  }
  // A model without durations still speaks: the audio comes untimed, and the completion says why.
  const untimed = (timestamps || phonemeTimestamps) && !engine.info.capabilities.timestamps;

  const markup = body.markup === undefined ? 'auto' : body.markup;
  if (typeof markup !== 'string' || !MARKUP_MODES.includes(markup as MarkupMode))
    invalid('markup', `markup should be one of: ${MARKUP_MODES.join(', ')}; got ${describe(markup)}`);
  if (phonemes && body.markup !== undefined)
    invalid('markup', 'markup is read in text; a phonemes request has none');
  const normalization =
    body.normalization_options === undefined
      ? undefined
      : parseNormalizationOptions(body.normalization_options);
  const pronunciations =
    body.pronunciations === undefined
      ? undefined
      : parseRequestPronunciations(body.pronunciations, voice.lang);
  const read: ReadText = phonemes
    ? { warnings: [] }
    : engine.readText(text, {
        voice,
        speed,
        markup: markup as MarkupMode,
        firstChunk,
        ...(typeof body.lang === 'string' ? { lang: body.lang } : {}),
        ...(pronunciations ? { pronunciations } : {}),
      });

  return {
    requestId,
    text,
    chars,
    voice,
    voiceSpec,
    timestamps: timestamps && !untimed,
    phonemeTimestamps: phonemeTimestamps && !untimed,
    firstChunk,
    speed,
    format: format as AudioFormat,
    sampleRate,
    stream,
    transport,
    phonemes,
    ...(typeof body.lang === 'string' ? { lang: body.lang } : {}),
    markup: markup as MarkupMode,
    warnings: untimed ? [untimedWarning(timestamps, phonemeTimestamps), ...read.warnings] : read.warnings,
    ...(read.segments ? { segments: read.segments } : {}),
    ...(pronunciations ? { pronunciations } : {}),
    ...(normalization ? { normalization } : {}),
  };
}

/** The warning of a request for timestamps that the loaded model cannot give. */
function untimedWarning(words: boolean, phonemes: boolean): string {
  const asked = [words ? 'timestamps' : '', phonemes ? 'phoneme_timestamps' : ''].filter(Boolean);
  return (
    `${asked.join(' and ')}: the loaded model export has no durations output, so this audio comes without them; ` +
    'load a timestamped export such as onnx-community/Kokoro-82M-v1.0-ONNX-timestamped, what npm run fetch-model fetches (GET /ping lists the model’s capabilities)'
  );
}

/**
 * What the engine synthesizes for parsed options: their own text (or its segments, when it held
 * markup), or the segments of an utterance as they are written.
 */
export function synthesisRequest(
  options: SynthesisOptions,
  text: string | AsyncIterable<Segment> = options.text,
): SynthesisRequest {
  return {
    text: typeof text === 'string' ? (options.segments ?? text) : text,
    ...(options.pronunciations ? { pronunciations: options.pronunciations } : {}),
    ...(options.normalization ? { normalization: options.normalization } : {}),
    voice: options.voice,
    speed: options.speed,
    timestamps: options.timestamps,
    ...(options.phonemeTimestamps ? { phonemeTimestamps: true } : {}),
    firstChunk: options.firstChunk,
    ...(options.phonemes && typeof text === 'string' ? { phonemes: true } : {}),
  };
}

/** What a WebSocket message's options are read with: the session's config, engine and dialect defaults. */
export interface SessionContext {
  readonly config: Config;
  readonly engine: Engine;
  /** Fields every request and first append of the session starts from (its own fields win). */
  readonly defaults: Readonly<Record<string, unknown>>;
}

/**
 * A WebSocket request's options: its fields over the dialect's defaults, with `assignedId` as its
 * request id when it names none (the id it was answered under on arrival).
 */
export function parseSessionRequest(
  fields: Record<string, unknown>,
  assignedId: string,
  { config, engine }: Omit<SessionContext, 'defaults'>,
): SynthesisOptions {
  const named = fields.request_id === undefined ? { ...fields, request_id: assignedId } : fields;
  return parseOptions(named, { route: 'ws', config, engine });
}

/**
 * The options an utterance opens with: its first append's fields over the dialect's defaults,
 * validated as a request's (the text comes later, append by append).
 */
export function parseUtteranceOptions(
  fields: Record<string, unknown>,
  ctx: SessionContext,
): SynthesisOptions {
  return parseOptions(
    { ...ctx.defaults, ...fields, text: '.' },
    { route: 'ws', config: ctx.config, engine: ctx.engine },
  );
}

/** Fields that only the first append of an utterance may carry. */
const UTTERANCE_OPTIONS = [
  'voice',
  'speed',
  'lang',
  'format',
  'sample_rate',
  'request_timestamp',
  'timestamps',
  'phoneme_timestamps',
  'first_chunk',
  'markup',
  'pronunciations',
  'normalization_options',
] as const;

/**
 * An `append`'s text, checked: a string of at most `maxTextChars` code points. `openId`: the
 * utterance it adds to is open already, and this append may carry no options of its own.
 * @throws TtsError `invalid_option` or `text_too_long`; nothing of the append is added.
 */
export function parseAppend(
  fields: Record<string, unknown>,
  maxTextChars: number,
  openId?: string,
): { text: string; chars: number } {
  const text = fields.text;
  if (typeof text !== 'string') {
    throw ttsError(
      'TTS_ERR_INVALID_OPTION',
      `An append carries its text as a string: {"type": "append", "text": "…"}; got ${text === undefined ? 'no text' : typeof text}`,
    );
  }
  const chars = codePointLength(text);
  if (chars > maxTextChars) {
    throw ttsError(
      'TTS_ERR_TEXT_TOO_LONG',
      `This append has ${chars} characters, over the limit of ${maxTextChars} per message; it was not added. Send the text in smaller appends`,
    );
  }
  if (openId !== undefined) {
    const extra: string[] = UTTERANCE_OPTIONS.filter((key) => fields[key] !== undefined);
    if (fields.request_id !== undefined && fields.request_id !== openId) extra.push('request_id');
    if (extra.length > 0) {
      throw ttsError(
        'TTS_ERR_INVALID_OPTION',
        `Only the first append of an utterance may carry options (${extra.join(', ')} here); this append was not added. Flush the utterance to start one with other options`,
      );
    }
  }
  return { text, chars };
}

/** How the engine reads a request's text: what its options say of voice, markup and dictionary. */
export function textSettingsOf(options: SynthesisOptions): TextSettings {
  return {
    voice: options.voice,
    speed: options.speed,
    markup: options.markup,
    firstChunk: options.firstChunk,
    ...(options.lang !== undefined ? { lang: options.lang } : {}),
    ...(options.pronunciations ? { pronunciations: options.pronunciations } : {}),
  };
}
