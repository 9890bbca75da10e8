/**
 * misaki's English G2P (`misaki.en.G2P.__call__`, hexgrad/misaki `misaki/en.py`, commit fba1236),
 * as Kokoro's `KPipeline` configures it for American (`a`) and British (`b`) English: markdown
 * links for inline phonemes and stress, spaCy's tokens and tags, misaki's sub-tokens, the words read
 * right to left so that each knows what follows (the/a/to before a vowel), the lexicon, espeak-ng
 * for words in no lexicon, and for Kokoro v1.0 the final `ɾ`→`T`, `ʔ`→`t`.
 *
 * Tokenizer, tagger and fallback are given to it, so this file holds only misaki's own rules.
 */
import {
  CONSONANTS,
  CURRENCIES,
  Lexicon,
  PRIMARY_STRESS,
  VOWELS,
  applyStress,
  isDigits,
  stressWeight,
  type TokenContext,
} from './lexicon.ts';

/** One token as misaki's `MToken` holds it while it is read (mutable, as there). */
export interface MToken {
  text: string;
  tag: string;
  whitespace: string;
  /** null: not read yet (misaki's None). */
  phonemes: string | null;
  rating: number | null;
  isHead: boolean;
  alias: string | undefined;
  stress: number | undefined;
  currency: string | undefined;
  numFlags: string;
  prespace: boolean;
}

/** A tokenizer as spaCy's: the text cut into tokens, each with the space after it ('' or ' '). */
export type Tokenize = (text: string) => readonly { text: string; whitespace: string }[];
/** A tagger: one Penn Treebank tag per token. */
export type Tag = (tokens: readonly string[]) => readonly string[];
/** The reading of a word in no lexicon (misaki's EspeakFallback): phonemes and a rating, or null. */
export type Fallback = (text: string) => readonly [string, number] | null;

export interface G2POptions {
  readonly lexicon: Lexicon;
  readonly tokenize: Tokenize;
  readonly tag: Tag;
  readonly fallback?: Fallback | undefined;
  /** What an unreadable word becomes; KPipeline passes ''. */
  readonly unk?: string;
}

const LINK = /\[([^\]]+)\]\(([^)]*)\)/g;
const SUBTOKEN =
  /^['‘’]+|\p{Lu}(?=\p{Lu}\p{Ll})|(?:^-)?(?:\d?[,.]?\d)+|[-_]+|['‘’]{2,}|\p{L}*?(?:['‘’]\p{L})*?\p{Ll}(?=\p{Lu})|\p{L}+(?:['‘’]\p{L})*|[^-_\p{L}'‘’\d]|['‘’]+$/gu;
const SUBTOKEN_JUNKS = new Set("',-._‘’/");
const PUNCTS = new Set(';:,.!?—…"“”');
const NON_QUOTE_PUNCTS = new Set(';:,.!?—…');
const PUNCT_TAGS = new Set(['.', ',', '-LRB-', '-RRB-', '``', '""', "''", ':', '$', '#', 'NFP']);
const PUNCT_TAG_PHONEMES: Readonly<Record<string, string>> = {
  '-LRB-': '(',
  '-RRB-': ')',
  '``': '\u201C',
  '""': '\u201D',
  "''": '\u201D',
};

const allJunk = (text: string): boolean => [...text].every((c) => SUBTOKEN_JUNKS.has(c));
const isAlphaChar = (c: string): boolean => /^\p{L}$/u.test(c);

/** misaki's sub-tokens of one spaCy token ("don't" stays; "10km" → "10", "km"; "iPhone" → "i", "Phone"). */
export function subtokenize(word: string): string[] {
  return word.match(SUBTOKEN) ?? [];
}

/** A feature from markdown: a stress (number), phonemes (`/…`) or number flags (`#…`). */
type Feature = number | string;

/** misaki's `preprocess`: `[word](/phonemes/)`, `[word](+1)`… become the word and a feature. */
export function preprocess(input: string): { text: string; words: string[]; features: Map<number, Feature> } {
  const text = input.trimStart();
  let result = '';
  const words: string[] = [];
  const features = new Map<number, Feature>();
  let last = 0;
  for (const m of text.matchAll(LINK)) {
    const before = text.slice(last, m.index);
    result += before;
    words.push(...splitWords(before));
    const f = m[2]!;
    let feature: Feature | undefined;
    const unsigned = f.startsWith('-') || f.startsWith('+') ? f.slice(1) : f;
    if (isDigits(unsigned)) feature = Number.parseInt(f, 10);
    else if (f === '0.5' || f === '+0.5') feature = 0.5;
    else if (f === '-0.5') feature = -0.5;
    else if (f.length > 1 && f.startsWith('/') && f.endsWith('/'))
      feature = `/${f.slice(1).replace(/\/+$/, '')}`;
    else if (f.length > 1 && f.startsWith('#') && f.endsWith('#'))
      feature = `#${f.slice(1).replace(/#+$/, '')}`;
    if (feature !== undefined) features.set(words.length, feature);
    result += m[1];
    words.push(m[1]!);
    last = m.index + m[0].length;
  }
  if (last < text.length) {
    result += text.slice(last);
    words.push(...splitWords(text.slice(last)));
  }
  return { text: result, words, features };
}

