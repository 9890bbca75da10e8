/**
 * IPA as people write it (SSML `<phoneme alphabet="ipa">`, PLS lexicons) → the symbols Kokoro v1.0
 * was trained on for a language, and the check that names the symbols it still lacks.
 *
 * English follows misaki's US and GB sets (hexgrad/misaki, EN_PHONES.md): one letter per diphthong
 * and affricate, `ɹ` for r, no length marks in American English, and stress marks right before
 * the stressed vowel (`ˈkoʊkəɹoʊ` → `kˈOkəɹO`). The other languages were trained on espeak-ng's
 * IPA through misaki's map (text/espeak-g2p.ts): only the writing is fixed there (tie bars, `g`,
 * affricates as Kokoro's single symbols), the sounds are left as written.
 */
import type { LanguageCode } from '../kokoro/constants.ts';
import { languageOf } from './languages/index.ts';
import { KOKORO_VOCAB } from './tokens.ts';

/** Sequences → replacements, matched longest first at each position, left to right. */
type Table = ReadonlyMap<string, string>;

const table = (entries: Record<string, string>): Table => new Map(Object.entries(entries));

// prettier-ignore
const ENGLISH: Record<string, string> = {
  'eɪ': 'A', 'aɪ': 'I', 'ɑɪ': 'I', 'aʊ': 'W', 'ɑʊ': 'W', 'ɔɪ': 'Y', 'dʒ': 'ʤ', 'tʃ': 'ʧ',
  r: 'ɹ', ʁ: 'ɹ', ʔ: 't', x: 'k', ç: 'k', ɐ: 'ə', ʍ: 'w', ɬ: 'l', ʉ: 'u', ʲ: '', '\u0303': '',
};

/** misaki's American set: `O` for GOAT, r-coloured vowels spelt out, no `ː`, no `a` `ɒ` `Q`. */
// prettier-ignore
const AMERICAN = table({
  ...ENGLISH, 'oʊ': 'O', 'əʊ': 'O', o: 'O', e: 'A', 'ɚ': 'əɹ', 'ɝ': 'ɜɹ', 'ɜːɹ': 'ɜɹ', 'ɜː': 'ɜɹ',
  'ɪə': 'iə', 'ː': '', ɒ: 'ɑ', a: 'æ',
});

/** misaki's British set: `Q` for GOAT, `a` for TRAP, `ː` kept, no `æ` `ɾ` `ᵻ` `O`. */
// prettier-ignore
const BRITISH = table({
  ...ENGLISH, 'oʊ': 'Q', 'əʊ': 'Q', o: 'Q', e: 'ɛ', 'eə': 'ɛː', 'ɛə': 'ɛː', 'ɚ': 'ə', 'ɝ': 'ɜː',
  æ: 'a', ɾ: 't', ᵻ: 'ɪ',
});

/** A stop and a fricative written together: the one affricate symbol Kokoro has for them. */
// prettier-ignore
const AFFRICATES = table({
  'tʃ': 'ʧ', 'dʒ': 'ʤ', 'ts': 'ʦ', 'dz': 'ʣ', 'tɕ': 'ʨ', 'dʑ': 'ʥ', 'ʈʂ': 'ꭧ',
});

/**
 * espeak-ng's tied diphthongs as misaki maps them (EspeakG2P.e2m) for the languages Kokoro learnt
 * from espeak: Spanish, French, Hindi, Italian, Brazilian Portuguese. Only with a tie bar: untied,
 * the two vowels are two sounds.
 */
// prettier-ignore
const TIED_DIPHTHONGS = table({
  'a͡ɪ': 'I', 'a͡ʊ': 'W', 'e͡ɪ': 'A', 'o͡ʊ': 'O', 'ə͡ʊ': 'Q', 'ɔ͡ɪ': 'Y',
});

/** Vowels a misaki stress mark goes right before. */
const ENGLISH_VOWELS = new Set('AIOQWYaeiouæɑɒɔəɛɜɪʊʌᵊᵻ');

/** Replaces what `tbl` lists, longest sequence first at each position; the rest is copied. */
function replaceAll(text: string, tbl: Table): string {
  let out = '';
  for (let i = 0; i < text.length; ) {
    let done = false;
    for (let n = 3; n >= 1 && !done; n--) {
      const to = tbl.get(text.slice(i, i + n));
      if (to !== undefined) {
        out += to;
        i += n;
        done = true;
      }
    }
    if (!done) out += text[i++];
  }
  return out;
}

