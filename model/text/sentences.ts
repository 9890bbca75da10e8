/**
 * Sentence splitting, incremental: `IncrementalSentenceChunker.feed()` takes text as it arrives (an
 * LLM's tokens, say) and returns the sentences it completes; `flush()` returns the rest at end of
 * input. `splitSentences()` is the same chunker fed a whole string, so both shapes share one code
 * path and give the same result however the text is cut into fragments.
 *
 * A sentence ends at `.`, `!`, `?`, `…` or a Devanagari danda `।` `॥` (runs such as `?!` or `...` count as one stop), plus any
 * closing quotes or brackets, when whitespace and then a word that does not start in lower case
 * follow, or when the next sentence follows with no space at all (`that.Your`, `you?Great`: see
 * {@link gluedSentence}); at a CJK stop (`。！？`); or at a line break. Not at a decimal point
 * (`3.5`), after common abbreviations (`Dr.`, `e.g.`, `U.S.`) or initials, or inside an ellipsis
 * followed by lower case. A sentence longer than `maxChars` is cut at the last clause mark before
 * the limit, else at the last space, else at the limit.
 *
 * Clause marks are `,;:` followed by whitespace (so `3,000` and `10:30` are not), their full-width
 * forms `，；：`, an em dash `—`, and an en dash or hyphen standing between spaces (` – `, ` - `,
 * ` -- `), each with any closing quotes after it.
 *
 * Pure module: no Node.js APIs, so the client package can ship it to browsers too.
 */

const STOPS = '.!?…।॥';
const CJK_STOPS = '。！？';
const CLOSERS = `"'”’)]}»」』`;
/** Clause marks that need whitespace after them (`3,000`, `10:30`, `a,b` are not clauses). */
const SPACED_CLAUSE_MARKS = ',;:';
/** Clause marks that end a clause whatever follows (CJK text has no spaces; `word—word`). */
const BARE_CLAUSE_MARKS = '，；：、—';
/** Quotation marks that open and close; a straight `"` does both, in turn. */
const OPENING_QUOTES = '“«「『';
const CLOSING_QUOTES = '”»」』';
/** Dashes that count only between spaces (`1990–2000` and `well-known` are not clauses). */
const SPACED_DASHES = '–-';

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

/** Longer than any entry of ABBREVIATIONS: a longer word before a period is not one. */
const MAX_ABBREVIATION_CHARS = Math.max(...[...ABBREVIATIONS].map((a) => a.length)) + 1;

/** Options of {@link IncrementalSentenceChunker} and {@link splitSentences}. */
export interface ChunkerOptions {
  /**
   * Chunks longer than this (in UTF-16 units) are cut at the last clause mark before the limit,
   * else at the last space, else at the limit itself. At least 8; default 400.
   */
  readonly maxChars?: number;
  /**
   * When set, the first chunk of a stream is released early, at the first clause mark (comma,
   * semicolon, colon, dash) that closes at least this many characters, instead of waiting for the
   * end of the sentence. This cuts the time to first audio when a reply opens with a long sentence;
   * later chunks are whole sentences again. Off (`undefined` or 0) by default.
   */
  readonly firstChunkMinChars?: number;
}

const DEFAULT_MAX_CHARS = 400;
const MIN_MAX_CHARS = 8;

/** Where a chunk ends (`end`, exclusive) and where the next begins (`next`). */
interface Boundary {
  end: number;
  next: number;
}

/** The first boundary in the buffer, or the end of a candidate that still needs more text to decide. */
interface Found {
  boundary?: Boundary;
  pendingEnd?: number;
}

const isSpace = (ch: string | undefined): boolean => ch !== undefined && /\s/.test(ch);

/**
 * Splits text into sentence-sized chunks as it streams in, for one utterance at a time.
 *
 * `feed()` returns the chunks a fragment completed and keeps the unfinished tail; `flush()` returns
 * the tail at the end of the input. Feeding a text whole, character by character or in fragments of
 * any size gives the same chunks. Chunks are trimmed and never empty.
 *
 * @example
 * const chunker = new IncrementalSentenceChunker({ firstChunkMinChars: 24 });
 * for await (const token of llm) for (const s of chunker.feed(token)) session.send(s);
 * for (const s of chunker.flush()) session.send(s);
 */
