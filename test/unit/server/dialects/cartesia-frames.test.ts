/**
 * Cartesia's frames and output formats (dialects/cartesia/socket.ts, voices.ts): what each session
 * event is sent as, each `output_format` as the server's format, and sentences sent with nothing
 * between them.
 */
import { describe, expect, it } from 'vitest';
import { FORMATS } from '../../../../dist/protocol/formats.js';
import { cartesiaDialect } from '../../../../dist/server/dialects/cartesia/socket.js';
import { TtsError } from '../../../../dist/server/http/errors.js';
import { startsSentenceAfterOne } from '../../../../dist/server/session/utterance.js';
import { cartesiaOutput, pcm16ToFloat32 } from '../../../../dist/server/dialects/cartesia/voices.js';
import type { VendorOutput } from '../../../../dist/server/dialects/vendor-voices.js';
import {
  engine,
  json,
  thrown,
  expectError,
  SPAN,
  oneFrame,
  sentJson,
  pcm16,
  floats,
  body,
  HEARD,
  FIGURES,
} from './dialect-helpers.ts';

describe('startsSentenceAfterOne: sentences sent with nothing between them (Pipecat’s)', () => {
  it.each([
    ['Hello there.', 'How are you?', true],
    ['Really?', 'Yes.', true],
    ['Wow!', '"Great," she said.', true],
    ['He said "stop."', 'Then he left.', true],
    ['It ended…', 'Then more.', true],
    ['(See above.)', 'Next.', true],
    ['', 'Hello.', false],
    ['Hello there. ', 'How', false],
    ['Hello there.', ' How', false],
    ['The value is 3.', '5 percent', false],
    ['Visit example.', 'com today', false],
    ['Hello', 'World', false],
    ['你好。', '再见。', false],
  ] as const)('%j then %j: %s', (before, next, expected) => {
    expect(startsSentenceAfterOne(before, next)).toBe(expected);
  });
});