const splitWords = (s: string): string[] => s.split(/\s+/).filter((w) => w !== '');

function newToken(text: string, tag: string, whitespace: string): MToken {
  return {
    text,
    tag,
    whitespace,
    phonemes: null,
    rating: null,
    isHead: true,
    alias: undefined,
    stress: undefined,
    currency: undefined,
    numFlags: '',
    prespace: false,
  };
}

/** misaki's `merge_tokens`: sub-tokens as one word; with `unk`, their phonemes joined too. */
export function mergeTokens(tokens: readonly MToken[], unk?: string): MToken {
  const stresses = new Set(tokens.flatMap((t) => (t.stress === undefined ? [] : [t.stress])));
  const currencies = tokens.flatMap((t) => (t.currency === undefined ? [] : [t.currency])).toSorted();
  const ratings = tokens.map((t) => t.rating);
  let phonemes: string | null = null;
  if (unk !== undefined) {
    phonemes = '';
    for (const t of tokens) {
      if (t.prespace && phonemes && !/\s$/.test(phonemes) && t.phonemes) phonemes += ' ';
      phonemes += t.phonemes ?? unk;
    }
  }
  const weight = (t: MToken) => [...t.text].reduce((n, c) => n + (c === c.toLowerCase() ? 1 : 2), 0);
  let top = tokens[0]!;
  for (const t of tokens) if (weight(t) > weight(top)) top = t;
  const last = tokens.at(-1)!;
  return {
    text: tokens.slice(0, -1).reduce((s, t) => s + t.text + t.whitespace, '') + last.text,
    tag: top.tag,
    whitespace: last.whitespace,
    phonemes,
    rating: ratings.includes(null) ? null : Math.min(...(ratings as number[])),
    isHead: tokens[0]!.isHead,
    alias: undefined,
    stress: stresses.size === 1 ? [...stresses][0] : undefined,
    currency: currencies.at(-1),
    numFlags: [...new Set(tokens.flatMap((t) => [...t.numFlags]))].toSorted().join(''),
    prespace: tokens[0]!.prespace,
  };
}

type Word = MToken | MToken[];

/** misaki's `retokenize`: sub-tokens, punctuation, currency; words written together grouped. */
export function retokenize(tokens: readonly MToken[]): Word[] {
  const words: Word[] = [];
  let currency: string | undefined;
  for (const [i, token] of tokens.entries()) {
    const tks: MToken[] =
      token.alias === undefined && token.phonemes === null
        ? subtokenize(token.text).map((t) => ({
            ...newToken(t, token.tag, ''),
            numFlags: token.numFlags,
            stress: token.stress,
          }))
        : [token];
    if (tks.length === 0) continue; // a token of nothing misaki's pattern takes (cannot happen for text)
    tks.at(-1)!.whitespace = token.whitespace;
    for (const [j, tk] of tks.entries()) {
      if (tk.alias !== undefined || tk.phonemes !== null) {
        // kept as it is
      } else if (tk.tag === '$' && Object.hasOwn(CURRENCIES, tk.text)) {
        currency = tk.text;
        tk.phonemes = '';
        tk.rating = 4;
      } else if (tk.tag === ':' && (tk.text === '-' || tk.text === '–')) {
        tk.phonemes = '—';
        tk.rating = 3;
      } else if (PUNCT_TAGS.has(tk.tag) && ![...tk.text].every((c) => /^[a-z]$/.test(c.toLowerCase()))) {
        tk.phonemes = PUNCT_TAG_PHONEMES[tk.tag] ?? [...tk.text].filter((c) => PUNCTS.has(c)).join('');
        tk.rating = 4;
        // Our one departure: misaki keeps a currency across punctuation, so "$5.50, 25 more" read
        // "twenty-five dollars"; an amount ends at its clause here.
        currency = undefined;
      } else if (currency !== undefined) {
        if (tk.tag !== 'CD') currency = undefined;
        else if (j + 1 === tks.length && (i + 1 === tokens.length || tokens[i + 1]!.tag !== 'CD'))
          tk.currency = currency;
      } else if (
        j > 0 &&
        j < tks.length - 1 &&
        tk.text === '2' &&
        isAlphaChar(tks[j - 1]!.text.at(-1)!) &&
        isAlphaChar(tks[j + 1]!.text[0]!)
      ) {
        tk.alias = 'to';
      }
      const last = words.at(-1);
      if (tk.alias !== undefined || tk.phonemes !== null) words.push(tk);
      else if (Array.isArray(last) && !last.at(-1)!.whitespace) {
        tk.isHead = false;
        last.push(tk);
      } else words.push(tk.whitespace ? tk : [tk]);
    }
  }
  return words.map((w) => (Array.isArray(w) && w.length === 1 ? w[0]! : w));
}

