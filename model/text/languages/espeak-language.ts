/**
 * A language read by espeak-ng alone, with misaki's map (Spanish, French, Hindi, Italian,
 * Brazilian Portuguese): normalized by normalize-intl.ts (money and numbers in its words), then
 * phonemized with the espeak-ng voice Kokoro's pipeline asks for.
 */
import { loadPhonemizer, phonemizeWithEspeak } from '../espeak-g2p.ts';
import { normalizeIntl, type EspeakLang } from '../normalize-intl.ts';
import type { Language } from './language.ts';

export interface EspeakLanguage {
  readonly code: EspeakLang;
  readonly name: string;
  readonly tag: string;
  readonly aliases?: readonly string[];
  readonly plsTags: readonly string[];
  /** espeak-ng's voice (Kokoro's pipeline asks for es, fr-fr, hi, it and pt-br; `fr` is fr-fr's voice). */
  readonly espeakVoice: string;
  readonly warmUp: readonly string[];
}

export function espeakLanguage({ code, espeakVoice, aliases = [], ...facts }: EspeakLanguage): Language {
  return {
    code,
    ...facts,
    aliases,
    spaced: true,
    readsStressMarkup: false,
    frontEnd: () => 'espeak-ng',
    load: loadPhonemizer,
    normalize: (text) => normalizeIntl(text, code),
    phonemize: (text) => phonemizeWithEspeak(text, espeakVoice),
  };
}
