/**
 * parseOptions (server/http/request.ts): each field of a request, its default, and each refusal
 * with its code, `data.param` and message. The engine is the in-process one
 * (test/app/fake-engine.ts): the real voice catalog, PCM and WAV.
 */
import { describe, expect, it } from 'vitest';
import {
  parseOptions,
  type OptionContext,
  type SynthesisOptions,
} from '../../../dist/server/http/request.js';
import { parseConfig } from '../../../dist/server/config/config.js';
import { TtsError } from '../../../dist/server/http/errors.js';
import type { Engine } from '../../../dist/model/engine.js';
import { fakeEngine } from '../../app/fake-engine.ts';

const config = parseConfig({ KOKORO_MODEL_DIR: '/nonexistent', MAX_TEXT_CHARS: '10' });
const engine = fakeEngine();
const timed = fakeEngine({ timestamps: true });
const withInfo = (info: Partial<Engine['info']>): Engine => ({
  ...engine,
  info: { ...engine.info, ...info },
});
const int32 = withInfo({ contract: { ...engine.info.contract, speedType: 'int32' } });
const mulaw = withInfo({ formats: ['pcm', 'wav', 'mulaw'] });

/** The epoch milliseconds the parser is told it is. */
const NOW = 1_800_000_000_000;

const parse = (body: Record<string, unknown>, ctx: Partial<OptionContext> = {}): SynthesisOptions =>
  parseOptions(body, { route: 'http', config, engine, now: NOW, ...ctx });

/** The error parse throws, as the edges see it. */
function refusal(body: Record<string, unknown>, ctx: Partial<OptionContext> = {}): TtsError {
  try {
    parse(body, ctx);
  } catch (err) {
    expect(err).toBeInstanceOf(TtsError);
    return err as TtsError;
  }
  throw new Error('the request was accepted');
}

describe('parseOptions: defaults', () => {
  it('fills every field a POST leaves out', () => {
    const options = parse({ text: 'Hi.' });
    expect(options).toEqual({
      requestId: expect.stringMatching(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[0-9a-f]{4}-[0-9a-f]{12}$/),
      text: 'Hi.',
      chars: 3,
      voice: expect.objectContaining({ key: 'af_heart(1)', lang: 'a' }),
      voiceSpec: 'af_heart',
      speed: 1,
      format: 'wav',
      sampleRate: 24000,
      stream: true,
      transport: 'binary',
      timestamps: false,
      phonemeTimestamps: false,
      firstChunk: 'clause',
      phonemes: false,
      markup: 'auto',
      warnings: [],
    });
    expect(parse({ text: 'Hi.' }).requestId).not.toBe(options.requestId);
  });

  it.each<[string, Record<string, unknown>, Partial<OptionContext>, Partial<SynthesisOptions>]>([
    ['PCM on the WebSocket route', {}, { route: 'ws' }, { format: 'pcm', sampleRate: 24000 }],
    ['SSE when the POST asked for it by Accept', {}, { defaultTransport: 'sse' }, { transport: 'sse' }],
    ['the format’s own rate (8000 for mulaw)', { format: 'mulaw' }, { engine: mulaw }, { sampleRate: 8000 }],
    [
      'the configured default voice',
      {},
      { config: parseConfig({ KOKORO_MODEL_DIR: '/nonexistent', KOKORO_DEFAULT_VOICE: 'bf_emma' }) },
      { voiceSpec: 'bf_emma', voice: expect.objectContaining({ lang: 'b' }) },
    ],
  ])('%s', (_name, body, ctx, expected) => {
    expect(parse({ text: 'Hi.', ...body }, ctx)).toMatchObject(expected);
  });
});

