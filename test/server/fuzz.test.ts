/**
 * Fuzzes the WebSocket message handling of one server with about 3,000 generated payloads: random
 * bytes, random JSON (the real option names with wrong types among them), deeply nested JSON,
 * strings up to 1 MiB, UTF-8 broken across RFC 6455 fragments, invalid UTF-8 in text frames,
 * CESU-8 surrogates, and valid requests with random options.
 *
 * Every payload is judged by an oracle written from PROTOCOL.md (not from the server's code): it is
 * either a valid request (→ synthesis_start, audio, synthesis_complete) or not (→ exactly one
 * `error` frame that says what is wrong in words and leaks no internals). Answers come strictly in
 * order, so the n-th answer on a session belongs to the n-th message.
 *
 * The generator is seeded. To reproduce a failure: FUZZ_SEED=<seed> npx vitest run test/server/fuzz.test.ts
 * (FUZZ_SEED=random picks a fresh seed; FUZZ_VERBOSE=1 prints counts of what was sent and answered).
 */
import { afterAll, beforeAll, describe, expect, it, onTestFailed } from 'vitest';
import { TestClient, startServer, type Frame, type TestServer } from './harness.ts';

const SEED =
  process.env.FUZZ_SEED === 'random'
    ? (Math.random() * 2 ** 32) >>> 0
    : process.env.FUZZ_SEED
      ? Number(process.env.FUZZ_SEED) >>> 0
      : 0x5eed_7750;
const VERBOSE = Boolean(process.env.FUZZ_VERBOSE);

/** Contract figures (PROTOCOL.md and README defaults) that the oracle needs. */
const MAX_TEXT_CHARS = 4096;
const MAX_REQUEST_AGE_S = 56;
const MAX_REQUEST_ID_CHARS = 128;
const WS_MAX_PENDING = 16;
/** The contract promises an application-level answer to any message up to this size. */
const ANSWERED_MESSAGE_BYTES = 1024 * 1024;
const ALL_RATES = [8000, 16000, 22050, 24000, 44100, 48000];
const RATES: Record<string, readonly number[]> = {
  pcm: ALL_RATES,
  wav: ALL_RATES,
  mp3: ALL_RATES,
  aac: ALL_RATES,
  flac: ALL_RATES,
  opus: [8000, 16000, 24000, 48000],
  mulaw: [8000],
};
const ERROR_CODES = new Set([
  'bad_request',
  'invalid_json',
  'invalid_utf8',
  'unknown_type',
  'invalid_option',
  'empty_text',
  'voice_not_found',
  'language_unsupported',
  'text_too_long',
  'payload_too_large',
  'request_stale',
  'busy',
  'not_ready',
  'shutting_down',
  'inference_failed',
  'internal_error',
]);

/** How many payloads of each kind; the whole file must stay well under a minute on 2 cores. */
const PLAN = {
  'random-bytes': 800,
  'random-json': 900,
  'deep-json': 24,
  'huge-string': 16,
  fragmented: 400,
  'invalid-utf8': 350,
  cesu8: 150,
  valid: 300,
} as const;
type Kind = keyof typeof PLAN;
const SESSIONS = 4;
/** Batches stay under the session's caps (count and bytes), so answers are answers, not `busy`. */
const BATCH_MESSAGES = WS_MAX_PENDING;
const BATCH_BYTES = 6 * 1024 * 1024;
const BATCH_TIMEOUT_MS = 30_000;

// ---------------------------------------------------------------------------------------------
// Seeded randomness

/** mulberry32: small, fast and good enough to drive a fuzzer reproducibly. */
class Rng {
  #state: number;
  constructor(seed: number) {
    this.#state = seed >>> 0;
  }
  next(): number {
    let t = (this.#state = (this.#state + 0x6d2b79f5) >>> 0);
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  }
  /** An integer from lo to hi, both inclusive. */
  int(lo: number, hi: number): number {
    return lo + Math.floor(this.next() * (hi - lo + 1));
  }
  chance(p: number): boolean {
    return this.next() < p;
  }
  pick<T>(items: readonly T[]): T {
    return items[Math.floor(this.next() * items.length)]!;
  }
  bytes(n: number): Buffer {
    const out = Buffer.alloc(n);
    for (let i = 0; i < n; i++) out[i] = Math.floor(this.next() * 256);
    return out;
  }
  shuffle<T>(items: T[]): T[] {
    for (let i = items.length - 1; i > 0; i--) {
      const j = Math.floor(this.next() * (i + 1));
      [items[i], items[j]] = [items[j]!, items[i]!];
    }
    return items;
  }
}

// ---------------------------------------------------------------------------------------------
// JSON with the things JSON.stringify cannot write: literals such as 1e400 and duplicate keys

class Raw {
  constructor(readonly json: string) {}
}
class Entries {
  constructor(readonly list: [string, Json][]) {}
}
type Json = null | boolean | number | string | Raw | Entries | Json[];

function toJson(value: Json): string {
  if (value instanceof Raw) return value.json;
  if (value instanceof Entries)
    return `{${value.list.map(([k, v]) => `${JSON.stringify(k)}:${toJson(v)}`).join(',')}}`;
  if (Array.isArray(value)) return `[${value.map(toJson).join(',')}]`;
  return JSON.stringify(value);
}

// ---------------------------------------------------------------------------------------------
// Payloads and the oracle

interface Payload {
  readonly kind: Kind | 'final' | 'flood';
  /** One message: a single frame, or RFC 6455 fragments (fin only on the last). */
  readonly parts: readonly Buffer[];
  readonly binary: boolean;
}

type Expected =
  | { readonly outcome: 'audio'; readonly requestId?: string; readonly format: string }
  | { readonly outcome: 'error'; readonly requestId?: string }
  | { readonly outcome: 'close' };

const strictUtf8 = new TextDecoder('utf-8', { fatal: true });

function codePoints(text: string): number {
  // Lone surrogates count as one each, as the string iterator yields them.
  let n = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c >= 0xd800 && c <= 0xdbff) {
      const d = text.charCodeAt(i + 1);
      if (d >= 0xdc00 && d <= 0xdfff) i++;
    }
    n++;
  }
  return n;
}