describe('cartesiaDialect: frames', () => {
  const base = { voice: 'af_heart', transcript: 'x', continue: true };

  it('sends audio as chunk messages, as it is for pcm_s16le', () => {
    const dialect = cartesiaDialect(engine);
    dialect.parse(
      json({
        ...base,
        context_id: 'a',
        output_format: { container: 'raw', encoding: 'pcm_s16le', sample_rate: 24000 },
      }),
    );
    const audio = pcm16([0, 16384, -32768]);
    const first = sentJson(oneFrame(dialect.audio({ requestId: 'c1', context: 'a' }, audio, SPAN)));
    expect(first).toStrictEqual({
      type: 'chunk',
      data: Buffer.from(audio).toString('base64'),
      done: false,
      status_code: 206,
      step_time: expect.any(Number),
      flush_id: 1,
      context_id: 'a',
    });
    expect(first.step_time).toBe(0);
    const second = sentJson(oneFrame(dialect.audio({ requestId: 'c1', context: 'a' }, audio, SPAN)));
    expect(second.step_time).toBeGreaterThanOrEqual(0);
    expect(Math.round((second.step_time as number) * 10)).toBeCloseTo((second.step_time as number) * 10, 6);
  });

  it('widens the audio of a pcm_f32le request to 32-bit floats', () => {
    const dialect = cartesiaDialect(engine);
    dialect.parse(
      json({
        ...base,
        context_id: 's',
        output_format: { container: 'raw', encoding: 'pcm_s16le', sample_rate: 24000 },
      }),
    );
    dialect.parse(
      json({
        ...base,
        context_id: 'f',
        output_format: { container: 'raw', encoding: 'pcm_f32le', sample_rate: 16000 },
      }),
    );
    const samples = [0, 1, -1, 16384, -16384, 32767, -32768];
    const frame = sentJson(oneFrame(dialect.audio({ requestId: 'f2', context: 'f' }, pcm16(samples), SPAN)));
    const data = Buffer.from(frame.data as string, 'base64');
    expect(data.length).toBe(samples.length * 4);
    expect(floats(data)).toEqual(samples.map((s) => s / 32768));
    expect(floats(data)).toEqual([0, 1 / 32768, -1 / 32768, 0.5, -0.5, 0.999969482421875, -1]);
    expect(frame.context_id).toBe('f');
    const plain = sentJson(oneFrame(dialect.audio({ requestId: 'c1', context: 's' }, pcm16(samples), SPAN)));
    expect(Buffer.from(plain.data as string, 'base64')).toEqual(Buffer.from(pcm16(samples)));
  });

  it('answers a flush with flush_done; chunks carry the number of the flush they come before', () => {
    const dialect = cartesiaDialect(engine);
    const turn = { requestId: 'c1', context: 'a' };
    const flushId = () => sentJson(oneFrame(dialect.audio(turn, pcm16([1, 2]), SPAN))).flush_id;
    expect(flushId()).toBe(1);
    expect(dialect.mark(turn, 'flush', 0.5)).toStrictEqual({
      type: 'flush_done',
      done: false,
      flush_done: true,
      flush_id: 1,
      status_code: 206,
      context_id: 'a',
    });
    expect(flushId()).toBe(2);
    expect(dialect.mark(turn, 'flush', 0.9)).toMatchObject({ flush_id: 2 });
    // Each turn counts its own, from 1.
    expect(
      sentJson(oneFrame(dialect.audio({ requestId: 'c2', context: 'b' }, pcm16([1]), SPAN))).flush_id,
    ).toBe(1);
    dialect.ended!(turn);
    expect(flushId()).toBe(1);
  });

  it('carries at most 16384 bytes of audio in a chunk, as Cartesia does: 8192 of PCM16 widened to floats', () => {
    const dialect = cartesiaDialect(engine);
    expect(dialect.maxAudioBytes!({ requestId: 'c1', context: 'a' })).toBe(16_384);
    expect(dialect.maxAudioBytes!({ requestId: 'f2', context: 'a' })).toBe(8192);
  });

  it('sends words as timestamps messages', () => {
    const dialect = cartesiaDialect(engine);
    expect(
      dialect.words({ requestId: 'c1', context: 'a' }, [
        { word: 'Hello', start_s: 0, end_s: 0.32 },
        { word: 'world', start_s: 0.32, end_s: 0.71 },
      ]),
    ).toStrictEqual({
      type: 'timestamps',
      done: false,
      status_code: 206,
      context_id: 'a',
      word_timestamps: { words: ['Hello', 'world'], start: [0, 0.32], end: [0.32, 0.71] },
    });
  });

  it('ends a request with done, and a cancel with done, cancelled and heard', () => {
    const dialect = cartesiaDialect(engine);
    expect(dialect.complete({ requestId: 'c1', context: 'a' }, FIGURES)).toStrictEqual({
      type: 'done',
      done: true,
      status_code: 200,
      context_id: 'a',
    });
    expect(dialect.contextClosed('a', ['c1'], HEARD)).toStrictEqual({
      type: 'done',
      done: true,
      status_code: 200,
      context_id: 'a',
      cancelled: true,
      heard: HEARD,
    });
    expect(dialect.contextClosed('a', [], undefined)).toStrictEqual({
      type: 'done',
      done: true,
      status_code: 200,
      context_id: 'a',
      cancelled: true,
    });
  });

  it('sends nothing for start, marks and cancels, and opens with nothing', () => {
    const dialect = cartesiaDialect(engine);
    expect(dialect.opening('s1')).toEqual([]);
    expect(dialect.start({ requestId: 'c1', context: 'a' })).toBeUndefined();
    expect(dialect.mark({ requestId: 'c1', context: 'a' }, 'm', 1)).toBeUndefined();
    expect(dialect.cancelled('c1', ['c1'], HEARD, 'a')).toBeUndefined();
    expect(dialect.defaults).toEqual({});
  });

  it.each([
    ['context_closed', 409, 'context closed'],
    ['too_many_contexts', 429, 'too many contexts'],
    ['invalid_option', 400, 'invalid option'],
    ['voice_not_found', 400, 'voice not found'],
    ['busy', 503, 'busy'],
    ['internal_error', 500, 'internal error'],
  ] as const)('words a %s error with status %d', (code, status, title) => {
    const dialect = cartesiaDialect(engine);
    expect(dialect.error(body(code, 'It failed.', 'c7'), 'a')).toStrictEqual({
      type: 'error',
      done: true,
      status_code: status,
      error: 'It failed.',
      title,
      message: 'It failed.',
      error_code: code,
      request_id: 'c7',
      context_id: 'a',
    });
    expect(dialect.error(body(code, 'It failed.'))).toStrictEqual({
      type: 'error',
      done: true,
      status_code: status,
      error: 'It failed.',
      title,
      message: 'It failed.',
      error_code: code,
    });
  });
});

