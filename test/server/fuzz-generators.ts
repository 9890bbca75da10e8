/**
 * The fuzzer's payloads (test/server/fuzz.test.ts), one generator per kind: random bytes, random
 * JSON with the real option names, deep JSON, huge strings, UTF-8 cut across fragments, invalid
 * UTF-8, CESU-8 surrogates, and valid requests with random options.
 */
import {
  MAX_TEXT_CHARS,
  MAX_REQUEST_ID_CHARS,
  ANSWERED_MESSAGE_BYTES,
  RATES,
  VALID_VOICES,
} from './fuzz-oracle.ts';
import {
  Rng,
  Raw,
  Entries,
  toJson,
  randomString,
  randomValue,
  ODD_KEYS,
  OPTION_NAMES,
  WHITESPACE,
  type Json,
} from './fuzz-random.ts';

/** The kinds of payload, each with its generator. */
export type Kind =
  | 'random-bytes'
  | 'random-json'
  | 'deep-json'
  | 'huge-string'
  | 'fragmented'
  | 'invalid-utf8'
  | 'cesu8'
  | 'valid';

export interface Payload {
  readonly kind: Kind | 'final' | 'flood';
  /** One message: a single frame, or RFC 6455 fragments (fin only on the last). */
  readonly parts: readonly Buffer[];
  readonly binary: boolean;
}

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

export interface Context {
  readonly formats: readonly string[];
}

/**
 * Mostly raw PCM: encoders are tested elsewhere, and AAC (an ffmpeg process a request) or Opus
 * would eat the time budget that is meant for message handling.
 */
function randomFormat(rng: Rng, ctx: Context): string {
  if (rng.chance(0.8)) return 'pcm';
  const cheap = ctx.formats.filter((f) => f !== 'aac' && f !== 'opus');
  return rng.chance(0.9) ? rng.pick(cheap) : rng.pick(ctx.formats);
}

export function frame(kind: Payload['kind'], bytes: Buffer, rng: Rng, binaryChance = 0.7): Payload {
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

export const GENERATORS: Record<Kind, (rng: Rng, ctx: Context) => Payload> = {
  'random-bytes': genRandomBytes,
  'random-json': genRandomJson,
  'deep-json': genDeepJson,
  'huge-string': genHugeString,
  fragmented: genFragmented,
  'invalid-utf8': genInvalidUtf8,
  cesu8: genCesu8,
  valid: genValid,
};
