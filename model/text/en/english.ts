/**
 * The English front end as Kokoro was trained with it: misaki's G2P (g2p.ts) over misaki's
 * lexicons, spaCy's tokenizer rules (tokenizer.ts), a part-of-speech tagger from npm (en-pos; why
 * that one: docs/english-pos-tagger.md) and misaki's espeak mapping for words in no lexicon.
 * Without the lexicon files the whole text goes through misaki's espeak mapping instead, so the
 * model still hears only misaki's symbols; `frontEnd` says which runs.
 *
 * The lexicons are misaki's data files (Apache-2.0), fetched with the weights (`npm run
 * fetch-model`), never committed: `us_gold.json`, `us_silver.json`, `gb_gold.json`,
 * `gb_silver.json` in one directory.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Tag as EnPosTag } from 'en-pos';
import { espeakFallback } from './espeak-fallback.ts';
import { G2P, type MToken } from './g2p.ts';
import { Lexicon, growDictionary, type Entry } from './lexicon.ts';
import { tokenize } from './tokenizer.ts';

/** misaki's data files, per dialect. */
export const LEXICON_FILES = {
  a: ['us_gold.json', 'us_silver.json'],
  b: ['gb_gold.json', 'gb_silver.json'],
} as const;

export type EnglishLang = keyof typeof LEXICON_FILES;
/** Which English front end runs: misaki with its lexicon, or misaki's espeak mapping alone. */
export type EnglishFrontEnd = 'misaki' | 'misaki-espeak';

/** Whether `dir` holds both lexicon files of `lang`. */
export function hasLexicon(dir: string | undefined, lang: EnglishLang): boolean {
  return dir !== undefined && LEXICON_FILES[lang].every((f) => existsSync(join(dir, f)));
}

/** Reads one dialect's gold and silver lexicons, grown as misaki grows them. */
export function loadLexicon(dir: string, lang: EnglishLang): Lexicon {
  const [gold, silver] = LEXICON_FILES[lang].map((f) =>
    growDictionary(JSON.parse(readFileSync(join(dir, f), 'utf8')) as Record<string, Entry>),
  );
  return new Lexicon(gold!, silver!, lang === 'b');
}

// en-pos writes a few tags its own way; spaCy's tagger (what misaki reads) writes these.
const EN_POS_TAGS: Readonly<Record<string, string>> = { '(': '-LRB-', ')': '-RRB-', EM: 'NFP' };
const CLOSING = new Set(['.', ',', '!', '?', ';', ':', ')', ']', '}', '…']);

/**
 * Penn Treebank tags for tokens, as spaCy would give them where it matters to misaki: en-pos for
 * words; punctuation, currency signs and numbers by their form (spaCy's tags for those are
 * all but fixed), and a straight double quote as opening (``) or closing ('') by its place.
 */
export function tagTokens(tokens: readonly string[]): string[] {
  const tags = tokens.length === 0 ? [] : new EnPosTag([...tokens]).initial().smooth().tags;
  // A straight quote opens when it is the first, third, fifth… so far (counted once, not per quote).
  let quotesBefore = 0;
  return tokens.map((t, i) => {
    if (/^[.!?]+$/.test(t)) return '.';
    if (t === ',') return ',';
    if (/^[;:]$|^-{2,}$|^[—–]$|^…$|^\.{2,}$/.test(t)) return ':';
    if (t === '(' || t === '[' || t === '{') return '-LRB-';
    if (t === ')' || t === ']' || t === '}') return '-RRB-';
    if (t === '“' || t === '‘') return '``';
    if (t === '”' || t === '’') return "''";
    if (t === '"' || t === "''" || t === '``') {
      const next = tokens[i + 1];
      const opens = quotesBefore % 2 === 0;
      quotesBefore += t === '"' ? 1 : 0;
      return i === tokens.length - 1 || next === undefined || CLOSING.has(next) ? "''" : opens ? '``' : "''";
    }
    if (t === '$' || t === '£' || t === '€' || t === '¥' || t === '₹') return '$';
    if (t === '#') return '#';
    if (/^[-+]?[\d,.]*\d[\d,.]*$/.test(t)) return 'CD';
    if (t === '-') return 'HYPH';
    if (/^vs\.?$/i.test(t)) return 'IN';
    const tag = tags[i] ?? 'NN';
    if (t === 'that' || t === 'That') return thatTag(tag, tokens[i + 1], tags[i + 1], tags[i - 1]);
    return EN_POS_TAGS[tag] ?? tag;
  });
}

/**
 * "that" as spaCy tags it where misaki's lexicon cares (determiner `ðˈæt` or not `ðæt`): en-pos
 * calls the demonstrative a preposition in places where spaCy does not. A determiner before
 * nothing or punctuation ("like that!"), before `'s` ("that's"), and before a noun, adjective or
 * number right after a preposition ("of that hall", "into that garden"); else what en-pos said.
 * Each rule was kept only if it raised agreement on "that" in UD English EWT's dev and test sets;
 * rules for a following verb or preposition lowered it (docs/english-pos-tagger.md has the figures).
 */
function thatTag(
  tag: string,
  next: string | undefined,
  nextTag: string | undefined,
  prevTag: string | undefined,
): string {
  if (next === undefined || !/\p{L}/u.test(next)) return 'DT';
  if (/^['’]s$/.test(next)) return 'DT';
  if (/^(NN|JJ|CD)/.test(nextTag ?? '') && (prevTag === 'IN' || prevTag === 'TO')) return 'DT';
  return tag;
}

export interface English {
  readonly frontEnd: EnglishFrontEnd;
  /** Text (already normalized) → misaki's phoneme string, and its tokens when misaki ran. */
  phonemize(text: string): { phonemes: string; tokens: readonly MToken[] };
}

/**
 * The English front end of one dialect. `espeakTied` is espeak-ng's IPA with `^` ties for a piece
 * of text in that dialect's voice.
 */
export function createEnglish(
  lang: EnglishLang,
  lexiconDir: string | undefined,
  espeakTied: (text: string) => string,
): English {
  const british = lang === 'b';
  const fallback = espeakFallback(espeakTied, british);
  if (lexiconDir === undefined || !hasLexicon(lexiconDir, lang)) {
    const g2p = new G2P({
      lexicon: new Lexicon(new Map(), new Map(), british),
      tokenize,
      tag: tagTokens,
      fallback,
      unk: '',
    });
    return { frontEnd: 'misaki-espeak', phonemize: (text) => g2p.phonemize(text) };
  }
  const g2p = new G2P({
    lexicon: loadLexicon(lexiconDir, lang),
    tokenize,
    tag: tagTokens,
    fallback,
    unk: '',
  });
  return { frontEnd: 'misaki', phonemize: (text) => g2p.phonemize(text) };
}
