/**
 * ElevenLabs' audio pieces: the characters of a message's words, timed to cover its audio
 * exactly, and the cuts that keep every message under 64 KB with whole units of audio.
 */
import { describe, expect, it } from 'vitest';
import type { WordTiming } from '../../../../dist/model/engine.js';
import { audioCuts } from '../../../../dist/model/audio/cuts.js';
import { OggWriter } from '../../../../dist/model/audio/ogg.js';
import {
  MAX_MESSAGE_BYTES,
  MAX_PIECE_S,
  MAX_WORD_CHARS,
  audioPieces,
  charAlignment,
  shiftAlignment,
  type AudioPiece,
  type PieceLimits,
} from '../../../../dist/server/dialects/elevenlabs/alignment.js';

const word = (text: string, start: number, end: number): WordTiming => ({
  word: text,
  start_s: start,
  end_s: end,
});

describe('charAlignment', () => {
  it('shares a word’s time among its letters; the space after it lasts until the next word', () => {
    expect(charAlignment([word('Hey', 0.1, 0.4), word('you', 0.5, 0.8)], 0, 1000)).toStrictEqual({
      chars: ['H', 'e', 'y', ' ', 'y', 'o', 'u', ' '],
      charStartTimesMs: [100, 200, 300, 400, 500, 600, 700, 800],
      charDurationsMs: [100, 100, 100, 100, 100, 100, 100, 200],
    });
    expect(charAlignment([], 0, 1000)).toStrictEqual({
      chars: [],
      charStartTimesMs: [],
      charDurationsMs: [],
    });
  });

  it('clamps the words into the span: the last character ends with it', () => {
    expect(charAlignment([word('ab', 0.05, 0.5)], 100, 300)).toStrictEqual({
      chars: ['a', 'b', ' '],
      charStartTimesMs: [100, 175, 300],
      charDurationsMs: [75, 125, 0],
    });
  });

  it('counts a character beyond 16 bits (an emoji) as one, and times a word of no duration', () => {
    expect(charAlignment([word('😀a', 1, 1.2)], 1000, 1200)).toStrictEqual({
      chars: ['😀', 'a', ' '],
      charStartTimesMs: [1000, 1100, 1200],
      charDurationsMs: [100, 100, 0],
    });
    expect(charAlignment([word('ab', 0.5, 0.5)], 500, 500)).toStrictEqual({
      chars: ['a', 'b', ' '],
      charStartTimesMs: [500, 500, 500],
      charDurationsMs: [0, 0, 0],
    });
  });

  it(`carries the first ${MAX_WORD_CHARS} characters of a longer word`, () => {
    const out = charAlignment([word('x'.repeat(MAX_WORD_CHARS + 50), 0, 1)], 0, 1000);
    expect(out.chars).toHaveLength(MAX_WORD_CHARS + 1);
  });

  const cases: [WordTiming[], number, number][] = [
    [[word('seven', 0.0123, 0.4567)], 0, 500],
    [
      [word('Hello,', 0.037, 0.391), word('wörld', 0.391, 0.999), word('naïve😀café', 1.0004, 1.7777)],
      0,
      1800,
    ],
    [[word('a', 2, 2.0011), word('abcdefghijklmnop', 2.0011, 2.3)], 1990, 2400],
  ];
  it.each(cases)(
    'keeps lengths equal and times whole, each character ending where the next starts (%#)',
    (words, from, to) => {
      const out = charAlignment(words, from, to);
      expect(out.chars).toHaveLength(words.reduce((n, w) => n + [...w.word].length + 1, 0));
      expect(out.charStartTimesMs).toHaveLength(out.chars.length);
      expect(out.charDurationsMs).toHaveLength(out.chars.length);
      expect([...out.charStartTimesMs, ...out.charDurationsMs].every(Number.isInteger)).toBe(true);
      expect(out.charDurationsMs.every((d) => d >= 0)).toBe(true);
      const ends = out.charStartTimesMs.map((s, i) => s + out.charDurationsMs[i]!);
      expect(ends.slice(0, -1)).toEqual(out.charStartTimesMs.slice(1));
      expect(ends.at(-1)).toBe(to);
      expect(out.charStartTimesMs[0]).toBe(Math.max(from, Math.round(words[0]!.start_s * 1000)));
    },
  );

  it('shiftAlignment moves every start, and nothing else', () => {
    const out = charAlignment([word('Hi', 1, 1.2)], 1000, 1300);
    expect(shiftAlignment(out, -1000)).toStrictEqual({
      chars: ['H', 'i', ' '],
      charStartTimesMs: [0, 100, 200],
      charDurationsMs: [100, 100, 100],
    });
  });
});

/** PCM16 bytes for `seconds` at `rate`, not all zero. */
const pcm = (seconds: number, rate = 24000) =>
  new Uint8Array(Math.round(seconds * rate) * 2).map((_, i) => (i * 7) % 256);

