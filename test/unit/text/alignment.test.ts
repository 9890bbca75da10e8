import { describe, expect, it } from 'vitest';
import { DURATION_FRAME_SAMPLES } from '../../../model/kokoro/constants.ts';
import { WordTimer, planWords } from '../../../model/text/alignment.ts';
import { normalizeText } from '../../../model/text/normalize.ts';

const normalize = (word: string) => normalizeText(word, 'a');

/** Durations of 2 frames per token with 1-frame pads, for a piece of `tokens` phoneme symbols. */
const frames = (tokens: number, each = 2) => [1, ...Array.from({ length: tokens }, () => each), 1];
const symbols = (piece: string) => [...piece].length;
/** The audio length that durations imply: frames of 600 samples end to end. */
const samplesForDurations = (durations: readonly number[]) =>
  durations.reduce((a, b) => a + b, 0) * DURATION_FRAME_SAMPLES;

describe('planWords', () => {
  it('maps each original word to the phoneme groups its normalization speaks: "$5" is one word of two groups', () => {
    // "Hello, Dr. Smith paid five dollars." as espeak writes it: one group per spoken word.
    const pieces = ['həlˈoʊ, dˈɑːktɚ smˈɪθ pˈeɪd fˈaɪv dˈɑːlɚz.'];
    const plan = planWords('Hello, Dr. Smith paid $5.', normalize, pieces);
    expect(plan.map((w) => w.word)).toEqual(['Hello,', 'Dr.', 'Smith', 'paid', '$5.']);
    // "$5." starts at "fˈaɪv" and ends after "dˈɑːlɚz", before the period.
    const five = pieces[0]!.indexOf('fˈaɪv');
    expect(plan[4]).toEqual({
      word: '$5.',
      start: { piece: 0, index: [...pieces[0]!.slice(0, five)].length },
      end: { piece: 0, index: symbols(pieces[0]!) - 1 },
    });
  });

  it('spreads words in proportion when espeak joined some ("of the" → "ʌvðə"), in order and covering every token', () => {
    const pieces = ['ʌvðə pˈiːpəl, baɪ ðə pˈiːpəl.'];
    const plan = planWords('Of the people, by the people.', normalize, pieces);
    expect(plan.map((w) => w.word)).toEqual(['Of', 'the', 'people,', 'by', 'the', 'people.']);
    expect(plan[0]!.start.index).toBe(0);
    expect(plan.at(-1)!.end.index).toBe(symbols(pieces[0]!));
    for (let i = 1; i < plan.length; i++) {
      expect(plan[i]!.start.index).toBeGreaterThanOrEqual(plan[i - 1]!.start.index);
      expect(plan[i]!.start.index).toBe(plan[i - 1]!.end.index);
    }
  });

  it('returns nothing for an empty text', () => {
    expect(planWords('   ', normalize, ['a'])).toEqual([]);
  });
});

describe('WordTimer', () => {
  it('times words from the durations: the first after the leading pad, each until the next starts, the last to the end', () => {
    const piece = 'wˈʌn tˈuː θɹˈiː.';
    const plan = planWords('one two three.', normalize, [piece]);
    const durations = frames(symbols(piece));
    const samples = samplesForDurations(durations);
    const words = new WordTimer(plan).piece(0, durations, samples);
    expect(words.map((w) => w.word)).toEqual(['one', 'two', 'three.']);
    expect(words[0]!.start_s).toBe(0.025); // one pad frame of 600 samples
    expect(words[0]!.end_s).toBe(words[1]!.start_s);
    expect(words[1]!.end_s).toBe(words[2]!.start_s);
    expect(words[2]!.end_s).toBe(samples / 24_000);
    // "one" is 4 symbols of 2 frames, then the space's 2 frames: 10 frames after the pad.
    expect(words[1]!.start_s).toBeCloseTo(0.025 + (10 * 600) / 24_000, 6);
  });

  it('scales to the samples the model really produced', () => {
    const piece = 'wˈʌn tˈuː.';
    const plan = planWords('one two.', normalize, [piece]);
    const durations = frames(symbols(piece));
    const half = samplesForDurations(durations) / 2;
    const words = new WordTimer(plan).piece(0, durations, half);
    expect(words.at(-1)!.end_s).toBe(half / 24_000);
    expect(words[0]!.start_s).toBeCloseTo(0.0125, 3); // the pad, halved too
  });

  it('reports a word with the piece it ends in, timed from that piece’s start, and keeps the clock across pieces', () => {
    // One spoken word per group; "99" is two groups that land in different pieces.
    const pieces = ['wˈʌn nˈaɪnti', 'nˈaɪn tˈuː.'];
    const plan = planWords('one 99 two.', normalize, pieces);
    expect(plan.map((w) => [w.word, w.start.piece, w.end.piece])).toEqual([
      ['one', 0, 0],
      ['99', 0, 1],
      ['two.', 1, 1],
    ]);
    const timer = new WordTimer(plan);
    const d0 = frames(symbols(pieces[0]!));
    const d1 = frames(symbols(pieces[1]!));
    const first = timer.piece(0, d0, samplesForDurations(d0));
    expect(first.map((w) => w.word)).toEqual(['one']);
    const second = timer.piece(1, d1, samplesForDurations(d1));
    expect(second.map((w) => w.word)).toEqual(['99', 'two.']);
    // "99" began in the first piece: a negative start, relative to the second piece.
    expect(second[0]!.start_s).toBeLessThan(0);
    expect(second[0]!.start_s).toBeCloseTo(first[0]!.end_s - samplesForDurations(d0) / 24_000, 6);
    expect(second[1]!.end_s).toBe(samplesForDurations(d1) / 24_000);
  });
});
