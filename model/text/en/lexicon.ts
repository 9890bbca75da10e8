/**
 * misaki's English lexicon and its word rules, as Kokoro-82M v1.0 was trained with them: the gold
 * and silver dictionaries with their capitalization variants, part-of-speech-keyed heteronyms,
 * stress, the special words (a, an, the, to, in, I, used, by, vs), `-s`/`-ed`/`-ing` from stems,
 * letters and acronyms, numbers, years, ordinals, decimals and currency.
 *
 * The facts are those of misaki's `Lexicon` class (hexgrad/misaki, `misaki/en.py`, commit
 * fba1236); the code is ours. Python's string predicates are spelled out where JavaScript has
 * none (`isalpha`, `isupper` by comparison, `capitalize`), so that a word takes the same branch it
 * takes in misaki.
 */
import { cardinal, decimal, ordinal, year } from './num2words.ts';

/** A lexicon value: one pronunciation, or one per part of speech (`DEFAULT` always present). */
export type Entry = string | Readonly<Record<string, string | null>>;
/** A dictionary as the rules read it: a word's entry, if it has one. */
export interface Dictionary {
  get(word: string): Entry | undefined;
  has(word: string): boolean;
}

/** What the lexicon is asked about a token: misaki's `MToken` fields that its rules read. */
export interface WordToken {
  readonly text: string;
  /** Penn Treebank tag, as spaCy's tagger gives it. */
  readonly tag: string;
  readonly alias?: string | undefined;
  /** A stress asked for by markup (`[word](+1)`), or merged from sub-tokens. */
  readonly stress?: number | undefined;
  readonly currency?: string | undefined;
  /** False for a token that continues the previous one with no space between (sub-tokens). */
  readonly isHead: boolean;
  readonly numFlags: string;
}

/** What follows the word being read, which misaki reads right to left. */
export interface TokenContext {
  /** Whether the next word starts with a vowel sound (undefined: punctuation or nothing follows). */
  readonly futureVowel: boolean | undefined;
  /** Whether the next word is "to". */
  readonly futureTo: boolean;
}

/** Phonemes and misaki's rating of them (null phonemes: not found; a rating may still come with it). */
export type Rated = readonly [phonemes: string | null, rating: number | null];
const NONE: Rated = [null, null];

export const PRIMARY_STRESS = 'ˈ';
export const SECONDARY_STRESS = 'ˌ';
const STRESSES = 'ˌˈ';
export const VOWELS = new Set('AIOQWYaiuæɑɒɔəɛɜɪʊʌᵻ');
export const CONSONANTS = new Set('bdfhjklmnpstvwzðŋɡɹɾʃʒʤʧθ');
const DIPHTHONGS = new Set('AIOQWYʤʧ');
const US_TAUS = new Set('AIOWYiuæɑəɛɪɹʊʌ');

/** misaki's American and British symbol sets (`US_VOCAB`, `GB_VOCAB`); `ɐ` is added for "a". */
export const US_VOCAB = new Set('AIOWYbdfhijklmnpstuvwzæðŋɑɔəɛɜɡɪɹɾʃʊʌʒʤʧˈˌθᵊᵻʔ');
export const GB_VOCAB = new Set('AIQWYabdfhijklmnpstuvwzðŋɑɒɔəɛɜɡɪɹʃʊʌʒʤʧˈˌːθᵊ');

export const CURRENCIES: Readonly<Record<string, readonly [string, string]>> = {
  $: ['dollar', 'cent'],
  '£': ['pound', 'pence'],
  '€': ['euro', 'cent'],
};
const ORDINALS = new Set(['st', 'nd', 'rd', 'th']);
const ADD_SYMBOLS: Readonly<Record<string, string>> = { '.': 'dot', '/': 'slash' };
export const SYMBOLS: Readonly<Record<string, string>> = {
  '%': 'percent',
  '&': 'and',
  '+': 'plus',
  '@': 'at',
};
const CAP_STRESSES = [0.5, 2] as const;

