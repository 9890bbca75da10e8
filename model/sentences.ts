/**
 * Sentence splitting, incremental: `SentenceChunker.feed()` takes text as it arrives (an LLM's
 * tokens, say) and returns the sentences it completes; `flush()` returns the rest at end of input.
 * `splitSentences()` is the same chunker fed a whole string, so both shapes share one code path and
 * give the same result however the text is cut into fragments.
 *
 * A sentence ends at `.`, `!`, `?` or `…` (runs such as `?!` or `...` count as one stop), plus any
 * closing quotes or brackets, when whitespace and then a word that does not start in lower case
 * follow; at a CJK stop (`。！？`); or at a line break. Not at a decimal point (`3.5`), after
 * common abbreviations (`Dr.`, `e.g.`, `U.S.`) or initials, or inside an ellipsis followed by lower
 * case. A sentence longer than `maxChars` is cut at the last clause mark (`,;:—`) before the limit,
 * else at the last space, else at the limit.
 */

const STOPS = '.!?…';
const CJK_STOPS = '。！？';
const CLOSERS = `"'”’)]}»」』`;
const CLAUSE_MARKS = ',;:—–';

// Lower-cased, without the final period. Multi-dot forms ("e.g") are matched as written.
const ABBREVIATIONS = new Set([
  'mr',
  'mrs',
  'ms',
  'dr',
  'prof',
  'sr',
  'jr',
  'st',
  'mt',
  'ft',
  'gen',
  'col',
  'lt',
  'sgt',
  'capt',
  'gov',
  'sen',
  'rep',
  'rev',
  'hon',
  'vs',
  'etc',
  'e.g',
  'i.e',
  'cf',
  'approx',
  'no',
  'nos',
  'vol',
  'fig',
  'inc',
  'ltd',
  'co',
  'corp',
  'dept',
  'est',
  'jan',
  'feb',
  'mar',
  'apr',
  'jun',
  'jul',
  'aug',
  'sep',
  'sept',
  'oct',
  'nov',
  'dec',
  'mon',
  'tue',
  'wed',
  'thu',
  'fri',
  'sat',
  'sun',
  'a.m',
  'p.m',
  'u.s',
  'u.k',
  'u.s.a',
  'ph.d',
  'b.a',
  'm.a',
  'a.k.a',
]);

export interface ChunkerOptions {
  /** Sentences longer than this (in UTF-16 units) are cut at a clause mark or space. */
  readonly maxChars?: number;
}

const DEFAULT_MAX_CHARS = 400;

/** Where a sentence ends (`end`, exclusive) and where the next begins (`next`). */
interface Boundary {
  end: number;
  next: number;
}

const isSpace = (ch: string | undefined): boolean => ch !== undefined && /\s/.test(ch);

/** Splits text into sentences as it streams in. */
export class SentenceChunker {
  #buffer = '';
  readonly #maxChars: number;

  constructor(options: ChunkerOptions = {}) {
    this.#maxChars = Math.max(8, options.maxChars ?? DEFAULT_MAX_CHARS);
  }

  /** Adds text; returns the sentences this fragment completed (trimmed, never empty). */
  feed(fragment: string): string[] {
    this.#buffer += fragment;
    return this.#drain(false);
  }

  /** Ends the input; returns what is left (a last sentence without a stop is not lost). */
  flush(): string[] {
    const out = this.#drain(true);
    this.#buffer = '';
    return out;
  }

  #drain(final: boolean): string[] {
    const out: string[] = [];
    for (;;) {
      const b = this.#buffer;
      const found = findBoundary(b, final);
      let cut: Boundary | null = null;
      if (found.boundary) {
        cut = found.boundary.end <= this.#maxChars ? found.boundary : longCut(b, this.#maxChars);
      } else if (found.pendingEnd !== undefined && found.pendingEnd <= this.#maxChars) {
        cut = null; // a boundary within the limit may be confirmed by the next fragment
      } else if (b.length > this.#maxChars) {
        cut = longCut(b, this.#maxChars);
      } else if (final && b.trim() !== '') {
        cut = { end: b.length, next: b.length };
      }
      if (!cut) break;
      const sentence = b.slice(0, cut.end).trim();
      if (sentence !== '') out.push(sentence);
      this.#buffer = b.slice(cut.next);
    }
    return out;
  }
}

