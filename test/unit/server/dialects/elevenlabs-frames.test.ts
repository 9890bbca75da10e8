/**
 * ElevenLabs' frames and output formats (dialects/elevenlabs/socket.ts, alignment.ts, voices.ts):
 * what each session event is sent as, and each `output_format` as the server's format.
 */
import { describe, expect, it } from 'vitest';
import type { WordTiming } from '../../../../dist/model/engine.js';
import type { CharAlignment } from '../../../../dist/server/dialects/elevenlabs/alignment.js';
import { elevenLabsDialect } from '../../../../dist/server/dialects/elevenlabs/socket.js';
import type { OutgoingFrame } from '../../../../dist/server/dialects/dialect.js';
import { elevenLabsOutput } from '../../../../dist/server/dialects/elevenlabs/voices.js';
import type { VendorOutput } from '../../../../dist/server/dialects/vendor-voices.js';
import { engine, thrown, expectError, sentJson, body, HEARD, FIGURES } from './dialect-helpers.ts';

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