/** What the word just read tells the one before it (misaki's `token_context`). */
function tokenContext(ctx: TokenContext, ps: string | null, token: MToken): TokenContext {
  let vowel = ctx.futureVowel;
  if (ps) {
    for (const c of ps) {
      if (NON_QUOTE_PUNCTS.has(c)) {
        vowel = undefined;
        break;
      }
      if (VOWELS.has(c) || CONSONANTS.has(c)) {
        vowel = VOWELS.has(c);
        break;
      }
    }
  }
  const futureTo =
    token.text === 'to' ||
    token.text === 'To' ||
    (token.text === 'TO' && (token.tag === 'TO' || token.tag === 'IN'));
  return { futureVowel: vowel, futureTo };
}

/** misaki's `resolve_tokens`: spaces and stress between the sub-tokens of one written word. */
function resolveTokens(tokens: MToken[]): void {
  const text = tokens.slice(0, -1).reduce((s, t) => s + t.text + t.whitespace, '') + tokens.at(-1)!.text;
  const kinds = new Set<number>();
  for (const c of text) if (!SUBTOKEN_JUNKS.has(c)) kinds.add(isAlphaChar(c) ? 0 : isDigits(c) ? 1 : 2);
  const prespace = text.includes(' ') || text.includes('/') || kinds.size > 1;
  for (const [i, tk] of tokens.entries()) {
    if (tk.phonemes === null) {
      if (i === tokens.length - 1 && NON_QUOTE_PUNCTS.has(tk.text)) {
        tk.phonemes = tk.text;
        tk.rating = 3;
      } else if (allJunk(tk.text)) {
        tk.phonemes = '';
        tk.rating = 3;
      }
    } else if (i > 0) {
      tk.prespace = prespace;
    }
  }
  if (prespace) return;
  let indices = tokens.flatMap((tk, i) =>
    tk.phonemes
      ? [[tk.phonemes.includes(PRIMARY_STRESS) ? 1 : 0, stressWeight(tk.phonemes), i] as const]
      : [],
  );
  if (indices.length === 2 && tokens[indices[0]![2]]!.text.length === 1) {
    const i = indices[1]![2];
    tokens[i]!.phonemes = applyStress(tokens[i]!.phonemes, -0.5);
    return;
  }
  if (indices.length < 2 || indices.reduce((n, [b]) => n + b, 0) <= Math.floor((indices.length + 1) / 2))
    return;
  indices = indices
    .toSorted((a, b) => a[0] - b[0] || a[1] - b[1] || a[2] - b[2])
    .slice(0, Math.floor(indices.length / 2));
  for (const [, , i] of indices) tokens[i]!.phonemes = applyStress(tokens[i]!.phonemes, -0.5);
}

export class G2P {
  readonly #lexicon: Lexicon;
  readonly #tokenize: Tokenize;
  readonly #tag: Tag;
  readonly #fallback: Fallback | undefined;
  readonly #unk: string;

  constructor(options: G2POptions) {
    this.#lexicon = options.lexicon;
    this.#tokenize = options.tokenize;
    this.#tag = options.tag;
    this.#fallback = options.fallback;
    this.#unk = options.unk ?? '';
  }

  get british(): boolean {
    return this.#lexicon.british;
  }

