/**
 * Text → phonemes with espeak-ng (WebAssembly, see espeak.ts: works offline, no system library),
 * as misaki reads every language it leaves to espeak. espeak drops punctuation, which Kokoro needs
 * for prosody, so punctuation runs are cut out first, kept verbatim, and the pieces glued back.
 *
 * One espeak-ng instance per thread, loaded at first use and shared by every language that calls
 * it (the languages in languages/, English's fallback for words in no lexicon). Calls are
 * synchronous WebAssembly, the first ones much longer: this module is meant to run inside an
 * inference worker, never on the server's main thread.
 */
import { loadEspeak, type Espeak } from './espeak.ts';

/**
 * misaki's espeak-to-Kokoro map for every language but English (EspeakG2P.e2m in
 * hexgrad/misaki, misaki/espeak.py, as Kokoro v1.0 uses it: no version): tied letter pairs become
 * the single symbols Kokoro was trained on. Applied in misaki's order (sorted by key); the ties
 * and hyphens left over are then deleted.
 */
const MISAKI_E2M: readonly (readonly [string, string])[] = (
  [
    ['a^ɪ', 'I'],
    ['a^ʊ', 'W'],
    ['d^z', 'ʣ'],
    ['d^ʒ', 'ʤ'],
    ['e^ɪ', 'A'],
    ['o^ʊ', 'O'],
    ['ə^ʊ', 'Q'],
    ['s^s', 'S'],
    ['t^s', 'ʦ'],
    ['t^ʃ', 'ʧ'],
    ['ɔ^ɪ', 'Y'],
  ] as const
).toSorted(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));

/** misaki's corrections of espeak's tied IPA (see MISAKI_E2M). */
export function misakiEspeakPhonemes(tied: string): string {
  let out = tied;
  for (const [from, to] of MISAKI_E2M) out = out.replaceAll(from, to);
  return out.replace(/\^/g, '').replace(/-/g, '');
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

/** This thread's espeak-ng, once loaded (see {@link loadPhonemizer}). */
export function loadedEspeak(): Espeak {
  if (espeak === undefined) throw new Error('espeak-ng is not loaded in this thread');
  return espeak;
}

/**
 * How Latin words in Japanese or Chinese `text` are read: as American English (espeak-ng's
 * `en-us`), loading espeak-ng only when the text has such a word.
 */
export async function latinWordReader(text: string): Promise<(word: string) => string> {
  if (/[A-Za-z]/.test(text)) await loadPhonemizer();
  return (word) => loadedEspeak().phonemes(word, 'en-us');
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
 * Phonemizes already-normalized text with espeak-ng's `voice`, as misaki does: each word run on
 * its own (espeak keeps its voice loaded between calls), punctuation runs verbatim between them.
 */
export async function phonemizeWithEspeak(text: string, voice: string): Promise<string> {
  await loadPhonemizer();
  const engine = loadedEspeak();
  const pieces: string[] = [];
  for (const part of splitOnPunctuation(text)) {
    if (part.punctuation) pieces.push(part.text);
    else if (part.text.trim() !== '') {
      // Keep the spaces around a word run, so "a, b" stays two words in the phoneme string.
      const lead = /^\s/.test(part.text) ? ' ' : '';
      const trail = /\s$/.test(part.text) ? ' ' : '';
      const word = part.text.trim();
      pieces.push(lead + misakiEspeakPhonemes(engine.phonemes(word, voice, '^')) + trail);
    }
  }
  return pieces.join('').replace(/ {2,}/g, ' ').trim();
}