// --- Python's string predicates -------------------------------------------------------------

const LETTERS = /^\p{L}+$/u;
/** Python's `str.isalpha()`: non-empty, every character a letter. */
export const isAlpha = (s: string): boolean => LETTERS.test(s);
const isUpper = (s: string): boolean => s === s.toUpperCase();
/** Python's `str.capitalize()`: the first character upper case, the rest lower. */
const capitalize = (s: string): string => s.charAt(0).toUpperCase() + s.slice(1).toLowerCase();
export const isDigits = (s: string): boolean => /^[0-9]+$/.test(s);
/** misaki's LEXICON_ORDS: apostrophe, hyphen and ASCII letters. */
const inLexiconOrds = (s: string): boolean => /^[-'A-Za-z]*$/.test(s);

// --- stress -----------------------------------------------------------------------------------

/** misaki's `apply_stress`: lowers, removes, adds or raises a word's stress marks. */
export function applyStress(ps: string, stress: number | undefined): string;
export function applyStress(ps: string | null, stress: number | undefined): string | null;
export function applyStress(ps: string | null, stress: number | undefined): string | null {
  if (ps === null || stress === undefined) return ps;
  const hasStress = [...STRESSES].some((s) => ps.includes(s));
  const hasVowel = [...ps].some((c) => VOWELS.has(c));
  if (stress < -1) return ps.replaceAll(PRIMARY_STRESS, '').replaceAll(SECONDARY_STRESS, '');
  if (stress === -1 || ((stress === 0 || stress === -0.5) && ps.includes(PRIMARY_STRESS)))
    return ps.replaceAll(SECONDARY_STRESS, '').replaceAll(PRIMARY_STRESS, SECONDARY_STRESS);
  if ((stress === 0 || stress === 0.5 || stress === 1) && !hasStress)
    return hasVowel ? restress(SECONDARY_STRESS + ps) : ps;
  if (stress >= 1 && !ps.includes(PRIMARY_STRESS) && ps.includes(SECONDARY_STRESS))
    return ps.replaceAll(SECONDARY_STRESS, PRIMARY_STRESS);
  if (stress > 1 && !hasStress) return hasVowel ? restress(PRIMARY_STRESS + ps) : ps;
  return ps;
}

/** Moves each stress mark to just before the next vowel at or after it (misaki's `restress`). */
function restress(ps: string): string {
  const chars = [...ps];
  const keyed = chars.map((c, i) => ({ c, key: i }));
  for (const [i, c] of chars.entries()) {
    if (!STRESSES.includes(c)) continue;
    const j = chars.findIndex((v, k) => k >= i && VOWELS.has(v));
    if (j < 0) throw new Error(`no vowel after a stress mark in ${ps}`); // misaki's next() would raise
    keyed[i] = { c, key: j - 0.5 };
  }
  return keyed
    .toSorted((a, b) => a.key - b.key)
    .map((k) => k.c)
    .join('');
}

export function stressWeight(ps: string | null): number {
  if (!ps) return 0;
  let w = 0;
  for (const c of ps) w += DIPHTHONGS.has(c) ? 2 : 1;
  return w;
}

export function parentTag(tag: string | undefined): string | undefined {
  if (tag === undefined) return tag;
  if (tag.startsWith('VB')) return 'VERB';
  if (tag.startsWith('NN')) return 'NOUN';
  if (tag.startsWith('ADV') || tag.startsWith('RB')) return 'ADV';
  if (tag.startsWith('ADJ') || tag.startsWith('JJ')) return 'ADJ';
  return tag;
}

/**
 * misaki's `grow_dictionary`: "word" also answers "Word", and "Word" also answers "word" (words
 * of two characters or more; an entry of the file itself always wins). A view over the parsed
 * file rather than a grown copy: building the copy cost each worker as much as parsing the file.
 */
export function growDictionary(raw: Readonly<Record<string, Entry>>): Dictionary {
  const own = (word: string): Entry | undefined => (Object.hasOwn(raw, word) ? raw[word] : undefined);
  const get = (word: string): Entry | undefined => {
    const entry = own(word);
    if (entry !== undefined) return entry;
    const lower = word.toLowerCase();
    // The key that grow_dictionary would have grown into this word, under its conditions: for a
    // lowercase word its capitalized key, for a capitalized word its lowercase key.
    const key = word === lower ? capitalize(word) : lower;
    const grows =
      word === lower
        ? key !== word && key.toLowerCase() === word && key === capitalize(key.toLowerCase())
        : capitalize(key) !== key && capitalize(key) === word;
    return grows && codePoints(key) >= 2 ? own(key) : undefined;
  };
  return { get, has: (word) => get(word) !== undefined };
}

/** Code points of `s`, without building an array. */
function codePoints(s: string): number {
  let n = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c < 0xd800 || c > 0xdbff) n++;
  }
  return n;
}