/** What the contract says the server must answer to these bytes, `now` being epoch ms. */
function expectedOutcome(bytes: Buffer, formats: readonly string[], now: number): Expected {
  let text: string;
  try {
    text = strictUtf8.decode(bytes);
  } catch {
    return { outcome: 'error' };
  }
  if (!text.trimStart().startsWith('{')) {
    const ok = text.trim() !== '' && codePoints(text) <= MAX_TEXT_CHARS;
    return ok ? { outcome: 'audio', format: 'pcm' } : { outcome: 'error' };
  }
  let value: unknown;
  try {
    // Whatever counts as leading whitespace for the `{` rule is not part of the JSON.
    value = JSON.parse(text.trimStart());
  } catch {
    return { outcome: 'error' };
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return { outcome: 'error' };
  const f = value as Record<string, unknown>;
  const id = f.request_id;
  const requestId =
    typeof id === 'string' && id.length > 0 && id.length <= MAX_REQUEST_ID_CHARS ? id : undefined;
  const error: Expected = requestId === undefined ? { outcome: 'error' } : { outcome: 'error', requestId };
  if (f.type !== undefined) {
    const type = typeof f.type === 'string' ? f.type.toLowerCase() : undefined;
    if (type === 'close') return { outcome: 'close' };
    if (type !== 'synthesize') return error;
  }
  if (f.request_id !== undefined && requestId === undefined) return error;
  if (f.request_timestamp !== undefined) {
    const ts = f.request_timestamp;
    if (typeof ts !== 'number' || !Number.isFinite(ts) || ts < 0) return error;
    if ((now - (ts > 1e11 ? ts : ts * 1000)) / 1000 > MAX_REQUEST_AGE_S) return error;
  }
  if (typeof f.text !== 'string' || f.text.trim() === '' || codePoints(f.text) > MAX_TEXT_CHARS) return error;
  if (f.voice !== undefined && !(typeof f.voice === 'string' && VALID_VOICES.includes(f.voice))) return error;
  if (f.speed !== undefined && !(typeof f.speed === 'number' && f.speed >= 0.5 && f.speed <= 2)) return error;
  const format = f.format === undefined ? 'pcm' : f.format;
  if (typeof format !== 'string' || !formats.includes(format)) return error;
  const rate = f.sample_rate;
  if (rate !== undefined && !(typeof rate === 'number' && (RATES[format] ?? []).includes(rate))) return error;
  // stream and transport are POST-only and ignored here, whatever their value; unknown keys too.
  return requestId === undefined ? { outcome: 'audio', format } : { outcome: 'audio', format, requestId };
}

// ---------------------------------------------------------------------------------------------
// Generators

const OPTION_NAMES = [
  'text',
  'voice',
  'speed',
  'format',
  'sample_rate',
  'request_id',
  'request_timestamp',
  'stream',
  'transport',
  'type',
];
const ODD_KEYS = [
  '',
  '__proto__',
  'constructor',
  'toString',
  'hasOwnProperty',
  'Text',
  'TEXT',
  ' text',
  'voice ',
];
const SENTENCES = [
  'Hello there.',
  'Your table for two is booked at seven.',
  'Is there anything else I can help you with?',
  'The total comes to forty two dollars and ten cents.',
  'Grüße aus Köln, und bis bald!',
  'Call 555-0100 before 5:30 pm, okay?',
  'Ünïcödé, naïve café — “quotes” and ‘more’.',
  '日本語のテキストです。',
  'Emoji 😀 and 🎉 party.',
  'Tab\tand\nnew line.',
  'Zero\u200bwidth and soft\u00adhyphen.',
  'A lone \ud83d surrogate, JSON-escaped.',
  '[laughs] Well, that went well.',
  '{not json} but plain text after a space.',
  'x',
  '42',
];
/** Voice specs the contract calls valid (ids of American and British English voices). */
const VALID_VOICES = [
  'af_heart',
  'af_bella',
  'af_sky',
  'am_adam',
  'bf_emma',
  'bm_george',
  'af_bella+af_sky',
  'af_bella(2)+af_sky(1)',
  'af_bella(0.5)+af_sky(1.5)+af_heart(1)',
  'af_alloy+af_aoede+af_bella+af_heart+af_jessica+af_kore+af_nicole+af_sky',
];
const INVALID_VOICES = [
  'xx_nobody',
  'AF_HEART',
  '',
  'af_bella(0)+af_sky',
  'af_bella(-1)+af_sky',
  'af_bella(abc)',
  'af_bella(Infinity)',
  'af_alloy+af_aoede+af_bella+af_heart+af_jessica+af_kore+af_nicole+af_sky+af_river',
  'ef_dora',
  '../../etc/passwd',
  '+',
  'af_bella+',
  'af_heart\u0000',
];
const INVALID_FORMATS = ['ogg', 'PCM', 'mp4', '', 'wav ', 'm4a', 'opus\n'];
const INVALID_TYPES = ['dance', '', 'synth', 'synthesize!', 'CLOSE_IT', 'open'];
const WHITESPACE = [' ', '\t', '\n', '\r', '\u00a0', '\u2028', '\u2029', '\u3000', '\u200b', '\ufeff'];
const SPECIALS = ['{', '}', '[', ']', '"', '\\', ':', ',', '.', '!', '?', 'é', '😀', '\u0301', '<', '&'];
/** Byte sequences that are not UTF-8: stray continuations, overlongs, too-big code points, truncations. */
const INVALID_UTF8 = [
  [0xff],
  [0xfe],
  [0x80],
  [0xbf],
  [0xc0, 0x80],
  [0xc0, 0xaf],
  [0xc1, 0xbf],
  [0xe0, 0x80, 0xaf],
  [0xf0, 0x80, 0x80, 0xaf],
  [0xf4, 0x90, 0x80, 0x80],
  [0xf5, 0x80, 0x80, 0x80],
  [0xf8, 0x88, 0x80, 0x80, 0x80],
  [0xfc, 0x84, 0x80, 0x80, 0x80, 0x80],
  [0xc3],
  [0xe2, 0x82],
  [0xf0, 0x9f, 0x98],
  [0xc3, 0x28],
  [0xe2, 0x28, 0xa1],
];

function randomChar(rng: Rng): string {
  switch (rng.int(0, 9)) {
    case 0:
    case 1:
    case 2:
    case 3:
      return String.fromCharCode(rng.int(0x20, 0x7e));
    case 4:
      return String.fromCharCode(rng.chance(0.9) ? rng.int(0, 0x1f) : 0x7f);
    case 5:
      return rng.pick(WHITESPACE);
    case 6: {
      const c = rng.int(0x80, 0xffff - 0x800);
      return String.fromCharCode(c >= 0xd800 ? c + 0x800 : c);
    }
    case 7:
      return String.fromCodePoint(rng.int(0x10000, 0x10ffff));
    case 8:
      // A lone surrogate: JSON.stringify escapes it (valid JSON); Buffer.from turns it into U+FFFD.
      return String.fromCharCode(rng.int(0xd800, 0xdfff));
    default:
      return rng.pick(SPECIALS);
  }
}

function randomString(rng: Rng, max: number): string {
  const n = rng.chance(0.3) ? rng.int(0, 3) : rng.int(0, max);
  let s = '';
  for (let i = 0; i < n; i++) s += randomChar(rng);
  return s;
}

function randomNumber(rng: Rng): Json {
  switch (rng.int(0, 7)) {
    case 0:
      return rng.int(-10, 10);
    case 1:
      return rng.next() * 4 - 1;
    case 2:
      return rng.int(-(2 ** 31), 2 ** 31);
    case 3:
      return rng.pick([Number.MAX_SAFE_INTEGER, Number.MIN_VALUE, Number.MAX_VALUE, -Number.MAX_VALUE]);
    default:
      // Literals JSON allows but JSON.stringify never writes: Infinity after parsing, -0, exponents.
      return new Raw(rng.pick(['1e400', '-1e400', '-0', '1e-400', '0.5e1', '1E2', '2.0', '0.50', '1.0']));
  }
}

function randomValue(rng: Rng, depth: number): Json {
  const choice = rng.int(0, depth > 0 ? 6 : 4);
  switch (choice) {
    case 0:
      return null;
    case 1:
      return rng.chance(0.5);
    case 2:
      return randomNumber(rng);
    case 3:
    case 4:
      return randomString(rng, 40);
    case 5:
      return Array.from({ length: rng.int(0, 4) }, () => randomValue(rng, depth - 1));
    default:
      return new Entries(
        Array.from({ length: rng.int(0, 4) }, () => [
          rng.chance(0.5) ? rng.pick(OPTION_NAMES) : randomString(rng, 8),
          randomValue(rng, depth - 1),
        ]),
      );
  }
}

/** A value the contract accepts for an option (the random-options part of valid requests). */
function validOption(rng: Rng, name: string, format: string): Json {
  const now = Date.now();
  switch (name) {
    case 'text':
      return rng.chance(0.8) ? rng.pick(SENTENCES) : `${randomString(rng, 16)} ok.`;
    case 'voice':
      return rng.pick(VALID_VOICES);
    case 'speed':
      return rng.chance(0.3) ? new Raw(rng.pick(['0.5', '2', '2.0', '1', '5e-1'])) : 0.5 + rng.next() * 1.5;
    case 'format':
      return format;
    case 'sample_rate':
      return rng.pick(RATES[format] ?? [24000]);
    case 'request_id':
      return `id-${rng.int(0, 1e9)}-${'x'.repeat(rng.chance(0.1) ? MAX_REQUEST_ID_CHARS - 14 : rng.int(0, 8))}`.slice(
        0,
        MAX_REQUEST_ID_CHARS,
      );
    case 'request_timestamp':
      // Well inside the age limit, in seconds or milliseconds, or from the future (clock skew).
      return rng.pick([now / 1000, now, now / 1000 - 5, now / 1000 + 3600, now + 60_000, 1e11]);
    case 'type':
      return rng.pick(['synthesize', 'Synthesize', 'SYNTHESIZE']);
    default:
      // stream, transport: POST only, ignored on WS whatever they hold.
      return randomValue(rng, 1);
  }
}

/** A value of the wrong type or out of range for an option. */
function invalidOption(rng: Rng, name: string): Json {
  const now = Date.now();
  const wrongType = (): Json =>
    rng.pick<Json>([null, true, false, 0, 7, '', 'x', [], new Entries([]), [1, 2], new Raw('1e400')]);
  if (rng.chance(0.3)) return wrongType();
  switch (name) {
    case 'text':
      return rng.pick<Json>([
        '',
        '   ',
        '\n\t\u00a0\u2028',
        'a'.repeat(MAX_TEXT_CHARS + 1),
        '😀'.repeat(MAX_TEXT_CHARS + 1),
        5,
        ['Hello.'],
        new Entries([['text', 'Hello.']]),
      ]);
    case 'voice':
      return rng.pick(INVALID_VOICES);
    case 'speed':
      return rng.pick<Json>([0.4999, 2.0001, 0, -1, 100, '1', '1.0', new Raw('1e400'), new Raw('-0')]);
    case 'format':
      return rng.pick(INVALID_FORMATS);
    case 'sample_rate':
      return rng.pick<Json>([11025, 0, -24000, 24000.5, '24000', 96000, new Raw('1e400')]);
    case 'request_id':
      return rng.pick<Json>(['', 'x'.repeat(MAX_REQUEST_ID_CHARS + 1), 5, new Entries([])]);
    case 'request_timestamp':
      // Stale (two minutes or more), or not epoch seconds/milliseconds as a non-negative number.
      return rng.pick<Json>([now / 1000 - 120, now - 3_600_000, 0, 1000, -1, 'now', new Raw('-1e400')]);
    case 'type':
      return rng.pick<Json>([...INVALID_TYPES, 7, null, true]);
    default:
      return wrongType();
  }
}

interface Context {
  readonly formats: readonly string[];
}

/**
 * Mostly raw PCM: encoders are tested elsewhere, and AAC (an ffmpeg process, about 0.4 s a
 * request here) or Opus would eat the time budget that is meant for message handling.
 */
function randomFormat(rng: Rng, ctx: Context): string {
  if (rng.chance(0.8)) return 'pcm';
  const cheap = ctx.formats.filter((f) => f !== 'aac' && f !== 'opus');
  return rng.chance(0.9) ? rng.pick(cheap) : rng.pick(ctx.formats);
}

function frame(kind: Payload['kind'], bytes: Buffer, rng: Rng, binaryChance = 0.7): Payload {
  return { kind, parts: [bytes], binary: rng.chance(binaryChance) };
}

function validRequestFields(rng: Rng, ctx: Context, all: boolean): [string, Json][] {
  const format = randomFormat(rng, ctx);
  const fields: [string, Json][] = [['text', validOption(rng, 'text', format)]];
  for (const name of OPTION_NAMES.slice(1)) {
    if (name === 'format' && (format !== 'pcm' || rng.chance(0.2))) fields.push([name, format]);
    else if (name !== 'format' && (all ? rng.chance(0.5) : rng.chance(0.2)))
      fields.push([name, validOption(rng, name, format)]);
  }
  return rng.shuffle(fields);
}

const genValid = (rng: Rng, ctx: Context): Payload => {
  const fields = validRequestFields(rng, ctx, true);
  const prefix = rng.chance(0.1) ? rng.pick([' ', '\n\t ', '\ufeff']) : '';
  return frame('valid', Buffer.from(prefix + toJson(new Entries(fields))), rng, 0.8);
};

const genRandomBytes = (rng: Rng, ctx: Context): Payload => {
  const length = rng.chance(0.4) ? rng.int(0, 16) : rng.int(0, 4096);
  switch (rng.int(0, 4)) {
    case 0:
    case 1:
      return frame('random-bytes', rng.bytes(length), rng);
    case 2:
      return frame('random-bytes', Buffer.concat([Buffer.from('{'), rng.bytes(length)]), rng);
    case 3: {
      // 7-bit bytes: valid UTF-8, mostly plain text (short, as it may be synthesized).
      const ascii = Buffer.from(rng.bytes(rng.int(0, 80)).map((b) => b & 0x7f));
      return frame('random-bytes', ascii, rng);
    }
    default: {
      // A valid request with a few bytes flipped, inserted, deleted or cut off.
      const base = Buffer.from(
        toJson(new Entries(validRequestFields(rng, ctx, false).filter(([k]) => k !== 'voice'))),
      );
      let bytes = base;
      for (let n = rng.int(1, 3); n > 0; n--) {
        const at = rng.int(0, bytes.length - 1);
        const op = rng.int(0, 3);
        if (op === 0) bytes[at] = rng.int(0, 255);
        else if (op === 1) bytes = Buffer.concat([bytes.subarray(0, at), rng.bytes(1), bytes.subarray(at)]);
        else if (op === 2) bytes = Buffer.concat([bytes.subarray(0, at), bytes.subarray(at + 1)]);
        else bytes = bytes.subarray(0, at);
      }
      return frame('random-bytes', Buffer.from(bytes), rng);
    }
  }
};

const genRandomJson = (rng: Rng, ctx: Context): Payload => {
  if (rng.chance(0.25)) {
    // Not an object: arrays, numbers, strings, null — plain text unless it starts with `{`.
    let value = randomValue(rng, 2);
    while (value instanceof Entries) value = randomValue(rng, 2);
    return frame('random-json', Buffer.from(toJson(value)), rng);
  }
  const format = randomFormat(rng, ctx);
  const fields: [string, Json][] = [];
  if (rng.chance(0.8))
    fields.push(['text', rng.chance(0.7) ? validOption(rng, 'text', format) : invalidOption(rng, 'text')]);
  for (const name of OPTION_NAMES.slice(1)) {
    if (!rng.chance(0.25)) continue;
    const good = rng.chance(0.5);
    fields.push([
      name,
      good
        ? validOption(rng, name, format)
        : rng.chance(0.5)
          ? invalidOption(rng, name)
          : randomValue(rng, 2),
    ]);
  }
  for (let n = rng.int(0, 4); n > 0; n--)
    fields.push([rng.chance(0.3) ? rng.pick(ODD_KEYS) : randomString(rng, 12), randomValue(rng, 3)]);
  // Duplicate keys: JSON.parse keeps the last one.
  if (fields.length > 0 && rng.chance(0.1)) {
    const [key] = rng.pick(fields);
    fields.push([key, randomValue(rng, 1)]);
  }
  const prefix = rng.chance(0.1) ? rng.pick(WHITESPACE) : '';
  return frame('random-json', Buffer.from(prefix + toJson(new Entries(rng.shuffle(fields)))), rng);
};

const genDeepJson = (rng: Rng): Payload => {
  const d = rng.chance(0.5) ? 10_000 : rng.int(1000, 10_000);
  const objects = (leaf: string) => '{"a":'.repeat(d) + leaf + '}'.repeat(d);
  const arrays = (leaf: string) => '['.repeat(d) + leaf + ']'.repeat(d);
  const mixed = () => '[{"a":'.repeat(d / 2) + '1' + '}]'.repeat(d / 2);
  const templates = [
    () => objects('1'),
    () => objects('{"text":"Deep inside."}'),
    () => objects('1').slice(0, -rng.int(1, 50)),
    () => arrays(''),
    () => arrays('').slice(0, d + rng.int(0, d)),
    () => `{"text":"Deep.","extra":${arrays('1')}}`,
    () => `{"text":"Deep.","extra":${objects('null')},"more":${mixed()}}`,
    () => `{"text":${arrays('"Hello."')}}`,
    () => `{"text":"Hi.","voice":${objects('"af_heart"')}}`,
    () => `{"text":"Hi.","speed":${arrays('1')}}`,
    () => `{"text":"Hi.","request_id":${mixed()}}`,
    () => `{"type":${arrays('"synthesize"')},"text":"Hi."}`,
    () => `{"type":${objects('"close"')}}`,
    () => ' \n'.repeat(rng.int(1, 5000)) + objects('2'),
  ];
  return frame('deep-json', Buffer.from(rng.pick(templates)()), rng);
};

const genHugeString = (rng: Rng): Payload => {
  // Up to 1 MiB in all: the size every message is promised an answer for.
  const n = rng.chance(0.5) ? ANSWERED_MESSAGE_BYTES - 64 : rng.int(64 * 1024, ANSWERED_MESSAGE_BYTES - 64);
  const letters = () => 'lorem ipsum '.repeat(Math.ceil(n / 12)).slice(0, n);
  const templates = [
    () => JSON.stringify({ text: letters() }),
    () => letters(),
    () => ' '.repeat(n),
    () => ' '.repeat(n) + '{"text":"After a megabyte of blanks."}',
    () => JSON.stringify({ text: '😀'.repeat(Math.floor(n / 13)) }),
    () => JSON.stringify({ text: 'Hi.', voice: 'v'.repeat(n) }),
    () => JSON.stringify({ text: 'Hi.', format: 'f'.repeat(n) }),
    () => JSON.stringify({ type: 't'.repeat(n), text: 'Hi.' }),
    () => JSON.stringify({ text: 'Hi.', request_id: 'r'.repeat(n) }),
    () => JSON.stringify({ text: 'Padded, but fine.', padding: 'p'.repeat(n) }),
    () => `{"text":"${'\\u0041'.repeat(Math.floor(n / 6))}"}`,
  ];
  return frame('huge-string', Buffer.from(rng.pick(templates)()), rng);
};

/** Splits bytes into fragments, preferring cuts inside multi-byte characters; some are empty. */
function fragment(rng: Rng, bytes: Buffer, kind: Kind): Payload {
  const inside = [...bytes.keys()].filter((i) => i > 0 && (bytes[i]! & 0xc0) === 0x80);
  const cuts = new Set<number>();
  for (let n = rng.int(1, 7); n > 0; n--)
    cuts.add(inside.length > 0 && rng.chance(0.6) ? rng.pick(inside) : rng.int(0, bytes.length));
  if (rng.chance(0.2)) cuts.add(0);
  const sorted = [...cuts].sort((a, b) => a - b);
  const parts: Buffer[] = [];
  let from = 0;
  for (const cut of sorted) {
    parts.push(bytes.subarray(from, cut));
    from = cut;
  }
  parts.push(bytes.subarray(from));
  return { kind, parts, binary: rng.chance(0.6) };
}

const genFragmented = (rng: Rng, ctx: Context): Payload => {
  // Two-, three- and four-byte characters, but little CJK: espeak switches language for it (slow).
  const multibyte = `${rng.pick(SENTENCES)} Grüße — ½ café 😀 ${randomString(rng, 6)} done.`;
  const choice = rng.int(0, 3);
  if (choice === 0) return fragment(rng, Buffer.from(JSON.stringify({ text: multibyte })), 'fragmented');
  if (choice === 1) return fragment(rng, Buffer.from(multibyte), 'fragmented');
  if (choice === 2) return fragment(rng, genRandomJson(rng, ctx).parts[0]!, 'fragmented');
  // Broken: a multi-byte character loses a byte, or gets a stray one, next to a fragment boundary.
  const bytes = Buffer.from(JSON.stringify({ text: multibyte }));
  const leads = [...bytes.keys()].filter((i) => bytes[i]! >= 0xc0);
  const at = rng.pick(leads);
  const broken = rng.chance(0.5)
    ? Buffer.concat([bytes.subarray(0, at + 1), bytes.subarray(at + 2)])
    : Buffer.concat([bytes.subarray(0, at), Buffer.from(rng.pick(INVALID_UTF8)), bytes.subarray(at)]);
  return fragment(rng, broken, 'fragmented');
};

const genInvalidUtf8 = (rng: Rng): Payload => {
  const bad = Buffer.from(rng.pick(INVALID_UTF8));
  const host = rng.chance(0.5) ? JSON.stringify({ text: rng.pick(SENTENCES) }) : rng.pick(SENTENCES);
  const hostBytes = Buffer.from(host);
  const at = rng.int(0, hostBytes.length);
  const bytes = Buffer.concat([hostBytes.subarray(0, at), bad, hostBytes.subarray(at)]);
  // Mostly text frames: the server must check UTF-8 itself and answer, not drop the connection.
  return frame('invalid-utf8', bytes, rng, 0.3);
};

/** CESU-8: a UTF-16 code unit written as a 3-byte sequence, which UTF-8 forbids for surrogates. */
function cesu8Unit(unit: number): Buffer {
  return Buffer.from([0xe0 | (unit >> 12), 0x80 | ((unit >> 6) & 0x3f), 0x80 | (unit & 0x3f)]);
}

const genCesu8 = (rng: Rng): Payload => {
  let surrogate: Buffer;
  const r = rng.int(0, 2);
  if (r === 0) surrogate = cesu8Unit(rng.int(0xd800, 0xdbff));
  else if (r === 1) surrogate = cesu8Unit(rng.int(0xdc00, 0xdfff));
  else {
    // A whole supplementary character (😀 = D83D DE00) as a CESU-8 surrogate pair.
    const cp = rng.int(0x10000, 0x10ffff) - 0x10000;
    surrogate = Buffer.concat([cesu8Unit(0xd800 + (cp >> 10)), cesu8Unit(0xdc00 + (cp & 0x3ff))]);
  }
  const asJson = rng.chance(0.5);
  const bytes = Buffer.concat([
    Buffer.from(asJson ? '{"text":"Before ' : 'Before '),
    surrogate,
    Buffer.from(asJson ? ' after."}' : ' after.'),
  ]);
  return rng.chance(0.3) ? fragment(rng, bytes, 'cesu8') : frame('cesu8', bytes, rng, 0.5);
};

const GENERATORS: Record<Kind, (rng: Rng, ctx: Context) => Payload> = {
  'random-bytes': genRandomBytes,
  'random-json': genRandomJson,
  'deep-json': genDeepJson,
  'huge-string': genHugeString,
  fragmented: genFragmented,
  'invalid-utf8': genInvalidUtf8,
  cesu8: genCesu8,
  valid: genValid,
};

// ---------------------------------------------------------------------------------------------
// Reading answers: one per message, in order

type Answer =
  | { readonly kind: 'error'; readonly error: Record<string, unknown> }
  | {
      readonly kind: 'synthesis';
      readonly start: Record<string, unknown>;
      readonly audio: Buffer[];
      complete?: Record<string, unknown>;
      error?: Record<string, unknown>;
    };

/** Groups a session's frames into answers: an error frame, or start … audio … complete (or error). */
class AnswerReader {
  readonly answers: Answer[] = [];
  readonly violations: string[] = [];
  #cursor = 0;
  #open: Extract<Answer, { kind: 'synthesis' }> | undefined;

  update(frames: readonly Frame[]): number {
    for (; this.#cursor < frames.length; this.#cursor++) {
      const f = frames[this.#cursor]!;
      if (f.kind === 'audio') {
        if (this.#open) this.#open.audio.push(f.bytes);
        else this.violations.push(`audio frame (${f.bytes.length} bytes) outside a synthesis`);
        continue;
      }
      const m = f.message;
      if (m.type === 'synthesis_start') {
        if (this.#open) this.violations.push('synthesis_start inside another synthesis');
        this.#open = { kind: 'synthesis', start: m, audio: [] };
      } else if (m.type === 'synthesis_complete' || m.type === 'error') {
        if (this.#open) {
          if (m.type === 'error') this.#open.error = m;
          else this.#open.complete = m;
          this.answers.push(this.#open);
          this.#open = undefined;
        } else if (m.type === 'error') this.answers.push({ kind: 'error', error: m });
        else this.violations.push(`synthesis_complete without synthesis_start: ${JSON.stringify(m)}`);
      }
    }
    return this.answers.length;
  }
}

/** Problems with an error frame: a code, and a message in words that leaks nothing. */
function errorFrameProblems(error: Record<string, unknown>): string[] {
  const problems: string[] = [];
  if (typeof error.code !== 'string' || !ERROR_CODES.has(error.code))
    problems.push(`code ${JSON.stringify(error.code)} is not a documented error code`);
  const message = error.message;
  if (typeof message !== 'string' || message.trim() === '') problems.push('no message');
  else {
    if (!/\S\s+\S/.test(message)) problems.push(`message ${JSON.stringify(message)} is not in words`);
    if (message.includes('    at ')) problems.push('message holds a stack trace');
    if (/\/work\/|node_modules|file:\/\//.test(message)) problems.push('message holds a file path');
  }
  return problems;
}

function preview(payload: Payload): string {
  const bytes = Buffer.concat(payload.parts);
  const head = bytes.subarray(0, 100).toString('latin1');
  return `${payload.kind}, ${bytes.length} bytes in ${payload.parts.length} ${payload.binary ? 'binary' : 'text'} frame(s): ${JSON.stringify(head)}${bytes.length > 100 ? '…' : ''}`;
}

function describeAnswer(answer: Answer): string {
  if (answer.kind === 'error') return `error ${JSON.stringify(answer.error).slice(0, 300)}`;
  const audio = answer.audio.reduce((n, b) => n + b.length, 0);
  const end = answer.error ?? answer.complete;
  return `synthesis (${audio} audio bytes) ending ${JSON.stringify(end).slice(0, 300)}`;
}

/** Compares one answer with what the contract expects for its message. */
function answerProblems(expected: Expected, answer: Answer): string[] {
  if (expected.outcome === 'close') return ['the generator made a close message'];
  if (expected.outcome === 'error') {
    if (answer.kind !== 'error') return ['expected one error frame'];
    const problems = errorFrameProblems(answer.error);
    if (answer.error.code === 'busy') problems.push('busy although the batch stayed under the cap');
    if (expected.requestId !== undefined && answer.error.request_id !== expected.requestId)
      problems.push(`error does not echo request_id ${JSON.stringify(expected.requestId)}`);
    return problems;
  }
  if (answer.kind !== 'synthesis' || !answer.complete) return ['expected audio and synthesis_complete'];
  const problems: string[] = [];
  const id = expected.requestId;
  if (id !== undefined && (answer.start.request_id !== id || answer.complete.request_id !== id))
    problems.push(`request_id ${JSON.stringify(id)} not echoed on synthesis_start/complete`);
  if (typeof answer.complete.request_id !== 'string' || answer.complete.request_id === '')
    problems.push('synthesis_complete without a request_id');
  if (typeof answer.complete.total_duration_s !== 'number') problems.push('no total_duration_s');
  if (expected.format === 'pcm' || expected.format === 'wav') {
    const odd = answer.audio.find((b) => b.length % 2 !== 0);
    if (odd) problems.push(`an s16le audio frame of ${odd.length} bytes (odd)`);
  }
  return problems;
}

// ---------------------------------------------------------------------------------------------
// The test

let server: TestServer;
let formats: string[];

beforeAll(async () => {
  server = await startServer({ WS_MAX_PENDING: String(WS_MAX_PENDING) });
  const ping = (await (await fetch(`${server.http}/ping`)).json()) as { formats: string[] };
  formats = ping.formats;
});
afterAll(() => server?.close());

async function pingStatus(): Promise<number> {
  const res = await fetch(`${server.http}/ping`);
  await res.arrayBuffer();
  return res.status;
}

function send(client: TestClient, payload: Payload): void {
  const last = payload.parts.length - 1;
  payload.parts.forEach((part, i) => client.socket.send(part, { binary: payload.binary, fin: i === last }));
}

interface Tally {
  sent: number;
  byKind: Record<string, number>;
  outcomes: Record<string, number>;
  batches: number;
}

/** One session: generates its share of the plan lazily (timestamps are fresh), batch by batch. */
async function fuzzSession(
  index: number,
  kinds: readonly Kind[],
  failures: string[],
  tally: Tally,
): Promise<void> {
  const rng = new Rng((SEED ^ Math.imul(index + 1, 0x9e3779b1)) >>> 0);
  const ctx: Context = { formats };
  const client = await TestClient.open(server.ws);
  const reader = new AnswerReader();
  const sent: { payload: Payload; expected: Expected }[] = [];
  const fail = (what: string) => failures.push(`[session ${index}] ${what}`);
  const queue: Kind[] = [...kinds];
  let carry: Payload | undefined;
  let finalSent = false;

  while ((queue.length > 0 || carry || !finalSent) && failures.length < 30) {
    const batch: Payload[] = [];
    let bytes = 0;
    for (;;) {
      let payload = carry;
      carry = undefined;
      if (!payload) {
        const kind = queue.shift();
        if (kind === undefined) break;
        payload = GENERATORS[kind](rng, ctx);
      }
      const size = payload.parts.reduce((n, p) => n + p.length, 0);
      if (batch.length > 0 && (batch.length >= BATCH_MESSAGES || bytes + size > BATCH_BYTES)) {
        carry = payload;
        break;
      }
      batch.push(payload);
      bytes += size;
    }
    if (batch.length === 0) {
      // Last of all: a valid request whose id proves nothing is left over or shifted.
      batch.push({
        kind: 'final',
        parts: [Buffer.from(JSON.stringify({ text: 'The end.', request_id: `final-${index}` }))],
        binary: true,
      });
      finalSent = true;
    }

    const now = Date.now();
    for (const payload of batch) {
      const expected = expectedOutcome(Buffer.concat(payload.parts), formats, now);
      if (expected.outcome === 'close') continue; // never close the session from the fuzzer
      sent.push({ payload, expected });
      send(client, payload);
      tally.byKind[payload.kind] = (tally.byKind[payload.kind] ?? 0) + 1;
      tally.sent++;
    }
    tally.batches++;

    try {
      await client.until(
        (c) => reader.update(c.frames) >= sent.length,
        `${sent.length} answers (seed ${SEED})`,
        BATCH_TIMEOUT_MS,
      );
    } catch (err) {
      const missing = sent
        .slice(reader.answers.length, reader.answers.length + 3)
        .map((s) => preview(s.payload));
      fail(`${(err as Error).message.slice(0, 400)}; first unanswered: ${missing.join(' | ')}`);
      break;
    }
    for (const v of reader.violations.splice(0)) fail(v);
    if (client.closeCode !== undefined) fail(`session closed with ${client.closeCode}`);
    if ((await pingStatus()) !== 200) fail('GET /ping is not 200 after a batch');
  }

  // Exactly one answer per message: nothing extra may follow (checked after a short grace).
  await new Promise((r) => setTimeout(r, 100));
  reader.update(client.frames);
  if (reader.answers.length > sent.length)
    fail(`${reader.answers.length - sent.length} answer(s) more than messages sent`);
  const last = reader.answers[sent.length - 1];
  if (finalSent && !(last?.kind === 'synthesis' && last.complete?.request_id === `final-${index}`))
    fail('the final request is not the last answer: answers and messages are out of step');

  for (const [i, { payload, expected }] of sent.entries()) {
    const answer = reader.answers[i];
    if (!answer) break;
    const key = answer.kind === 'error' ? `error:${String(answer.error.code)}` : 'audio';
    tally.outcomes[key] = (tally.outcomes[key] ?? 0) + 1;
    const problems = answerProblems(expected, answer);
    if (problems.length > 0)
      fail(`${problems.join('; ')}\n    sent: ${preview(payload)}\n    got: ${describeAnswer(answer)}`);
    if (failures.length >= 30) break;
  }
  client.close();
}

describe(`WebSocket fuzzing (seed ${SEED})`, () => {
  it('answers thousands of odd and valid messages one by one, and stays up', async () => {
    onTestFailed(() => {
      console.error(
        `fuzz seed ${SEED}: reproduce with FUZZ_SEED=${SEED} npx vitest run test/server/fuzz.test.ts`,
      );
    });
    const planRng = new Rng(SEED);
    const kinds = planRng.shuffle(
      (Object.entries(PLAN) as [Kind, number][]).flatMap(([kind, n]) => Array<Kind>(n).fill(kind)),
    );
    const failures: string[] = [];
    const tally: Tally = { sent: 0, byKind: {}, outcomes: {}, batches: 0 };
    const started = performance.now();
    await Promise.all(
      Array.from({ length: SESSIONS }, (_, s) =>
        fuzzSession(
          s,
          kinds.filter((_, i) => i % SESSIONS === s),
          failures,
          tally,
        ),
      ),
    );
    if (VERBOSE)
      console.log(
        `fuzz seed ${SEED}: ${tally.sent} messages in ${tally.batches} batches, ${Math.round(performance.now() - started)} ms`,
        tally.byKind,
        tally.outcomes,
      );
    expect(failures, `seed ${SEED}:\n${failures.join('\n')}`).toEqual([]);
    expect(tally.sent).toBeGreaterThanOrEqual(Object.values(PLAN).reduce((a, b) => a + b, 0));
  }, 120_000);

  it('survives a deliberate flood far past the pending cap (busy errors, maybe a 1008 close)', async () => {
    onTestFailed(() => console.error(`fuzz seed ${SEED}`));
    const rng = new Rng(SEED ^ 0xf100d);
    const ctx: Context = { formats };
    const client = await TestClient.open(server.ws);
    const total = 150;
    // All in one go, without waiting: busy errors come at once, the accepted messages in turn.
    for (let i = 0; i < total; i++) {
      const payload = rng.chance(0.7)
        ? frame('flood', Buffer.from(JSON.stringify({ text: `Flood ${i}.`, request_id: `flood-${i}` })), rng)
        : GENERATORS[rng.pick<Kind>(['random-bytes', 'invalid-utf8', 'random-json'])](rng, ctx);
      if (expectedOutcome(Buffer.concat(payload.parts), formats, Date.now()).outcome === 'close') continue;
      send(client, payload);
    }
    const count = (c: TestClient) => c.controls('synthesis_complete').length + c.controls('error').length;
    await client.until((c) => c.closeCode !== undefined || count(c) >= total, 'flood answers', 30_000);
    expect([undefined, 1008]).toContain(client.closeCode);
    expect(count(client)).toBeLessThanOrEqual(total);
    const errors = client.controls('error');
    expect(errors.some((e) => e.code === 'busy') || client.closeCode === 1008).toBe(true);
    for (const e of errors) expect(errorFrameProblems(e), JSON.stringify(e).slice(0, 300)).toEqual([]);
    if (VERBOSE)
      console.log(
        `flood: close ${client.closeCode}, ${client.controls('synthesis_complete').length} complete, ` +
          `${errors.filter((e) => e.code === 'busy').length} busy, ${errors.length} errors in all`,
      );
    client.close();
    expect(await pingStatus()).toBe(200);
  });

  it('still synthesizes a valid request on a fresh session afterwards', async () => {
    expect(await pingStatus()).toBe(200);
    const client = await TestClient.open(server.ws);
    client.send({ text: 'Still standing after all that.', request_id: 'after-fuzz' });
    await client.untilControls('synthesis_complete', 1);
    const reader = new AnswerReader();
    reader.update(client.frames);
    const [answer] = reader.answers;
    expect(answer?.kind).toBe('synthesis');
    if (answer?.kind !== 'synthesis') return;
    expect(answer.complete?.request_id).toBe('after-fuzz');
    expect(answer.audio.reduce((n, b) => n + b.length, 0)).toBeGreaterThan(0);
    expect(client.closeCode).toBeUndefined();
    client.close();
  });
});
