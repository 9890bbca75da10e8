import { describe, expect, it } from 'vitest';
import { parseAmount } from '../../../model/text/normalize-intl.ts';
import { tieLetters } from '../../../model/text/espeak.ts';
import { misakiEspeakPhonemes } from '../../../model/text/phonemes.ts';
// The money words are each language's own: normalizeIntl is reached through its module.
import {
  normalizeFor,
  normalizeFor as normalizeIntl,
  parseLanguage,
} from '../../../model/text/languages/index.ts';
import { filterToVocab } from '../../../model/text/tokens.ts';
import { splitSentences } from '../../../model/text/sentences.ts';
import { ConfigError, parseConfig } from '../../../server/config/config.ts';

describe('parseLanguage', () => {
  it("takes Kokoro's letters, BCP 47 tags and Kokoro's pipeline names, in any case", () => {
    expect(parseLanguage('e')).toBe('e');
    expect(parseLanguage('es')).toBe('e');
    expect(parseLanguage('fr-FR')).toBe('f');
    expect(parseLanguage('fr-fr')).toBe('f');
    expect(parseLanguage('PT-BR')).toBe('p');
    expect(parseLanguage('en-gb')).toBe('b');
    expect(parseLanguage('en-US')).toBe('a');
    expect(parseLanguage('zh')).toBe('z');
    expect(parseLanguage('ja')).toBe('j');
    expect(parseLanguage('hi')).toBe('h');
    expect(parseLanguage('it')).toBe('i');
  });
  it('names nothing for anything else', () => {
    for (const name of ['', 'x', 'de', 'english', 'constructor', '__proto__', 'toString'])
      expect(parseLanguage(name), name).toBeUndefined();
  });
});

describe('money and numbers outside English (percentages are left to espeak, as misaki does)', () => {
  it('splits an amount at its decimal mark, whichever it is', () => {
    expect(parseAmount('12,50')).toEqual({ units: '12', cents: 50 });
    expect(parseAmount('12.50')).toEqual({ units: '12', cents: 50 });
    expect(parseAmount('1.250')).toEqual({ units: '1250', cents: 0 });
    expect(parseAmount('1.250,5')).toEqual({ units: '1250', cents: 50 });
    expect(parseAmount('1 000 000')).toEqual({ units: '1000000', cents: 0 });
    expect(parseAmount('007')).toEqual({ units: '7', cents: 0 });
  });

  const cases: [Parameters<typeof normalizeIntl>[1], string, string][] = [
    ['e', 'Cuesta 12,50 € en total.', 'Cuesta 12 euros con 50 céntimos en total.'],
    ['e', 'Son $1 y 1.250 personas.', 'Son 1 dólar y 1250 personas.'],
    ['e', '¿Sube un 15 %? ¡Sí!', 'Sube un 15 %? Sí!'],
    ['f', 'Le billet coûte 30 € et 0,99 $.', 'Le billet coûte 30 euros et 0 dollars et 99 cents.'],
    ['f', '« Bonjour », dit-il.', '“Bonjour”, dit-il.'],
    ['i', 'Costa €1, cioè il 20%.', 'Costa 1 euro, cioè il 20%.'],
    ['p', 'O ingresso custa R$ 10,00 ou US$ 2.', 'O ingresso custa 10 reais ou 2 dólares.'],
    ['p', 'Foram 2.500.000 votos.', 'Foram 2500000 votos.'],
    ['h', 'इसकी कीमत ₹1,00,000 है।', 'इसकी कीमत 100000 रुपये है'],
    ['h', 'कुल ₹५० और ३०% छूट॥', 'कुल 50 रुपये और 30% छूट'],
  ];
  for (const [lang, input, expected] of cases) {
    it(`${lang}: ${input}`, () => expect(normalizeIntl(input, lang)).toBe(expected));
  }

  it('keeps a decimal comma where the comma is the decimal mark', () => {
    expect(normalizeIntl('Mide 3,5 metros.', 'e')).toBe('Mide 3,5 metros.');
  });

  it('sends English to the English normalizer and refuses a language it has none for', () => {
    // English leaves plain amounts, numbers and years to misaki; the rest is read here.
    expect(normalizeFor('It costs $5 at 3:30 pm.', 'a')).toBe('It costs $5 at three thirty PM.');
    expect(normalizeFor('It costs ¥5, 10% off.', 'a')).toBe('It costs five yen, ten percent off.');
    expect(normalizeFor('3日', 'j')).toBe('さん日');
    expect(normalizeFor('12.5元', 'z')).toBe('十二点五元');
    expect(() => normalizeFor('x', 'q' as 'a')).toThrow(/No normalization for language 'q'/);
  });
});

describe("espeak's ties and misaki's symbols", () => {
  it('ties the letters of one phoneme where espeak does: not before modifiers, marks or after stress', () => {
    expect(tieLetters('aɪ', '^')).toBe('a^ɪ');
    expect(tieLetters('ˈaɪ', '^')).toBe('ˈa^ɪ');
    expect(tieLetters('ɔː', '^')).toBe('ɔː');
    expect(tieLetters('ɔ̃', '^')).toBe('ɔ̃');
    expect(tieLetters('tʃ', '^')).toBe('t^ʃ');
    expect(tieLetters('tʰ', '^')).toBe('tʰ');
    expect(tieLetters('aɪə', '^')).toBe('a^ɪ^ə');
    expect(tieLetters('', '^')).toBe('');
  });
  it("maps tied pairs to Kokoro's single symbols and deletes the remaining ties and hyphens", () => {
    expect(misakiEspeakPhonemes('ˈa^ɪ t^ʃ d^ʒ e^ɪ o^ʊ ə^ʊ ɔ^ɪ t^s d^z s^s a^ʊ')).toBe(
      'ˈI ʧ ʤ A O Q Y ʦ ʣ S W',
    );
    expect(misakiEspeakPhonemes('a^ɪ^ə k^x-y')).toBe('Iə kxy');
  });
});

describe('filterToVocab', () => {
  it('keeps known symbols in order and counts each unknown one', () => {
    expect(filterToVocab('həlˈoʊ¿ ¿ʘ\n')).toEqual({ kept: 'həlˈoʊ  ', unknown: { '¿': 2, ʘ: 1 } });
  });
});

describe('sentences in Hindi', () => {
  it('end at a danda', () => {
    expect(splitSentences('यह पहला वाक्य है। यह दूसरा है॥ और तीसरा?')).toEqual([
      'यह पहला वाक्य है।',
      'यह दूसरा है॥',
      'और तीसरा?',
    ]);
  });
});

describe('KOKORO_WARM_LANGUAGES', () => {
  it('warms English by default, takes letters or tags, and `all`', () => {
    expect(parseConfig({}).warmLanguages).toEqual(['a', 'b']);
    expect(parseConfig({ KOKORO_WARM_LANGUAGES: 'es, fr-FR,e' }).warmLanguages).toEqual(['e', 'f']);
    expect(parseConfig({ KOKORO_WARM_LANGUAGES: 'all' }).warmLanguages).toEqual(
      expect.arrayContaining(['a', 'b', 'e', 'f', 'h', 'i', 'p']),
    );
  });
  it('refuses a name that is no language it phonemizes', () => {
    expect(() => parseConfig({ KOKORO_WARM_LANGUAGES: 'a,klingon' })).toThrow(ConfigError);
    expect(() => parseConfig({ KOKORO_WARM_LANGUAGES: 'a,klingon' })).toThrow(
      /KOKORO_WARM_LANGUAGES names "klingon", which is not a language this server phonemizes/,
    );
  });
});