const limitsFor = (
  bytes: Uint8Array,
  format: 'pcm' | 'mulaw' | 'mp3' | 'opus' = 'pcm',
  timed = true,
): PieceLimits => ({
  cuts: audioCuts(format, bytes),
  envelopeBytes: 200,
  charBytes: (c) => 2 * (Buffer.byteLength(JSON.stringify(c)) + 21),
  timed,
});

/** What a message of this piece would take at most, as the limits count it. */
const messageBytes = (piece: AudioPiece, limits: PieceLimits) =>
  limits.envelopeBytes +
  Math.ceil(piece.bytes.length / 3) * 4 +
  piece.alignment.chars.reduce((n, c) => n + limits.charBytes(c), 0);

/**
 * The pieces as Pipecat's WebSocket service reads them (times relative to each message): its
 * words and their starts (ms), its clock at the end, and the pieces that completed no word
 * (which do not move its clock).
 */
function pipecatClock(pieces: AudioPiece[]) {
  let clock = 0;
  let partial = '';
  let partialStart = 0;
  const words: string[] = [];
  const starts: number[] = [];
  let stalled = 0;
  for (const piece of pieces) {
    const { chars, charStartTimesMs, charDurationsMs } = piece.alignment;
    let completed = 0;
    chars.forEach((char, i) => {
      if (char === ' ') {
        if (partial) {
          words.push(partial);
          starts.push(partialStart);
          partial = '';
          completed++;
        }
      } else {
        if (!partial) partialStart = clock + charStartTimesMs[i]! - piece.startMs;
        partial += char;
      }
    });
    if (completed > 0) clock += charStartTimesMs.at(-1)! + charDurationsMs.at(-1)! - piece.startMs;
    else stalled++;
  }
  return { words, starts, clock, stalled };
}

/** The checks every cutting must pass. */
function expectPieces(
  pieces: AudioPiece[],
  bytes: Uint8Array,
  words: WordTiming[],
  limits: PieceLimits,
): void {
  expect(Buffer.concat(pieces.map((p) => p.bytes)).equals(Buffer.from(bytes))).toBe(true);
  expect(
    pieces
      .flatMap((p) => p.alignment.chars)
      .join('')
      .split(' ')
      .filter(Boolean),
  ).toEqual(words.map((w) => w.word));
  for (const piece of pieces) expect(messageBytes(piece, limits)).toBeLessThanOrEqual(MAX_MESSAGE_BYTES);
  expect(pieces.slice(1).map((p) => p.startMs)).toEqual(pieces.slice(0, -1).map((p) => p.endMs));
  for (const { alignment, startMs, endMs } of pieces) {
    expect(alignment.chars.length).toBeGreaterThan(0);
    expect(alignment.charStartTimesMs.length).toBe(alignment.chars.length);
    expect(alignment.charDurationsMs.length).toBe(alignment.chars.length);
    expect(Math.min(...alignment.charStartTimesMs)).toBeGreaterThanOrEqual(startMs);
    expect(alignment.charStartTimesMs.at(-1)! + alignment.charDurationsMs.at(-1)!).toBe(endMs);
  }
}

