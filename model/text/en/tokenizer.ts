/**
 * English tokenizer: spaCy v3.8's rule-based `Tokenizer` with the English defaults, which is the
 * tokenizer of `en_core_web_sm` and so the one misaki (`misaki/en.py`, `doc = nlp(text)`) splits text
 * with before it looks tokens up in its lexicon. `tokenize()` returns the tokens spaCy would, each with
 * its `whitespace_` (one space or nothing); joined they give back the input.
 *
 * Ported from explosion/spaCy (v3.8): the algorithm from `spacy/tokenizer.pyx` (`_tokenize_affixes`,
 * `_split_affixes`, `_attach_tokens`, `_apply_special_cases`, `_filter_special_spans`) and
 * `spacy/matcher/phrasematcher.pyx` (`find_matches`); the data from `spacy/lang/char_classes.py`,
 * `spacy/lang/punctuation.py` (prefixes, suffixes), `spacy/lang/en/punctuation.py` (English infixes),
 * `spacy/lang/tokenizer_exceptions.py` (base exceptions, emoticons, `URL_MATCH`),
 * `spacy/lang/en/tokenizer_exceptions.py`, and `spacy/util.py` (`compile_*_regex`, `update_exc`). English
 * sets no `token_match` (`BaseDefaults` in `spacy/language.py`).
 *
 * 1. Cut the text into runs of whitespace and of non-whitespace (Python's `str.isspace`). One plain
 *    space after a run becomes that token's whitespace; any other whitespace is a token of its own.
 * 2. A run that is a special case (tokenizer exception: `don't` → `do` `n't`) is replaced by its tokens.
 * 3. Otherwise strip prefixes and suffixes, one of each per round, until none is left, stopping as soon
 *    as the rest is a special case (`(don't)` → `(`, `do` `n't`, `)`).
 * 4. The rest is a special case, or a URL (kept whole), or is split at its infixes (`well-known`).
 * 5. Last, special cases whose text spaCy itself splits (`:)` → `:` `)`) are put back together where
 *    their pieces stand side by side (`Hi:)` → `Hi` `:)`).
 *
 * Regexes match by code point (`u` flag), as Python's do. The patterns are in tokenizer-patterns.ts,
 * the special cases in tokenizer-exceptions.ts. Pure: no I/O, no dependencies.
 */
import { special, SPECIALS } from './tokenizer-exceptions.ts';
import { INFIX_RE, isSpace, PREFIX_RE, SUFFIX_RE, SUFFIX_WINDOW, URL_RE } from './tokenizer-patterns.ts';

export interface Token {
  readonly text: string;
  /** `' '` when one plain space follows the token in the input, else `''` (spaCy's `whitespace_`). */
  readonly whitespace: string;
}

// ---------------------------------------------------------------------------------------------------
// The tokenizer (spacy/tokenizer.pyx).

function prefixLength(s: string): number {
  PREFIX_RE.lastIndex = 0;
  const m = PREFIX_RE.exec(s);
  return m ? m[0].length : 0;
}

function suffixLength(s: string): number {
  let from = s.length - SUFFIX_WINDOW;
  if (s.charCodeAt(s.length - 1) === 0x2e) {
    let dot = s.length - 1;
    while (dot > 0 && s.charCodeAt(dot - 1) === 0x2e) dot--;
    from = Math.min(from, dot);
  }
  // Not inside a surrogate pair.
  if (from > 0 && (s.charCodeAt(from) & 0xfc00) === 0xdc00) from--;
  SUFFIX_RE.lastIndex = Math.max(0, from);
  const m = SUFFIX_RE.exec(s);
  return m ? m[0].length : 0;
}

function hasInfix(s: string): boolean {
  INFIX_RE.lastIndex = 0;
  return INFIX_RE.test(s);
}

/** The growing list of tokens: texts and whether one space follows each. */
interface Doc {
  words: string[];
  spaces: boolean[];
}

function push(doc: Doc, word: string): void {
  doc.words.push(word);
  doc.spaces.push(false);
}

/**
 * `_split_affixes`: strips prefixes (kept in order) and suffixes (kept innermost last) off `s` and
 * returns the rest. A round strips one prefix and one suffix, the suffix searched for after the
 * prefix; it stops early when what is left is a special case.
 */