describe('cartesiaOutput', () => {
  const ALL = ['raw', 'wav', 'mp3'];
  const outputs: [Record<string, unknown>, readonly string[], VendorOutput][] = [
    [
      { container: 'raw', encoding: 'pcm_s16le', sample_rate: 16000 },
      ['raw'],
      { format: 'pcm', sampleRate: 16000 },
    ],
    [
      { container: 'raw', encoding: 'pcm_f32le', sample_rate: 24000 },
      ['raw'],
      { format: 'pcm', sampleRate: 24000, float: true },
    ],
    [
      { container: 'raw', encoding: 'pcm_mulaw', sample_rate: 8000 },
      ['raw'],
      { format: 'mulaw', sampleRate: 8000 },
    ],
    [
      { container: 'raw', encoding: 'pcm_alaw', sample_rate: 8000 },
      ['raw'],
      { format: 'alaw', sampleRate: 8000 },
    ],
    [
      { container: 'wav', encoding: 'pcm_s16le', sample_rate: 22050 },
      ALL,
      { format: 'wav', sampleRate: 22050 },
    ],
    [{ container: 'mp3', sample_rate: 44100, bit_rate: 128000 }, ALL, { format: 'mp3', sampleRate: 44100 }],
    [
      { container: 'mp3', encoding: 'pcm_f32le', sample_rate: 24000 },
      ALL,
      { format: 'mp3', sampleRate: 24000 },
    ],
    ...FORMATS.pcm.rates.map((rate): [Record<string, unknown>, readonly string[], VendorOutput] => [
      { container: 'raw', encoding: 'pcm_s16le', sample_rate: rate },
      ['raw'],
      { format: 'pcm', sampleRate: rate },
    ]),
  ];
  it.each(outputs)('%j in %j', (value, containers, expected) => {
    expect(cartesiaOutput(value, containers)).toStrictEqual(expected);
  });

  const refusals: [unknown, readonly string[], RegExp][] = [
    [null, ['raw'], /^output_format should be an object such as \{"container": "raw"/],
    ['raw', ['raw'], /^output_format should be an object/],
    [[], ['raw'], /^output_format should be an object/],
    [undefined, ['raw'], /^output_format should be an object/],
    [{ container: 'wav', encoding: 'pcm_s16le', sample_rate: 24000 }, ['raw'], /: container should be raw$/],
    [{ container: 'mp3', sample_rate: 24000 }, ['raw', 'wav'], /: container should be raw or wav$/],
    [{ encoding: 'pcm_s16le', sample_rate: 24000 }, ['raw'], /: container should be raw$/],
    [
      { container: 'raw', encoding: 'pcm_s16le', sample_rate: '24000' },
      ['raw'],
      /: sample_rate should be a number$/,
    ],
    [{ container: 'raw', encoding: 'pcm_s16le' }, ['raw'], /: sample_rate should be a number$/],
    [
      { container: 'raw', sample_rate: 24000 },
      ['raw'],
      /: encoding should be pcm_s16le, pcm_f32le, pcm_mulaw or pcm_alaw$/,
    ],
    [
      { container: 'raw', encoding: 'pcm_s24le', sample_rate: 8000 },
      ['raw'],
      /: encoding should be pcm_s16le, pcm_f32le, pcm_mulaw or pcm_alaw$/,
    ],
    [
      { container: 'raw', encoding: 'toString', sample_rate: 8000 },
      ['raw'],
      /: encoding should be pcm_s16le/,
    ],
    [
      { container: 'wav', encoding: 'pcm_f32le', sample_rate: 24000 },
      ALL,
      /: a wav container holds pcm_s16le here$/,
    ],
    [
      { container: 'wav', encoding: 'pcm_mulaw', sample_rate: 8000 },
      ALL,
      /: a wav container holds pcm_s16le here$/,
    ],
    [
      { container: 'raw', encoding: 'pcm_mulaw', sample_rate: 16000 },
      ['raw'],
      new RegExp(`: sample rate 16000 is not offered for it; use one of ${FORMATS.mulaw.rates.join(', ')}$`),
    ],
    [
      { container: 'raw', encoding: 'pcm_s16le', sample_rate: 44000 },
      ['raw'],
      new RegExp(`: sample rate 44000 is not offered for it; use one of ${FORMATS.pcm.rates.join(', ')}$`),
    ],
    [
      { container: 'raw', encoding: 'pcm_f32le', sample_rate: 12000 },
      ['raw'],
      /sample rate 12000 is not offered/,
    ],
    [{ container: 'mp3', sample_rate: 32000 }, ALL, /sample rate 32000 is not offered/],
    [
      { container: 'wav', encoding: 'pcm_s16le', sample_rate: 11025 },
      ALL,
      /sample rate 11025 is not offered/,
    ],
  ];
  it.each(refusals)('refuses %j in %j', (value, containers, message) => {
    const err = thrown(() => cartesiaOutput(value, containers));
    expectError(err, 'invalid_option', message, 'output_format');
    expect((err as TtsError).message).toMatch(/^output_format /);
  });
});

describe('pcm16ToFloat32', () => {
  it('divides each sample by 32768', () => {
    const out = pcm16ToFloat32(pcm16([0, 1, -1, 16384, -16384, 32767, -32768]));
    expect(out.length).toBe(28);
    expect(floats(out)).toEqual([0, 1 / 32768, -1 / 32768, 0.5, -0.5, 0.999969482421875, -1]);
  });

  it('ignores an odd trailing byte and takes nothing to nothing', () => {
    expect(floats(pcm16ToFloat32(new Uint8Array([0x00, 0x40, 0xff])))).toEqual([0.5]);
    expect(pcm16ToFloat32(new Uint8Array([0x7f])).length).toBe(0);
    expect(pcm16ToFloat32(new Uint8Array(0)).length).toBe(0);
  });

  it('reads a view from its byte offset, and only its bytes', () => {
    const buffer = new Uint8Array([0xaa, 0x00, 0x80, 0x00, 0x40, 0xbb, 0xcc]).buffer;
    const view = new Uint8Array(buffer, 1, 4);
    const out = pcm16ToFloat32(view);
    expect(out.byteOffset).toBe(0);
    expect(out.length).toBe(8);
    expect(floats(out)).toEqual([-1, 0.5]);
    expect(floats(pcm16ToFloat32(new Uint8Array(buffer, 2, 2)))).toEqual([128 / 32768]);
  });
});
