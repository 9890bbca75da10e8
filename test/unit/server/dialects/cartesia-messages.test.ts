/**
 * Cartesia's /tts/websocket (dialects/cartesia/socket.ts): which paths are its, its voice ids and
 * speeds, and what each message becomes, with the error (code, message, param) of every input
 * refused.
 */
import { describe, expect, it } from 'vitest';
import {
  CARTESIA_WS_PATH,
  cartesiaDialect,
  cartesiaSpeed,
  cartesiaVoiceId,
  isCartesiaSocketPath,
} from '../../../../dist/server/dialects/cartesia/socket.js';
import type { Command } from '../../../../dist/server/dialects/dialect.js';
import { CARTESIA_VOICES } from '../../../../dist/server/dialects/cartesia/voices.js';
import { engine, bytes, json, thrown, expectError, refusal } from './dialect-helpers.ts';

describe('isCartesiaSocketPath', () => {
  it.each([
    ['/tts/websocket', true],
    ['tts/websocket', true],
    ['//tts/websocket', true],
    ['/tts/websocket?api_key=k&cartesia_version=2024-06-10', true],
    [undefined, false],
    ['', false],
    ['/tts/websocket/', false],
    ['/tts/websockets', false],
    ['/v1/tts/websocket', false],
    ['/tts/bytes', false],
    ['/TTS/websocket', false],
  ] as const)('%j → %s', (path, expected) => {
    expect(isCartesiaSocketPath(path)).toBe(expected);
  });

  it('is named by CARTESIA_WS_PATH', () => {
    expect(CARTESIA_WS_PATH).toBe('/tts/websocket');
  });
});

describe('cartesiaVoiceId', () => {
  it.each([
    ['af_heart', 'af_heart'],
    [{ mode: 'id', id: 'af_sky' }, 'af_sky'],
    [{ id: 'a0e99841-438c-4a64-b679-ae501e7d6091' }, 'a0e99841-438c-4a64-b679-ae501e7d6091'],
    [{ mode: 'id', id: 'af_bella+af_sky', __experimental_controls: {} }, 'af_bella+af_sky'],
  ] as const)('%j → %s', (voice, id) => {
    expect(cartesiaVoiceId(voice)).toBe(id);
  });

  it.each([
    { mode: 'embedding', embedding: [0.1, 0.2] },
    { mode: 'embedding', id: 'af_heart' },
    { mode: 'embedding' },
  ])('refuses an embedding %j', (voice) => {
    expectError(
      thrown(() => cartesiaVoiceId(voice)),
      'invalid_option',
      /^voice embeddings are not supported here: Kokoro speaks its own voices; name one by its id, as \{"mode": "id", "id": "af_heart"\} \(a Kokoro voice or a mapped Cartesia id\)$/,
      'voice',
    );
  });

  it.each([
    undefined,
    null,
    '',
    5,
    true,
    ['af_heart'],
    {},
    { mode: 'id' },
    { mode: 'id', id: '' },
    { mode: 'id', id: 5 },
    { mode: 'clone', id: 'af_heart' },
  ])('refuses %j', (voice) => {
    expectError(
      thrown(() => cartesiaVoiceId(voice)),
      'invalid_option',
      /^voice should be a voice id, as "af_heart" or \{"mode": "id", "id": "af_heart"\}$/,
      'voice',
    );
  });
});

describe('cartesiaSpeed', () => {
  it.each([
    [{}, undefined],
    [{ speed: 1.2 }, 1.2],
    [{ speed: 0.6 }, 0.6],
    [{ speed: 'slow' }, 0.8],
    [{ speed: 'normal' }, 1],
    [{ speed: 'fast' }, 1.2],
    [{ generation_config: { speed: 0.9 } }, 0.9],
    [{ generation_config: { speed: 0.9 }, speed: 'fast' }, 0.9],
    [{ generation_config: { speed: 'slow' }, speed: 1.4 }, 0.8],
    [{ generation_config: {}, speed: 'slow' }, 0.8],
    [{ generation_config: null, speed: 1.1 }, 1.1],
  ] as const)('%j → %s', (fields, speed) => {
    expect(cartesiaSpeed(fields)).toBe(speed);
  });

  it.each([
    { speed: 'fastest' },
    { speed: 'Fast' },
    { speed: true },
    { speed: null },
    { speed: [1] },
    { generation_config: { speed: 'x' }, speed: 1 },
  ])('refuses %j', (fields) => {
    expectError(
      thrown(() => cartesiaSpeed(fields)),
      'invalid_option',
      /^speed should be a number \(0\.6 to 1\.5\) or slow, normal or fast$/,
      'speed',
    );
  });
});

