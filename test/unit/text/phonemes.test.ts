import { describe, expect, it } from 'vitest';
import {
  configureEnglish,
  isSupportedLanguage,
  phonemize,
  splitOnPunctuation,
} from '../../../model/text/phonemes.ts';
import { KOKORO_VOCAB } from '../../../model/text/tokens.ts';

describe('splitOnPunctuation', () => {
  it('keeps punctuation runs verbatim between word runs', () => {
    expect(splitOnPunctuation('Hello, world! "Yes."')).toEqual([
      { text: 'Hello', punctuation: false },
      { text: ', ', punctuation: true },
      { text: 'world', punctuation: false },
      { text: '! "', punctuation: true },
      { text: 'Yes', punctuation: false },
      { text: '."', punctuation: true },
    ]);
    expect(splitOnPunctuation('no marks')).toEqual([{ text: 'no marks', punctuation: false }]);
  });
});

// misaki's lexicons, as the test setup provides them (test/lexicon-setup.ts).
configureEnglish(process.env.KOKORO_LEXICON_DIR);

describe('phonemize (offline)', () => {
  it("supports Kokoro's nine languages and nothing else", () => {
    for (const lang of 'abefhijpz') expect(isSupportedLanguage(lang), lang).toBe(true);
    for (const lang of ['d', 'x', '', 'en', 'constructor'])
      expect(isSupportedLanguage(lang), lang).toBe(false);
  });

  it('speaks American and British differently, keeping punctuation', async () => {
    const us = await phonemize('Hello, world.', 'a');
    const gb = await phonemize('Hello, world.', 'b');
    // misaki's symbols: one letter per diphthong (O, Q), no length mark in American.
    expect(us).toBe('həlˈO, wˈɜɹld.');
    expect(gb).toBe('həlˈQ, wˈɜːld.');
    expect(await phonemize('four', 'a')).toBe('fˈɔɹ');
  });

  it('gets every clause mark back in place, straight quotes curled as misaki curls them', async () => {
    const text = 'First clause, second clause; third: "quoted" (aside) — end… really?';
    const result = await phonemize(text, 'a');
    expect(result.match(/[,;:"“”()—…?]/g)).toEqual([',', ';', ':', '“', '”', '(', ')', '—', '…', '?']);
    expect(result.startsWith('fˈɜɹst klˈɔz,')).toBe(true);
  });

  it('only produces symbols in Kokoro’s vocabulary for ordinary English', async () => {
    const result = await phonemize('The quick brown fox jumps over the lazy dog, then naps!', 'a');
    const unknown = [...result].filter((ch) => !KOKORO_VOCAB.has(ch));
    expect(unknown).toEqual([]);
  });

  it('returns punctuation alone for text without words', async () => {
    expect(await phonemize('...', 'a')).toBe('...');
  });
});