export class IncrementalSentenceChunker {
  #buffer = '';
  /** Whether a chunk of the current stream has been released (early release is for the first only). */
  #released = false;
  readonly #maxChars: number;
  readonly #firstChunkMinChars: number;

  /** @throws RangeError for a `maxChars` below 8 or a negative `firstChunkMinChars`. */
  constructor(options: ChunkerOptions = {}) {
    const maxChars = options.maxChars ?? DEFAULT_MAX_CHARS;
    if (!(maxChars >= MIN_MAX_CHARS)) {
      throw new RangeError(`maxChars must be a number of at least ${MIN_MAX_CHARS}, got ${maxChars}`);
    }
    const firstChunkMinChars = options.firstChunkMinChars ?? 0;
    if (!(firstChunkMinChars >= 0) || !Number.isFinite(firstChunkMinChars)) {
      throw new RangeError(
        `firstChunkMinChars must be a finite number of 0 (off) or more, got ${firstChunkMinChars}`,
      );
    }
    this.#maxChars = Math.floor(maxChars);
    this.#firstChunkMinChars = Math.ceil(firstChunkMinChars);
  }

  /** Adds a fragment of text; returns the chunks it completed (possibly none). */
  feed(fragment: string): string[] {
    this.#buffer += fragment;
    return this.#drain(false);
  }

  /**
   * Ends the input and returns what is left, so a last sentence without a stop is never lost. The
   * chunker is then ready for a new stream (as after {@link reset}).
   */
  flush(): string[] {
    const out = this.#drain(true);
    this.reset();
    return out;
  }

  /** Drops buffered text and starts a new stream (its first chunk may be released early again). */
  reset(): void {
    this.#buffer = '';
    this.#released = false;
  }

  /** The text received but not yet returned as a chunk. */
  get buffered(): string {
    return this.#buffer;
  }

  #drain(final: boolean): string[] {
    const out: string[] = [];
    const max = this.#maxChars;
    for (;;) {
      // Leading whitespace never belongs to a chunk; dropping it makes lengths count real text.
      const b = (this.#buffer = this.#buffer.trimStart());
      if (b === '') break;
      const early = !this.#released && this.#firstChunkMinChars > 0 ? this.#firstChunkMinChars : 0;
      const found = findBoundary(b, final, early, max);
      let cut: Boundary | null = null;
      if (found.boundary) {
        cut = found.boundary.end <= max ? found.boundary : longCut(b, max);
      } else if (found.pendingEnd !== undefined && found.pendingEnd <= max) {
        cut = null; // a boundary within the limit may be confirmed by the next fragment
      } else if (b.length > max) {
        cut = longCut(b, max);
      } else if (final) {
        cut = { end: b.length, next: b.length };
      }
      if (!cut) break;
      const chunk = b.slice(0, cut.end).trim();
      if (chunk !== '') {
        out.push(chunk);
        this.#released = true;
      }
      this.#buffer = b.slice(cut.next);
    }
    return out;
  }
}

/** The former name of {@link IncrementalSentenceChunker}. */
export { IncrementalSentenceChunker as SentenceChunker };

/**
 * Splits a whole text into sentences: the {@link IncrementalSentenceChunker} fed once, then
 * flushed, so the result equals any fragmented feeding of the same text with the same options.
 */
export function splitSentences(text: string, options?: ChunkerOptions): string[] {
  const chunker = new IncrementalSentenceChunker(options);
  return [...chunker.feed(text), ...chunker.flush()];
}

/**
 * The first confirmed boundary in `b` (which starts with a non-space). Without `final`, a boundary
 * that needs to see what follows (the next word's case, more closing quotes, the space after a
 * comma) is not confirmed until that text has arrived: deciding early could differ from deciding on
 * the whole text. With `earlyMin` > 0, a clause mark closing at least that many characters is a
 * boundary too.
 *
 * Only the first `limit + 1` characters are searched (runs of stops and closers too): a chunk
 * ending later would be cut at the limit anyway, and scanning a whole long buffer for every chunk
 * would make splitting quadratic. A boundary reported past `limit` stands for "cut at the limit".
 */
