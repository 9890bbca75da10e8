/**
 * What the text front end knows of one language: one object per language, in its own module of
 * this folder, listed once in index.ts. Everything that differs by language (its names, its
 * normalizer, its G2P and when that loads, its warm-up text, how dictionaries match in it, how
 * say-as and IPA are read in it, its test corpus) is asked of this object instead of switching on
 * Kokoro's letter.
 */
import type { LanguageCode } from '../../kokoro/constants.ts';
import type { EspeakNumbers } from '../normalize-intl.ts';
import type { NormalizationOptions } from '../normalization-options.ts';

/** What an SSML `<say-as>` may be read as (say-as.ts maps each `interpret-as` spelling to one). */
// prettier-ignore
export type SayAsKind =
  'characters' | 'cardinal' | 'ordinal' | 'digits' | 'telephone' | 'date' | 'time' | 'currency' | 'unit';

/** What every language's say-as readers need. */
interface SayAsCommon {
  /** The kinds it has no reader for: refused, and the text read as written. */
  readonly unsupported: readonly SayAsKind[];
  /** The words for `+` (a telephone number's) and `−` (a number's), where its readers do not say them. */
  readonly plus: string;
  readonly minus: string;
}

/**
 * How say-as.ts reads a language: which family of readers (numbers in English words, digits that
 * espeak-ng reads in the voice's language, kana, Chinese numerals) and what that family asks of it.
 */
export type SayAsReading =
  | (SayAsCommon & {
      readonly family: 'english';
      /** "and" in numbers, the day before the month, British money and units. */
      readonly british: boolean;
    })
  | (SayAsCommon & {
      readonly family: 'espeak';
      /** Its decimal mark, number grouping and money words: the ones its normalizer uses. */
      readonly numbers: EspeakNumbers;
      /** Ordinal `n` (digits) as espeak-ng reads it in this language: `1º`, `1ª`, `1er`. */
      ordinal(n: string, feminine: boolean): string;
    })
  | (SayAsCommon & { readonly family: 'japanese' })
  | (SayAsCommon & { readonly family: 'chinese' });

/**
 * How IPA written for it (SSML `<phoneme>`, PLS lexicons) becomes Kokoro's symbols (ipa.ts):
 * misaki's American or British English set, espeak-ng's IPA as misaki maps it, or as written
 * (only affricates joined).
 */
export type IpaConvention = 'american' | 'british' | 'espeak' | 'plain';

export interface Language {
  /** Kokoro's letter: the first letter of the language's voice ids. */
  readonly code: LanguageCode;
  /** Its name in listings and messages: `American English`. */
  readonly name: string;
  /** Its BCP 47 tag, as listings and browsers name it: `en-US`. */
  readonly tag: string;
  /**
   * Other names a request's `lang` may use for it, besides the letter and the tag (any case):
   * the names Kokoro's own pipeline accepts (`zh`), ISO 639-3 (`cmn`).
   */
  readonly aliases: readonly string[];
  /** The `xml:lang` values of a PLS lexicon in this language (any case); the first is shown in errors. */
  readonly plsTags: readonly string[];
  /**
   * Whether words are set apart by spaces: dictionary entries then match whole words only;
   * without (Japanese, Mandarin) an entry matches anywhere in a run.
   */
  readonly spaced: boolean;
  /** Whether the G2P reads misaki's stress markdown (`[word](+1)`) itself; else the word is read plain. */
  readonly readsStressMarkup: boolean;
  /** How `<say-as>` is read in it; absent, every kind is refused (its text read as written). */
  readonly sayAs?: SayAsReading;
  /** How IPA written for it becomes Kokoro's symbols. */
  readonly ipa: IpaConvention;
  /**
   * Its corpus in test/fixtures/corpora/ (`es` → es.txt), on which its vocabulary coverage is
   * tested and benchmarked; English, without one, uses the benchmark texts.
   */
  readonly corpus?: string;
  /** Varied sentences run through the front end at warm-up, so its first request is not the cold one. */
  readonly warmUp: readonly string[];
  /** The front end reading it in this thread, as reported (`misaki`, `espeak-ng`, `misaki-ja`…). */
  frontEnd(): string;
  /** Loads the G2P in this thread (once); heavy libraries are imported here, never at startup. */
  load(): Promise<void>;
  /** Written text → the spoken form the G2P reads, under a request's switches (`normalize` is on). */
  normalize(text: string, options: NormalizationOptions): string;
  /** Normalized text → Kokoro's phonemes, loading the G2P first when needed. */
  phonemize(text: string): Promise<string>;
}