describe('cartesiaDialect: messages', () => {
  const RAW = { container: 'raw', encoding: 'pcm_s16le', sample_rate: 24000 };
  const base = {
    model_id: 'sonic-2',
    voice: { mode: 'id', id: 'af_heart' },
    output_format: RAW,
    language: 'en',
  };
  const options = { voice: 'af_heart', format: 'pcm', sample_rate: 24000, markup: 'none' };
  /** How an append is taken without max_buffer_delay_ms: held up to Cartesia's default 3 s. */
  const HELD = { repeatsOptions: true, spaceSentences: true, holdMs: 3000 } as const;
  const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

  it('joins a context continuations into one utterance, ended by a request without continue', () => {
    const dialect = cartesiaDialect(engine);
    expect(dialect.contexts).toBe(true);
    expect(dialect.releaseIdleContexts).toBe(true);
    expect(
      dialect.parse(json({ ...base, transcript: 'Hello ', context_id: 'a', continue: true })),
    ).toStrictEqual({
      kind: 'append',
      fields: { ...options, request_id: 'c1', text: 'Hello ' },
      context: 'a',
      ...HELD,
    });
    expect(
      dialect.parse(json({ ...base, transcript: 'world.', context_id: 'a', continue: true })),
    ).toStrictEqual({
      kind: 'append',
      // A continuation's own id is ignored, as its other options are: the turn keeps its first id.
      fields: { ...options, request_id: 'c2', text: 'world.' },
      context: 'a',
      ...HELD,
    });
    expect(dialect.parse(json({ ...base, transcript: '', context_id: 'a', continue: false }))).toStrictEqual([
      {
        kind: 'append',
        fields: { ...options, request_id: 'c3', text: '' },
        context: 'a',
        ...HELD,
      },
      { kind: 'flush', fields: {}, context: 'a' },
    ]);
    expect(dialect.parse(json({ ...base, transcript: 'Again.', context_id: 'a' }))).toStrictEqual([
      {
        kind: 'append',
        fields: { ...options, request_id: 'c4', text: 'Again.' },
        context: 'a',
        ...HELD,
      },
      { kind: 'flush', fields: {}, context: 'a' },
    ]);
  });

  it('gives every message an id of its own', () => {
    const dialect = cartesiaDialect(engine);
    expect(dialect.parse(json({ ...base, transcript: 'a', context_id: 'a', continue: true }))).toMatchObject({
      fields: { request_id: 'c1' },
    });
    expect(dialect.parse(json({ ...base, transcript: 'b', context_id: 'b', continue: true }))).toMatchObject({
      fields: { request_id: 'c2' },
    });
    expect(dialect.parse(json({ ...base, transcript: 'a', context_id: 'a', continue: true }))).toMatchObject({
      fields: { request_id: 'c3' },
    });
  });

  it('reads timestamps, speed, flush and a mapped voice', () => {
    const dialect = cartesiaDialect(engine);
    expect(
      dialect.parse(
        json({
          ...base,
          voice: 'a0e99841-438c-4a64-b679-ae501e7d6091',
          output_format: { container: 'raw', encoding: 'pcm_mulaw', sample_rate: 8000 },
          transcript: 'Hi.',
          context_id: 'a',
          continue: true,
          add_timestamps: true,
          speed: 'fast',
          flush: true,
        }),
      ),
    ).toStrictEqual({
      kind: 'append',
      fields: {
        voice: 'am_michael',
        format: 'mulaw',
        sample_rate: 8000,
        markup: 'none',
        speed: 1.2,
        timestamps: true,
        request_id: 'c1',
        text: 'Hi.',
      },
      context: 'a',
      ...HELD,
      mark: 'flush',
    });
  });

  it.each(Object.entries(CARTESIA_VOICES))('maps Cartesia voice %s to %s', (id, kokoro) => {
    expect(
      cartesiaDialect(engine).parse(
        json({ ...base, voice: { mode: 'id', id }, transcript: 'x', context_id: 'a', continue: true }),
      ),
    ).toMatchObject({
      fields: { voice: kokoro },
    });
  });

  it('cancel drops the context, and its next request is a new utterance', () => {
    const dialect = cartesiaDialect(engine);
    dialect.parse(json({ ...base, transcript: 'Hello ', context_id: 'a', continue: true }));
    expect(dialect.parse(json({ context_id: 'a', cancel: true }))).toStrictEqual({
      kind: 'close-context',
      context: 'a',
      drop: true,
    });
    expect(dialect.parse(json({ ...base, transcript: 'Hi', context_id: 'a', continue: true }))).toMatchObject(
      {
        fields: { request_id: 'c2' },
      },
    );
  });

  it('gives a request that names no context a fresh one', () => {
    const dialect = cartesiaDialect(engine);
    const first = dialect.parse(json({ ...base, transcript: 'One.' })) as readonly Command[];
    const second = dialect.parse(json({ ...base, transcript: 'Two.' })) as readonly Command[];
    expect(first).toHaveLength(2);
    expect(first[0]).toMatchObject({ kind: 'append', context: expect.stringMatching(UUID) });
    expect(first[1]).toStrictEqual({
      kind: 'flush',
      fields: {},
      context: (first[0] as { context: string }).context,
    });
    expect((second[0] as { context: string }).context).toMatch(UUID);
    expect((second[0] as { context: string }).context).not.toBe((first[0] as { context: string }).context);
  });

  const refusals: [string, Record<string, unknown>, string, RegExp, string][] = [
    [
      'a transcript number',
      { ...base, transcript: 5 },
      'invalid_option',
      /^A generation request carries its text as a string: "transcript"$/,
      'transcript',
    ],
    [
      'no transcript',
      { ...base },
      'invalid_option',
      /carries its text as a string: "transcript"/,
      'transcript',
    ],
    [
      'continue "yes"',
      { ...base, transcript: 'x', continue: 'yes' },
      'invalid_option',
      /^continue should be true or false$/,
      'continue',
    ],
    [
      'an embedding',
      { ...base, transcript: 'x', voice: { mode: 'embedding', embedding: [0] } },
      'invalid_option',
      /^voice embeddings are not supported/,
      'voice',
    ],
    [
      'no voice',
      { ...base, transcript: 'x', voice: undefined },
      'invalid_option',
      /^voice should be a voice id/,
      'voice',
    ],
    [
      'an unknown voice',
      { ...base, transcript: 'x', voice: 'nope' },
      'voice_not_found',
      /^Unknown voice "nope": name a Kokoro voice/,
      'voice',
    ],
    [
      'no output_format',
      { ...base, transcript: 'x', output_format: undefined },
      'invalid_option',
      /^output_format should be an object/,
      'output_format',
    ],
    [
      'an mp3 container',
      { ...base, transcript: 'x', output_format: { container: 'mp3', sample_rate: 44100 } },
      'invalid_option',
      /container should be raw$/,
      'output_format',
    ],
    [
      'a wav container',
      { ...base, transcript: 'x', output_format: { ...RAW, container: 'wav' } },
      'invalid_option',
      /container should be raw$/,
      'output_format',
    ],
    [
      'pcm_s24le',
      { ...base, transcript: 'x', output_format: { ...RAW, encoding: 'pcm_s24le' } },
      'invalid_option',
      /encoding should be pcm_s16le, pcm_f32le, pcm_mulaw or pcm_alaw$/,
      'output_format',
    ],
    [
      'a bad speed',
      { ...base, transcript: 'x', speed: 'fastest' },
      'invalid_option',
      /^speed should be a number/,
      'speed',
    ],
    ...[-1, 5001, 1.5, '0', true].map(
      (delay) =>
        [
          `max_buffer_delay_ms ${JSON.stringify(delay)}`,
          { ...base, transcript: 'x', max_buffer_delay_ms: delay },
          'invalid_option',
          /^max_buffer_delay_ms should be a whole number of milliseconds from 0 to 5000 \(0: each transcript is spoken as it arrives; default 3000\)$/,
          'max_buffer_delay_ms',
        ] as [string, Record<string, unknown>, string, RegExp, string],
    ),
  ];
  it.each(refusals)('refuses %s in its context', (_name, message, code, text, param) => {
    const dialect = cartesiaDialect(engine);
    const refused = refusal(
      dialect.parse(json({ ...message, context_id: 'a', continue: message.continue ?? true })),
    );
    expectError(refused.error, code, text, param);
    expect(refused.context).toBe('a');
    // Nothing was taken: the context's next request is its first.
    expect(dialect.parse(json({ ...base, transcript: 'x', context_id: 'a', continue: true }))).toMatchObject({
      kind: 'append',
      fields: { request_id: 'c1' },
    });
  });

  it.each([
    [0, { generate: true, holdMs: 0 }],
    [250, { holdMs: 250 }],
    [5000, { holdMs: 5000 }],
    [null, { holdMs: 3000 }],
  ] as const)('max_buffer_delay_ms %j: %j', (delay, taken) => {
    const dialect = cartesiaDialect(engine);
    expect(
      dialect.parse(
        json({ ...base, transcript: 'Hi', context_id: 'a', continue: true, max_buffer_delay_ms: delay }),
      ),
    ).toStrictEqual({
      kind: 'append',
      fields: { ...options, request_id: 'c1', text: 'Hi' },
      context: 'a',
      repeatsOptions: true,
      spaceSentences: true,
      ...taken,
    });
  });

  it('answers a turn’s refused messages once: the rest of that turn passes in silence', () => {
    const dialect = cartesiaDialect(engine);
    const embedding = { ...base, voice: { mode: 'embedding', embedding: [0.5] } };
    const bad = (id: string, transcript: string, more: boolean) =>
      dialect.parse(json({ ...embedding, context_id: id, transcript, continue: more }));
    expectError(refusal(bad('a', 'One. ', true)).error, 'invalid_option', /^voice embeddings/, 'voice');
    expect(bad('a', 'Two. ', true)).toStrictEqual({ kind: 'keep-alive', context: 'a' });
    // Another context is answered for itself.
    expect(refusal(bad('b', 'One. ', true)).context).toBe('b');
    expect(bad('a', ' ', false)).toStrictEqual({ kind: 'keep-alive', context: 'a' });
    // That turn is over: the id's next turn is answered again.
    expect(refusal(bad('a', 'Three. ', true)).context).toBe('a');
    // A cancel ends a turn too.
    dialect.parse(json({ context_id: 'a', cancel: true }));
    expect(refusal(bad('a', 'Four. ', true)).context).toBe('a');
    // So does a last message that is taken.
    expect(dialect.parse(json({ ...base, context_id: 'a', transcript: 'Fine.' }))).toHaveLength(2);
    expect(refusal(bad('a', 'Five. ', true)).context).toBe('a');
    // A turn of one message, refused, leaves nothing behind.
    expect(refusal(bad('c', 'Alone.', false)).context).toBe('c');
    expect(refusal(bad('c', 'Again.', true)).context).toBe('c');
  });

  it('refuses in a fresh context when the request names none', () => {
    const refused = refusal(cartesiaDialect(engine).parse(json({ ...base, transcript: 5 })));
    expectError(refused.error, 'invalid_option', /carries its text as a string/, 'transcript');
    expect(refused.context).toMatch(UUID);
  });

  it.each([5, '', null, 'x'.repeat(256)])('throws for context_id %j', (id) => {
    expectError(
      thrown(() => cartesiaDialect(engine).parse(json({ ...base, transcript: 'x', context_id: id }))),
      'invalid_option',
      /^context_id should be a non-empty string of at most 255 UTF-8 bytes; got /,
      'context_id',
    );
  });

  it('throws for what is not a JSON object', () => {
    expectError(
      thrown(() => cartesiaDialect(engine).parse(bytes('Hello'))),
      'invalid_option',
      /^Send JSON generation requests such as/,
      'transcript',
    );
    expectError(
      thrown(() => cartesiaDialect(engine).parse(bytes('{"transcript": '))),
      'invalid_json',
      /is not valid JSON/,
      undefined,
    );
  });
});
