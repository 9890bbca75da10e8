/**
 * What the text front end knows of one language: one object per language, in its own module of
 * this folder, listed once in index.ts. Everything that differs by language (its names, its
 * normalizer, its G2P and when that loads, its warm-up text, how dictionaries match in it) is
 * asked of this object instead of switching on Kokoro's letter.
 */
import type { LanguageCode } from '../../kokoro/constants.ts';
import type { NormalizationOptions } from '../normalization-options.ts';

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
