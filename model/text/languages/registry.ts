/**
 * A registry of languages: the tables that name them (a request's `lang`, a PLS lexicon's
 * `xml:lang`) derived from the languages' own modules, and each language found by its letter.
 * Pure: index.ts builds the one this server serves.
 */
import type { LanguageCode } from '../../kokoro/constants.ts';
import { DEFAULT_NORMALIZATION, type NormalizationOptions } from '../normalization-options.ts';
import { keepAsWritten } from '../normalize.ts';
import type { Language } from './language.ts';

export interface LanguageRegistry {
  /** The languages, in the order given (Kokoro's). */
  readonly languages: readonly Language[];
  /** Their letters, in that order. */
  readonly codes: readonly LanguageCode[];
  /** The language of `code`, or undefined when none is registered. */
  find(code: string): Language | undefined;
  /** The language a request's `lang` names (letter, tag or alias, any case), or undefined. */
  parse(name: string): LanguageCode | undefined;
  /** The language a PLS lexicon's `xml:lang` names, or undefined (see {@link plsLanguage}). */
  parsePls(tag: string): LanguageCode | undefined;
  /** What a PLS lexicon's `xml:lang` may be, for messages: `en-US, en-GB, es … or zh`. */
  readonly plsNames: string;
  /** A language's spoken form under a request's switches (see {@link normalizeWith}). */
  normalize(text: string, code: LanguageCode, options?: NormalizationOptions): string;
  /** Normalized text → Kokoro's phonemes, by the language's G2P. */
  phonemize(text: string, code: LanguageCode): Promise<string>;
}

/** Each name → its language; a name claimed twice is a mistake in the modules, refused at once. */
function nameTable(entries: Iterable<readonly [string, LanguageCode]>): ReadonlyMap<string, LanguageCode> {
  const table = new Map<string, LanguageCode>();
  for (const [name, code] of entries) {
    const key = name.toLowerCase();
    const before = table.get(key);
    if (before !== undefined && before !== code)
      throw new Error(`language name ${JSON.stringify(name)} is claimed by both '${before}' and '${code}'`);
    table.set(key, code);
  }
  return table;
}

/** `a, b or c`. */
const orList = (names: readonly string[]): string =>
  names.length < 2 ? names.join('') : `${names.slice(0, -1).join(', ')} or ${names.at(-1)}`;

export function createRegistry(languages: readonly Language[]): LanguageRegistry {
  const byCode = new Map<string, Language>();
  for (const language of languages) {
    if (byCode.has(language.code)) throw new Error(`language '${language.code}' is registered twice`);
    byCode.set(language.code, language);
  }
  const names = nameTable(
    languages.flatMap((l) => [l.code, l.tag, ...l.aliases].map((name) => [name, l.code] as const)),
  );
  const pls = nameTable(languages.flatMap((l) => l.plsTags.map((tag) => [tag, l.code] as const)));
  const find = (code: string) => byCode.get(code);
  const language = (code: LanguageCode, what: string) => {
    const found = find(code);
    if (found === undefined) throw new Error(`No ${what} for language '${code}'`);
    return found;
  };
  return {
    languages,
    codes: languages.map((l) => l.code),
    find,
    parse: (name) => names.get(name.toLowerCase()),
    parsePls: (tag) => plsLanguage(pls, tag),
    plsNames: orList(languages.map((l) => l.plsTags[0]!)),
    normalize: (text, code, options = DEFAULT_NORMALIZATION) =>
      normalizeWith(language(code, 'normalization'), text, options),
    phonemize: (text, code) => language(code, 'phonemizer').phonemize(text),
  };
}

/**
 * A PLS `xml:lang` → its language. A region is ignored (`fr-CA` is French) unless the languages
 * tell regions apart, as English (`en-US`, `en-GB`) and Portuguese (`pt-BR`) do: there the whole
 * tag must be one of theirs (`en-AU` is none).
 */
function plsLanguage(table: ReadonlyMap<string, LanguageCode>, tag: string): LanguageCode | undefined {
  const lower = tag.toLowerCase();
  const primary = lower.split('-')[0]!;
  const regional = [...table.keys()].some((k) => k.startsWith(`${primary}-`));
  return table.get(lower) ?? (regional ? undefined : table.get(primary));
}

/**
 * The normalization of a language under a request's switches (`normalization_options`; absent:
 * DEFAULT_NORMALIZATION, what it has always done). English honours every switch (normalize.ts).
 * The other languages have no unit, phone, URL, e-mail, plural or symbol reader, so only
 * `normalize` applies to them: false sends the text as written (keepAsWritten: control characters
 * dropped, white space collapsed), skipping the money and number rules, Japanese kana numbers and
 * NFKC, Mandarin numbers and punctuation.
 */
function normalizeWith(language: Language, text: string, options: NormalizationOptions): string {
  return options.normalize ? language.normalize(text, options) : keepAsWritten(text);
}
