/**
 * ElevenLabs' audio messages: a request's audio in pieces, each with the character alignment of
 * the words that start in it (`alignment` / `normalizedAlignment` on the WebSockets, `alignment`
 * on the HTTP stream with timestamps). A piece ends where a word starts when it can, so that its
 * characters end with the space after a word, and the last space lasts until the piece's audio
 * ends: the characters cover the piece's audio exactly. Pieces stay under 64 KB, as Python
 * clients need (aiohttp reads a line of at most 128 KiB; ElevenLabs' own pieces are small), and
 * hold at most a second of audio.
 */
import type { AudioCuts, WordTiming } from '../model/engine.ts';
import type { AudioSpan } from './session-messages.ts';

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
}

const clamp = (x: number, lo: number, hi: number) => Math.min(hi, Math.max(lo, x));

const lettersOf = (word: string) => [...word].slice(0, MAX_WORD_CHARS);

/**
 * The characters of `words` (on the request's clock) within [startMs, endMs]: each word's
 * letters share its time evenly (clamped to the span), and the space after it lasts until the
 * next word starts; the last space lasts until `endMs`.
 */
export function charAlignment(words: readonly WordTiming[], startMs: number, endMs: number): CharAlignment {
  const out: CharAlignment = { chars: [], charStartTimesMs: [], charDurationsMs: [] };
  const starts: number[] = [];
  for (const word of words) {
    const start = clamp(Math.round(word.start_s * 1000), startMs, endMs);
    starts.push(Math.max(start, starts.at(-1) ?? startMs));
  }
  words.forEach((word, i) => {
    const letters = lettersOf(word.word);
    const start = starts[i]!;
    const next = starts[i + 1] ?? endMs;
    const end = clamp(Math.round(word.end_s * 1000), start, next);
    const each = (end - start) / Math.max(1, letters.length);
    letters.forEach((char, j) => {
      const from = Math.round(start + j * each);
      out.chars.push(char);
      out.charStartTimesMs.push(from);
      out.charDurationsMs.push(Math.round(start + (j + 1) * each) - from);
    });
    out.chars.push(' ');
    out.charStartTimesMs.push(end);
    out.charDurationsMs.push(next - end);
  });
  return out;
}

/** The same characters, every time moved by `ms`. */
export function shiftAlignment(alignment: CharAlignment, ms: number): CharAlignment {
  return { ...alignment, charStartTimesMs: alignment.charStartTimesMs.map((t) => t + ms) };
}

/**
 * Cuts one piece of encoded audio (`bytes`, lying at `span` on its request's clock) into the
 * pieces ElevenLabs' messages carry, and gives each the characters of the words that start in it.
 * Cuts fall where a word starts, as late as the limits allow; a word or pause longer than a piece
 * is cut inside. Words timed past the audio come in a last piece of no audio.
 */
export function audioPieces(
  bytes: Uint8Array,
  span: AudioSpan,
  words: readonly WordTiming[],
  limits: PieceLimits,
): AudioPiece[] {
  const { cuts, envelopeBytes } = limits;
  const total = bytes.length;
  const seconds = Math.max(0, span.endS - span.startS);
  const rate = seconds > 0 ? total / seconds : 0;
  const msAt = (offset: number) => Math.round(1000 * (rate > 0 ? span.startS + offset / rate : span.endS));
  // Each word: the byte where it starts, and what its characters add to a message.
  const placed: { at: number; cost: number }[] = [];
  for (const word of words) {
    const at = rate > 0 ? clamp(Math.round((word.start_s - span.startS) * rate), 0, total) : 0;
    const cost = lettersOf(word.word).reduce((n, c) => n + limits.charBytes(c), limits.charBytes(' '));
    placed.push({ at: Math.max(at, placed.at(-1)?.at ?? 0), cost });
  }
  const n = placed.length;
  /** The most audio bytes a message with `chars` bytes of characters may carry. */
  const budget = (chars: number) => {
    const audio = Math.floor((MAX_MESSAGE_BYTES - envelopeBytes - chars) / 4) * 3;
    return rate > 0 ? Math.min(audio, Math.floor(MAX_PIECE_S * rate)) : audio;
  };

  const pieces: AudioPiece[] = [];
  const piece = (from: number, to: number, first: number, end: number) => {
    const startMs = msAt(from);
    const endMs = msAt(to);
    pieces.push({
      bytes: bytes.subarray(from, to),
      startMs,
      endMs,
      alignment: charAlignment(words.slice(first, end), startMs, endMs),
    });
  };

  let from = 0;
  let next = 0;
  while (from < total) {
    // Try each word start as the end of this piece, the latest that fits; then the audio's end.
    let to = -1;
    let take = next;
    let chars = 0;
    let k = next;
    let lastCut = from;
    while (k < n && placed[k]!.at <= from) chars += placed[k++]!.cost;
    for (;;) {
      const cut = k < n ? cuts.floor(placed[k]!.at) : total;
      if (k < n && cut <= lastCut) {
        // The word cannot be parted from the one before it (the same sample, frame or page).
        chars += placed[k++]!.cost;
        continue;
      }
      if (cut - from > budget(chars)) break;
      to = cut;
      take = k;
      lastCut = cut;
      if (k >= n) break;
      chars += placed[k++]!.cost;
    }
    if (to < 0) {
      // No word start within reach (a word or a pause longer than a piece): cut inside it. The
      // words that start before the cut are this piece's; counting them shrinks the reach.
      let mandatory = next;
      let base = 0;
      while (mandatory < n && placed[mandatory]!.at <= from) base += placed[mandatory++]!.cost;
      let reach = budget(base);
      for (;;) {
        let counted = base;
        for (let j = mandatory; j < n && placed[j]!.at < from + reach; j++) counted += placed[j]!.cost;
        const shrunk = budget(counted);
        if (shrunk >= reach) break;
        reach = shrunk;
      }
      to = cuts.floor(Math.min(total, from + Math.max(0, reach)));
      if (to <= from) to = cuts.after(from);
      take = mandatory;
      while (take < n && (placed[take]!.at < to || to === total)) take++;
    }
    piece(from, to, next, take);
    from = to;
    next = take;
  }
  // No audio at all (a codec's last bytes held none), or words timed past it: pieces of no audio.
  while (next < n || pieces.length === 0) {
    let end = next;
    let chars = 0;
    while (end < n && (end === next || envelopeBytes + chars + placed[end]!.cost <= MAX_MESSAGE_BYTES))
      chars += placed[end++]!.cost;
    piece(total, total, next, end);
    next = end;
  }
  return pieces;
}
