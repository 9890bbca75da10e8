import { describe, expect, it } from 'vitest';
import {
  adjustEspeakPhonemes,
  isSupportedLanguage,
  phonemize,
  splitOnPunctuation,
} from '../../model/text/phonemes.ts';
import { KOKORO_VOCAB } from '../../model/text/tokens.ts';

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

describe('adjustEspeakPhonemes', () => {
  const cases = new Map<[string, 'a' | 'b'], string>([
    [['kəkˈoːɹoʊ', 'a'], 'kˈoʊkəɹoʊ'],
    [['kəkˈɔːɹoʊ', 'a'], 'kˈoʊkəɹoʊ'],
    [['kəkˈɔːɹəʊ', 'b'], 'kˈəʊkəɹəʊ'],
    [['rˈɛd', 'a'], 'ɹˈɛd'],
    [['lˈɒx', 'b'], 'lˈɒk'],
    [['nˈaɪnti', 'a'], 'nˈaɪndi'],
    [['nˈaɪnti', 'b'], 'nˈaɪnti'],
    [['wˈʌnhˈʌndɹɪd', 'a'], 'wˈʌn hˈʌndɹɪd'],
    [['ɪts z.', 'a'], 'ɪtsz.'],
  ]);
  for (const [[input, lang], expected] of cases) {
    it(`${input} (${lang}) → ${expected}`, () => expect(adjustEspeakPhonemes(input, lang)).toBe(expected));
  }
});

describe('phonemize (espeak-ng, offline)', () => {
  it("supports Kokoro's nine languages and nothing else", () => {
    for (const lang of 'abefhijpz') expect(isSupportedLanguage(lang), lang).toBe(true);
    for (const lang of ['d', 'x', '', 'en', 'constructor'])
      expect(isSupportedLanguage(lang), lang).toBe(false);
  });

  it('speaks American and British differently, keeping punctuation', async () => {
    const us = await phonemize('Hello, world.', 'a');
    const gb = await phonemize('Hello, world.', 'b');
    expect(us).toBe('həlˈoʊ, wˈɜːld.');
    expect(gb).toBe('həlˈəʊ, wˈɜːld.');
    // This espeak-ng build's vowel before r (the one kokoro-js bundles says fˈoːɹ).
    expect(await phonemize('four', 'a')).toBe('fˈɔːɹ');
  });

  it('phonemizes one sentence in one espeak call and gets every clause back in place', async () => {
    const text = 'First clause, second clause; third: "quoted" (aside) — end… really?';
    const result = await phonemize(text, 'a');
    expect(result.match(/[,;:"()—…?]/g)).toEqual([',', ';', ':', '"', '"', '(', ')', '—', '…', '?']);
    expect(result.startsWith('fˈɜːst klˈɔːz,')).toBe(true);
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