function splitAffixes(s: string, withSpecials: boolean, prefixes: string[], suffixes: string[]): string {
  let lastLength = -1;
  while (s.length > 0 && s.length !== lastLength) {
    if (withSpecials && special(s)) break;
    lastLength = s.length;
    const pre = prefixLength(s);
    if (pre > 0) {
      const minusPre = s.slice(pre);
      if (minusPre && withSpecials && special(minusPre)) {
        prefixes.push(s.slice(0, pre));
        s = minusPre;
        break;
      }
    }
    const suf = suffixLength(pre > 0 ? s.slice(pre) : s);
    if (suf > 0) {
      const minusSuf = s.slice(0, s.length - suf);
      if (minusSuf && withSpecials && special(minusSuf)) {
        suffixes.push(s.slice(s.length - suf));
        s = minusSuf;
        break;
      }
    }
    if (pre > 0) prefixes.push(s.slice(0, pre));
    if (suf > 0) suffixes.push(s.slice(s.length - suf));
    s = s.slice(pre, s.length - suf);
  }
  return s;
}

/** `_attach_tokens`: the prefixes, then the middle (special case, URL or split at infixes), then the suffixes. */
function attachTokens(
  doc: Doc,
  s: string,
  withSpecials: boolean,
  prefixes: string[],
  suffixes: string[],
): void {
  for (const p of prefixes) push(doc, p);
  if (s) {
    const parts = withSpecials ? special(s) : undefined;
    if (parts) {
      for (const p of parts) push(doc, p);
    } else if (URL_RE.test(s)) {
      push(doc, s);
    } else {
      let start = 0;
      INFIX_RE.lastIndex = 0;
      for (let m = INFIX_RE.exec(s); m; m = INFIX_RE.exec(s)) {
        const at = m.index;
        // An infix at the very start is no split point (spaCy skips it and keeps it in the next piece).
        if (at === 0) continue;
        if (at !== start) push(doc, s.slice(start, at));
        push(doc, m[0]);
        start = at + m[0].length;
      }
      if (start < s.length) push(doc, start === 0 ? s : s.slice(start));
    }
  }
  for (let i = suffixes.length - 1; i >= 0; i--) push(doc, suffixes[i]!);
}

/** Chunk → tokens, for chunks already seen (spaCy keeps one of the same size); emptied when full. */
const chunkCache = new Map<string, readonly string[]>();
const CACHE_SIZE = 10_000;
/**
 * Only short chunks, which are most words: V8 copies substrings shorter than 13 code units, while a
 * longer one points into the whole text and would keep it alive in the cache.
 */
const CACHEABLE_LENGTH = 12;

/** `_tokenize` for one run of whitespace or of non-whitespace. */
function tokenizeChunk(doc: Doc, chunk: string, withSpecials: boolean): void {
  const parts = withSpecials ? (special(chunk) ?? chunkCache.get(chunk)) : undefined;
  if (parts) {
    for (const p of parts) push(doc, p);
    return;
  }
  const first = doc.words.length;
  const prefixes: string[] = [];
  const suffixes: string[] = [];
  const rest = splitAffixes(chunk, withSpecials, prefixes, suffixes);
  attachTokens(doc, rest, withSpecials, prefixes, suffixes);
  if (withSpecials && chunk.length <= CACHEABLE_LENGTH) {
    if (chunkCache.size >= CACHE_SIZE) chunkCache.clear();
    chunkCache.set(chunk, doc.words.slice(first));
  }
}

/**
 * `_tokenize_affixes`: runs of whitespace and of non-whitespace are tokenized one by one. One plain
 * space after a token is its whitespace; a longer run of spaces leaves the rest as a token, and other
 * whitespace (a newline, a tab) is a token.
 */
function tokenizeAffixes(text: string, withSpecials: boolean): Doc {
  const doc: Doc = { words: [], spaces: [] };
  if (text.length === 0) return doc;
  let start = 0;
  let inSpace = isSpace(text.charCodeAt(0));
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (isSpace(c) === inSpace) continue;
    if (start < i) tokenizeChunk(doc, text.slice(start, i), withSpecials);
    if (c === 0x20) {
      doc.spaces[doc.spaces.length - 1] = true;
      start = i + 1;
    } else {
      start = i;
    }
    inSpace = !inSpace;
  }
  if (start < text.length) tokenizeChunk(doc, text.slice(start), withSpecials);
  return doc;
}

