/**
 * ElevenLabs' audio messages: a request's audio in pieces, each with the character alignment of
 * its words (`alignment` / `normalizedAlignment` on the WebSockets, `alignment` on the HTTP stream
 * with timestamps). Pieces stay under 64 KB, as Python clients need (aiohttp reads a line of at
 * most 128 KiB; ElevenLabs' own pieces are small), and hold at most a second of audio.
 *
 * A word's letters go with the piece its audio starts in, and the space after it with the piece in
 * which the next word starts (or the audio ends). Pieces end where words start when they can, and
 * every piece holds the space that ends some word: Pipecat moves its word clock on by a message's
 * last character end only when that message completes a word. The last character of a piece lasts
 * until the piece's audio ends, so the characters of each message cover its audio.
 */
import type { AudioCuts, WordTiming } from '../../../model/engine.ts';
import type { AudioSpan } from '../dialect.ts';

/** The most bytes one message (a WebSocket message, a line of NDJSON) may take. */
export const MAX_MESSAGE_BYTES = 64_000;

/** The most audio one piece holds, in seconds. */
export const MAX_PIECE_S = 1;

/** A word's characters the alignment carries at most (a "word" of thousands, a URL say, is cut). */
export const MAX_WORD_CHARS = 500;

/** Characters with their times, in whole milliseconds. */
export interface CharAlignment {
  readonly chars: string[];
  readonly charStartTimesMs: number[];
  readonly charDurationsMs: number[];
}

/** One message's audio and the characters of the words that start in it, on the request's clock. */
export interface AudioPiece {
  readonly bytes: Uint8Array;
  readonly startMs: number;
  readonly endMs: number;
  readonly alignment: CharAlignment;
}

/** What bounds a piece. */
export interface PieceLimits {
  /** Where the audio may be cut (whole samples, frames or pages). */
  readonly cuts: AudioCuts;
  /** Bytes a message takes besides its audio's base64 and its characters. */
  readonly envelopeBytes: number;
  /** The most bytes one character (with its times, in every copy of the alignment) adds to a message. */
  charBytes(char: string): number;
  /**
   * The request's words are timed: a piece in which no word starts or ends gets a space over its
   * audio (the silence it holds), so that every piece's characters cover it. Otherwise such a
   * piece has no characters.
   */
  readonly timed: boolean;
}

const clamp = (x: number, lo: number, hi: number) => Math.min(hi, Math.max(lo, x));

const lettersOf = (word: string) => [...word].slice(0, MAX_WORD_CHARS);

/** One word on the request's clock, in ms: letters over [start, end], its space over [end, until]. */
interface TimedWord {
  readonly letters: string[];
  readonly start: number;
  readonly end: number;
  readonly until: number;
}

/** The words on the request's clock, in ms, each space lasting until the next word (or `endMs`). */
function timedWords(words: readonly WordTiming[], endMs: number): TimedWord[] {
  const starts: number[] = [];
  for (const word of words) starts.push(Math.max(Math.round(word.start_s * 1000), starts.at(-1) ?? 0));
  return words.map((word, i) => {
    const start = starts[i]!;
    const until = Math.max(start, starts[i + 1] ?? endMs);
    return {
      letters: lettersOf(word.word),
      start,
      end: clamp(Math.round(word.end_s * 1000), start, until),
      until,
    };
  });
}

/**
 * The characters of one piece [startMs, endMs]: `parts` in text order, each a word's letters or
 * the space after it, clamped to the piece; the last lasts until the piece ends. A piece with no
 * character gets a space over all of it (the silence between words).
 */
function pieceAlignment(
  parts: readonly { word: TimedWord; space: boolean }[],
  startMs: number,
  endMs: number,
  timed = true,
): CharAlignment {
  const out: CharAlignment = { chars: [], charStartTimesMs: [], charDurationsMs: [] };
  const push = (char: string, from: number, to: number) => {
    const start = clamp(Math.round(from), startMs, endMs);
    out.chars.push(char);
    out.charStartTimesMs.push(start);
    out.charDurationsMs.push(clamp(Math.round(to), start, endMs) - start);
  };
  for (const { word, space } of parts) {
    if (space) {
      push(' ', word.end, word.until);
      continue;
    }
    const each = (word.end - word.start) / Math.max(1, word.letters.length);
    word.letters.forEach((char, j) => push(char, word.start + j * each, word.start + (j + 1) * each));
  }
  if (out.chars.length === 0) {
    if (!timed) return out;
    push(' ', startMs, endMs);
  }
  const last = out.chars.length - 1;
  out.charDurationsMs[last] = endMs - out.charStartTimesMs[last]!;
  return out;
}

/**
 * The characters of `words` (on the request's clock) within [startMs, endMs]: each word's
 * letters share its time evenly, and the space after it lasts until the next word starts; the
 * last space lasts until `endMs`.
 */
