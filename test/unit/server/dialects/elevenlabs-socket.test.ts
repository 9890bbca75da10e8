/**
 * ElevenLabs' sockets (dialects/elevenlabs/socket.ts): which paths are its, what a connection's
 * query becomes, and what each stream-input message becomes, with the error (code, message,
 * param) of every input refused.
 */
import { describe, expect, it } from 'vitest';
import {
  ELEVENLABS_DEFAULT_FORMAT,
  elevenLabsDialect,
  elevenLabsSocketPath,
} from '../../../../dist/server/dialects/elevenlabs/socket.js';
import { TtsError } from '../../../../dist/server/http/errors.js';
import { ELEVENLABS_VOICES } from '../../../../dist/server/dialects/elevenlabs/voices.js';
import { engine, bytes, json, thrown, expectError, refusal } from './dialect-helpers.ts';

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
