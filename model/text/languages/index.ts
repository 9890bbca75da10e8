/**
 * The languages this server reads, one module each, in Kokoro's order: adding a language is its
 * module and one line here. Everything else asks this registry by Kokoro's letter.
 */
import type { LanguageCode } from '../../kokoro/constants.ts';
import type { VoiceLanguages } from '../../kokoro/voices.ts';
import type { NormalizationOptions } from '../normalization-options.ts';
import { AMERICAN_ENGLISH, BRITISH_ENGLISH } from './english.ts';
import { SPANISH } from './es.ts';
import { FRENCH } from './fr.ts';
import { HINDI } from './hi.ts';
import { ITALIAN } from './it.ts';
import { JAPANESE } from './ja.ts';
import type { Language } from './language.ts';
import { BRAZILIAN_PORTUGUESE } from './pt-br.ts';
import { createRegistry } from './registry.ts';
import { MANDARIN } from './zh.ts';

export const REGISTRY = createRegistry([
  AMERICAN_ENGLISH,
  BRITISH_ENGLISH,
  SPANISH,
  FRENCH,
  HINDI,
  ITALIAN,
  JAPANESE,
  BRAZILIAN_PORTUGUESE,
  MANDARIN,
]);

/** What a listing or a message says of one language. */
export interface LanguageFacts {
  /** Kokoro's letter. */
  readonly code: LanguageCode;
  /** BCP 47 tag: `en-US`. */
  readonly tag: string;
  /** Its primary subtag (ISO 639-1, as vendors name languages): `en` for both English. */
  readonly iso: string;
  readonly name: string;
}

/** The languages served, in Kokoro's order, with their tags and names. */
export const LANGUAGE_FACTS: readonly LanguageFacts[] = REGISTRY.languages.map(({ code, tag, name }) => ({
  code,
  tag,
  iso: tag.split('-')[0]!.toLowerCase(),
  name,
}));

/** The letters of the languages served, in Kokoro's order. */
export const SERVED_LANGUAGES: readonly LanguageCode[] = REGISTRY.codes;

/** The language of a letter; throws for a letter no module serves. */
export function languageOf(code: LanguageCode): Language {
  const language = REGISTRY.find(code);
  if (language === undefined) throw new Error(`No language '${code}'`);
  return language;
}

/** The language a request's `lang` names (letter, BCP 47 tag or alias, any case), or undefined if none. */
export function parseLanguage(name: string): LanguageCode | undefined {
  return REGISTRY.parse(name);
}

/** Whether this server reads the language of Kokoro's letter `lang`. */
export function isSupportedLanguage(lang: string): boolean {
  return REGISTRY.find(lang) !== undefined;
}

/** A language's name (`American English`), or its letter when no module serves it. */
export const languageName = (code: LanguageCode): string => REGISTRY.find(code)?.name ?? code;

/** A language's BCP 47 tag (`en-US`), or its letter when no module serves it. */
export const languageTag = (code: LanguageCode): string => REGISTRY.find(code)?.tag ?? code;

/** What the voice catalog says of languages; `served`: a subset, for tests. */
export function voiceLanguages(served: readonly LanguageCode[] = SERVED_LANGUAGES): VoiceLanguages {
  return { served, name: languageName, tag: languageTag, parse: parseLanguage };
}

/** Text in `lang` → its spoken form, under a request's normalization switches (registry.ts). */
export function normalizeFor(text: string, lang: LanguageCode, options?: NormalizationOptions): string {
  return REGISTRY.normalize(text, lang, options);
}

export type { Language } from './language.ts';
export type { LanguageRegistry } from './registry.ts';