/** misaki's place for a stress mark: right before the vowel it stresses, not at the syllable's start. */
function stressBeforeVowels(text: string): string {
  let out = '';
  let held = '';
  let onset = '';
  for (const ch of text) {
    if (held === '') {
      if (ch === 'ˈ' || ch === 'ˌ') held = ch;
      else out += ch;
    } else if (ENGLISH_VOWELS.has(ch)) {
      out += onset + held + ch;
      held = onset = '';
    } else if (ch === 'ˈ' || ch === 'ˌ' || /\s/.test(ch)) {
      // No vowel before the word (or the next stress) ends: the mark stays where it was written.
      out += held + onset;
      held = onset = '';
      if (ch === 'ˈ' || ch === 'ˌ') held = ch;
      else out += ch;
    } else onset += ch;
  }
  return out + held + onset;
}

/**
 * Standard IPA → Kokoro's symbols for `lang`, by the convention its module states (`ipa`), in
 * this order:
 * 1. Unicode: composed (NFC), except that a character Kokoro lacks is decomposed (`ã` → `a` + `◌̃`).
 * 2. espeak languages: tied diphthongs as misaki maps them (`a͡ɪ` → `I`).
 * 3. Everywhere: tie bars and `‿` removed, `'` → `ˈ`, `g` → `ɡ`, `ɫ` → `l`, half-long `ˑ` dropped,
 *    a `:` after a symbol → `ː`, syllable dots between symbols dropped.
 * 4. English: misaki's set for the accent (`eɪ` `aɪ` `aʊ` `ɔɪ` → `A` `I` `W` `Y`, `oʊ` → `O` (US)
 *    or `Q` (GB), `dʒ` `tʃ` → `ʤ` `ʧ`, `ɚ` → `əɹ`, `ɝ` → `ɜɹ`, `r` → `ɹ`, a syllabic consonant
 *    `n̩` → `ᵊn`, length dropped in US English, …), then stress marks moved before their vowel.
 *    Other languages: affricates as one symbol (`ts` → `ʦ`, `tɕ` → `ʨ`, `ʈʂ` → `ꭧ`, …).
 *
 * Symbols Kokoro still lacks are kept, for the caller's check ({@link foreignPhonemeSymbols}).
 */
export function ipaToKokoro(ipa: string, lang: LanguageCode): string {
  let s = '';
  for (const ch of ipa.normalize('NFC')) s += KOKORO_VOCAB.has(ch) ? ch : ch.normalize('NFD');
  const convention = languageOf(lang).ipa;
  if (convention === 'espeak') s = replaceAll(s, TIED_DIPHTHONGS);
  s = s
    .replace(/[\u0361\u035c\u203f]/g, '')
    .replace(/'/g, 'ˈ')
    .replace(/g/g, 'ɡ')
    .replace(/ɫ/g, 'l')
    .replace(/ˑ/g, '')
    .replace(/(?<=\S):/g, 'ː')
    .replace(/(?<=\S)\.(?=\S)/g, '');
  if (convention !== 'american' && convention !== 'british') return replaceAll(s, AFFRICATES);
  s = s.replace(/(\S)[\u0329\u030d]/gu, 'ᵊ$1');
  return stressBeforeVowels(replaceAll(s, convention === 'american' ? AMERICAN : BRITISH));
}

/**
 * The symbols of `phonemes` that Kokoro's vocabulary lacks, each once, as an error message names
 * them: `"§" (U+00A7) ×2`. White space other than a space counts as foreign.
 */
export function foreignPhonemeSymbols(phonemes: string): string[] {
  const foreign = new Map<string, number>();
  for (const c of phonemes) if (!KOKORO_VOCAB.has(c)) foreign.set(c, (foreign.get(c) ?? 0) + 1);
  return [...foreign].map(
    ([c, n]) =>
      `${JSON.stringify(c)} (U+${c.codePointAt(0)!.toString(16).toUpperCase().padStart(4, '0')})${n > 1 ? ` ×${n}` : ''}`,
  );
}