function findBoundary(b: string, final: boolean, earlyMin: number, limit: number): Found {
  const beyond = { boundary: { end: limit + 1, next: limit + 1 } };
  for (let i = 0; i < b.length && i <= limit; i++) {
    const ch = b[i]!;
    if (ch === '\n') return { boundary: { end: i, next: i + 1 } };
    if (CJK_STOPS.includes(ch)) {
      let j = i + 1;
      while (j < b.length && j <= limit && (CJK_STOPS.includes(b[j]!) || CLOSERS.includes(b[j]!))) j++;
      if (j > limit) return beyond;
      if (j === b.length && !final) return { pendingEnd: j };
      return { boundary: { end: j, next: j } };
    }
    if (earlyMin > 0) {
      const end = clauseEnd(b, i, final);
      if (end === 'pending') return { pendingEnd: b.length };
      if (end !== undefined && end >= earlyMin) {
        const inside = insideWord(b, i, final);
        if (inside === 'pending') return { pendingEnd: b.length };
        // Only the first chunk is released early, so counting quotes from the start is cheap.
        if (!inside && !insideQuotation(b, end)) return { boundary: { end, next: end } };
      }
    }
    if (!STOPS.includes(ch)) continue;
    let j = i + 1;
    while (j < b.length && j <= limit && STOPS.includes(b[j]!)) j++;
    while (j < b.length && j <= limit && CLOSERS.includes(b[j]!)) j++;
    if (j > limit) return beyond;
    if (j === b.length) {
      if (final) return { boundary: { end: j, next: j } };
      return { pendingEnd: j }; // more stops, closers or a space may follow
    }
    if (!isSpace(b[j])) {
      // Sentences sent with nothing between them ("that.Your", "you?Great"): a boundary too.
      const glued = gluedSentence(b, i, j, final);
      if (glued === 'pending') return { pendingEnd: j };
      if (glued) return { boundary: { end: j, next: j } };
      i = j - 1; // "3.5", "e.g", "U.S", "example.com": not a boundary
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
  // The word before the period: letters and inner dots ("e.g", "U.S", "Dr"). Only the last few
  // characters matter (no abbreviation is longer), so a long run is not scanned for every stop.
  let w = stopAt;
  while (w > 0 && stopAt - w <= MAX_ABBREVIATION_CHARS && /[\p{L}.]/u.test(b[w - 1]!)) w--;
  const word = b.slice(w, stopAt);
  if (word === '') return true;
  if (ABBREVIATIONS.has(word.toLowerCase())) return false;
  // A single capital is an initial ("J. R. R. Tolkien").
  if (/^\p{Lu}$/u.test(word)) return false;
  return true;
}

/** How far back the token before a stop is looked at for signs of a URL or an address. */
const MAX_TOKEN_LOOKBACK = 256;

/**
 * Whether the stop run `b[stopAt..j)` (stops and closers), followed directly by `b[j]`, which is
 * not white space, ends a sentence: text whose sentences were sent with nothing between them, as
 * Pipecat sends them (`that.Your`, `you?Great`, `"Hi."Then`, `that.“Your`). After `?` or `!`, any
 * letter starts the next sentence, unless it begins a query (`search?q=1`); after `.` or `…`, a
 * capital does, unless it begins a word in capitals (`ASP.NET`) or the word before is an
 * abbreviation, an initial or has inner dots (`Dr.Smith`, `J.Smith`, `U.S.Army`). Never inside a
 * token that holds a path or an address (`example.com/Page`, `a@b.Com`). `'pending'`: the text
 * that decides has not arrived yet.
 */
function gluedSentence(b: string, stopAt: number, j: number, final: boolean): boolean | 'pending' {
  let k = j;
  while (k < b.length && OPENING_QUOTES.includes(b[k]!)) k++;
  if (k === b.length) return final ? false : 'pending';
  if (!/\p{L}/u.test(b[k]!)) return false;
  let t = stopAt;
  while (t > 0 && stopAt - t < MAX_TOKEN_LOOKBACK && !isSpace(b[t - 1])) t--;
  if (/[/@=&]/.test(b.slice(t, stopAt))) return false;
  const run = b.slice(stopAt, j);
  if (run.includes('?') || run.includes('!')) {
    // A query's parameter name runs up to its `=`.
    let e = k;
    while (e < b.length && /[\p{L}\p{N}_-]/u.test(b[e]!)) e++;
    if (e === b.length) return final ? true : 'pending';
    return b[e] !== '=';
  }
  if (!/\p{Lu}/u.test(b[k]!)) return false;
  if (k + 1 === b.length && !final) return 'pending';
  if (/\p{Lu}/u.test(b[k + 1] ?? '')) return false;
  return endsSentence(b, stopAt, run, b[k]!) && !/[\p{L}]\.[\p{L}]/u.test(b.slice(t, stopAt + 1));
}

/**
 * Whether a clause mark at `i` belongs to a word or a number rather than ending a clause, for the
 * early release of a first chunk: the comma after an abbreviation (`e.g.,`, `etc.,`), and one
 * between digits (`12, 345`, a number written with a spaced separator).
 */
function insideWord(b: string, i: number, final: boolean): boolean | 'pending' {
  if (b[i - 1] === '.') return true;
  if (b[i] !== ',' || !/\d/.test(b[i - 1] ?? '')) return false;
  let k = i + 1;
  while (k < b.length && b[k] === ' ') k++;
  if (k === b.length) return final ? false : 'pending'; // the next character decides
  return /\d/.test(b[k]!);
}

/** Whether a quotation is open just before `i` (early release never cuts inside one). */
function insideQuotation(b: string, i: number): boolean {
  let open = 0;
  for (let k = 0; k < i; k++) {
    const ch = b[k]!;
    if (OPENING_QUOTES.includes(ch) || (ch === '"' && open === 0)) open++;
    else if (CLOSING_QUOTES.includes(ch) || ch === '"') open = Math.max(0, open - 1);
  }
  return open > 0;
}

/**
 * If `b[i]` is a clause mark: the index just past it and any closing quotes after it; `'pending'`
 * when that depends on text that has not arrived yet; otherwise `undefined`.
 */
function clauseEnd(b: string, i: number, final: boolean): number | 'pending' | undefined {
  const ch = b[i]!;
  let j = i + 1;
  const spaced = SPACED_CLAUSE_MARKS.includes(ch);
  if (SPACED_DASHES.includes(ch)) {
    if (!isSpace(b[i - 1])) return undefined;
    while (j < b.length && b[j] === ch) j++; // "--"
  } else if (!spaced && !BARE_CLAUSE_MARKS.includes(ch)) {
    return undefined;
  }
  while (j < b.length && CLOSERS.includes(b[j]!)) j++;
  if (j === b.length) return final ? j : 'pending';
  if (BARE_CLAUSE_MARKS.includes(ch) || isSpace(b[j])) return j;
  return undefined;
}

/**
 * Cuts an over-long chunk (`b.length > max`) to at most `max` units: after the last clause mark,
 * else at the last space, else at the limit. Looks only at `b[0..max]`, which a streamed buffer
 * already holds whenever it is called, so fragments and whole text cut alike.
 */
function longCut(b: string, max: number): Boundary {
  for (let i = max - 1; i > 0; i--) {
    const end = clauseEnd(b, i, false);
    if (typeof end === 'number' && end <= max) return { end, next: end };
  }
  for (let i = max; i > 0; i--) {
    if (isSpace(b[i])) return { end: i, next: i + 1 };
  }
  // Never split a surrogate pair (an emoji, a rare CJK character) in two.
  const code = b.charCodeAt(max - 1);
  const end = code >= 0xd800 && code <= 0xdbff ? max - 1 : max;
  return { end, next: end };
}