export function charAlignment(words: readonly WordTiming[], startMs: number, endMs: number): CharAlignment {
  if (words.length === 0) return { chars: [], charStartTimesMs: [], charDurationsMs: [] };
  const parts = timedWords(words, endMs).flatMap((word) => [
    { word, space: false },
    { word, space: true },
  ]);
  return pieceAlignment(parts, startMs, endMs);
}

/** The same characters, every time moved by `ms`. */
export function shiftAlignment(alignment: CharAlignment, ms: number): CharAlignment {
  return { ...alignment, charStartTimesMs: alignment.charStartTimesMs.map((t) => t + ms) };
}

/**
 * Cuts one piece of encoded audio (`bytes`, lying at `span` on its request's clock) into the
 * pieces ElevenLabs' messages carry, each with its characters.
 */
export function audioPieces(
  bytes: Uint8Array,
  span: AudioSpan,
  words: readonly WordTiming[],
  limits: PieceLimits,
): AudioPiece[] {
  const { cuts, envelopeBytes, charBytes, timed: wordsTimed } = limits;
  const total = bytes.length;
  const seconds = Math.max(0, span.endS - span.startS);
  const rate = seconds > 0 ? total / seconds : 0;
  const msAt = (offset: number) => Math.round(1000 * (rate > 0 ? span.startS + offset / rate : span.endS));
  const timed = timedWords(words, Math.round(span.endS * 1000));
  const n = timed.length;
  // Where each word starts in the bytes (at a cut), and where its space's piece must reach: the
  // next word's start, or the end of the audio.
  const at: number[] = [];
  for (const word of words) {
    const offset = rate > 0 ? clamp(Math.round((word.start_s - span.startS) * rate), 0, total) : 0;
    at.push(Math.max(cuts.floor(offset), at.at(-1) ?? 0));
  }
  const completes = at.map((_, j) => (j + 1 < n ? at[j + 1]! : total));
  const letterCost = timed.map((w) => w.letters.reduce((sum, c) => sum + charBytes(c), 0));
  const spaceCost = charBytes(' ');
  /** The index of the first of `sorted` (ascending) that `pass` accepts, or its length. */
  const first = (sorted: readonly number[], pass: (x: number) => boolean) => {
    let lo = 0;
    let hi = sorted.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (pass(sorted[mid]!)) hi = mid;
      else lo = mid + 1;
    }
    return lo;
  };
  // Letters cost by word, summed in the order words start (`at` and `completes` both ascend).
  const letterSums = [0];
  for (const c of letterCost) letterSums.push(letterSums.at(-1)! + c);
  /** What the characters of the piece [from, to] add to its message, at most. */
  const cost = (from: number, to: number) => {
    const a = first(at, (x) => x >= from);
    const b = to === total ? n : first(at, (x) => x >= to);
    const c = from === 0 ? 0 : first(completes, (x) => x > from);
    const d = first(completes, (x) => x > to);
    // A word's space goes with the piece its word starts in or with the one the next word starts
    // in: count it in both, so that either fits.
    const sum =
      letterSums[Math.max(a, b)]! - letterSums[a]! + (Math.max(0, b - a) + Math.max(0, d - c)) * spaceCost;
    return wordsTimed ? Math.max(sum, spaceCost) : sum;
  };
  /** The piece [from, to] fits one message. */
  const fits = (from: number, to: number) => {
    const audio = to - from;
    if (rate > 0 && audio > MAX_PIECE_S * rate) return false;
    return envelopeBytes + Math.ceil(audio / 3) * 4 + cost(from, to) <= MAX_MESSAGE_BYTES;
  };
  /** The furthest cut a piece from `from` may end at (one unit at least). */
  const reach = (from: number) => {
    let lo = cuts.after(from);
    if (lo >= total || !fits(from, lo)) return lo;
    let hi = total;
    if (fits(from, hi)) return hi;
    // fits(from, lo) and not fits(from, hi): search the last cut that fits.
    while (cuts.after(lo) < hi) {
      const mid = cuts.floor(Math.floor((lo + hi) / 2));
      if (mid <= lo) break;
      if (fits(from, mid)) lo = mid;
      else hi = mid;
    }
    for (let next = cuts.after(lo); next < hi && fits(from, next); next = cuts.after(next)) lo = next;
    return lo;
  };

  // Where pieces may end: where words start (clean cuts), and a grid of cuts between them.
  const starts = new Set([...at.filter((x) => x > 0 && x < total), total]);
  const step = Math.max(
    1,
    Math.floor((rate > 0 ? Math.min(rate * MAX_PIECE_S, MAX_MESSAGE_BYTES) : total) / 16),
  );
  const grid = new Set<number>(starts);
  for (let g = step; g < total; g += step) grid.add(cuts.floor(g));
  const points = [...grid].filter((x) => x > 0).sort((a, b) => a - b);
  /** The index of the first word starting at or after `offset`. */
  const wordAt = (offset: number) => first(at, (x) => x >= offset);

  /**
   * Where a word's space may go: from the piece the word starts in to the one the next word starts
   * in (the last piece, for the last word). So at a cut at most one word's space is still to be
   * placed: the word in progress there (`pending`). A piece completes a word when it holds a space;
   * Pipecat moves its word clock only then. The best way to cut the audio from `from` on: the
   * fewest pieces that complete no word, then the fewest cuts inside words, then the fewest spaces
   * held back, then the fewest pieces; with this piece's end, and whether it holds back the space
   * of its last word (or of the word in progress, when no word starts in it).
   */
  interface Plan {
    readonly stalls: number;
    readonly splits: number;
    readonly deferred: number;
    readonly pieces: number;
    readonly to: number;
    readonly defer: boolean;
  }
  const plans = new Map<number, Plan>();
  const better = (a: Plan, b: Plan) =>
    a.stalls !== b.stalls
      ? a.stalls < b.stalls
      : a.splits !== b.splits
        ? a.splits < b.splits
        : a.deferred !== b.deferred
          ? a.deferred < b.deferred
          : a.pieces < b.pieces;
  const END: Plan = { stalls: 0, splits: 0, deferred: 0, pieces: 0, to: total, defer: false };
  const plan = (from: number, pending: boolean): Plan => {
    if (from >= total) return END;
    const key = from * 2 + (pending ? 1 : 0);
    const known = plans.get(key);
    if (known) return known;
    const far = reach(from);
    let best: Plan | undefined;
    const consider = (to: number) => {
      const last = to >= total;
      const count = (last ? n : wordAt(to)) - wordAt(from);
      const split = last || starts.has(to) ? 0 : 1;
      const option = (covered: boolean, defer: boolean) => {
        const rest = plan(to, defer);
        const candidate: Plan = {
          stalls: rest.stalls + (covered ? 0 : 1),
          splits: rest.splits + split,
          deferred: rest.deferred + (defer ? 1 : 0),
          pieces: rest.pieces + 1,
          to,
          defer,
        };
        if (!best || better(candidate, best)) best = candidate;
      };
      // Place the space here (a word that starts here, or the one in progress).
      option(count > 0 || pending, false);
      // Or hold it back for a later piece: then this one completes a word only if another's
      // space must be placed here (the one in progress when a word starts here, or all but the
      // last of those that start here).
      if (!last && (count > 0 || pending)) option(count > 0 && (pending || count > 1), true);
    };
    // Latest first: the recursion then mostly finds what it needs already planned. The furthest
    // cut itself only when no point lies within reach (its plans would share nothing).
    for (let i = first(points, (x) => x > far) - 1; i >= 0 && points[i]! > from; i--) consider(points[i]!);
    if (!best) consider(far);
    plans.set(key, best!);
    return best!;
  };

  // The cuts, and where each word's space goes.
  const bounds: number[] = [0];
  const spaceIn = new Array<number>(n);
  let pendingWord: number | undefined;
  for (let from = 0; from < total; ) {
    const { to, defer } = plan(from, pendingWord !== undefined);
    const k = bounds.length - 1;
    const here = [];
    for (let j = wordAt(from); j < (to >= total ? n : wordAt(to)); j++) here.push(j);
    if (pendingWord !== undefined && (here.length > 0 || !defer)) {
      spaceIn[pendingWord] = k;
      pendingWord = undefined;
    }
    here.forEach((j, i) => {
      if (i === here.length - 1 && defer) pendingWord = j;
      else spaceIn[j] = k;
    });
    bounds.push(to);
    from = to;
  }
  const pieceCount = Math.max(1, bounds.length - 1);
  for (let j = 0; j < n; j++) spaceIn[j] ??= pieceCount - 1;
  /** The piece a word starting at `offset` is in (the last for one starting at the end). */
  const pieceOf = (offset: number) => clamp(first(bounds, (b) => b > offset) - 1, 0, pieceCount - 1);
  const parts: { word: TimedWord; space: boolean }[][] = Array.from({ length: pieceCount }, () => []);
  for (let j = 0; j < n; j++) {
    parts[pieceOf(at[j]!)]!.push({ word: timed[j]!, space: false });
    parts[spaceIn[j]!]!.push({ word: timed[j]!, space: true });
  }
  return parts.map((chars, k) => {
    const from = bounds[k]!;
    const to = bounds[k + 1] ?? total;
    const startMs = msAt(from);
    const endMs = msAt(to);
    return {
      bytes: bytes.subarray(from, to),
      startMs,
      endMs,
      alignment: pieceAlignment(chars, startMs, endMs, wordsTimed),
    };
  });
}
