/**
 * ElevenLabs' stream-input and multi-stream-input sockets (dialects/elevenlabs/socket.ts,
 * alignment.ts) and its output formats (voices.ts): what each message becomes, what each event is
 * sent as, and the error (code, message, param) of every input refused.
 */
import { describe, expect, it } from 'vitest';
import type { WordTiming } from '../../dist/model/engine.js';
import type { CharAlignment } from '../../dist/server/dialects/elevenlabs/alignment.js';
import {
  ELEVENLABS_DEFAULT_FORMAT,
  elevenLabsDialect,
  elevenLabsSocketPath,
} from '../../dist/server/dialects/elevenlabs/socket.js';
import { TtsError } from '../../dist/server/http/errors.js';
import type { OutgoingFrame } from '../../dist/server/dialects/dialect.js';
import { ELEVENLABS_VOICES, elevenLabsOutput } from '../../dist/server/dialects/elevenlabs/voices.js';
import type { VendorOutput } from '../../dist/server/dialects/vendor-voices.js';
import {
  engine,
  bytes,
  json,
  thrown,
  expectError,
  refusal,
  sentJson,
  body,
  HEARD,
  FIGURES,
} from './dialect-helpers.ts';

describe('elevenLabsSocketPath', () => {
  const paths = new Map<string, { voiceId: string; multi: boolean }>([
    [
      '/v1/text-to-speech/21m00Tcm4TlvDq8ikWAM/stream-input',
      { voiceId: '21m00Tcm4TlvDq8ikWAM', multi: false },
    ],
    [
      'v1/text-to-speech/21m00Tcm4TlvDq8ikWAM/stream-input',
      { voiceId: '21m00Tcm4TlvDq8ikWAM', multi: false },
    ],
    ['/v1/text-to-speech/abc/multi-stream-input', { voiceId: 'abc', multi: true }],
    ['v1/text-to-speech/abc/multi-stream-input', { voiceId: 'abc', multi: true }],
    [
      '/v1/text-to-speech/abc/stream-input?output_format=pcm_16000&inactivity_timeout=60',
      { voiceId: 'abc', multi: false },
    ],
    ['/v1/text-to-speech/abc/multi-stream-input?model_id=eleven_flash_v2_5', { voiceId: 'abc', multi: true }],
    ['/v1/text-to-speech/af_bella%2Baf_sky/stream-input', { voiceId: 'af_bella+af_sky', multi: false }],
    [
      '/v1/text-to-speech/af_bella%282%29%2Baf_sky/stream-input',
      { voiceId: 'af_bella(2)+af_sky', multi: false },
    ],
    ['/v1/text-to-speech/a%20b/multi-stream-input', { voiceId: 'a b', multi: true }],
    // Broken percent-encoding is taken as written (and refused later as an unknown voice).
    ['/v1/text-to-speech/%E0%A4%A/stream-input', { voiceId: '%E0%A4%A', multi: false }],
  ]);
  it.each([...paths])('%s', (path, expected) => {
    expect(elevenLabsSocketPath(path)).toStrictEqual(expected);
  });

  const others = [
    undefined,
    '',
    '/',
    '/v1/text-to-speech/abc/stream',
    '/v1/text-to-speech/abc',
    '/v1/text-to-speech//stream-input',
    '/v1/text-to-speech/abc/stream-input/',
    '/v1/text-to-speech/a/b/stream-input',
    '/x/v1/text-to-speech/abc/stream-input',
    '/v2/text-to-speech/abc/stream-input',
    '/v1/text-to-speech/abc/Stream-Input',
    '/tts/websocket',
    '/v1/listen',
  ];
  it.each(others)('%s is not an ElevenLabs socket', (path) => {
    expect(elevenLabsSocketPath(path)).toBeUndefined();
  });
});

