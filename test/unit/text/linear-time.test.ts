/**
 * Parsers of client input run in linear time: a hostile 100 KB input must not cost more than about
 * ten times a 10 KB one (a quadratic parser costs a hundred times, and blocks the event loop or a
 * worker for seconds). Asserted as a ratio of times measured side by side, never as a time. The
 * bound is 30, not 10: the normalizers build many strings, and collecting garbage in a larger heap
 * takes linear code to 12–15 here, more on a busy machine; quadratic code lands near 100.
 */
import { describe, expect, it } from 'vitest';
import { cpuRatio } from './cpu-time.ts';
import { parseVoiceSpec } from '../../../model/kokoro/voices.ts';
import { normalizeText } from '../../../model/text/normalize.ts';
// normalizeIntl, reached through the language's module, which holds its money words.
import { normalizeFor as normalizeIntl } from '../../../model/text/languages/index.ts';
import { normalizeJapanese } from '../../../model/text/japanese.ts';
import { normalizeMandarin } from '../../../model/text/mandarin.ts';
import { MarkupParser, parseMarkup } from '../../../model/text/markup.ts';
import { splitOnPunctuation } from '../../../model/text/phonemes.ts';
import { applyPronunciations, parseRequestPronunciations } from '../../../model/text/pronunciations/index.ts';
import { IncrementalSentenceChunker, splitSentences } from '../../../model/text/sentences.ts';
import { keepKnownPhonemes, splitPhonemes } from '../../../model/text/tokens.ts';
import { codePointLength } from '../../../protocol/request.ts';

/** Adversarial inputs of about n characters. */
const INPUTS: Record<string, (n: number) => string> = {
  'a run of spaces': (n) => `a${' '.repeat(n)}b`,
  'a run of +': (n) => '+'.repeat(n),
  'a run of (': (n) => '('.repeat(n),
  'a run of digits': (n) => '1'.repeat(n),
  'a run of dots': (n) => '.'.repeat(n),
  'digits and dots': (n) => '1.'.repeat(n / 2),
  'digits and commas': (n) => '1,'.repeat(n / 2),
  abbreviations: (n) => 'Dr. '.repeat(n / 4),
  'initials without spaces': (n) => 'A.'.repeat(n / 2),
  'mixed scripts': (n) => 'aé中ع1. '.repeat(n / 7),
  'closing quotes': (n) => `a, ${'"'.repeat(n)}`,
  'digit groups between spaces': (n) => '100 '.repeat(n / 4),
  'money signs': (n) => '€1 '.repeat(n / 3),
  'SSML tags': (n) => `<speak>${'<s>a <break/> </s>'.repeat(n / 18)}</speak>`,
  'open brackets': (n) => '[pause [voice [x]('.repeat(n / 18),
  'pauses and links': (n) => '[pause:1ms] [word](/wɜɹd/) '.repeat(n / 28),
  entities: (n) => `<speak>${'&amp;&#x41;&lt;'.repeat(n / 14)}</speak>`,
};

/** A dictionary for the matcher: phrases whose first words are everywhere in the inputs. */
const DICTIONARY = parseRequestPronunciations(
  { a: { alias: 'eh' }, 'a a a': { alias: 'three' }, Dr: { alias: 'doctor' }, '1 1': { alias: 'eleven' } },
  'a',
);

/** Every parser that sees client text or fields before (or in) the model's front end. */
const PARSERS: Record<string, (input: string) => unknown> = {
  'voice spec': (input) => {
    try {
      parseVoiceSpec(input);
    } catch {
      // refused: what matters is how long it took
    }
  },
  'sentence splitter': (input) => splitSentences(input),
  'streaming chunker (1 KB fragments)': (input) => {
    const chunker = new IncrementalSentenceChunker({ firstChunkMinChars: 24 });
    for (let i = 0; i < input.length; i += 1024) chunker.feed(input.slice(i, i + 1024));
    return chunker.flush();
  },
  normalizer: (input) => normalizeText(input, 'a'),
  'normalizer (Spanish)': (input) => normalizeIntl(input, 'e'),
  'normalizer (Hindi)': (input) => normalizeIntl(input, 'h'),
  'normalizer (Japanese)': (input) => normalizeJapanese(input),
  'normalizer (Mandarin)': (input) => normalizeMandarin(input),
  'phonemizer input split': (input) => splitOnPunctuation(input),
  'phoneme filter and split': (input) => splitPhonemes(keepKnownPhonemes(input)),
  'code point count': (input) => codePointLength(input),
  'markup parser': (input) => {
    try {
      parseMarkup(input);
    } catch {
      // refused: what matters is how long it took
    }
  },
  'markup parser (1 KB pieces)': (input) => {
    const parser = new MarkupParser('auto');
    try {
      for (let i = 0; i < input.length; i += 1024) parser.push(input.slice(i, i + 1024));
      parser.end();
    } catch {
      // refused
    }
  },
  'pronunciation matcher': (input) => applyPronunciations(input, DICTIONARY),
};

describe.each(Object.entries(PARSERS))('%s', (_name, parse) => {
  it.each(Object.entries(INPUTS))('grows linearly on %s (100 KB / 10 KB ≤ 30)', (_input, make) => {
    const small = make(10_000);
    const large = make(100_000);
    parse(small); // warm up the code paths first
    const ratio = cpuRatio(
      () => parse(large),
      () => parse(small),
      30,
    );
    expect(ratio).toBeLessThanOrEqual(30);
  });
});