  /** spaCy's tokens, tagged, with the markdown features on the tokens they cover. */
  #tokens(text: string, words: readonly string[], features: ReadonlyMap<number, Feature>): MToken[] {
    const raw = this.#tokenize(text).filter((t) => t.text.trim() !== '' || t.whitespace !== '');
    const spaced: { text: string; whitespace: string }[] = [];
    for (const t of raw) {
      // spaCy keeps a run of spaces as a token of its own: misaki reads it as nothing.
      if (t.text.trim() === '') {
        const prev = spaced.at(-1);
        if (prev) prev.whitespace = prev.whitespace || ' ';
        continue;
      }
      spaced.push({ ...t });
    }
    const tags = this.#tag(spaced.map((t) => t.text));
    const tokens = spaced.map((t, i) => newToken(t.text, tags[i] ?? 'NN', t.whitespace));
    if (features.size === 0) return tokens;
    // Align by characters: which whitespace-separated word each token's first character is in.
    const wordOf: number[] = [];
    for (const [w, word] of words.entries()) for (let k = 0; k < word.length; k++) wordOf.push(w);
    let at = 0;
    const seen = new Map<number, number>();
    for (const tk of tokens) {
      const w = wordOf[at];
      at += tk.text.length;
      if (w === undefined) continue;
      const v = features.get(w);
      if (v === undefined) continue;
      const i = seen.get(w) ?? 0;
      seen.set(w, i + 1);
      if (typeof v === 'number') tk.stress = v;
      else if (v.startsWith('/')) {
        tk.isHead = i === 0;
        tk.phonemes = i === 0 ? v.replace(/^\/+/, '') : '';
        tk.rating = 5;
      } else if (v.startsWith('#')) tk.numFlags = v.replace(/^#+/, '');
    }
    return tokens;
  }

  /** Text → misaki's phoneme string and its tokens (each with its phonemes). */
  phonemize(input: string): { phonemes: string; tokens: MToken[] } {
    const { text, words, features } = preprocess(input);
    if (text.trim() === '') return { phonemes: '', tokens: [] };
    let tokens = this.#tokens(text, words, features);
    // fold_left: a non-head token (from markup) joins the one before it.
    const folded: MToken[] = [];
    for (const tk of tokens) {
      const prev = folded.at(-1);
      folded.push(prev && !tk.isHead ? mergeTokens([folded.pop()!, tk], this.#unk) : tk);
    }
    tokens = folded;
    const wordsOut = retokenize(tokens);
    let ctx: TokenContext = { futureVowel: undefined, futureTo: false };
    for (let wi = wordsOut.length - 1; wi >= 0; wi--) {
      const w = wordsOut[wi]!;
      if (!Array.isArray(w)) {
        if (w.phonemes === null) [w.phonemes, w.rating] = this.#lexicon.read(w, ctx);
        if (w.phonemes === null && this.#fallback)
          [w.phonemes, w.rating] = this.#fallback(w.text) ?? [null, null];
        ctx = tokenContext(ctx, w.phonemes, w);
        continue;
      }
      let left = 0;
      let right = w.length;
      let shouldFallback = false;
      while (left < right) {
        const span = w.slice(left, right);
        const tk = span.some((t) => t.alias !== undefined || t.phonemes !== null)
          ? undefined
          : mergeTokens(span);
        const [ps, rating] = tk === undefined ? [null, null] : this.#lexicon.read(tk, ctx);
        if (ps !== null) {
          w[left]!.phonemes = ps;
          w[left]!.rating = rating;
          for (const x of w.slice(left + 1, right)) {
            x.phonemes = '';
            x.rating = rating;
          }
          ctx = tokenContext(ctx, ps, tk!);
          right = left;
          left = 0;
        } else if (left + 1 < right) {
          left++;
        } else {
          right--;
          const last = w[right]!;
          if (last.phonemes === null) {
            if (allJunk(last.text)) {
              last.phonemes = '';
              last.rating = 3;
            } else if (this.#fallback) {
              shouldFallback = true;
              break;
            }
          }
          left = 0;
        }
      }
      if (shouldFallback) {
        const merged = mergeTokens(w);
        const [ps, rating] = this.#fallback!(merged.text) ?? [null, null];
        w[0]!.phonemes = ps;
        w[0]!.rating = rating;
        for (const x of w.slice(1)) {
          x.phonemes = '';
          x.rating = rating;
        }
      } else {
        resolveTokens(w);
      }
    }
    const out = wordsOut.map((w) => (Array.isArray(w) ? mergeTokens(w, this.#unk) : w));
    // Kokoro v1.0 was trained after misaki's flap and glottal stop became T and t.
    for (const tk of out)
      if (tk.phonemes) tk.phonemes = tk.phonemes.replaceAll('ɾ', 'T').replaceAll('ʔ', 't');
    return { phonemes: out.map((tk) => (tk.phonemes ?? this.#unk) + tk.whitespace).join(''), tokens: out };
  }
}