describe('elevenLabsDialect: connection', () => {
  const open = (query = '', voice = '21m00Tcm4TlvDq8ikWAM', multi = false) =>
    elevenLabsDialect(voice, multi, new URLSearchParams(query), engine);

  it.each(Object.entries(ELEVENLABS_VOICES))('maps ElevenLabs voice %s to %s', (id, kokoro) => {
    expect(open('', id).defaults.voice).toBe(kokoro);
  });

  it.each(['af_sky', 'bf_emma', 'af_bella+af_sky', 'af_bella(2)+af_sky(1)'])(
    'takes Kokoro voice %s as it is',
    (id) => {
      expect(open('', id).defaults.voice).toBe(id);
    },
  );

  it.each(['nope', 'rachel', '21M00TCM4TLVDQ8IKWAM', 'f786b574-daa5-4673-aa0c-cbe3e8534c02', 'toString', ''])(
    'refuses voice %j',
    (id) => {
      expectError(
        thrown(() => open('', id)),
        'voice_not_found',
        new RegExp(`^Unknown voice ${JSON.stringify(id)}: name a Kokoro voice .*docs/protocol\\.md`),
        'voice',
      );
    },
  );

  const formats = new Map<string | undefined, { format: string; sample_rate: number }>([
    [undefined, { format: 'mp3', sample_rate: 44100 }],
    ['pcm_16000', { format: 'pcm', sample_rate: 16000 }],
    ['pcm_24000', { format: 'pcm', sample_rate: 24000 }],
    ['pcm_44100', { format: 'pcm', sample_rate: 44100 }],
    ['pcm_32000', { format: 'pcm', sample_rate: 32000 }],
    ['ulaw_8000', { format: 'mulaw', sample_rate: 8000 }],
    ['mp3_44100_128', { format: 'mp3', sample_rate: 44100 }],
    ['mp3_22050_32', { format: 'mp3', sample_rate: 22050 }],
    ['opus_48000_64', { format: 'opus', sample_rate: 48000 }],
  ]);
  it.each([...formats])('output_format %s', (value, expected) => {
    const query = value === undefined ? '' : `output_format=${value}`;
    expect(open(query).defaults).toMatchObject(expected);
  });

  it('defaults to ElevenLabs own default format', () => {
    expect(ELEVENLABS_DEFAULT_FORMAT).toBe('mp3_44100_128');
  });

  const badFormats: [string, RegExp][] = [
    ['flac_44100', /^output_format "flac_44100" is not supported; use pcm_<rate>/],
    ['garbage', /^output_format "garbage" is not supported; use pcm_<rate>/],
    ['pcm', /^output_format "pcm" is not supported/],
    ['', /^output_format "" is not supported/],
    [
      'pcm_12000',
      /^output_format pcm_12000: sample rate 12000 is not offered for it; use one of 8000, 16000, 22050, 24000, 32000, 44100, 48000$/,
    ],
    ['ulaw_16000', /^output_format ulaw_16000: sample rate 16000 is not offered for it; use one of 8000$/],
    [
      'opus_44100_64',
      /^output_format opus_44100_64: sample rate 44100 is not offered for it; use one of 8000, 16000, 24000, 48000$/,
    ],
  ];
  it.each(badFormats)('refuses output_format %j', (value, message) => {
    expectError(
      thrown(() => open(`output_format=${value}`)),
      'invalid_option',
      message,
      'output_format',
    );
  });

  it.each([
    ['', 20],
    ['inactivity_timeout=1', 1],
    ['inactivity_timeout=60', 60],
    ['inactivity_timeout=180', 180],
  ] as const)('inactivity timeout of %j is %d s', (query, seconds) => {
    expect(open(query).idleTimeoutS).toBe(seconds);
  });

  it.each(['0', '181', '-5', '1.5', 'abc', '', '1000'])('refuses inactivity_timeout %j', (value) => {
    expectError(
      thrown(() => open(`inactivity_timeout=${value}`)),
      'invalid_option',
      new RegExp(`^inactivity_timeout "${value}" should be a whole number of seconds from 1 to 180$`),
      'inactivity_timeout',
    );
  });

  it.each([
    ['enable_ssml_parsing=true', 'ssml'],
    ['enable_ssml_parsing=false', 'none'],
    ['', 'none'],
  ] as const)('markup with %j is %s', (query, markup) => {
    expect(open(query).defaults.markup).toBe(markup);
  });

  it('turns normalization off only with apply_text_normalization=off', () => {
    expect(open('apply_text_normalization=off').defaults.normalization_options).toStrictEqual({
      normalize: false,
    });
    expect(open('apply_text_normalization=on').defaults).not.toHaveProperty('normalization_options');
    expect(open('apply_text_normalization=auto').defaults).not.toHaveProperty('normalization_options');
    expect(open('').defaults).not.toHaveProperty('normalization_options');
  });

  it('refuses an unknown apply_text_normalization', () => {
    const err = thrown(() => open('apply_text_normalization=sometimes'));
    expect(err).toBeInstanceOf(TtsError);
    expect((err as TtsError).code).toBe('invalid_option');
    expect((err as TtsError).message).toBe(
      'apply_text_normalization should be auto, on or off; got "sometimes"',
    );
  });

  it('gathers the whole query into the defaults', () => {
    const dialect = open(
      'output_format=pcm_16000&enable_ssml_parsing=true&apply_text_normalization=off&inactivity_timeout=45',
      'JBFqnCBsd6RMkjVDRZzb',
      true,
    );
    expect(dialect.defaults).toStrictEqual({
      voice: 'bm_george',
      format: 'pcm',
      sample_rate: 16000,
      markup: 'ssml',
      normalization_options: { normalize: false },
    });
    expect(dialect.idleTimeoutS).toBe(45);
    expect(dialect.contexts).toBe(true);
    expect(dialect.alwaysWords).toBe(true);
    expect(open().contexts).toBe(false);
  });
});