// ---------------------------------------------------------------------------------------------------
// The special-case pass (`_apply_special_cases`): spaCy's PhraseMatcher holds, for each special case
// that has a prefix, suffix or infix in it (its `faster_heuristics`), the tokens spaCy would split it
// into; where those tokens stand side by side in the text, they become the special case again.

interface TrieNode {
  next: Map<string, TrieNode>;
  /** A special case ends here. */
  end: boolean;
}

let trie: TrieNode | undefined;

function specialTrie(): TrieNode {
  if (trie) return trie;
  const root: TrieNode = { next: new Map(), end: false };
  for (const key of SPECIALS.keys()) {
    if (!(prefixLength(key) > 0 || hasInfix(key) || suffixLength(key) > 0 || key.includes(' '))) continue;
    const { words } = tokenizeAffixes(key, false);
    // One token that is its own special case (a lone `—`) would be put back as it was: skipping it
    // saves a match per such token, and a one-token span can never keep a longer one out.
    if (words.length === 0 || (words.length === 1 && SPECIALS.get(key)!.length === 1)) continue;
    let node = root;
    for (const word of words) {
      let child = node.next.get(word);
      if (!child) node.next.set(word, (child = { next: new Map(), end: false }));
      node = child;
    }
    node.end = true;
  }
  return (trie = root);
}

function applySpecialCases(doc: Doc): Doc {
  const { words, spaces } = doc;
  const root = specialTrie();
  // Matched spans by length (spans are short), each list in order of start.
  const byLength: number[][] = [];
  let found = false;
  for (let i = 0; i < words.length; i++) {
    let node = root.next.get(words[i]!);
    for (let j = i + 1; node; j++) {
      if (node.end) {
        (byLength[j - i] ??= []).push(i);
        found = true;
      }
      if (j >= words.length) break;
      node = node.next.get(words[j]!);
    }
  }
  if (!found) return doc;

  // `_filter_special_spans`: longest first, then leftmost; a span is kept when neither its first nor its
  // last token is taken, and every span, kept or not, takes its tokens.
  const taken = new Uint8Array(words.length);
  const kept: [number, number][] = [];
  for (let length = byLength.length - 1; length > 0; length--) {
    for (const start of byLength[length] ?? []) {
      const end = start + length;
      if (!taken[start] && !taken[end - 1]) kept.push([start, end]);
      taken.fill(1, start, end);
    }
  }
  kept.sort((a, b) => a[0] - b[0]);

  // `_retokenize_special_spans`: a kept span whose text (spaces inside included) is a special case is
  // replaced by it; one with a space inside is a false match of the matcher and stays as it is.
  const out: Doc = { words: [], spaces: [] };
  let i = 0;
  const copy = (k: number): void => {
    out.words.push(words[k]!);
    out.spaces.push(spaces[k]!);
  };
  for (const [start, end] of kept) {
    for (; i < start; i++) copy(i);
    let text = '';
    for (let k = start; k < end; k++) text += words[k]! + (k < end - 1 && spaces[k] ? ' ' : '');
    const parts = SPECIALS.get(text);
    if (parts) {
      for (const p of parts) push(out, p);
      out.spaces[out.spaces.length - 1] = spaces[end - 1]!;
      i = end;
    }
  }
  for (; i < words.length; i++) copy(i);
  return out;
}

/**
 * Splits English text into spaCy's tokens (`en_core_web_sm`'s tokenizer), each with its whitespace:
 * `' '` where one plain space follows, else `''`; further spaces and other whitespace are tokens of
 * their own, so the texts and whitespace of all tokens, joined, give back `text`.
 *
 * @example tokenize("Don't go!") // [{ text: 'Do', whitespace: '' }, { text: "n't", whitespace: ' ' },
 *   // { text: 'go', whitespace: '' }, { text: '!', whitespace: '' }]
 */
export function tokenize(text: string): Token[] {
  const { words, spaces } = applySpecialCases(tokenizeAffixes(text, true));
  return words.map((word, i) => ({ text: word, whitespace: spaces[i] ? ' ' : '' }));
}
