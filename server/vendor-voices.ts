/**
 * The vendors' voice ids and audio formats, as the ElevenLabs, Cartesia and Deepgram dialects
 * (WebSocket and HTTP) take them, turned into the server's. A Kokoro voice id (or blend) is
 * accepted as it is; a vendor's id is mapped by the tables below (documented in docs/protocol.md);
 * anything else is refused with `voice_not_found`, never silently replaced (Deepgram's dialects
 * alone speak another model name with the default voice, and say so in a `Warning`).
 */
import { parseLanguage, type Engine } from '../model/engine.ts';
import { FORMATS, type AudioFormat } from '../protocol/formats.ts';
import { SPEED_MAX, SPEED_MIN, refuseControlChars } from '../protocol/request.ts';
import { ttsError } from './http/errors.ts';
import type { Config } from './config.ts';
import { describe, parseOptions, type SynthesisOptions } from './http/request.ts';

/**
 * ElevenLabs' premade voices (their ids are public, in ElevenLabs' voice library and the SDKs'
 * examples), each mapped to the Kokoro voice nearest in accent and gender.
 */
export const ELEVENLABS_VOICES: Readonly<Record<string, string>> = {
  '21m00Tcm4TlvDq8ikWAM': 'af_heart', // Rachel: American, female
  EXAVITQu4vr4xnSDxMaL: 'af_sarah', // Sarah: American, female
  FGY2WhTYpPnrIDTdsKH5: 'af_nicole', // Laura: American, female
  cgSgspJ2msm6clMCkdW9: 'af_jessica', // Jessica: American, female
  XrExE9yKIg1WjnnlVkGX: 'af_bella', // Matilda: American, female
  hpp4J3VqNfWAUOO0d1Us: 'af_bella', // Bella: American, female (LiveKit's Python plugin default)
  SAz9YHcvj6GT2YYXdXww: 'af_river', // River: American
  pNInz6obpgDQGcFmaJgB: 'am_adam', // Adam: American, male
  TX3LPaxmHKxFdv7VOQHJ: 'am_liam', // Liam: American, male
  cjVigY5qzO86Huf0OWal: 'am_eric', // Eric: American, male
  nPczCjzI2devNBz1zQrb: 'am_michael', // Brian: American, male
  iP95p4xoKVk53GoZ742B: 'am_puck', // Chris: American, male
  bIHbv24MWmeRgasZH58o: 'am_echo', // Will: American, male (LiveKit's JS plugin default)
  CwhRBWXzGAHq8TQ4Fs17: 'am_onyx', // Roger: American, male
  JBFqnCBsd6RMkjVDRZzb: 'bm_george', // George: British, male
  onwK4e9ZLuTAKqWW03F9: 'bm_daniel', // Daniel: British, male
  N2lVS1w4EtoT3dr4eOWO: 'bm_lewis', // Callum: British, male
  IKne3meq5aSn9XLyUdCD: 'bm_fable', // Charlie: male
  Xb7hH8MSUJpSbSDYk0k2: 'bf_alice', // Alice: British, female
  pFZP5JQG7iQjIQuC4Bku: 'bf_lily', // Lily: British, female
};

/** Cartesia voice ids that clients send by default or in Cartesia's examples. */
export const CARTESIA_VOICES: Readonly<Record<string, string>> = {
  'f786b574-daa5-4673-aa0c-cbe3e8534c02': 'af_heart', // LiveKit's Cartesia plugin default
  '694f9389-aac1-45b6-b726-9d9369183238': 'af_sarah', // Cartesia's examples: female, American
  '71a7ad14-091c-4e8e-a314-022ece01c121': 'bf_emma', // Pipecat's examples: female, British
  'a0e99841-438c-4a64-b679-ae501e7d6091': 'am_michael', // Cartesia's examples: male, American
};

/**
 * Deepgram's models (each one voice) that the frameworks send by default or Deepgram's examples
 * use: Aura on /v1/speak, Flux on /v2/speak.
 */
export const DEEPGRAM_VOICES: Readonly<Record<string, string>> = {
  'aura-2-andromeda-en': 'af_heart', // LiveKit's Deepgram plugin default (Python and JS): female, American
  'aura-2-helena-en': 'af_bella', // Pipecat's Deepgram default: female, American
  'aura-2-thalia-en': 'af_nova', // Deepgram's examples: female, American
  'aura-asteria-en': 'af_sarah', // Deepgram's first Aura default: female, American
  'flux-alexis-en': 'af_heart', // LiveKit's TTSv2 default: female, American
  'flux-heather-en': 'af_bella', // Pipecat's Flux default: female, American
  'flux-haley-en': 'af_nicole', // Deepgram's Flux examples: female, American
  'flux-cole-en': 'am_michael', // Deepgram's Flux voices: male, American
  'flux-jack-en': 'bm_george', // Deepgram's Flux voices: male, British
};

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

