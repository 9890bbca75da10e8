import { describe, expect, it } from 'vitest';
import type { LanguageCode } from '../../../model/kokoro/constants.ts';
import { foreignPhonemeSymbols, ipaToKokoro } from '../../../model/text/ipa.ts';

/** [IPA as written, language] → Kokoro's symbols. */
const CASES: readonly [string, LanguageCode, string][] = [
  // American English: misaki's US set, stress before the vowel
  ['ˈkoʊkəɹoʊ', 'a', 'kˈOkəɹO'],
  ['həˈloʊ', 'a', 'həlˈO'],
  ['ˈeɪ', 'a', 'ˈA'],
  ['ˈhaɪ', 'a', 'hˈI'],
  ['ˈaʊt', 'a', 'ˈWt'],
  ['ˈbɔɪ', 'a', 'bˈY'],
  ['ˈdʒʌmp', 'a', 'ʤˈʌmp'],
  ['ˈd͡ʒʌmp', 'a', 'ʤˈʌmp'],
  ['ˈt͡ʃɪp', 'a', 'ʧˈɪp'],
  ['ˈtʃɪp', 'a', 'ʧˈɪp'],
  ['ˈbʌtɚ', 'a', 'bˈʌtəɹ'],
  ['hɝ', 'a', 'hɜɹ'],
  ['ˈhɜːd', 'a', 'hˈɜɹd'],
  ['ˈriːd', 'a', 'ɹˈid'],
  ['ˈgɛt', 'a', 'ɡˈɛt'],
  ['ˈfiɫ', 'a', 'fˈil'],
  ["'haɪ", 'a', 'hˈI'],
  ['ˈsiː.kwəl', 'a', 'sˈikwəl'],
  ['ˈfɑ:ðɚ', 'a', 'fˈɑðəɹ'],
  ['ˈbʌtn̩', 'a', 'bˈʌtᵊn'],
  ['ˈɛndʒɪnˌɛks', 'a', 'ˈɛnʤɪnˌɛks'],
  ['ˈnuː ˈjɔɹk', 'a', 'nˈu jˈɔɹk'],
  ['ˈkæts', 'a', 'kˈæts'],
  ['ˈhɒt', 'a', 'hˈɑt'],
  ['ˈɡoʊ', 'a', 'ɡˈO'],
  ['ˈɡəʊ', 'a', 'ɡˈO'],
  // British English: misaki's GB set, length kept
  ['ˈɡəʊ', 'b', 'ɡˈQ'],
  ['ˈɡoʊ', 'b', 'ɡˈQ'],
  ['ˈsiː.kwəl', 'b', 'sˈiːkwəl'],
  ['ˈkæt', 'b', 'kˈat'],
  ['ˈbed', 'b', 'bˈɛd'],
  ['ˈheə', 'b', 'hˈɛː'],
  ['ˈhɜːd', 'b', 'hˈɜːd'],
  ['ˈbʌtɚ', 'b', 'bˈʌtə'],
  ['ˈhɒt', 'b', 'hˈɒt'],
  ['təˈmɑːtəʊ', 'b', 'təmˈɑːtQ'],
  // A symbol Kokoro lacks stays (for the check), and a stress mark with no vowel after it stays put
  ['ˈθ§', 'a', 'ˈθ§'],
  ['kˈOkəɹO', 'a', 'kˈOkəɹO'],
  // Other languages: only the writing is fixed, stress stays where espeak puts it
  ['ˈt͡ʃiko', 'e', 'ˈʧiko'],
  ['ˈgato', 'e', 'ˈɡato'],
  ['ˈperro', 'e', 'ˈperro'],
  ['ˈa͡ɪɾe', 'e', 'ˈIɾe'],
  ['ˈaɪɾe', 'e', 'ˈaɪɾe'],
  ['ˈpittsa', 'i', 'ˈpitʦa'],
  ['ˈka:sa', 'i', 'ˈkaːsa'],
  ['bɔ̃ʒuʁ', 'f', 'bɔ̃ʒuʁ'],
  ['mãj', 'p', 'ma\u0303j'],
  ['ˈtʃiɐ', 'p', 'ˈʧiɐ'],
  ['tɕi', 'j', 'ʨi'],
  ['tsɯ', 'j', 'ʦɯ'],
  ['dʑi', 'j', 'ʥi'],
  ['ʈʂʰɤ', 'z', 'ꭧʰɤ'],
  ['ai', 'z', 'ai'],
  ['ɫ', 'h', 'l'],
];

describe('ipaToKokoro', () => {
  it.each(CASES)('%s (%s) → %s', (ipa, lang, expected) => {
    expect(ipaToKokoro(ipa, lang)).toBe(expected);
  });

  it('gives English symbols all in the vocabulary for common IPA', () => {
    for (const [ipa, lang] of CASES.filter(([ipa]) => !ipa.includes('§')))
      expect(foreignPhonemeSymbols(ipaToKokoro(ipa, lang)), ipa).toEqual([]);
  });
});

describe('foreignPhonemeSymbols', () => {
  it.each([
    ['kˈOkəɹO', []],
    ['§x§', ['"§" (U+00A7) ×2']],
    ['a\tb#', ['"\\t" (U+0009)', '"#" (U+0023)']],
    ['😀', ['"😀" (U+1F600)']],
  ] as const)('%j → %j', (phonemes, expected) => {
    expect(foreignPhonemeSymbols(phonemes)).toEqual(expected);
  });
});
