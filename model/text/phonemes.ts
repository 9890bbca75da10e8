/**
 * Text → phonemes in any language served: each language's G2P, found in the registry
 * (languages/), loaded in this thread at its first use or at warm-up.
 *
 * The G2Ps are synchronous WebAssembly and native-speed JavaScript, the first calls much longer:
 * this module is meant to run inside an inference worker, never on the server's main thread.
 */
import type { LanguageCode } from '../kokoro/constants.ts';
import { loadPhonemizer } from './espeak-g2p.ts';
import { REGISTRY, languageOf, normalizeFor } from './languages/index.ts';

export { configureEnglish, englishFrontEnd } from './languages/english.ts';
export { isSupportedLanguage } from './languages/index.ts';
export { loadPhonemizer, misakiEspeakPhonemes, splitOnPunctuation } from './espeak-g2p.ts';

/**
 * The front end that reads `lang` in this thread: for English `misaki` (or `misaki-espeak`
 * without the lexicons), else misaki's own readers or espeak-ng with misaki's map.
 */
export function frontEndName(lang: LanguageCode): string {
  return languageOf(lang).frontEnd();
}

/** Loads the front end of one language in this thread (once): espeak-ng, kuromoji or jieba. */
export async function loadLanguage(lang: LanguageCode): Promise<void> {
  await languageOf(lang).load();
}

// Each language's warm-up text is varied, so the WebAssembly engine's hot paths and the
// language's dictionary are loaded and compiled before the first request: cold, the first
// sentences of a language take tens of milliseconds; after this, about one.
/** Loads espeak-ng and runs it over varied text in each of `langs` . */
export async function warmUpPhonemizer(langs: readonly LanguageCode[], rounds = 3): Promise<void> {
  await loadPhonemizer();
  for (const lang of langs) await loadLanguage(lang);
  for (let r = 0; r < rounds; r++) {
    for (const lang of langs) {
      for (const text of languageOf(lang).warmUp) await phonemize(normalizeFor(text, lang), lang);
    }
  }
}

/** Phonemizes already-normalized text for a supported language, by its G2P. */
export async function phonemize(text: string, lang: LanguageCode): Promise<string> {
  return REGISTRY.phonemize(text, lang);
}