const unsupported = (message: string) =>
  ttsError('TTS_ERR_INVALID_OPTION', message, { data: { param: 'output_format' } });

function checkRate(format: AudioFormat, rate: number, named: string): number {
  const rates = FORMATS[format].rates as readonly number[];
  if (!rates.includes(rate)) {
    throw unsupported(
      `output_format ${named}: sample rate ${rate} is not offered for it; use one of ${rates.join(', ')}`,
    );
  }
  return rate;
}

/**
 * ElevenLabs' `output_format` (`pcm_24000`, `ulaw_8000`, `alaw_8000`, `mp3_44100_128`,
 * `opus_48000_64`): the codec and rate are honoured, a bitrate is taken as a hint (the encoders
 * choose their own). Every format ElevenLabs documents is served at its own rate.
 * @throws TtsError `invalid_option` for a format or rate the server cannot give (pcm_12000).
 */
export function elevenLabsOutput(value: string | undefined, fallback: string): VendorOutput {
  const named = value ?? fallback;
  const match = /^(pcm|ulaw|alaw|mp3|opus|wav)_(\d+)(?:_(\d+))?$/.exec(named);
  const codecs = { pcm: 'pcm', ulaw: 'mulaw', alaw: 'alaw', mp3: 'mp3', opus: 'opus', wav: 'wav' } as const;
  if (!match) {
    throw unsupported(
      `output_format ${JSON.stringify(named.slice(0, 40))} is not supported; use pcm_<rate> (${FORMATS.pcm.rates.join(', ')}), ulaw_8000, alaw_8000, mp3_<rate>_<bitrate> or opus_48000_<bitrate>`,
    );
  }
  const format = codecs[match[1] as keyof typeof codecs];
  return { format, sampleRate: checkRate(format, Number(match[2]), named) };
}

/** Cartesia's `output_format` object; `containers`: those the route offers (WebSocket and SSE: raw). */
export function cartesiaOutput(value: unknown, containers: readonly string[]): VendorOutput {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    throw unsupported(
      'output_format should be an object such as {"container": "raw", "encoding": "pcm_s16le", "sample_rate": 24000}',
    );
  }
  const { container, encoding, sample_rate: rate } = value as Record<string, unknown>;
  const named = JSON.stringify(value).slice(0, 120);
  if (typeof container !== 'string' || !containers.includes(container)) {
    throw unsupported(`output_format ${named}: container should be ${containers.join(' or ')}`);
  }
  if (typeof rate !== 'number') throw unsupported(`output_format ${named}: sample_rate should be a number`);
  if (container === 'mp3') return { format: 'mp3', sampleRate: checkRate('mp3', rate, named) };
  const encodings: Record<string, VendorOutput['format']> = {
    pcm_s16le: 'pcm',
    pcm_f32le: 'pcm',
    pcm_mulaw: 'mulaw',
    pcm_alaw: 'alaw',
  };
  if (typeof encoding !== 'string' || !Object.hasOwn(encodings, encoding)) {
    throw unsupported(
      `output_format ${named}: encoding should be pcm_s16le, pcm_f32le, pcm_mulaw or pcm_alaw`,
    );
  }
  if (container === 'wav' && encoding !== 'pcm_s16le') {
    throw unsupported(`output_format ${named}: a wav container holds pcm_s16le here`);
  }
  const format = container === 'wav' ? 'wav' : encodings[encoding]!;
  return {
    format,
    sampleRate: checkRate(format, rate, named),
    ...(encoding === 'pcm_f32le' ? { float: true } : {}),
  };
}

/** PCM16 little-endian → 32-bit float little-endian, the same samples over 32768. */
export function pcm16ToFloat32(bytes: Uint8Array): Uint8Array {
  const count = bytes.length >> 1;
  const out = new DataView(new ArrayBuffer(count * 4));
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.length);
  for (let i = 0; i < count; i++) out.setFloat32(i * 4, view.getInt16(i * 2, true) / 32768, true);
  return new Uint8Array(out.buffer);
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
const ISO_LANGUAGES: Readonly<Record<string, string>> = {
  es: 'es',
  fr: 'fr-fr',
  hi: 'hi',
  it: 'it',
  ja: 'ja',
  pt: 'pt-br',
  zh: 'zh',
};

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
    ...(served.includes('a') || served.includes('b') ? ['en'] : []),
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
    lang = own === 'a' || own === 'b' ? undefined : 'en-us';
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
