/**
 * The vendors' voice ids, audio formats and options, as the ElevenLabs, Cartesia and Deepgram
 * dialects (WebSocket and HTTP) take them, turned into the server's. A Kokoro voice id (or blend) is
 * accepted as it is; a vendor's id is mapped by its dialect's table (`voices.ts` in its folder,
 * documented in docs/protocol.md);
 * anything else is refused with `voice_not_found`, never silently replaced (Deepgram's dialects
 * alone speak another model name with the default voice, and say so in a `Warning`).
 */
import { LANGUAGE_FACTS, parseLanguage, type Engine } from '../../model/engine.ts';
import type { AudioFormat } from '../../protocol/formats.ts';
import { SPEED_MAX, SPEED_MIN, refuseControlChars } from '../../protocol/request.ts';
import { ttsError } from '../http/errors.ts';
import type { Config } from '../config/config.ts';
import { describe, offeredRate, parseOptions, type SynthesisOptions } from '../http/request.ts';

/**
 * The Kokoro voice for a vendor's voice id: a Kokoro id or blend as it is, else the table's.
 * @throws TtsError `invalid_option` for an id with a control character; `voice_not_found` naming
 * both ways to name a voice.
 */
export function vendorVoice(id: string, table: Readonly<Record<string, string>>, engine: Engine): string {
  refuseControlChars(id, 'voice');
  const mapped = Object.hasOwn(table, id) ? table[id]! : id;
  try {
    engine.voices.resolve(mapped);
    return mapped;
  } catch {
    throw ttsError(
      'TTS_ERR_VOICE_NOT_FOUND',
      `Unknown voice ${JSON.stringify(id.slice(0, 64))}: name a Kokoro voice (such as af_heart, or a blend af_bella+af_sky) or one of the mapped vendor voice ids listed in docs/protocol.md`,
      { data: { param: 'voice' } },
    );
  }
}

/**
 * A vendor's model id (`model_id`): any name is served by Kokoro, but it must be a string without
 * control characters, like every name a client sends.
 * @throws TtsError `invalid_option` (param `model_id`).
 */
export function checkVendorModel(value: unknown): void {
  if (value === undefined || value === null) return;
  if (typeof value !== 'string') {
    throw ttsError(
      'TTS_ERR_INVALID_OPTION',
      `model_id should be a string (any model id is served by Kokoro); got ${describe(value)}`,
      { data: { param: 'model_id' } },
    );
  }
  refuseControlChars(value, 'model_id');
}

/** An output the server can give, in a vendor's terms. */
export interface VendorOutput {
  readonly format: AudioFormat;
  readonly sampleRate: number;
  /** 32-bit float samples (Cartesia's pcm_f32le): the PCM16 the server makes, widened at the edge. */
  readonly float?: boolean;
}

/** An `output_format` the server cannot give. */
export const unsupported = (message: string) =>
  ttsError('TTS_ERR_INVALID_OPTION', message, { data: { param: 'output_format' } });

/** A vendor's rate for `format`, refused in the vendors' words when the format is not offered at it. */
export function vendorRate(format: AudioFormat, rate: number, named: string): number {
  return offeredRate(format, rate, (rates) =>
    unsupported(`output_format ${named}: sample rate ${rate} is not offered for it; use one of ${rates}`),
  );
}

/** The body as an object of fields, or a `bad_request` naming an example of what to send. */
export function bodyFields(body: unknown, example: string): Record<string, unknown> {
  if (body !== null && typeof body === 'object' && !Array.isArray(body))
    return body as Record<string, unknown>;
  throw ttsError(
    'TTS_ERR_BAD_REQUEST',
    `The body should be a JSON object such as ${example}; got ${body === undefined ? 'no body' : describe(body)}`,
    { data: { param: 'body' } },
  );
}

/**
 * The vendors' two-letter language codes that name a Kokoro language, as the request parser's
 * `lang` takes them. `en` is absent: English is read as the voice's own (American or British)
 * unless the voice speaks another language, then American.
 */
const ISO_LANGUAGES: Readonly<Record<string, string>> = Object.fromEntries(
  LANGUAGE_FACTS.filter((l) => l.iso !== 'en').map((l) => [l.iso, l.tag]),
);
const isEnglish = (code: string): boolean => LANGUAGE_FACTS.some((l) => l.code === code && l.iso === 'en');
const AMERICAN = LANGUAGE_FACTS.find((l) => l.iso === 'en')!.tag;