describe('parseOptions: accepted values', () => {
  const fresh = NOW / 1000;
  it.each<[string, Record<string, unknown>, Partial<OptionContext>, Partial<SynthesisOptions>]>([
    ['a request id, as given', { request_id: '日本\n語' }, {}, { requestId: '日本\n語' }],
    ['a request id of 128 characters', { request_id: 'r'.repeat(128) }, {}, { requestId: 'r'.repeat(128) }],
    ['a timestamp in seconds', { request_timestamp: fresh - 55 }, {}, {}],
    ['a timestamp at the age limit', { request_timestamp: fresh - 56 }, {}, {}],
    ['a timestamp in milliseconds', { request_timestamp: NOW - 55_000 }, {}, {}],
    ['a timestamp from the future (clock skew)', { request_timestamp: fresh + 3600 }, {}, {}],
    [
      'a blend, echoed as written',
      { voice: 'af_bella(2)+af_sky(1)' },
      {},
      { voiceSpec: 'af_bella(2)+af_sky(1)' },
    ],
    [
      'a language other than the voice’s',
      { lang: 'es' },
      {},
      { voice: expect.objectContaining({ lang: 'e' }) },
    ],
    ['the slowest speed', { speed: 0.5 }, {}, { speed: 0.5 }],
    ['the fastest speed', { speed: 2 }, {}, { speed: 2 }],
    ['a whole speed for an int32 export', { speed: 2 }, { engine: int32 }, { speed: 2 }],
    ['PCM at 8 kHz', { format: 'pcm', sample_rate: 8000 }, {}, { format: 'pcm', sampleRate: 8000 }],
    ['WAV at 48 kHz', { format: 'wav', sample_rate: 48000 }, {}, { sampleRate: 48000 }],
    ['one complete file', { stream: false }, {}, { stream: false }],
    ['SSE by the body', { transport: 'sse' }, {}, { transport: 'sse' }],
    [
      'binary by the body, over Accept',
      { transport: 'binary' },
      { defaultTransport: 'sse' },
      { transport: 'binary' },
    ],
    ['the first chunk at its sentence’s end', { first_chunk: 'sentence' }, {}, { firstChunk: 'sentence' }],
    ['timestamps over SSE', { timestamps: true, transport: 'sse' }, { engine: timed }, { timestamps: true }],
    [
      'timestamps on the WebSocket route',
      { timestamps: true },
      { engine: timed, route: 'ws' },
      { timestamps: true },
    ],
    [
      'phoneme timestamps over SSE',
      { phoneme_timestamps: true, transport: 'sse' },
      { engine: timed },
      { phonemeTimestamps: true, timestamps: false, warnings: [] },
    ],
    [
      'phoneme timestamps of a phonemes request (its sounds are timed, it has no words)',
      { text: undefined, phonemes: 'hˈI', phoneme_timestamps: true },
      { engine: timed, route: 'ws' },
      { phonemeTimestamps: true },
    ],
    [
      'stream and transport ignored on the WebSocket route',
      { stream: 'no', transport: 'carrier-pigeon' },
      { route: 'ws' },
      { stream: true, transport: 'binary' },
    ],
  ])('%s', (_name, body, ctx, expected) => {
    expect(parse({ text: 'Hi.', ...body }, ctx)).toMatchObject(expected);
  });

  it('counts text in code points, up to the limit', () => {
    expect(parse({ text: '😀'.repeat(10) })).toMatchObject({ chars: 10, text: '😀'.repeat(10) });
  });

  it('reads phonemes as they are', () => {
    expect(parse({ phonemes: 'həlˈO.' })).toMatchObject({ text: 'həlˈO.', phonemes: true, chars: 6 });
  });

  it.each<[string, Record<string, unknown>, string]>([
    ['words', { timestamps: true }, 'timestamps'],
    ['sounds', { phoneme_timestamps: true }, 'phoneme_timestamps'],
    ['both', { timestamps: true, phoneme_timestamps: true }, 'timestamps and phoneme_timestamps'],
  ])(
    'timestamps (%s) from an export without durations: accepted untimed, with a warning that says why',
    (_name, asked, named) => {
      const options = parse({ text: 'Hi.', transport: 'sse', ...asked });
      expect(options).toMatchObject({ timestamps: false, phonemeTimestamps: false });
      expect(options.warnings).toEqual([
        expect.stringMatching(
          new RegExp(
            `^${named}: the loaded model export has no durations output, so this audio comes without them; load a timestamped export such as onnx-community/Kokoro-82M-v1.0-ONNX-timestamped`,
          ),
        ),
      ]);
    },
  );
});