describe('audioPieces', () => {
  it('keeps a short piece whole, its characters covering its audio', () => {
    const bytes = pcm(0.5);
    const words = [word('Hello', 2.05, 2.3), word('there.', 2.3, 2.5)];
    const pieces = audioPieces(bytes, { startS: 2, endS: 2.5 }, words, limitsFor(bytes));
    expect(pieces).toHaveLength(1);
    expect(pieces[0]).toMatchObject({ startMs: 2000, endMs: 2500 });
    expect(pieces[0]!.alignment.chars.join('')).toBe('Hello there. ');
    expect(pieces[0]!.alignment.charStartTimesMs[0]).toBe(2050);
  });

  // Words as Kokoro times them: each runs until the next starts, the last until the audio ends.
  const tiled = (starts: number[], end: number) =>
    starts.map((start, i) => word(`word${i}`, start, starts[i + 1] ?? end));

  it.each([8000, 16000, 24000, 32000, 44100, 48000])(
    'cuts %d Hz PCM in whole samples, at most a second and 64 KB a piece, each completing a word',
    (rate) => {
      const bytes = pcm(5, rate);
      // Words of 0.15 to 0.6 s, and a last one with 0.4 s of silence after it.
      const starts = [0.1, 0.25, 0.85, 1.0, 1.6, 1.8, 2.3, 2.5, 3.1, 3.3, 3.9, 4.1];
      const words = tiled(starts, 5);
      const limits = limitsFor(bytes);
      const pieces = audioPieces(bytes, { startS: 0, endS: 5 }, words, limits);
      expectPieces(pieces, bytes, words, limits);
      for (const piece of pieces) {
        expect(piece.bytes.length % 2).toBe(0);
        expect(piece.bytes.length / 2 / rate).toBeLessThanOrEqual(MAX_PIECE_S);
      }
      // Pipecat's clock places every word where it starts, and ends with the audio.
      const clock = pipecatClock(pieces);
      expect(clock.stalled).toBe(0);
      expect(clock.words).toEqual(words.map((w) => w.word));
      expect(clock.starts).toEqual(starts.map((s) => Math.round(s * 1000)));
      expect(clock.clock).toBe(5000);
    },
  );

  it('gives a pause longer than two pieces a space over it: only there does a piece complete no word', () => {
    const bytes = pcm(4);
    const words = tiled([0.1, 3.3], 4);
    const limits = limitsFor(bytes);
    const pieces = audioPieces(bytes, { startS: 0, endS: 4 }, words, limits);
    expectPieces(pieces, bytes, words, limits);
    expect(pieces.length).toBeGreaterThanOrEqual(5);
    const clock = pipecatClock(pieces);
    expect(clock.words).toEqual(['word0', 'word1']);
    expect(clock.stalled).toBeGreaterThan(0);
    expect(pieces.filter((p) => p.alignment.chars.join('') === ' ').length).toBe(clock.stalled);
  });

  it('puts words timed past the audio, or given with none, in a piece of no audio', () => {
    const empty = new Uint8Array(0);
    expect(
      audioPieces(empty, { startS: 1, endS: 1 }, [word('late', 1.2, 1.4)], limitsFor(empty)),
    ).toStrictEqual([
      {
        bytes: empty,
        startMs: 1000,
        endMs: 1000,
        alignment: {
          chars: ['l', 'a', 't', 'e', ' '],
          charStartTimesMs: [1000, 1000, 1000, 1000, 1000],
          charDurationsMs: [0, 0, 0, 0, 0],
        },
      },
    ]);
    expect(audioPieces(empty, { startS: 1, endS: 1 }, [], limitsFor(empty))[0]!.alignment.chars).toEqual([
      ' ',
    ]);
  });

  it('gives no characters to a request whose words are not timed', () => {
    const bytes = pcm(3);
    const pieces = audioPieces(bytes, { startS: 0, endS: 3 }, [], limitsFor(bytes, 'pcm', false));
    expect(pieces.length).toBeGreaterThanOrEqual(3);
    for (const piece of pieces) expect(piece.alignment.chars).toEqual([]);
    expect(Buffer.concat(pieces.map((p) => p.bytes)).equals(Buffer.from(bytes))).toBe(true);
  });

  it('never makes a message of more than 64 KB, even with a word of many characters', () => {
    const bytes = pcm(2, 48000);
    const words = [word('x'.repeat(2000), 0, 1.5), word('y', 1.5, 2)];
    const limits = limitsFor(bytes);
    const pieces = audioPieces(bytes, { startS: 0, endS: 2 }, words, limits);
    for (const piece of pieces) expect(messageBytes(piece, limits)).toBeLessThanOrEqual(MAX_MESSAGE_BYTES);
    expect(Buffer.concat(pieces.map((p) => p.bytes)).equals(Buffer.from(bytes))).toBe(true);
  });

  it('cuts MP3 between frames and Ogg between pages', () => {
    // MPEG-1 layer III, 128 kbit/s, 44.1 kHz, no padding: 417-byte frames of 1152 samples.
    const frame = new Uint8Array(417);
    frame.set([0xff, 0xfb, 0x90, 0x40]);
    const frames = 200;
    const mp3 = new Uint8Array(417 * frames);
    for (let i = 0; i < frames; i++) mp3.set(frame, i * 417);
    const seconds = (frames * 1152) / 44100;
    const words = tiled(
      Array.from({ length: 15 }, (_, i) => 0.3 * i),
      seconds,
    );
    const limits = limitsFor(mp3, 'mp3');
    const pieces = audioPieces(mp3, { startS: 0, endS: seconds }, words, limits);
    expectPieces(pieces, mp3, words, limits);
    expect(pieces.length).toBeGreaterThan(4);
    for (const piece of pieces) expect(piece.bytes.length % 417).toBe(0);
    expect(pipecatClock(pieces).stalled).toBe(0);

    const writer = new OggWriter(1234);
    const ogg = Buffer.concat(
      Array.from({ length: 40 }, (_, i) =>
        writer.page([new Uint8Array(2000).fill(i)], { granulePosition: BigInt((i + 1) * 960) }),
      ),
    );
    const pages = audioCuts('opus', ogg);
    const found: number[] = [];
    for (let at = 0; at < ogg.length; at = pages.after(at)) found.push(at);
    expect(found).toHaveLength(40);
    for (const start of found) expect(ogg.subarray(start, start + 4).toString('latin1')).toBe('OggS');
    expect(pages.floor(found[3]! + 10)).toBe(found[3]);
  });
});

describe('audioCuts', () => {
  it.each([
    ['pcm', 2],
    ['wav', 2],
    ['mulaw', 1],
    ['alaw', 1],
  ] as const)('%s may be cut between any two samples (%i bytes each)', (format, unit) => {
    const cuts = audioCuts(format, new Uint8Array(10));
    expect(cuts.floor(5)).toBe(5 - (5 % unit));
    expect(cuts.after(4)).toBe(4 + unit);
    expect(cuts.after(9)).toBe(10);
  });
});
