/**
 * Text → phonemes with espeak-ng (WebAssembly, see espeak.ts: works offline, no system library).
 * espeak drops punctuation, which Kokoro needs for prosody, so punctuation runs are cut out first,
 * kept verbatim, and the pieces glued back.
 *
 * Calls are synchronous WebAssembly (about a millisecond a sentence once warm, the first ones
 * much longer): this module is meant to run inside an inference worker, never on the server's main
 * thread.
 */
import type { LanguageCode } from '../kokoro/constants.ts';
import { loadEspeak, type Espeak } from './espeak.ts';

/** Languages this front end can phonemize, with espeak-ng's voice for each. */
export const ESPEAK_VOICES: Partial<Record<LanguageCode, string>> = {
  a: 'en-us',
  b: 'en',
};

export function isSupportedLanguage(lang: string): boolean {
  return Object.hasOwn(ESPEAK_VOICES, lang);
}

// Kept verbatim between phonemized pieces; every one of these is in Kokoro's vocabulary or is
// mapped to a character that is (see normalize.ts).
const PUNCTUATION = ';:,.!?¡¿—…"«»“”()';
const isPunctuation = (ch: string | undefined): boolean => ch !== undefined && PUNCTUATION.includes(ch);
const isSpace = (ch: string | undefined): boolean => ch !== undefined && /\s/.test(ch);

let espeak: Espeak | undefined;

/** Loads espeak-ng in this thread (once). */
export async function loadPhonemizer(): Promise<void> {
  espeak ??= await loadEspeak();
}

// Varied English, so the WebAssembly engine's hot paths are compiled before the first request:
// cold, the first sentences take tens of milliseconds; after this, about one.
const WARM_UP_TEXTS = [
  'The quick brown fox jumps over the lazy dog; meanwhile, twelve wizards quickly boxed five jugs of liquid.',
  'How much would it cost to fly from London to New York next Thursday at seven thirty in the morning?',
  'Please remember: the meeting starts at nine, and everyone should bring their reports, charts and questions!',
  'Artificial intelligence systems are transforming healthcare, education, transportation and entertainment.',
];

/** Loads espeak-ng and runs it over varied text for every supported language. */
export async function warmUpPhonemizer(rounds = 3): Promise<void> {
  await loadPhonemizer();
  for (let r = 0; r < rounds; r++) {
    for (const text of WARM_UP_TEXTS) {
      for (const lang of Object.keys(ESPEAK_VOICES) as LanguageCode[]) await phonemize(text, lang);
    }
  }
}

/**
 * Adjusts espeak-ng's output towards the phoneme set Kokoro was trained on (the same corrections
 * Kokoro's reference front ends apply).
 */
export function adjustEspeakPhonemes(phonemes: string, lang: LanguageCode): string {
  let out = phonemes
    .replace(/kəkˈ[oɔ]ːɹoʊ/g, 'kˈoʊkəɹoʊ')
    .replace(/kəkˈɔːɹəʊ/g, 'kˈəʊkəɹəʊ')
    .replace(/ʲ/g, 'j')
    .replace(/r/g, 'ɹ')
    .replace(/x/g, 'k')
    .replace(/ɬ/g, 'l')
    .replace(/(?<=[a-zɹː])(?=hˈʌndɹɪd)/g, ' ')
    .replace(/ z(?=[;:,.!?¡¿—…"«»“” ]|$)/g, 'z');
  if (lang === 'a') out = out.replace(/(?<=nˈaɪn)ti(?!ː)/g, 'di');
  return out.trim();
}

/**
 * Splits text into alternating word runs and punctuation runs, keeping both. A punctuation run is
 * punctuation with the white space around it, and further punctuation after that white space
 * (`", - "`). One pass, each character looked at a bounded number of times: linear in the text.
 */
export function splitOnPunctuation(text: string): { text: string; punctuation: boolean }[] {
  const parts: { text: string; punctuation: boolean }[] = [];
  const n = text.length;
  let wordStart = 0;
  let i = 0;
  while (i < n) {
    if (!isPunctuation(text[i])) {
      i++;
      continue;
    }
    // The run takes the white space just before it (never before the current word run began).
    let start = i;
    while (start > wordStart && isSpace(text[start - 1])) start--;
    let end = i;
    for (;;) {
      while (end < n && isPunctuation(text[end])) end++;
      let k = end;
      while (k < n && isSpace(text[k])) k++;
      end = k;
      if (!isPunctuation(text[k])) break;
    }
    if (start > wordStart) parts.push({ text: text.slice(wordStart, start), punctuation: false });
    parts.push({ text: text.slice(start, end), punctuation: true });
    wordStart = i = end;
  }
  if (wordStart < n) parts.push({ text: text.slice(wordStart), punctuation: false });
  return parts;
}

/**
 * Phonemizes already-normalized text for a supported language: each word run on its own (espeak
 * keeps its voice loaded between calls), punctuation runs verbatim between them.
 */
export async function phonemize(text: string, lang: LanguageCode): Promise<string> {
  const voice = ESPEAK_VOICES[lang];
  if (!voice) throw new Error(`No phonemizer for language '${lang}'`);
  espeak ??= await loadEspeak();
  const pieces: string[] = [];
  for (const part of splitOnPunctuation(text)) {
    if (part.punctuation) pieces.push(part.text);
    else if (part.text.trim() !== '') {
      // Keep the spaces around a word run, so "a, b" stays two words in the phoneme string.
      const lead = /^\s/.test(part.text) ? ' ' : '';
      const trail = /\s$/.test(part.text) ? ' ' : '';
      pieces.push(lead + espeak.phonemes(part.text.trim(), voice) + trail);
    }
  }
  return adjustEspeakPhonemes(pieces.join('').replace(/ {2,}/g, ' '), lang);
}
