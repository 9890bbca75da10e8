/**
 * The English tokenizer on seeded random text: properties that hold for any input (the text comes
 * back whole, line breaks cut independently, the cache changes nothing), and time linear in length.
 */
import { describe, expect, it } from 'vitest';
import { cpuRatio } from './cpu-time.ts';
import { tokenize } from '../../../model/text/en/tokenizer.ts';

function random(seed: number): () => number {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const PIECES = [
  ...'aAzZeEsSmMdDtTnNlLxXoOiI0123456789.,;:!?()[]{}<>\'"`-–—~_#*&%$£€+=/\\@|^°§…’‘“”«»²é中。😀🍕✪₹',
  ...".. ... 's n't km pm a.m. http:// www. .com :// US$ C++ °C ಠ".split(' '),
  ...":) :-( <3 don't can't gonna U.S. e.g. Mr. y'all well-known 10km $5".split(' '),
  ...[' ', ' ', ' ', '  ', '\n', '\t', '\u00a0', '\u3000', '\u200b', '\ufeff', '\x85'],
];

function randomText(next: () => number): string {
  let text = '';
  for (let n = 1 + Math.floor(next() * 16); n > 0; n--) text += PIECES[Math.floor(next() * PIECES.length)];
  return text;
}

/** Python's `str.isspace()` characters, which spaCy cuts at (JavaScript's `\s` differs: U+FEFF, U+0085). */
// eslint-disable-next-line no-control-regex -- Python counts U+001C to U+001F as whitespace
const PY_SPACE = /[\t\n\v\f\r\x1c-\x1f \x85\xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]/u;
const PY_SPACES = new RegExp(PY_SPACE.source, 'gu');

describe('tokenize: properties on random text (seed 1)', () => {
  const next = random(1);
  const samples = Array.from({ length: 3000 }, () => randomText(next));

  it('gives the text back: tokens and their whitespace, joined, are the input', () => {
    for (const text of samples) {
      const tokens = tokenize(text);
      expect(tokens.map((t) => t.text + t.whitespace).join('')).toBe(text);
      for (const t of tokens) {
        expect(t.text).not.toBe('');
        expect(['', ' ']).toContain(t.whitespace);
        // A token is whitespace through and through, or has none in it.
        expect(t.text.replace(PY_SPACES, '') === '' || !PY_SPACE.test(t.text)).toBe(true);
      }
    }
  });

  // Not at a space: spaCy's special-case pass matches token sequences across spaces (see QUIRKS).
  it('tokenizes the text on either side of a line break independently', () => {
    const words = samples.map((text) => text.replace(PY_SPACES, '')).filter(Boolean);
    for (let i = 0; i + 1 < words.length; i += 2) {
      const [a, b] = [words[i]!, words[i + 1]!];
      expect(tokenize(`${a}\n${b}`)).toEqual([
        ...tokenize(a),
        { text: '\n', whitespace: '' },
        ...tokenize(b),
      ]);
    }
  });

  it('gives the same tokens the second time (from its cache)', () => {
    const text = samples.join(' ');
    expect(tokenize(text)).toEqual(tokenize(text));
  });
});

/**
 * Linear time, asserted as in linear-time.test.ts: 100 K characters cost at most about ten times
 * 10 K (bound 30 for garbage collection and a busy machine; quadratic code lands near 100).
 */
describe('tokenize: linear time', () => {
  const INPUTS: Record<string, (n: number) => string> = {
    "a run of '": (n) => "'".repeat(n),
    'a run of (': (n) => '('.repeat(n),
    'a run of dots': (n) => '.'.repeat(n),
    'a run of em dashes': (n) => '—'.repeat(n),
    'a run of letters': (n) => 'a'.repeat(n),
    'a run of spaces': (n) => `a${' '.repeat(n)}b`,
    'letters and colons': (n) => 'a:'.repeat(n / 2),
    'letters and at signs': (n) => 'a.b@'.repeat(n / 4),
    'initials without spaces': (n) => 'A.'.repeat(n / 2),
    emoticons: (n) => ':)'.repeat(n / 2),
  };

  it.each(Object.entries(INPUTS))('grows linearly on %s (100 KB / 10 KB ≤ 30)', (_name, make) => {
    const small = make(10_000);
    const large = make(100_000);
    tokenize(small);
    expect(
      cpuRatio(
        () => tokenize(large),
        () => tokenize(small),
        30,
      ),
    ).toBeLessThanOrEqual(30);
  });
});