describe('elevenLabsDialect: stream-input messages', () => {
  const open = () => elevenLabsDialect('21m00Tcm4TlvDq8ikWAM', false, new URLSearchParams(), engine);

  it('takes the first message options, then only text; flush speaks; "" ends the stream', () => {
    const dialect = open();
    expect(
      dialect.parse(
        json({
          text: ' ',
          voice_settings: { speed: 1.1, stability: 0.5 },
          generation_config: { chunk_length_schedule: [50] },
          xi_api_key: 'k',
        }),
      ),
    ).toStrictEqual({
      kind: 'append',
      fields: { speed: 1.1, first_chunk: 'clause', text: ' ' },
      generate: false,
      repeatsOptions: true,
    });
    expect(dialect.parse(json({ text: 'Hello ', voice_settings: { speed: 2 } }))).toStrictEqual({
      kind: 'append',
      fields: { text: 'Hello ' },
      generate: false,
      repeatsOptions: true,
    });
    expect(dialect.parse(json({ text: 'world. ', flush: true }))).toStrictEqual({
      kind: 'append',
      fields: { text: 'world. ' },
      generate: true,
      repeatsOptions: true,
    });
    expect(dialect.parse(json({ text: '' }))).toStrictEqual([
      { kind: 'flush', fields: {} },
      { kind: 'close' },
    ]);
    expect(dialect.parse(json({ text: '', flush: true }))).toStrictEqual([
      { kind: 'flush', fields: {} },
      { kind: 'close' },
    ]);
  });

  it('a flush with no text speaks what is held and keeps the stream open', () => {
    const dialect = open();
    expect(dialect.parse(json({ flush: true }))).toStrictEqual({ kind: 'keep-alive' });
    dialect.parse(json({ text: 'Held ' }));
    expect(dialect.parse(json({ flush: true }))).toStrictEqual({
      kind: 'append',
      fields: { text: '' },
      generate: true,
    });
  });

  it.each([
    [[50, 120], { first_chunk: 'clause' }],
    [[99], { first_chunk: 'clause' }],
    [[100], { first_chunk: 'sentence' }],
    [[120, 160, 250, 290], { first_chunk: 'sentence' }],
    [[], {}],
  ])('chunk_length_schedule %j gives %j', (schedule, expected) => {
    expect(
      open().parse(json({ text: ' ', generation_config: { chunk_length_schedule: schedule } })),
    ).toStrictEqual({
      kind: 'append',
      fields: { ...expected, text: ' ' },
      generate: false,
      repeatsOptions: true,
    });
  });

  const refusals: [string, Record<string, unknown>, RegExp, string][] = [
    [
      'text a number',
      { text: 5 },
      /^Each message carries its text as a string .*"" to end the stream$/,
      'text',
    ],
    ['no text', { try_trigger_generation: true }, /carries its text as a string/, 'text'],
    ['text null', { text: null }, /carries its text as a string/, 'text'],
    [
      'voice_settings a string',
      { text: ' ', voice_settings: 'fast' },
      /^voice_settings should be an object/,
      'voice_settings',
    ],
    [
      'voice_settings an array',
      { text: ' ', voice_settings: [1] },
      /^voice_settings should be an object/,
      'voice_settings',
    ],
    [
      'a schedule not an array',
      { text: ' ', generation_config: { chunk_length_schedule: 50 } },
      /^generation_config\.chunk_length_schedule should be an array of positive numbers/,
      'generation_config',
    ],
    [
      'a schedule with zero',
      { text: ' ', generation_config: { chunk_length_schedule: [0, 100] } },
      /chunk_length_schedule should be an array of positive numbers/,
      'generation_config',
    ],
    [
      'a schedule of strings',
      { text: ' ', generation_config: { chunk_length_schedule: ['50'] } },
      /chunk_length_schedule should be an array of positive numbers/,
      'generation_config',
    ],
  ];
  it.each(refusals)('refuses %s, naming no context', (_name, message, text, param) => {
    const refused = refusal(open().parse(json(message)));
    expectError(refused.error, 'invalid_option', text, param);
    expect(refused).not.toHaveProperty('context');
  });

  it('throws for what is not a JSON object', () => {
    expectError(
      thrown(() => open().parse(bytes('Hello'))),
      'invalid_option',
      /^Send JSON messages such as \{"text": "Hello "\}$/,
      undefined,
    );
    expectError(
      thrown(() => open().parse(bytes('[1, 2]'))),
      'invalid_option',
      /^Send JSON messages/,
      undefined,
    );
    expectError(
      thrown(() => open().parse(bytes('{"text": "unterminated'))),
      'invalid_json',
      /is not valid JSON/,
      undefined,
    );
    expectError(
      thrown(() => open().parse(Buffer.from([0x7b, 0xff, 0x7d]))),
      'invalid_utf8',
      /not valid UTF-8/,
      undefined,
    );
  });

  it('ignores close_context and close_socket on stream-input (they are not its messages)', () => {
    const refused = refusal(open().parse(json({ close_socket: true })));
    expectError(refused.error, 'invalid_option', /carries its text as a string/, 'text');
  });
});

