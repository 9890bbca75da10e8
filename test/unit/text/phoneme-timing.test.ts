/**
 * Phoneme timestamps (model/text/phoneme-timing.ts) and the viseme table (model/text/visemes.ts):
 * every symbol of Kokoro's vocabulary has its place, marks fold into their sounds, and the sounds
 * are timed on the same token edges as the words.
 */
import { describe, expect, it } from 'vitest';
import { DURATION_FRAME_SAMPLES } from '../../../model/kokoro/constants.ts';
import { WordTimer, planWords } from '../../../model/text/alignment.ts';
import { normalizeText } from '../../../model/text/normalize.ts';
import { soundGroups, timePhonemes } from '../../../model/text/phoneme-timing.ts';
import { KOKORO_VOCAB } from '../../../model/text/tokens.ts';
import {
  MARKS_AFTER,
  MARKS_BEFORE,
  VISEMES,
  VISEME_SYMBOLS,
  visemeOf,
  type Viseme,
} from '../../../model/text/visemes.ts';

const SAMPLES_PER_SECOND = 24_000;

describe('the viseme table', () => {
  it('places every symbol of Kokoro’s vocabulary exactly once: under a viseme, or as a mark', () => {
    const placed = [
      ...VISEMES.flatMap((viseme) => [...VISEME_SYMBOLS[viseme]]),
      ...MARKS_BEFORE,
      ...MARKS_AFTER,
    ];
    expect(placed.length).toBe(new Set(placed).size);
    expect([...placed].sort()).toEqual([...KOKORO_VOCAB.keys()].sort());
  });

  it('has the 15 visemes of Oculus Lipsync in OpenXR’s order, each with symbols', () => {
    expect(VISEMES).toEqual(
      'sil PP FF TH DD kk CH SS nn RR aa E ih oh ou'.split(' ') as unknown as typeof VISEMES,
    );
    for (const viseme of VISEMES) expect(VISEME_SYMBOLS[viseme].length).toBeGreaterThan(0);
  });

  // Meta's reference phonemes for each viseme, in misaki's symbols, and a few of other languages.
  const cases = new Map<string, Viseme>([
    ['p', 'PP'],
    ['b', 'PP'],
    ['m', 'PP'],
    ['f', 'FF'],
    ['v', 'FF'],
    ['θ', 'TH'],
    ['ð', 'TH'],
    ['t', 'DD'],
    ['d', 'DD'],
    ['k', 'kk'],
    ['ɡ', 'kk'],
    ['ʧ', 'CH'],
    ['ʤ', 'CH'],
    ['ʃ', 'CH'],
    ['s', 'SS'],
    ['z', 'SS'],
    ['n', 'nn'],
    ['l', 'nn'],
    ['ɹ', 'RR'],
    ['ɑ', 'aa'],
    ['ɛ', 'E'],
    ['ɪ', 'ih'],
    ['O', 'oh'],
    ['ʊ', 'ou'],
    ['ˈɛ', 'E'],
    ['ɑː', 'aa'],
    ['tʰ', 'DD'],
    ['a↓', 'aa'],
    ['ʨ', 'CH'],
    ['ɯ', 'ou'],
    [' ', 'sil'],
    ['.', 'sil'],
    ['—', 'sil'],
    ['ˈ', 'sil'],
    ['§', 'sil'],
  ]);
  it.each([...cases])('%j → %s', (sound, viseme) => {
    expect(visemeOf(sound)).toBe(viseme);
  });
});