/**
 * A vendor's language code (`language_code`, Cartesia's `language`) as the request's `lang`:
 * undefined to read the text in the voice's own language. Kokoro's own names (`en-GB`, `pt-BR`)
 * are taken too.
 * @throws TtsError `language_unsupported` (param: the vendor's field) for a language this server
 * cannot speak, naming those it can.
 */
export function vendorLanguage(
  value: unknown,
  param: string,
  voice: string,
  engine: Engine,
): string | undefined {
  if (value === undefined || value === null) return undefined;
  const served = engine.info.languages.map((l) => l.code as string);
  const codes = [
    ...(served.some(isEnglish) ? ['en'] : []),
    ...Object.entries(ISO_LANGUAGES)
      .filter(([, name]) => served.includes(parseLanguage(name)!))
      .map(([code]) => code),
  ].sort();
  if (typeof value !== 'string')
    throw ttsError(
      'TTS_ERR_INVALID_OPTION',
      `${param} should be a language code such as "en" or "es"; got ${describe(value)}`,
      { data: { param } },
    );
  const code = value.toLowerCase();
  let lang: string | undefined = Object.hasOwn(ISO_LANGUAGES, code) ? ISO_LANGUAGES[code] : value;
  if (code === 'en') {
    const own = engine.voices.resolve(voice).lang as string;
    lang = isEnglish(own) ? undefined : AMERICAN;
  }
  const named = lang === undefined ? undefined : parseLanguage(lang);
  if (lang !== undefined && (named === undefined || !served.includes(named))) {
    throw ttsError(
      'TTS_ERR_LANGUAGE_UNSUPPORTED',
      `${param} ${JSON.stringify(value.slice(0, 20))} is not a language this server speaks; use one of ${codes.join(', ')} (or a regional tag: ${engine.info.languages.map((l) => l.tag).join(', ')})`,
      { data: { param } },
    );
  }
  return lang;
}

/** What a vendor's HTTP request asks for, in the server's terms. */
export interface VendorSynthesis {
  readonly text: unknown;
  readonly voice: string;
  readonly speed: unknown;
  readonly output: VendorOutput;
  readonly lang: string | undefined;
  /** The vendor's switch turned the normalizer off. */
  readonly normalizeOff: boolean;
  /** Time the words (the route streams them as events or lines). */
  readonly timestamps: boolean;
  /** Time the sounds, as the words. */
  readonly phonemeTimestamps?: boolean;
}

/**
 * A vendor's HTTP request as the server's, checked by the request parser. The text is read as
 * written (no markup), as on the vendors' WebSockets.
 */
export function vendorOptions(
  asked: VendorSynthesis,
  ctx: { readonly config: Config; readonly engine: Engine },
): SynthesisOptions {
  return parseOptions(
    {
      text: asked.text,
      voice: asked.voice,
      markup: 'none',
      speed: asked.speed,
      format: asked.output.format,
      sample_rate: asked.output.sampleRate,
      ...(asked.lang !== undefined ? { lang: asked.lang } : {}),
      ...(asked.normalizeOff ? { normalization_options: { normalize: false } } : {}),
      // The request parser times words for an event stream only; these routes stream them as one.
      ...(asked.timestamps ? { timestamps: true, transport: 'sse' } : {}),
      ...(asked.phonemeTimestamps ? { phoneme_timestamps: true, transport: 'sse' } : {}),
    },
    { route: 'http', config: ctx.config, engine: ctx.engine },
  );
}

/**
 * A vendor's speed as this model export takes it: one whose speed input is int32 takes whole
 * numbers, so the vendors' fractional speeds (ElevenLabs' 0.7 to 1.2) round, to 1 at least; a
 * speed out of range is left for the request parser to refuse.
 */
export function vendorSpeed(speed: unknown, engine: Engine): unknown {
  if (engine.info.contract.speedType !== 'int32' || typeof speed !== 'number') return speed;
  return speed >= SPEED_MIN && speed <= SPEED_MAX ? Math.max(1, Math.round(speed)) : speed;
}