describe('parseOptions: refusals', () => {
  const now = NOW / 1000;
  const cases: {
    name: string;
    body: Record<string, unknown>;
    ctx?: Partial<OptionContext>;
    code: string;
    status?: number;
    param: string | undefined;
    message: RegExp;
  }[] = [
    ...[5, '', 'r'.repeat(129), null].map((request_id) => ({
      name: `request_id ${JSON.stringify(request_id).slice(0, 12)}`,
      body: { text: 'Hi.', request_id },
      code: 'invalid_option',
      param: 'request_id',
      message:
        /^request_id should be a non-empty string of at most 128 characters; got (number 5|the string ""|the string "r{40}…"|null)$/,
    })),
    ...['yesterday', -1, Infinity, null].map((request_timestamp) => ({
      name: `request_timestamp ${String(request_timestamp)}`,
      body: { text: 'Hi.', request_timestamp },
      code: 'invalid_option',
      param: 'request_timestamp',
      message: /^request_timestamp should be epoch seconds \(or milliseconds above 1e11\) as a number; got /,
    })),
    {
      name: 'a stale request, in seconds',
      body: { text: 'Hi.', request_timestamp: now - 60 },
      code: 'request_stale',
      status: 408,
      param: undefined,
      message:
        /^The request is 60\.0 s old \(request_timestamp\), over the 56 s limit; it was not synthesized$/,
    },
    {
      name: 'a stale request, in milliseconds',
      body: { text: 'Hi.', request_timestamp: NOW - 120_000 },
      code: 'request_stale',
      status: 408,
      param: undefined,
      message: /^The request is 120\.0 s old/,
    },
    {
      name: 'staleness before anything else',
      body: { text: 5, voice: 'zz_top', request_timestamp: now - 60 },
      code: 'request_stale',
      status: 408,
      param: undefined,
      message: /s old/,
    },
    {
      name: 'both text and phonemes',
      body: { text: 'Hi.', phonemes: 'hˈI' },
      code: 'invalid_option',
      param: 'phonemes',
      message: /^send either text or phonemes, not both/,
    },
    {
      name: 'no text',
      body: { voice: 'af_heart' },
      code: 'bad_request',
      param: 'text',
      message: /^The request has no text: send \{"text": "…"\}/,
    },
    ...[
      [5, 'number 5'],
      [['Hi.'], 'an array'],
      [{ words: 'Hi.' }, 'an object'],
      [null, 'null'],
      [true, 'boolean true'],
    ].map(([text, described]) => ({
      name: `text ${described}`,
      body: { text },
      code: 'invalid_option',
      param: 'text',
      message: new RegExp(`^text should be a string; got ${described}$`),
    })),
    {
      name: 'phonemes that are not a string',
      body: { phonemes: ['h'] },
      code: 'invalid_option',
      param: 'phonemes',
      message:
        /^phonemes should be a string of Kokoro's phoneme symbols \(POST \/v1\/phonemize shows some\); got an array$/,
    },
    ...['', '  \n\t'].map((text) => ({
      name: `text ${JSON.stringify(text)}`,
      body: { text },
      code: 'empty_text',
      param: 'text',
      message: /^text is empty: it should contain something to speak$/,
    })),
    {
      name: 'empty phonemes',
      body: { phonemes: ' ' },
      code: 'empty_text',
      param: 'phonemes',
      message: /^phonemes is empty/,
    },
    {
      name: 'text over the limit, in code points',
      body: { text: '😀'.repeat(11) },
      code: 'text_too_long',
      status: 413,
      param: 'text',
      message: /^text has 11 characters, over the limit of 10 per message; split it into several messages$/,
    },
    {
      name: 'phonemes over the limit',
      body: { phonemes: 'a'.repeat(11) },
      code: 'text_too_long',
      status: 413,
      param: 'phonemes',
      message: /^phonemes has 11 characters/,
    },
    {
      name: 'phonemes outside the vocabulary',
      body: { phonemes: 'h§§ж' },
      code: 'invalid_option',
      param: 'phonemes',
      message:
        /^phonemes has symbols outside Kokoro's vocabulary: "§" \(U\+00A7\) ×2, "ж" \(U\+0436\); send misaki's symbols/,
    },
    {
      name: 'more than ten foreign symbols, named ten at most',
      body: { phonemes: 'жзийклмнопр' },
      ctx: { config: parseConfig({ KOKORO_MODEL_DIR: '/nonexistent' }) },
      code: 'invalid_option',
      param: 'phonemes',
      message: /"п" \(U\+043F\), …; send/,
    },
    {
      name: 'a voice that is not a string',
      body: { text: 'Hi.', voice: null },
      code: 'invalid_option',
      param: 'voice',
      message: /^voice should be a string such as "af_heart" or "af_bella\+af_sky"; got null$/,
    },
    {
      name: 'an unknown voice',
      body: { text: 'Hi.', voice: 'zz_top' },
      code: 'voice_not_found',
      param: 'voice',
      message: /^Unknown voice "zz_top"\. Voice ids are case-sensitive/,
    },
    {
      name: 'a blend across languages',
      body: { text: 'Hi.', voice: 'af_bella+bf_emma' },
      code: 'language_unsupported',
      param: 'voice',
      message: /^A blend must use voices of one language/,
    },
    {
      name: 'a lang that is not a string',
      body: { text: 'Hi.', lang: 7 },
      code: 'invalid_option',
      param: 'lang',
      message: /^lang should be a string such as "es" or "fr-FR"; got number 7$/,
    },
    {
      name: 'a lang without a front end',
      body: { text: 'Hi.', lang: 'de' },
      code: 'language_unsupported',
      param: 'lang',
      message: /^Unknown lang "de"/,
    },
    ...[
      [0.49, 'number 0.49'],
      [2.01, 'number 2.01'],
      ['1', 'the string "1"'],
      [null, 'null'],
      [NaN, 'number NaN'],
      [Infinity, 'number Infinity'],
    ].map(([speed, described]) => ({
      name: `speed ${described}`,
      body: { text: 'Hi.', speed },
      code: 'invalid_option',
      param: 'speed',
      message: new RegExp(`^speed should be a number from 0.5 to 2; got ${described}$`),
    })),
    {
      name: 'a fractional speed for an int32 export',
      body: { text: 'Hi.', speed: 1.5 },
      ctx: { engine: int32 },
      code: 'invalid_option',
      param: 'speed',
      message:
        /^This model export takes whole-number speeds only \(its speed input is int32\): use 1 or 2; got 1.5$/,
    },
    ...[
      ['mp3', 'the string "mp3"'],
      ['ogg', 'the string "ogg"'],
      [5, 'number 5'],
    ].map(([format, described]) => ({
      name: `format ${described}`,
      body: { text: 'Hi.', format },
      code: 'invalid_option',
      param: 'format',
      message: new RegExp(`^format should be one of: pcm, wav; got ${described}$`),
    })),
    ...[
      [11025, 'number 11025'],
      ['24000', 'the string "24000"'],
      [null, 'null'],
    ].map(([sample_rate, described]) => ({
      name: `sample_rate ${described}`,
      body: { text: 'Hi.', sample_rate },
      code: 'invalid_option',
      param: 'sample_rate',
      message: new RegExp(
        `^sample_rate for wav should be one of: 8000, 16000, 22050, 24000, 44100, 48000; got ${described}$`,
      ),
    })),
    {
      name: 'stream that is not a boolean',
      body: { text: 'Hi.', stream: 'no' },
      code: 'invalid_option',
      param: 'stream',
      message: /^stream should be true or false; got the string "no"$/,
    },
    ...['carrier-pigeon', null].map((transport) => ({
      name: `transport ${String(transport)}`,
      body: { text: 'Hi.', transport },
      code: 'invalid_option',
      param: 'transport',
      message: /^transport should be one of: binary, sse; got /,
    })),
    {
      name: 'an unknown first_chunk',
      body: { text: 'Hi.', first_chunk: 'word' },
      code: 'invalid_option',
      param: 'first_chunk',
      message: /^first_chunk should be "clause" or "sentence"; got the string "word"$/,
    },
    {
      name: 'timestamps that are not a boolean',
      body: { text: 'Hi.', timestamps: 'yes' },
      code: 'invalid_option',
      param: 'timestamps',
      message: /^timestamps should be true or false; got the string "yes"$/,
    },
    {
      name: 'phoneme_timestamps that are not a boolean',
      body: { text: 'Hi.', phoneme_timestamps: 1 },
      code: 'invalid_option',
      param: 'phoneme_timestamps',
      message: /^phoneme_timestamps should be true or false; got number 1$/,
    },
    {
      name: 'timestamps for phonemes, even where the model cannot time anything',
      body: { phonemes: 'hˈI', timestamps: true, transport: 'sse' },
      code: 'invalid_option',
      param: 'timestamps',
      message: /^timestamps time the words of a text; a phonemes request has no words to time$/,
    },
    {
      name: 'timestamps for phonemes',
      body: { phonemes: 'hˈI', timestamps: true, transport: 'sse' },
      ctx: { engine: timed },
      code: 'invalid_option',
      param: 'timestamps',
      message: /^timestamps time the words of a text; a phonemes request has no words to time$/,
    },
    {
      name: 'timestamps in raw audio bytes',
      body: { text: 'Hi.', timestamps: true },
      ctx: { engine: timed },
      code: 'invalid_option',
      param: 'timestamps',
      message: /^timestamps on POST need "transport": "sse"/,
    },
    {
      name: 'timestamps in raw audio bytes, where the model cannot time words',
      body: { text: 'Hi.', timestamps: true },
      code: 'invalid_option',
      param: 'timestamps',
      message: /^timestamps on POST need "transport": "sse"/,
    },
    {
      name: 'phoneme timestamps in raw audio bytes',
      body: { text: 'Hi.', phoneme_timestamps: true },
      ctx: { engine: timed },
      code: 'invalid_option',
      param: 'phoneme_timestamps',
      message:
        /^phoneme_timestamps on POST need "transport": "sse" \(they come as phoneme_timestamps events\)/,
    },
  ];

  it.each(cases)('$name → $code', ({ body, ctx, code, status, param, message }) => {
    const err = refusal(body, ctx);
    expect(err.code).toBe(code);
    expect(err.status).toBe(status ?? 400);
    expect(err.data.param).toBe(param);
    expect(err.message).toMatch(message);
  });
});