describe('soundGroups', () => {
  const cases = new Map<string, string[]>([
    ['hˈɛlO', ['h', 'ˈɛ', 'l', 'O']],
    ['ˈizi', ['ˈi', 'z', 'i']],
    ['ɑːtʰ', ['ɑː', 'tʰ']],
    ['ni↓ xau↓', ['n', 'i↓', ' ', 'x', 'a', 'u↓']],
    ['kᵝa', ['kᵝ', 'a']],
    ['bo\u0303', ['b', 'o\u0303']],
    ['hi, ðɛɹ.', ['h', 'i', ',', ' ', 'ð', 'ɛ', 'ɹ', '.']],
    // Marks with no sound to join: after a pause, at the end, or alone.
    [' ː', [' ', 'ː']],
    ['aˈ', ['aˈ']],
    ['ˈ', ['ˈ']],
    ['', []],
  ]);
  it.each([...cases])('%j → %j', (piece, sounds) => {
    const groups = soundGroups(piece);
    expect(groups.map((g) => g.text)).toEqual(sounds);
    // The groups cover the piece's symbols in order, each token in exactly one.
    expect(groups.map((g) => g.text).join('')).toBe(piece);
    let next = 0;
    for (const g of groups) {
      expect(g.from).toBe(next);
      expect(g.to - g.from).toBe([...g.text].length);
      next = g.to;
    }
    expect(next).toBe([...piece].length);
  });
});

describe('timePhonemes', () => {
  /** Durations in frames, pads first and last, and the samples they make. */
  const run = (frames: number[]) => ({
    durations: frames,
    samples: frames.reduce((a, b) => a + b, 0) * DURATION_FRAME_SAMPLES,
  });

  it('times each sound from its first token to its last, after the leading pad, to the millisecond', () => {
    // h ˈ ɛ l O . with pads of 1 frame (25 ms at 600 samples a frame).
    const { durations, samples } = run([1, 2, 1, 3, 2, 4, 1, 1]);
    expect(timePhonemes('hˈɛlO.', durations, samples)).toEqual([
      { phoneme: 'h', viseme: 'kk', start_s: 0.025, end_s: 0.075 },
      { phoneme: 'ˈɛ', viseme: 'E', start_s: 0.075, end_s: 0.175 },
      { phoneme: 'l', viseme: 'nn', start_s: 0.175, end_s: 0.225 },
      { phoneme: 'O', viseme: 'oh', start_s: 0.225, end_s: 0.325 },
      { phoneme: '.', viseme: 'sil', start_s: 0.325, end_s: 0.35 },
    ]);
  });

  it('scales to the samples the piece really produced, so every sound ends within its audio', () => {
    const { durations, samples } = run([1, 2, 2, 2, 1]);
    const half = samples / 2;
    const sounds = timePhonemes('abc', durations, half);
    expect(sounds.at(-1)!.end_s).toBeLessThanOrEqual(half / SAMPLES_PER_SECOND);
    expect(sounds.map((s) => s.start_s)).toEqual([0.013, 0.038, 0.063]); // 12.5, 37.5, 62.5 ms, to the ms
  });

  it('gives nothing for durations that are not the piece’s (another token count)', () => {
    const { durations, samples } = run([1, 2, 2, 1]);
    expect(timePhonemes('abc', durations, samples)).toEqual([]);
  });

  it('tiles the speech, and each word starts where one of its sounds does (WordTimer’s edges)', () => {
    const piece = 'wˈʌn tˈuː θɹˈiː.';
    const tokens = [...piece].length;
    const durations = [2, ...Array.from({ length: tokens }, (_, i) => 1 + (i % 3)), 3];
    const samples = durations.reduce((a, b) => a + b, 0) * DURATION_FRAME_SAMPLES;
    const sounds = timePhonemes(piece, durations, samples);
    for (let i = 1; i < sounds.length; i++) expect(sounds[i]!.start_s).toBe(sounds[i - 1]!.end_s);
    expect(sounds.map((s) => s.phoneme).join('')).toBe(piece);
    const words = new WordTimer(planWords('one two three.', (w) => normalizeText(w, 'a'), [piece])).piece(
      0,
      durations,
      samples,
    );
    expect(words).toHaveLength(3);
    const starts = new Set(sounds.map((s) => s.start_s));
    for (const word of words) expect(starts.has(word.start_s)).toBe(true);
  });
});