describe('elevenLabsDialect: multi-stream-input messages', () => {
  const open = () => elevenLabsDialect('21m00Tcm4TlvDq8ikWAM', true, new URLSearchParams(), engine);

  it('puts messages that name no context in "default", and reads contextId too', () => {
    const dialect = open();
    expect(dialect.parse(json({ text: ' ', voice_settings: { speed: 1.1 } }))).toStrictEqual({
      kind: 'append',
      fields: { speed: 1.1, text: ' ' },
      context: 'default',
      generate: false,
      repeatsOptions: true,
    });
    expect(dialect.parse(json({ text: 'Hi ', contextId: 'b' }))).toStrictEqual({
      kind: 'append',
      fields: { text: 'Hi ' },
      context: 'b',
      generate: false,
      repeatsOptions: true,
    });
  });

  it('takes each context first message options, and only its first', () => {
    const dialect = open();
    expect(dialect.parse(json({ text: ' ', context_id: 'a', voice_settings: { speed: 0.9 } }))).toMatchObject(
      {
        fields: { speed: 0.9, text: ' ' },
      },
    );
    expect(dialect.parse(json({ text: ' ', context_id: 'b', voice_settings: { speed: 1.2 } }))).toMatchObject(
      {
        fields: { speed: 1.2, text: ' ' },
      },
    );
    expect(dialect.parse(json({ text: 'x', context_id: 'a', voice_settings: { speed: 2 } }))).toStrictEqual({
      kind: 'append',
      fields: { text: 'x' },
      context: 'a',
      generate: false,
      repeatsOptions: true,
    });
  });

  it('"" keeps a context alive; with flush it speaks what a started context holds', () => {
    const dialect = open();
    expect(dialect.parse(json({ text: '' }))).toStrictEqual({ kind: 'keep-alive', context: 'default' });
    expect(dialect.parse(json({ text: '', context_id: 'new', flush: true }))).toStrictEqual({
      kind: 'keep-alive',
      context: 'new',
    });
    dialect.parse(json({ text: 'Hello', context_id: 'a' }));
    expect(dialect.parse(json({ text: '', context_id: 'a' }))).toStrictEqual({
      kind: 'keep-alive',
      context: 'a',
    });
    expect(dialect.parse(json({ text: '', context_id: 'a', flush: true }))).toStrictEqual({
      kind: 'append',
      fields: { text: '' },
      context: 'a',
      generate: true,
    });
  });

  const closing = (context: string, drop: boolean) => ({
    kind: 'close-context',
    context,
    drop,
    tolerant: true,
  });

  it('close_context finishes a context flushed since its last text, and cuts one that was not', () => {
    const dialect = open();
    const send = (message: Record<string, unknown>) => dialect.parse(json(message));
    const close = (context: string) => send({ context_id: context, close_context: true });

    send({ context_id: 'flushed', text: 'Hello.' });
    send({ context_id: 'flushed', text: '', flush: true });
    expect(close('flushed')).toStrictEqual(closing('flushed', false));

    send({ context_id: 'unflushed', text: 'Hello' });
    expect(close('unflushed')).toStrictEqual(closing('unflushed', true));

    send({ context_id: 'text-flush', text: 'Hello.', flush: true });
    expect(close('text-flush')).toStrictEqual(closing('text-flush', false));

    send({ context_id: 'more', text: 'Hello.', flush: true });
    send({ context_id: 'more', text: 'And more' });
    expect(close('more')).toStrictEqual(closing('more', true));

    send({ context_id: 'spaces', text: 'Hello.', flush: true });
    send({ context_id: 'spaces', text: ' ' });
    expect(close('spaces')).toStrictEqual(closing('spaces', false));

    // Pipecat's end of a turn: a flush with no text at all, then the close.
    send({ context_id: 'bare', text: ' ' });
    send({ context_id: 'bare', text: 'Hello there.' });
    expect(send({ context_id: 'bare', flush: true })).toStrictEqual({
      kind: 'append',
      fields: { text: '' },
      context: 'bare',
      generate: true,
    });
    expect(close('bare')).toStrictEqual(closing('bare', false));

    expect(close('never-used')).toStrictEqual(closing('never-used', true));
    expect(send({ close_context: true })).toStrictEqual(closing('default', true));
  });

  it('with auto_mode, speaks every piece as it comes, and only a flush of no text ends the turn', () => {
    const dialect = elevenLabsDialect(
      '21m00Tcm4TlvDq8ikWAM',
      true,
      new URLSearchParams('auto_mode=true'),
      engine,
    );
    const send = (message: Record<string, unknown>) => dialect.parse(json(message));
    const close = (context: string) => send({ context_id: context, close_context: true });
    // Pipecat's sentences: no flush, no spaces between them; each is spoken at once.
    expect(send({ context_id: 'p', text: ' ' })).toMatchObject({ generate: true });
    expect(send({ context_id: 'p', text: 'Hello there.' })).toStrictEqual({
      kind: 'append',
      fields: { text: 'Hello there.' },
      context: 'p',
      generate: true,
      repeatsOptions: true,
    });
    send({ context_id: 'p', flush: true });
    expect(close('p')).toStrictEqual(closing('p', false));
    // LiveKit's sentences, each flushed: a close before its input ended is a barge-in.
    send({ context_id: 'l', text: ' ', voice_settings: {} });
    send({ context_id: 'l', text: 'Hello there. ', flush: true });
    send({ context_id: 'l', text: 'How are you? ', flush: true });
    expect(close('l')).toStrictEqual(closing('l', true));
    // Its end of input: a flush of no text, then the close.
    send({ context_id: 'm', text: 'Hello there. ', flush: true });
    send({ context_id: 'm', text: '', flush: true });
    expect(close('m')).toStrictEqual(closing('m', false));
    send({ context_id: 'n', text: 'Hello there. ', flush: true });
    send({ context_id: 'n', text: ' ', flush: true });
    expect(close('n')).toStrictEqual(closing('n', false));
  });

  it('a flush with no text on a context never started only keeps it alive', () => {
    const dialect = open();
    expect(dialect.parse(json({ context_id: 'x', flush: true }))).toStrictEqual({
      kind: 'keep-alive',
      context: 'x',
    });
    expect(dialect.parse(json({ context_id: 'x', text: null, flush: true }))).toStrictEqual({
      kind: 'keep-alive',
      context: 'x',
    });
  });

  it('forgets a closed context: its id starts over, options and all', () => {
    const dialect = open();
    dialect.parse(json({ context_id: 'a', text: 'Hello.', flush: true }));
    dialect.parse(json({ context_id: 'a', close_context: true }));
    expect(dialect.parse(json({ context_id: 'a', text: ' ', voice_settings: { speed: 0.8 } }))).toMatchObject(
      {
        fields: { speed: 0.8, text: ' ' },
      },
    );
    expect(dialect.parse(json({ context_id: 'a', close_context: true }))).toMatchObject({ drop: true });
  });

  it('close_socket closes the session', () => {
    expect(open().parse(json({ close_socket: true }))).toStrictEqual({ kind: 'close' });
    expect(open().parse(json({ close_socket: true, context_id: 'a' }))).toStrictEqual({ kind: 'close' });
  });

  const refusals: [string, Record<string, unknown>, RegExp, string][] = [
    [
      'text a number',
      { context_id: 'a', text: 5 },
      /as a string .*or "flush", "close_context" or "close_socket"$/,
      'text',
    ],
    [
      'close_context "true"',
      { context_id: 'a', close_context: 'true' },
      /carries its text as a string/,
      'text',
    ],
    [
      'voice_settings a string',
      { context_id: 'a', text: ' ', voice_settings: 'x' },
      /^voice_settings should be an object/,
      'voice_settings',
    ],
  ];
  it.each(refusals)('refuses %s in its context', (_name, message, text, param) => {
    const refused = refusal(open().parse(json(message)));
    expectError(refused.error, 'invalid_option', text, param);
    expect(refused.context).toBe('a');
  });

  it('refuses a bad field in the default context when none is named', () => {
    const refused = refusal(open().parse(json({ text: 5 })));
    expectError(refused.error, 'invalid_option', /carries its text as a string/, 'text');
    expect(refused.context).toBe('default');
  });

  it.each([5, '', ['a'], {}, 'x'.repeat(256)])('throws for context_id %j', (id) => {
    expectError(
      thrown(() => open().parse(json({ context_id: id, text: 'x' }))),
      'invalid_option',
      /^context_id should be a non-empty string of at most 255 UTF-8 bytes$/,
      'context_id',
    );
  });

  it('keeps state for at most 1024 contexts: ids that never open do not grow it without bound', () => {
    const dialect = open();
    for (let i = 0; i <= 1024; i++) dialect.parse(json({ context_id: `c${i}`, text: ' ' }));
    // The oldest was forgotten: its next message counts as a first one again.
    expect(
      dialect.parse(json({ context_id: 'c0', text: ' ', voice_settings: { speed: 1.1 } })),
    ).toMatchObject({
      fields: { speed: 1.1 },
    });
    // The newest was not: a later message's settings are the dialect's repetition, not options.
    expect(
      dialect.parse(json({ context_id: 'c1024', text: 'x ', voice_settings: { speed: 1.1 } })),
    ).toMatchObject({
      fields: { text: 'x ' },
    });
    expect(
      (
        dialect.parse(json({ context_id: 'c1024', text: 'y ', voice_settings: { speed: 1.1 } })) as {
          fields: object;
        }
      ).fields,
    ).toStrictEqual({ text: 'y ' });
  });

  it('a refused first message leaves the context unopened: the corrected retry’s options count', () => {
    const dialect = open();
    expect(
      dialect.parse(json({ context_id: 'a', text: ' ', voice_settings: 'fast', flush: true })),
    ).toMatchObject({
      kind: 'refuse',
      context: 'a',
    });
    expect(dialect.parse(json({ context_id: 'a', text: ' ', voice_settings: { speed: 1.2 } }))).toMatchObject(
      {
        kind: 'append',
        fields: { speed: 1.2, text: ' ' },
      },
    );
    // The refused message's flush was not noted: close_context cuts.
    expect(dialect.parse(json({ context_id: 'a', close_context: true }))).toMatchObject({ drop: true });
  });
});

