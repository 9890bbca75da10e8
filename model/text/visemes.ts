/**
 * Kokoro's phoneme symbols → visemes (mouth shapes), for lip sync.
 *
 * The viseme set is the 15 of Oculus Lipsync, in the order and with the ids (0 to 14) of OpenXR's
 * `XrFaceTrackingVisemeMETA` (`XR_META_face_tracking_visemes`, Khronos OpenXR registry), which
 * names each one's English phonemes and examples as Meta's "Oculus Lipsync viseme reference" does:
 * PP p b m, FF f v, TH th, DD t d, kk k g, CH tʃ dʒ ʃ, SS s z, nn n l, RR r, aa "car", E "bed",
 * ih "tip", oh "toe", ou "book". Avatars with `viseme_*` blend shapes (Ready Player Me's) use it.
 * Kokoro's other symbols (misaki's English, espeak-ng's languages, misaki's Japanese and
 * Mandarin) go to the nearest of these by where the sound is made and how the lips are shaped:
 * a diphthong by its first vowel (`I` "eye" → aa), a rounded vowel by its rounding (`y`, `ø`).
 *
 * Some symbols are no sound of their own: stress marks, which misaki writes before the vowel they
 * stress, and marks written after the sound they change (length, aspiration, palatalization,
 * labialization, nasalization, Mandarin's tone arrows). Timings fold them into that sound.
 */

import { VISEMES, type Viseme } from '../../protocol/frames.ts';

export { VISEMES, type Viseme };

/** Marks written before the sound they belong to (misaki's stress marks). */
export const MARKS_BEFORE: ReadonlySet<string> = new Set(['ˈ', 'ˌ']);

/** Marks written after the sound they change. U+0303 is the combining tilde of a nasal vowel. */
export const MARKS_AFTER: ReadonlySet<string> = new Set(['ː', 'ʰ', 'ʲ', 'ᵝ', '\u0303', '↓', '→', '↗', '↘']);

/**
 * Each viseme's Kokoro symbols: every symbol of Kokoro v1.0's vocabulary that is a sound (`T` is
 * misaki's American flap, as in "butter"), a pause (punctuation, the space between words: `sil`),
 * or `S`, which no front end here writes (placed by its letter). A unit test keeps this, the marks
 * and the vocabulary equal; another keeps docs/protocol.md's table equal to it.
 */
export const VISEME_SYMBOLS: Readonly<Record<Viseme, string>> = {
  sil: ' ;:,.!?—…"()“”',
  PP: 'pbmɸβ',
  FF: 'fvʋ',
  TH: 'θð',
  DD: 'tdʈɖɾɽT',
  kk: 'kɡcɟxqɣχŋɴɰhʔ',
  CH: 'ʃʒʧʤɕʨʥçʝʂꭧ',
  SS: 'szʦʣS',
  nn: 'nlɲɳʎ',
  RR: 'ɹrɻʁɚ',
  aa: 'aɑɐæɒʌəᵊIW',
  E: 'eɛɜɤA',
  ih: 'iɪɨᵻj',
  oh: 'oɔøœOQY',
  ou: 'uʊɯywɥ',
};

const BY_SYMBOL: ReadonlyMap<string, Viseme> = new Map(
  VISEMES.flatMap((viseme) => [...VISEME_SYMBOLS[viseme]].map((symbol) => [symbol, viseme] as const)),
);

/**
 * The viseme of a sound: its first symbol that is not a mark (`ˈɛ` → E, `tʰ` → DD); `sil` for a
 * pause, for marks alone, and for a symbol outside the table.
 */
export function visemeOf(sound: string): Viseme {
  for (const symbol of sound) {
    const viseme = BY_SYMBOL.get(symbol);
    if (viseme !== undefined) return viseme;
  }
  return 'sil';
}
