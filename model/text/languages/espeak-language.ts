/**
 * A language read by espeak-ng alone, with misaki's map (Spanish, French, Hindi, Italian,
 * Brazilian Portuguese): normalized by normalize-intl.ts (money and numbers in its words), then
 * phonemized with the espeak-ng voice Kokoro's pipeline asks for. say-as reads numbers as digits
 * espeak-ng reads in the voice's language, with the words it does not supply (plus, minus).
 */
import type { LanguageCode } from '../../kokoro/constants.ts';
import { loadPhonemizer, phonemizeWithEspeak } from '../espeak-g2p.ts';
import { normalizeIntl, type EspeakNumbers } from '../normalize-intl.ts';
import type { Language, SayAsKind } from './language.ts';

export interface EspeakLanguage {
  readonly code: LanguageCode;
  readonly name: string;
  readonly tag: string;
  readonly aliases?: readonly string[];
  readonly plsTags: readonly string[];
  /** espeak-ng's voice (Kokoro's pipeline asks for es, fr-fr, hi, it and pt-br; `fr` is fr-fr's voice). */
  readonly espeakVoice: string;
  /** Its decimal mark, number grouping and money words. */
  readonly numbers: EspeakNumbers;
  /** Its words for `+` and `−`. */
  readonly signs: { readonly plus: string; readonly minus: string };
  /** The say-as kinds it has no reader for; by default dates, times and units, which espeak-ng does not read. */
  readonly sayAsUnsupported?: readonly SayAsKind[];
  /** Ordinal `n` as espeak-ng reads it; by default `1º`, or `1ª` when written feminine. */
  readonly ordinal?: (n: string, feminine: boolean) => string;
  readonly corpus: string;
  readonly warmUp: readonly string[];
}

const ordinalMark = (n: string, feminine: boolean): string => `${n}${feminine ? 'ª' : 'º'}`;

export function espeakLanguage({
  code,
  espeakVoice,
  aliases = [],
  numbers,
  signs,
  sayAsUnsupported = ['date', 'time', 'unit'],
  ordinal = ordinalMark,
  ...facts
}: EspeakLanguage): Language {
  return {
    code,
    ...facts,
    aliases,
    spaced: true,
    readsStressMarkup: false,
    sayAs: { family: 'espeak', unsupported: sayAsUnsupported, ...signs, numbers, ordinal },
    ipa: 'espeak',
    frontEnd: () => 'espeak-ng',
    load: loadPhonemizer,
    normalize: (text) => normalizeIntl(text, numbers),
    phonemize: (text) => phonemizeWithEspeak(text, espeakVoice),
  };
}