describe('elevenLabsDialect: frames', () => {
  const open = (multi: boolean, query = '') =>
    elevenLabsDialect(
      '21m00Tcm4TlvDq8ikWAM',
      multi,
      new URLSearchParams(`output_format=pcm_24000${query}`),
      engine,
    );
  /** 0.2 s of silence at 24 kHz. */
  const fifth = new Uint8Array(9600);
  const hi: WordTiming[] = [{ word: 'Hi', start_s: 0, end_s: 0.2 }];
  const there: WordTiming[] = [{ word: 'there', start_s: 0.2, end_s: 0.4 }];
  const frames = (out: OutgoingFrame | readonly OutgoingFrame[]) =>
    (Array.isArray(out) ? out : [out as OutgoingFrame]).map(sentJson);

  it('sends audio as base64 with no alignment when no words came before it', () => {
    const dialect = open(false);
    expect(
      frames(dialect.audio({ requestId: 'r1' }, new Uint8Array([1, 2]), { startS: 0, endS: 1 / 24000 })),
    ).toStrictEqual([{ audio: 'AQI=', isFinal: null, normalizedAlignment: null, alignment: null }]);
  });

  it('encodes only the bytes of a view', () => {
    const view = new Uint8Array([0xff, 1, 2, 3, 4, 0xff]).subarray(1, 5);
    const [frame] = frames(open(false).audio({ requestId: 'r1' }, view, { startS: 0, endS: 2 / 24000 }));
    expect(frame!.audio).toBe('AQIDBA==');
  });

  it('puts the words given for a request beside its next audio, once, timed from that message', () => {
    const dialect = open(false);
    expect(dialect.words({ requestId: 'r1' }, hi)).toBeUndefined();
    expect(dialect.words({ requestId: 'r2' }, [{ word: 'other', start_s: 0, end_s: 0.2 }])).toBeUndefined();
    const [first] = frames(dialect.audio({ requestId: 'r1' }, fifth, { startS: 0, endS: 0.2 }));
    const hiChars = {
      chars: ['H', 'i', ' '],
      charStartTimesMs: [0, 100, 200],
      charDurationsMs: [100, 100, 0],
    };
    expect(first).toStrictEqual({
      audio: Buffer.from(fifth).toString('base64'),
      isFinal: null,
      normalizedAlignment: hiChars,
      alignment: hiChars,
    });
    // The next message's times start again from its own first sample (ElevenLabs' default).
    dialect.words({ requestId: 'r1' }, there);
    const [second] = frames(dialect.audio({ requestId: 'r1' }, fifth, { startS: 0.2, endS: 0.4 }));
    expect(second!.alignment).toStrictEqual({
      chars: ['t', 'h', 'e', 'r', 'e', ' '],
      charStartTimesMs: [0, 40, 80, 120, 160, 200],
      charDurationsMs: [40, 40, 40, 40, 40, 0],
    });
    // Audio after the request's last word: a space over it, the silence it holds.
    expect(
      frames(dialect.audio({ requestId: 'r1' }, fifth, { startS: 0.4, endS: 0.6 }))[0]!.alignment,
    ).toStrictEqual({ chars: [' '], charStartTimesMs: [0], charDurationsMs: [200] });
    expect(
      frames(dialect.audio({ requestId: 'r2' }, fifth, { startS: 0, endS: 0.2 }))[0]!.alignment,
    ).toMatchObject({
      chars: ['o', 't', 'h', 'e', 'r', ' '],
    });
  });

  it('with sync_alignment, times the characters on the context’s clock, across its requests', () => {
    const dialect = open(true, '&sync_alignment=true');
    const turn = { requestId: 'r1', context: 'a' };
    dialect.words(turn, hi);
    frames(dialect.audio(turn, fifth, { startS: 0, endS: 0.2 }));
    dialect.words(turn, there);
    const [second] = frames(dialect.audio(turn, fifth, { startS: 0.2, endS: 0.4 }));
    expect((second!.alignment as { charStartTimesMs: number[] }).charStartTimesMs).toEqual([
      200, 240, 280, 320, 360, 400,
    ]);
    // A request that ended early (a failure): the context's next one goes on from its audio's end.
    dialect.ended!(turn);
    const next = { requestId: 'r2', context: 'a' };
    dialect.words(next, hi);
    const [third] = frames(dialect.audio(next, fifth, { startS: 0, endS: 0.2 }));
    expect((third!.alignment as { charStartTimesMs: number[] }).charStartTimesMs).toEqual([400, 500, 600]);
    // Another context has a clock of its own; a closed one starts over.
    const other = { requestId: 'r3', context: 'b' };
    dialect.words(other, hi);
    expect(frames(dialect.audio(other, fifth, { startS: 0, endS: 0.2 }))[0]!.alignment).toMatchObject({
      charStartTimesMs: [0, 100, 200],
    });
    dialect.contextClosed('a', undefined, undefined);
    const again = { requestId: 'r4', context: 'a' };
    dialect.words(again, hi);
    expect(frames(dialect.audio(again, fifth, { startS: 0, endS: 0.2 }))[0]!.alignment).toMatchObject({
      charStartTimesMs: [0, 100, 200],
    });
  });

  it.each([24000, 48000])(
    'cuts %d Hz audio into messages under 64 KB, at word starts, each timed from its own audio',
    (rate) => {
      const dialect = elevenLabsDialect(
        '21m00Tcm4TlvDq8ikWAM',
        true,
        new URLSearchParams(`output_format=pcm_${rate}`),
        engine,
      );
      const turn = { requestId: 'r1', context: 'a' };
      // 4 s of audio, a word every 0.3 s.
      const audio = new Uint8Array(4 * rate * 2).map((_, i) => i % 251);
      const words = Array.from({ length: 13 }, (_, i) => ({
        word: `w${i}`,
        start_s: 0.05 + 0.3 * i,
        end_s: Math.min(4, 0.35 + 0.3 * i),
      }));
      dialect.words(turn, words);
      const out = dialect.audio(turn, audio, { startS: 0, endS: 4 }) as readonly OutgoingFrame[];
      expect(out.length).toBeGreaterThan(4);
      for (const frame of out) expect(Buffer.byteLength(frame.data as string)).toBeLessThanOrEqual(64_000);
      const sent = out.map(sentJson);
      expect(Buffer.concat(sent.map((m) => Buffer.from(m.audio as string, 'base64'))).equals(audio)).toBe(
        true,
      );
      const aligned = sent.map((m) => m.alignment as CharAlignment);
      expect(aligned.flatMap((a) => a.chars).join('')).toBe(`${words.map((w) => w.word).join(' ')} `);
      // Pipecat's clock: each message's times, plus the ends of the messages before it.
      const ms = (bytes: number) => Math.round((1000 * bytes) / 2 / rate);
      let offset = 0;
      let clock = 0;
      for (const [i, a] of aligned.entries()) {
        const bytes = Buffer.from(sent[i]!.audio as string, 'base64').length;
        expect(bytes / 2 / rate).toBeLessThanOrEqual(1);
        // Each message's characters end with a space, at the end of its own audio.
        expect(a.chars.at(-1)).toBe(' ');
        const end = a.charStartTimesMs.at(-1)! + a.charDurationsMs.at(-1)!;
        expect(end).toBe(ms(offset + bytes) - ms(offset));
        expect(a.charStartTimesMs[0]).toBeGreaterThanOrEqual(0);
        // Its first word starts where that clock says.
        const firstWord = words.find((w) => w.word === a.chars.slice(0, a.chars.indexOf(' ')).join(''))!;
        expect(clock + a.charStartTimesMs[0]!).toBe(Math.round(firstWord.start_s * 1000));
        clock += end;
        offset += bytes;
      }
      expect(clock).toBe(4000);
    },
  );

  it('ends stream-input with isFinal, and forgets words left over once the request has ended', () => {
    const dialect = open(false);
    dialect.words({ requestId: 'r1' }, hi);
    expect(dialect.complete({ requestId: 'r1' }, FIGURES)).toStrictEqual({ isFinal: true });
    dialect.ended!({ requestId: 'r1' });
    expect(
      frames(dialect.audio({ requestId: 'r1' }, fifth, { startS: 0, endS: 0.2 }))[0]!.alignment,
    ).toBeNull();
    expect(dialect.complete({ requestId: 'r2' }, undefined)).toStrictEqual({ isFinal: true });
  });

  it('names the context on multi-stream audio and sends nothing on complete', () => {
    const dialect = open(true);
    dialect.words({ requestId: 'r1', context: 'a' }, hi);
    expect(
      frames(dialect.audio({ requestId: 'r1', context: 'a' }, fifth, { startS: 0, endS: 0.2 })),
    ).toStrictEqual([
      {
        audio: Buffer.from(fifth).toString('base64'),
        isFinal: null,
        normalizedAlignment: expect.objectContaining({ chars: ['H', 'i', ' '] }),
        alignment: expect.objectContaining({ chars: ['H', 'i', ' '] }),
        contextId: 'a',
      },
    ]);
    expect(dialect.complete({ requestId: 'r1', context: 'a' }, FIGURES)).toBeUndefined();
  });

  it('answers close_context with isFinal and the context, and heard when it cut', () => {
    const dialect = open(true);
    expect(dialect.contextClosed('a', undefined, undefined)).toStrictEqual({ isFinal: true, contextId: 'a' });
    expect(dialect.contextClosed('a', ['r1'], HEARD)).toStrictEqual({
      isFinal: true,
      contextId: 'a',
      heard: HEARD,
    });
  });

  it('sends nothing for start, marks and cancels, and opens with nothing', () => {
    const dialect = open(true);
    expect(dialect.opening('s1')).toEqual([]);
    expect(dialect.start({ requestId: 'r1', context: 'a' })).toBeUndefined();
    expect(dialect.mark({ requestId: 'r1', context: 'a' }, 'm', 1)).toBeUndefined();
    expect(dialect.cancelled('r1', ['r1'], HEARD, 'a')).toBeUndefined();
  });

  it.each([
    ['invalid_option', 1008],
    ['voice_not_found', 1008],
    ['context_closed', 1008],
    ['busy', 1008],
    ['internal_error', 1011],
    ['inference_failed', 1011],
  ] as const)('words a %s error with code %d', (code, closeCode) => {
    const dialect = open(true);
    expect(dialect.error(body(code, 'It failed.'), 'a')).toStrictEqual({
      message: 'It failed.',
      error: code,
      code: closeCode,
      contextId: 'a',
    });
    expect(dialect.error(body(code, 'It failed.'))).toStrictEqual({
      message: 'It failed.',
      error: code,
      code: closeCode,
    });
  });
});