/** Splits a whole text into sentences (the chunker fed once, then flushed). */
export function splitSentences(text: string, options?: ChunkerOptions): string[] {
  const chunker = new SentenceChunker(options);
  return [...chunker.feed(text), ...chunker.flush()];
}

/**
 * The first confirmed sentence boundary in `b`. Without `final`, a boundary that needs to see what
 * follows (the next word's case, more closing quotes) is not confirmed until that text has arrived.
 */
function findBoundary(b: string, final: boolean): { boundary?: Boundary; pendingEnd?: number } {
  for (let i = 0; i < b.length; i++) {
    const ch = b[i]!;
    if (ch === '\n') {
      if (b.slice(0, i).trim() === '') continue;
      return { boundary: { end: i, next: i + 1 } };
    }
    if (CJK_STOPS.includes(ch)) {
      let j = i + 1;
      while (j < b.length && (CJK_STOPS.includes(b[j]!) || CLOSERS.includes(b[j]!))) j++;
      if (j === b.length && !final) return { pendingEnd: j };
      return { boundary: { end: j, next: j } };
    }
    if (!STOPS.includes(ch)) continue;
    let j = i + 1;
    while (j < b.length && STOPS.includes(b[j]!)) j++;
    while (j < b.length && CLOSERS.includes(b[j]!)) j++;
    if (j === b.length) {
      if (final) return { boundary: { end: j, next: j } };
      return { pendingEnd: j }; // more stops, closers or a space may follow
    }
    if (!isSpace(b[j])) {
      i = j - 1; // "3.5", "e.g", "U.S": not a boundary
      continue;
    }
    let k = j;
    while (k < b.length && isSpace(b[k]) && b[k] !== '\n') k++;
    if (k === b.length && !final) return { pendingEnd: j }; // the next word decides
    if (b[k] === '\n' || k === b.length) return { boundary: { end: j, next: k } };
    if (!endsSentence(b, i, b.slice(i, j), b[k]!)) {
      i = j - 1;
      continue;
    }
    return { boundary: { end: j, next: k } };
  }
  return {};
}

/** Decides whether the stop at `stopAt` (text `stopRun` incl. closers) ends the sentence. */
function endsSentence(b: string, stopAt: number, stopRun: string, nextChar: string): boolean {
  // A lower-case continuation ("e.g. apples", "wait... what") is the same sentence.
  if (nextChar !== nextChar.toUpperCase() && nextChar === nextChar.toLowerCase()) return false;
  if (stopRun[0] !== '.' || stopRun.startsWith('..')) return true;
  // The word before the period: letters and inner dots ("e.g", "U.S", "Dr").
  let w = stopAt;
  while (w > 0 && /[\p{L}.]/u.test(b[w - 1]!)) w--;
  const word = b.slice(w, stopAt);
  if (word === '') return true;
  if (ABBREVIATIONS.has(word.toLowerCase())) return false;
  // A single capital is an initial ("J. R. R. Tolkien").
  if (/^\p{Lu}$/u.test(word)) return false;
  return true;
}

/** Cuts an over-long sentence: last clause mark, else last space, else the hard limit. */
function longCut(b: string, max: number): Boundary {
  const head = b.slice(0, max + 1);
  for (let i = head.length - 1; i > 0; i--) {
    if (CLAUSE_MARKS.includes(head[i]!) && (i + 1 >= head.length || isSpace(head[i + 1]))) {
      return { end: i + 1, next: i + 1 };
    }
  }
  for (let i = Math.min(head.length - 1, max); i > 0; i--) {
    if (isSpace(head[i])) return { end: i, next: i + 1 };
  }
  return { end: max, next: max };
}