export class Lexicon {
  readonly british: boolean;
  readonly #golds: Dictionary;
  readonly #silvers: Dictionary;

  constructor(golds: Dictionary, silvers: Dictionary, british: boolean) {
    this.#golds = golds;
    this.#silvers = silvers;
    this.british = british;
  }

  /** A gold pronunciation (null without a lexicon: then the fallback reads the word). */
  #goldString(word: string, tag = 'DEFAULT'): string | null {
    const v = this.#golds.get(word);
    if (typeof v === 'string') return v;
    const p = v?.[tag] ?? v?.DEFAULT;
    return typeof p === 'string' ? p : null;
  }

  /** Letters read one by one, stressed on the last ("NASA" as N-A-S-A, "U.S."). */
  getNNP(word: string): Rated {
    const parts: string[] = [];
    for (const c of word) {
      if (!isAlpha(c)) continue;
      const p = this.#golds.get(c.toUpperCase());
      if (typeof p !== 'string') return NONE;
      parts.push(p);
    }
    const ps = applyStress(parts.join(''), 0);
    const at = ps.lastIndexOf(SECONDARY_STRESS);
    return [at < 0 ? ps : ps.slice(0, at) + PRIMARY_STRESS + ps.slice(at + 1), 3];
  }

  getSpecialCase(
    word: string,
    tag: string,
    stress: number | undefined,
    ctx: TokenContext | undefined,
  ): Rated {
    if (tag === 'ADD' && Object.hasOwn(ADD_SYMBOLS, word))
      return this.lookup(ADD_SYMBOLS[word]!, undefined, -0.5, ctx);
    if (Object.hasOwn(SYMBOLS, word)) return this.lookup(SYMBOLS[word]!, undefined, undefined, ctx);
    const stripped = word.replace(/^\.+|\.+$/g, '');
    if (
      stripped.includes('.') &&
      isAlpha(word.replaceAll('.', '')) &&
      Math.max(...word.split('.').map((p) => p.length)) < 3
    )
      return this.getNNP(word);
    if (word === 'a' || word === 'A') return tag === 'DT' ? ['ɐ', 4] : ['ˈA', 4];
    if (word === 'am' || word === 'Am' || word === 'AM') {
      if (tag.startsWith('NN')) return this.getNNP(word);
      if (ctx?.futureVowel === undefined || word !== 'am' || (stress !== undefined && stress > 0))
        return rated(this.#goldString('am'));
      return ['ɐm', 4];
    }
    if (word === 'an' || word === 'An' || word === 'AN') {
      if (word === 'AN' && tag.startsWith('NN')) return this.getNNP(word);
      return ['ɐn', 4];
    }
    if (word === 'I' && tag === 'PRP') return [`${SECONDARY_STRESS}I`, 4];
    if ((word === 'by' || word === 'By' || word === 'BY') && parentTag(tag) === 'ADV') return ['bˈI', 4];
    if (word === 'to' || word === 'To' || (word === 'TO' && (tag === 'TO' || tag === 'IN'))) {
      const v = ctx?.futureVowel;
      return v === undefined ? rated(this.#goldString('to')) : [v ? 'tʊ' : 'tə', 4];
    }
    if (word === 'in' || word === 'In' || (word === 'IN' && tag !== 'NNP')) {
      const mark = ctx?.futureVowel === undefined || tag !== 'IN' ? PRIMARY_STRESS : '';
      return [`${mark}ɪn`, 4];
    }
    if (word === 'the' || word === 'The' || (word === 'THE' && tag === 'DT'))
      return [ctx?.futureVowel === true ? 'ði' : 'ðə', 4];
    if (tag === 'IN' && /^vs\.?$/i.test(word)) return this.lookup('versus', undefined, undefined, ctx);
    if (word === 'used' || word === 'Used' || word === 'USED') {
      if ((tag === 'VBD' || tag === 'JJ') && ctx?.futureTo) return rated(this.#goldString('used', 'VBD'));
      return rated(this.#goldString('used'));
    }
    return NONE;
  }

  isKnown(word: string, _tag: string | undefined): boolean {
    if (this.#golds.has(word) || Object.hasOwn(SYMBOLS, word) || this.#silvers.has(word)) return true;
    if (!isAlpha(word) || !inLexiconOrds(word)) return false;
    if (word.length === 1) return true;
    if (word === word.toUpperCase() && this.#golds.has(word.toLowerCase())) return true;
    return word.slice(1) === word.slice(1).toUpperCase();
  }

  lookup(
    word: string,
    tag: string | undefined,
    stress: number | undefined,
    ctx: TokenContext | undefined,
  ): Rated {
    let isNNP: boolean | undefined;
    if (isUpper(word) && !this.#golds.has(word)) {
      word = word.toLowerCase();
      isNNP = tag === 'NNP';
    }
    let entry: Entry | undefined = this.#golds.get(word);
    let rating = 4;
    if (entry === undefined && !isNNP) {
      entry = this.#silvers.get(word);
      rating = 3;
    }
    let ps: string | null | undefined;
    if (entry !== undefined && typeof entry !== 'string') {
      let key = tag;
      if (ctx && ctx.futureVowel === undefined && Object.hasOwn(entry, 'None')) key = 'None';
      else if (key === undefined || !Object.hasOwn(entry, key)) key = parentTag(key);
      ps = key !== undefined && Object.hasOwn(entry, key) ? entry[key] : entry.DEFAULT;
    } else {
      ps = entry;
    }
    if (ps === undefined || ps === null || (isNNP && !ps.includes(PRIMARY_STRESS))) {
      const nnp = this.getNNP(word);
      if (nnp[0] !== null) return nnp;
    }
    if (ps === undefined || ps === null) return [null, rating];
    return [applyStress(ps, stress), rating];
  }

  #s(stem: string | null): string | null {
    if (!stem) return null;
    const last = stem.at(-1)!;
    if ('ptkfθ'.includes(last)) return `${stem}s`;
    if ('szʃʒʧʤ'.includes(last)) return `${stem}${this.british ? 'ɪ' : 'ᵻ'}z`;
    return `${stem}z`;
  }

  stemS(
    word: string,
    tag: string | undefined,
    stress: number | undefined,
    ctx: TokenContext | undefined,
  ): Rated {
    if (word.length < 3 || !word.endsWith('s')) return NONE;
    let stem: string;
    if (!word.endsWith('ss') && this.isKnown(word.slice(0, -1), tag)) stem = word.slice(0, -1);
    else if (
      (word.endsWith("'s") || (word.length > 4 && word.endsWith('es') && !word.endsWith('ies'))) &&
      this.isKnown(word.slice(0, -2), tag)
    )
      stem = word.slice(0, -2);
    else if (word.length > 4 && word.endsWith('ies') && this.isKnown(`${word.slice(0, -3)}y`, tag))
      stem = `${word.slice(0, -3)}y`;
    else return NONE;
    const [ps, rating] = this.lookup(stem, tag, stress, ctx);
    return [this.#s(ps), rating];
  }

  #ed(stem: string | null): string | null {
    if (!stem) return null;
    const last = stem.at(-1)!;
    if ('pkfθʃsʧ'.includes(last)) return `${stem}t`;
    if (last === 'd') return `${stem}${this.british ? 'ɪ' : 'ᵻ'}d`;
    if (last !== 't') return `${stem}d`;
    if (this.british || stem.length < 2) return `${stem}ɪd`;
    if (US_TAUS.has(stem.at(-2)!)) return `${stem.slice(0, -1)}ɾᵻd`;
    return `${stem}ᵻd`;
  }

  stemEd(
    word: string,
    tag: string | undefined,
    stress: number | undefined,
    ctx: TokenContext | undefined,
  ): Rated {
    if (word.length < 4 || !word.endsWith('d')) return NONE;
    let stem: string;
    if (!word.endsWith('dd') && this.isKnown(word.slice(0, -1), tag)) stem = word.slice(0, -1);
    else if (
      word.length > 4 &&
      word.endsWith('ed') &&
      !word.endsWith('eed') &&
      this.isKnown(word.slice(0, -2), tag)
    )
      stem = word.slice(0, -2);
    else return NONE;
    const [ps, rating] = this.lookup(stem, tag, stress, ctx);
    return [this.#ed(ps), rating];
  }

  #ing(stem: string | null): string | null {
    if (!stem) return null;
    if (this.british) {
      if ('əː'.includes(stem.at(-1)!)) return null;
    } else if (stem.length > 1 && stem.at(-1) === 't' && US_TAUS.has(stem.at(-2)!)) {
      return `${stem.slice(0, -1)}ɾɪŋ`;
    }
    return `${stem}ɪŋ`;
  }

  stemIng(
    word: string,
    tag: string | undefined,
    stress: number | undefined,
    ctx: TokenContext | undefined,
  ): Rated {
    if (word.length < 5 || !word.endsWith('ing')) return NONE;
    let stem: string;
    if (word.length > 5 && this.isKnown(word.slice(0, -3), tag)) stem = word.slice(0, -3);
    else if (this.isKnown(`${word.slice(0, -3)}e`, tag)) stem = `${word.slice(0, -3)}e`;
    else if (
      word.length > 5 &&
      /([bcdgklmnprstvxz])\1ing$|cking$/.test(word) &&
      this.isKnown(word.slice(0, -4), tag)
    )
      stem = word.slice(0, -4);
    else return NONE;
    const [ps, rating] = this.lookup(stem, tag, stress, ctx);
    return [this.#ing(ps), rating];
  }

  getWord(word: string, tag: string, stress: number | undefined, ctx: TokenContext | undefined): Rated {
    const special = this.getSpecialCase(word, tag, stress, ctx);
    if (special[0] !== null) return special;
    const wl = word.toLowerCase();
    if (
      word.length > 1 &&
      isAlpha(word.replaceAll("'", '')) &&
      word !== wl &&
      (tag !== 'NNP' || word.length > 7) &&
      !this.#golds.has(word) &&
      !this.#silvers.has(word) &&
      (word === word.toUpperCase() || word.slice(1) === word.slice(1).toLowerCase()) &&
      (this.#golds.has(wl) ||
        this.#silvers.has(wl) ||
        this.stemS(wl, tag, stress, ctx)[0] ||
        this.stemEd(wl, tag, stress, ctx)[0] ||
        this.stemIng(wl, tag, stress, ctx)[0])
    )
      word = wl;
    if (this.isKnown(word, tag)) return this.lookup(word, tag, stress, ctx);
    if (word.endsWith("s'") && this.isKnown(`${word.slice(0, -2)}'s`, tag))
      return this.lookup(`${word.slice(0, -2)}'s`, tag, stress, ctx);
    if (word.endsWith("'") && this.isKnown(word.slice(0, -1), tag))
      return this.lookup(word.slice(0, -1), tag, stress, ctx);
    const s = this.stemS(word, tag, stress, ctx);
    if (s[0] !== null) return s;
    const ed = this.stemEd(word, tag, stress, ctx);
    if (ed[0] !== null) return ed;
    const ing = this.stemIng(word, tag, stress ?? 0.5, ctx);
    if (ing[0] !== null) return ing;
    return NONE;
  }

  static isCurrency(word: string): boolean {
    if (!word.includes('.')) return true;
    if (word.split('.').length > 2) return false;
    const cents = word.split('.')[1]!;
    // misaki compares the set of characters with {0}, an int: never equal, so only the length counts.
    return cents.length < 3;
  }

  getNumber(word: string, currency: string | undefined, isHead: boolean, numFlags: string): Rated {
    const suffixMatch = /[a-z']+$/.exec(word);
    const suffix = suffixMatch?.[0];
    if (suffix) word = word.slice(0, -suffix.length);
    const result: [string, number][] = [];
    const push = (r: Rated) => {
      // misaki keeps a failed lookup as (None, None) and fails when joining; treat as unreadable.
      if (r[0] === null || r[1] === null) throw new UnreadableNumber();
      result.push([r[0], r[1]]);
    };

    const extendNum = (num: string | number, first = true, escape = false) => {
      const words = escape ? String(num) : cardinal(BigInt(num));
      const splits = words.split(/[^a-z]+/);
      for (const [i, w] of splits.entries()) {
        if (w !== 'and' || numFlags.includes('&')) {
          if (first && i === 0 && splits.length > 1 && w === 'one' && numFlags.includes('a'))
            result.push(['ə', 4]);
          else push(this.lookup(w, undefined, w === 'point' ? -2 : undefined, undefined));
        } else if (w === 'and' && numFlags.includes('n') && result.length > 0) {
          const last = result.at(-1)!;
          result[result.length - 1] = [`${last[0]}ən`, last[1]];
        }
      }
    };
    try {
      if (word.startsWith('-')) {
        push(this.lookup('minus', undefined, undefined, undefined));
        word = word.slice(1);
      }
      if (isDigits(word) && suffix !== undefined && ORDINALS.has(suffix)) {
        extendNum(ordinal(BigInt(word)), true, true);
      } else if (
        result.length === 0 &&
        word.length === 4 &&
        !(currency && currency in CURRENCIES) &&
        isDigits(word)
      ) {
        extendNum(year(Number(word)), true, true);
      } else if (!isHead && !word.includes('.')) {
        const num = word.replaceAll(',', '');
        if (num[0] === '0' || num.length > 3) {
          for (const n of num) extendNum(n, false);
        } else if (num.length === 3 && !num.endsWith('00')) {
          extendNum(num[0]!);
          if (num[1] === '0') {
            push(this.lookup('O', undefined, -2, undefined));
            extendNum(num[2]!, false);
          } else {
            extendNum(num.slice(1), false);
          }
        } else {
          extendNum(num);
        }
      } else if (word.split('.').length > 2 || !isHead) {
        let first = true;
        for (const num of word.replaceAll(',', '').split('.')) {
          if (!num) {
            // nothing
          } else if (num[0] === '0' || (num.length !== 2 && [...num.slice(1)].some((n) => n !== '0'))) {
            for (const n of num) extendNum(n, false);
          } else {
            extendNum(num, first);
          }
          first = false;
        }
      } else if (currency !== undefined && currency in CURRENCIES && Lexicon.isCurrency(word)) {
        const units = CURRENCIES[currency]!;
        let pairs = word
          .replaceAll(',', '')
          .split('.')
          .slice(0, 2)
          .map((n, i) => [n ? Number(n) : 0, units[i]!] as const);
        if (pairs.length > 1) {
          if (pairs[1]![0] === 0) pairs = pairs.slice(0, 1);
          else if (pairs[0]![0] === 0) pairs = pairs.slice(1);
        }
        for (const [i, [num, unit]] of pairs.entries()) {
          if (i > 0) push(this.lookup('and', undefined, undefined, undefined));
          extendNum(num, i === 0);
          push(
            Math.abs(num) !== 1 && unit !== 'pence'
              ? this.stemS(`${unit}s`, undefined, undefined, undefined)
              : this.lookup(unit, undefined, undefined, undefined),
          );
        }
      } else {
        let words: string;
        if (isDigits(word)) words = cardinal(BigInt(word));
        else if (!word.includes('.')) {
          const n = BigInt(word.replaceAll(',', ''));
          words = suffix !== undefined && ORDINALS.has(suffix) ? ordinal(n) : cardinal(n);
        } else {
          const w = word.replaceAll(',', '');
          words = w.startsWith('.')
            ? `point ${[...w.slice(1)].map((n) => cardinal(BigInt(n))).join(' ')}`
            : decimal(w);
        }
        extendNum(words, true, true);
      }
    } catch (err) {
      if (err instanceof UnreadableNumber || err instanceof SyntaxError || err instanceof RangeError)
        return NONE;
      throw err;
    }
    if (result.length === 0) return NONE;
    const ps = result.map(([p]) => p).join(' ');
    const rating = Math.min(...result.map(([, r]) => r));
    if (suffix === 's' || suffix === "'s") return [this.#s(ps), rating];
    if (suffix === 'ed' || suffix === "'d") return [this.#ed(ps), rating];
    if (suffix === 'ing') return [this.#ing(ps), rating];
    return [ps, rating];
  }

  appendCurrency(ps: string, currency: string | undefined): string {
    if (!currency) return ps;
    const units = CURRENCIES[currency];
    const word = units ? this.stemS(`${units[0]}s`, undefined, undefined, undefined)[0] : null;
    return word ? `${ps} ${word}` : ps;
  }

  static isNumber(word: string, isHead: boolean): boolean {
    if (![...word].some((c) => isDigits(c))) return false;
    for (const s of ['ing', "'d", 'ed', "'s", 'st', 'nd', 'rd', 'th', 's']) {
      if (word.endsWith(s)) {
        word = word.slice(0, -s.length);
        break;
      }
    }
    return [...word].every(
      (c, i) => isDigits(c) || c === ',' || c === '.' || (isHead && i === 0 && c === '-'),
    );
  }

  /** misaki's `Lexicon.__call__`: one token (or merged sub-tokens) → phonemes and a rating. */
  read(tk: WordToken, ctx: TokenContext | undefined): Rated {
    let word = (tk.alias ?? tk.text).replaceAll('\u2018', "'").replaceAll('\u2019', "'");
    word = numericDigits(word.normalize('NFKC'));
    const stress =
      word === word.toLowerCase() ? undefined : CAP_STRESSES[word === word.toUpperCase() ? 1 : 0];
    const [ps, rating] = this.getWord(word, tk.tag, stress, ctx);
    if (ps !== null) return [applyStress(this.appendCurrency(ps, tk.currency), tk.stress), rating];
    if (Lexicon.isNumber(word, tk.isHead)) {
      const [nps, nrating] = this.getNumber(word, tk.currency, tk.isHead, tk.numFlags);
      return nps === null ? NONE : [applyStress(nps, tk.stress), nrating];
    }
    return NONE;
  }
}

class UnreadableNumber extends Error {}

const rated = (ps: string | null): Rated => (ps === null ? NONE : [ps, 4]);

/** misaki's `numeric_if_needed`: a digit of another script (Arabic-Indic, fullwidth…) → 0–9. */
function numericDigits(word: string): string {
  return word.replace(/\p{Nd}/gu, (c) => {
    if (c >= '0' && c <= '9') return c;
    const v = digitValue(c);
    return v === undefined ? c : String(v);
  });
}

/** A decimal digit's value: Nd characters come in runs of whole tens from a zero. */
function digitValue(c: string): number | undefined {
  const cp = c.codePointAt(0)!;
  let start = cp;
  while (start > 0 && /\p{Nd}/u.test(String.fromCodePoint(start - 1))) start--;
  return (cp - start) % 10;
}
