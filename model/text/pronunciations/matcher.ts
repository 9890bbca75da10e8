/**
 * Entries compiled into a matcher for one language (a trie per dictionary), dictionaries merged
 * without copying, and a sentence cut into the parts the front end reads (parts.ts).
 */
import type { LanguageCode } from '../../kokoro/constants.ts';
import { languageOf } from '../languages/index.ts';
import type { SpeechPart } from '../parts.ts';
import type { PronunciationEntries } from './entries.ts';

/** A trie over tokens (see {@link applyPronunciations}). */
export interface PronunciationNode {
  next?: Map<string, PronunciationNode>;
  /** The fields of the part a match becomes, besides its text. */
  part?: { readonly phonemes: string } | { readonly spoken: string };
}

/** One dictionary: entries written in lower case (matched in any case), and the others (exactly). */
export interface PronunciationLayer {
  readonly folded: PronunciationNode;
  readonly exact: PronunciationNode;
}

export interface PronunciationMatcher {
  readonly lang: LanguageCode;
  /** Entries over all layers. */
  readonly size: number;
  /** Where the layers come from (file names, `request`), the overriding first, as `layers`. */
  readonly sources: readonly string[];
  readonly layers: readonly PronunciationLayer[];
}

/** Languages written without spaces (Japanese, Mandarin): their entries match inside longer runs. */
const isSpaced = (lang: LanguageCode): boolean => languageOf(lang).spaced;

const SPACED_TOKENS = /[\p{L}\p{N}\p{M}]+|\s+|[^]/gu;
const UNSPACED_TOKENS = /\s+|[^]/gu;
const WORD_START = /^[\p{L}\p{N}\p{M}]/u;
const tokensOf = (text: string, spaced: boolean): string[] =>
  text.match(spaced ? SPACED_TOKENS : UNSPACED_TOKENS) ?? [];
/** A token's key in the trie: any run of white space is one space. */
const keyOf = (token: string): string => (/^\s/.test(token) ? ' ' : token);

/**
 * The matcher of one language: `entries` for `lang` and for `*`, a language's own entry winning
 * over `*`'s for the same word. `source` names where they come from (a file name), for logs.
 */
export function compilePronunciations(
  entries: PronunciationEntries,
  lang: LanguageCode,
  source: string,
): PronunciationMatcher {
  const layer: PronunciationLayer = { folded: {}, exact: {} };
  const spaced = isSpaced(lang);
  let size = 0;
  for (const entry of [...(entries['*'] ?? []), ...(entries[lang] ?? [])]) {
    let node = entry.word === entry.word.toLowerCase() ? layer.folded : layer.exact;
    for (const key of tokensOf(entry.word, spaced).map(keyOf)) {
      node.next ??= new Map();
      node = node.next.get(key) ?? node.next.set(key, {}).get(key)!;
    }
    if (node.part === undefined) size++;
    node.part = 'phonemes' in entry ? { phonemes: entry.phonemes } : { spoken: entry.alias };
  }
  return { lang, size, sources: [source], layers: [layer] };
}

/**
 * `override`'s entries over `base`'s (a request's over the server's file), without copying either:
 * where both match at a position, the longer match wins, and for the same span `override`'s.
 */
export function mergePronunciations(
  base: PronunciationMatcher | undefined,
  override: PronunciationMatcher | undefined,
): PronunciationMatcher | undefined {
  if (override === undefined || override.size === 0) return base;
  if (base === undefined || base.size === 0) return override;
  if (base.lang !== override.lang)
    throw new Error(`cannot merge pronunciations of language ${override.lang} over ${base.lang}`);
  return {
    lang: base.lang,
    size: base.size + override.size,
    sources: [...override.sources, ...base.sources],
    layers: [...override.layers, ...base.layers],
  };
}

type Match = { readonly end: number; readonly chars: number; readonly part: PronunciationNode['part'] & {} };

/**
 * `text` cut into parts: each span an entry matches becomes `{ text: span, phonemes }` or
 * `{ text: span, spoken: alias }`, the rest `{ text }`; the parts' texts joined give `text` back.
 *
 * Matching rules:
 * - Whole words, except in Japanese and Mandarin: no letter, digit or mark (`[\p{L}\p{N}\p{M}]`)
 *   right before or after a match. Punctuation is a boundary: `Kokoro` matches in `Kokoro's` and
 *   `(Kokoro)`, not in `Kokoros`. Japanese and Mandarin have no spaces: an entry matches anywhere.
 * - Case: an entry written all in lower case matches in any case (`kokoro` matches `KOKORO`); an
 *   entry with a capital matches only as written (`US` does not match `us`).
 * - A phrase's words match across any run of white space (`New York` matches `New\n  York`).
 * - Left to right, the longest match (most characters) at each position, no overlaps. For the same
 *   span, an overriding dictionary's entry wins (see {@link mergePronunciations}), then one written
 *   with capitals over one in lower case.
 * - Aliases are read as they are, not through the dictionary again.
 *
 * Linear: the text's tokens (words, white-space runs, other characters) × the most tokens in an
 * entry. Without entries, no work at all.
 */
export function applyPronunciations(text: string, matcher: PronunciationMatcher | undefined): SpeechPart[] {
  if (matcher === undefined || matcher.size === 0 || text === '') return [{ text }];
  const spaced = isSpaced(matcher.lang);
  const tokens = tokensOf(text, spaced);
  const keys = tokens.map(keyOf);
  const lower = keys.map((k) => k.toLowerCase());
  const isWord = tokens.map((t) => spaced && WORD_START.test(t));

  /** The longest match from token `from` in one trie, when longer than `best`. */
  const walk = (root: PronunciationNode, from: number, byKey: readonly string[], best: Match | undefined) => {
    let node: PronunciationNode | undefined = root;
    let chars = 0;
    for (let j = from; j < tokens.length && node !== undefined; j++) {
      node = node.next?.get(byKey[j]!);
      chars += tokens[j]!.length;
      if (node?.part !== undefined && !isWord[j + 1] && j + 1 > (best?.end ?? 0))
        best = { end: j + 1, chars, part: node.part };
    }
    return best;
  };

  const parts: SpeechPart[] = [];
  let plainFrom = 0;
  let offset = 0;
  for (let i = 0; i < tokens.length; ) {
    let best: Match | undefined;
    if (!isWord[i - 1])
      for (const layer of matcher.layers)
        best = walk(layer.folded, i, lower, walk(layer.exact, i, keys, best));
    if (best === undefined) {
      offset += tokens[i++]!.length;
      continue;
    }
    if (offset > plainFrom) parts.push({ text: text.slice(plainFrom, offset) });
    parts.push({ text: text.slice(offset, offset + best.chars), ...best.part });
    offset = plainFrom = offset + best.chars;
    i = best.end;
  }
  if (plainFrom < text.length) parts.push({ text: text.slice(plainFrom) });
  return parts;
}