describe('elevenLabsOutput', () => {
  // Every output_format ElevenLabs documents (its SDKs' AllowedOutputFormats).
  const outputs = new Map<string, VendorOutput>([
    ['mp3_22050_32', { format: 'mp3', sampleRate: 22050 }],
    ['mp3_24000_48', { format: 'mp3', sampleRate: 24000 }],
    ['mp3_44100_32', { format: 'mp3', sampleRate: 44100 }],
    ['mp3_44100_64', { format: 'mp3', sampleRate: 44100 }],
    ['mp3_44100_96', { format: 'mp3', sampleRate: 44100 }],
    ['mp3_44100_128', { format: 'mp3', sampleRate: 44100 }],
    ['mp3_44100_192', { format: 'mp3', sampleRate: 44100 }],
    ['pcm_8000', { format: 'pcm', sampleRate: 8000 }],
    ['pcm_16000', { format: 'pcm', sampleRate: 16000 }],
    ['pcm_22050', { format: 'pcm', sampleRate: 22050 }],
    ['pcm_24000', { format: 'pcm', sampleRate: 24000 }],
    ['pcm_32000', { format: 'pcm', sampleRate: 32000 }],
    ['pcm_44100', { format: 'pcm', sampleRate: 44100 }],
    ['pcm_48000', { format: 'pcm', sampleRate: 48000 }],
    ['ulaw_8000', { format: 'mulaw', sampleRate: 8000 }],
    ['alaw_8000', { format: 'alaw', sampleRate: 8000 }],
    ['opus_48000_32', { format: 'opus', sampleRate: 48000 }],
    ['opus_48000_64', { format: 'opus', sampleRate: 48000 }],
    ['opus_48000_96', { format: 'opus', sampleRate: 48000 }],
    ['opus_48000_128', { format: 'opus', sampleRate: 48000 }],
    ['opus_48000_192', { format: 'opus', sampleRate: 48000 }],
    ['wav_16000', { format: 'wav', sampleRate: 16000 }],
  ]);
  it.each([...outputs])('%s', (value, expected) => {
    expect(elevenLabsOutput(value, 'mp3_44100_128')).toStrictEqual(expected);
  });

  it('falls back when none is named', () => {
    expect(elevenLabsOutput(undefined, 'pcm_24000')).toStrictEqual({ format: 'pcm', sampleRate: 24000 });
  });

  it.each([
    [
      'flac_44100',
      /^output_format "flac_44100" is not supported; use pcm_<rate> \(8000, 16000, 22050, 24000, 32000, 44100, 48000\), ulaw_8000, alaw_8000, mp3_<rate>_<bitrate> or opus_48000_<bitrate>$/,
    ],
    ['PCM_16000', /^output_format "PCM_16000" is not supported/],
    ['mp3_44100_128_x', /^output_format "mp3_44100_128_x" is not supported/],
    [`${'x'.repeat(60)}`, new RegExp(`^output_format "${'x'.repeat(40)}" is not supported`)],
    [
      'pcm_11025',
      /^output_format pcm_11025: sample rate 11025 is not offered for it; use one of 8000, 16000, 22050, 24000, 32000, 44100, 48000$/,
    ],
    ['mp3_32000_64', /^output_format mp3_32000_64: sample rate 32000 is not offered for it/],
    ['mp3_16_128', /^output_format mp3_16_128: sample rate 16 is not offered for it/],
    [
      'opus_22050_64',
      /^output_format opus_22050_64: sample rate 22050 is not offered for it; use one of 8000, 16000, 24000, 48000$/,
    ],
  ])('refuses %s', (value, message) => {
    expectError(
      thrown(() => elevenLabsOutput(value, 'mp3_44100_128')),
      'invalid_option',
      message,
      'output_format',
    );
  });
});
