/**
 * Word timestamps: which stretch of phoneme tokens each word of the original text became, and,
 * once the model has said how long each token lasts, when each word is spoken.
 *
 * Kokoro's timestamped export returns one duration per input token (padding included) in frames
 * of 600 samples at 24 kHz (40 per second), already divided by the speed; the waveform is the
 * frames end to end (hexgrad/kokoro `pipeline.py`, `join_timestamps`; Kokoros `koko.rs`).
 *
 * Words are the original text's, split at white space ("$5," stays one word), because that is what
 * a caption or an interrupted agent needs. Mapping them to tokens: the front end turns each word
 * into some number of spoken words (normalization: "$5" → "five dollars"), and espeak writes one
 * space-separated group of phonemes per spoken word. When the counts agree, every word gets its
 * groups exactly. espeak sometimes joins words ("of the" → "ʌvðə"); then the words are spread over
 * the tokens in proportion to their spoken length, which keeps them in order and covering the audio.
 */

import { SAMPLE_RATE } from '../kokoro/constants.ts';
import { isAliasPart, isPhonemePart, isStressPart, type SpeechPart } from './parts.ts';

/** A place between two tokens of one piece: `index` tokens of piece `piece` lie before it. */
export interface TokenPosition {
  readonly piece: number;
  readonly index: number;
}

export interface PlannedWord {
  readonly word: string;
  readonly start: TokenPosition;
  readonly end: TokenPosition;
  /** Where the word is in the request's text: UTF-16 offsets, end exclusive. */
  readonly chars?: readonly [number, number];
}

export interface WordTiming {
  readonly word: string;
  /**
   * Seconds from the start of the piece the timing is reported with (earlier pieces: negative).
   * A word starts at its first phoneme and lasts until the next word starts (the last word of a
   * piece: until the piece's audio ends), so the words tile the audio.
   */
  readonly start_s: number;
  readonly end_s: number;
  /** Where the word is in the request's text (UTF-16 offsets, end exclusive), when known. */
  readonly char_start?: number;
  readonly char_end?: number;
}

/** Kokoro's punctuation symbols: a word's time excludes the pause written after it. */
const PUNCTUATION = new Set([...';:,.!?¡¿—…"«»“”()']);

interface Group {
  readonly piece: number;
  readonly start: number;
  readonly end: number;
}

/** Space-separated groups of each piece, trimmed of punctuation unless that is all they are. */
function groupsOf(pieces: readonly string[]): Group[] {
  const groups: Group[] = [];
  pieces.forEach((text, piece) => {
    const symbols = [...text];
    let i = 0;
    while (i < symbols.length) {
      if (symbols[i] === ' ') {
        i++;
        continue;
      }
      let end = i;
      while (end < symbols.length && symbols[end] !== ' ') end++;
      let s = i;
      let e = end;
      while (s < e && PUNCTUATION.has(symbols[s]!)) s++;
      while (e > s && PUNCTUATION.has(symbols[e - 1]!)) e--;
      groups.push(s < e ? { piece, start: s, end: e } : { piece, start: i, end });
      i = end;
    }
  });
  return groups;
}

const spokenWords = (normalized: string): number => normalized.split(/\s+/).filter(Boolean).length;

/**
 * Plans the words of `original` (one sentence) onto the token pieces the model will run.
 * `normalize` is the front end's normalization, applied to each word alone to count what it becomes.
 */
export function planWords(
  original: string,
  normalize: (word: string) => string,
  pieces: readonly string[],
  at?: number,
): PlannedWord[] {
  const words: string[] = [];
  const chars: (readonly [number, number] | undefined)[] = [];
  for (const m of original.matchAll(/\S+/g)) {
    words.push(m[0]);
    chars.push(at === undefined ? undefined : [at + m.index, at + m.index + m[0].length]);
  }
  return withChars(
    planSpoken(
      words,
      words.map((w) => normalize(w)),
      pieces,
    ),
    chars,
  );
}

/**
 * The same for a sentence in parts (parts.ts): a fixed reading's words are the ones the user wrote,
 * and its first word stands for all it became (an alias's words, the phonemes' groups). A fixed
 * reading's words are placed at its whole construct in the text (`[word](/…/)`, `<sub …>…</sub>`).
 */
export function planParts(
  parts: readonly SpeechPart[],
  normalize: (word: string) => string,
  pieces: readonly string[],
): PlannedWord[] {
  const words: string[] = [];
  const spoken: string[] = [];
  const chars: (readonly [number, number] | undefined)[] = [];
  let open = false; // the last word runs on into the next part (no white space between)
  for (const part of parts) {
    const fixed = isPhonemePart(part)
      ? part.phonemes
      : isAliasPart(part)
        ? normalize(part.spoken)
        : undefined;
    let first = true;
    for (const m of part.text.matchAll(/\S+/g)) {
      const { at, to } = part;
      const span: readonly [number, number] | undefined =
        at === undefined
          ? undefined
          : fixed === undefined && !isStressPart(part)
            ? [at + m.index, at + m.index + m[0].length]
            : [at, to ?? at + part.text.length];
      const said = fixed === undefined ? normalize(m[0]) : first ? fixed : '';
      const last = words.length - 1;
      if (open && m.index === 0 && last >= 0) {
        // One written word over two parts ("Kokoro's": a dictionary entry, then its "'s").
        words[last] += m[0];
        spoken[last] = `${spoken[last]} ${said}`;
        const before = chars[last];
        chars[last] = before && span ? [before[0], span[1]] : before;
      } else {
        words.push(m[0]);
        spoken.push(said);
        chars.push(span);
      }
      first = false;
    }
    if (/\S$/.test(part.text)) open = true;
    else if (part.text !== '') open = false;
  }
  return withChars(planSpoken(words, spoken, pieces), chars);
}

function withChars(
  planned: PlannedWord[],
  chars: readonly (readonly [number, number] | undefined)[],
): PlannedWord[] {
  return planned.map((p, i) => (chars[i] ? { ...p, chars: chars[i] } : p));
}

function planSpoken(
  words: readonly string[],
  spoken: readonly string[],
  pieces: readonly string[],
): PlannedWord[] {
  if (words.length === 0 || pieces.length === 0) return [];
  const counts = spoken.map(spokenWords);
  const groups = groupsOf(pieces);
  const total = counts.reduce((a, b) => a + b, 0);
  if (total === groups.length && total > 0) {
    const planned: PlannedWord[] = [];
    let g = 0;
    for (const [i, word] of words.entries()) {
      const n = counts[i]!;
      if (n === 0) {
        // Nothing spoken (a lone symbol normalization drops): an instant where it stands.
        const at = g < groups.length ? groups[g]! : groups[groups.length - 1]!;
        const position =
          g < groups.length ? { piece: at.piece, index: at.start } : { piece: at.piece, index: at.end };
        planned.push({ word, start: position, end: position });
        continue;
      }
      const first = groups[g]!;
      const last = groups[g + n - 1]!;
      planned.push({
        word,
        start: { piece: first.piece, index: first.start },
        end: { piece: last.piece, index: last.end },
      });
      g += n;
    }
    return planned;
  }
  return proportional(words, spoken, pieces);
}

/** Words spread over all tokens by their spoken length (at least one), boundaries at token edges. */
function proportional(
  words: readonly string[],
  spoken: readonly string[],
  pieces: readonly string[],
): PlannedWord[] {
  const lengths = pieces.map((p) => [...p].length);
  const tokens = lengths.reduce((a, b) => a + b, 0);
  const weights = spoken.map((s, i) => Math.max(1, s.replace(/\s+/g, '').length || words[i]!.length));
  const sum = weights.reduce((a, b) => a + b, 0);
  const at = (global: number): TokenPosition => {
    let rest = Math.min(tokens, Math.max(0, global));
    for (const [piece, n] of lengths.entries()) {
      if (rest <= n && (rest < n || piece === lengths.length - 1)) return { piece, index: rest };
      rest -= n;
    }
    return { piece: lengths.length - 1, index: lengths[lengths.length - 1]! };
  };
  const planned: PlannedWord[] = [];
  let acc = 0;
  for (const [i, word] of words.entries()) {
    const from = Math.round((acc / sum) * tokens);
    acc += weights[i]!;
    const to = Math.round((acc / sum) * tokens);
    planned.push({ word, start: at(from), end: at(to) });
  }
  return planned;
}

/**
 * Seconds from the start of a piece's audio to each edge between its tokens: `edges[i]` is where
 * token `i` starts, `edges[n]` where the last one ends. `durations` are the model's, pads first and
 * last; `samples` what the piece produced. The waveform is the frames end to end; scaling by the
 * real sample count keeps every token inside the audio even for an export whose frames do not add
 * up exactly.
 */
export function tokenEdges(durations: ArrayLike<number>, samples: number): Float64Array {
  const tokens = durations.length - 2;
  const edges = new Float64Array(Math.max(0, tokens) + 1);
  let frames = 0;
  for (let i = 0; i < durations.length; i++) frames += Math.max(0, Number(durations[i]));
  const scale = frames > 0 ? samples / SAMPLE_RATE / frames : 0;
  let t = Math.max(0, Number(durations[0] ?? 0)) * scale; // the leading pad: silence before the first token
  for (let i = 0; i <= tokens; i++) {
    edges[i] = t;
    if (i < tokens) t += Math.max(0, Number(durations[i + 1])) * scale;
  }
  return edges;
}

/**
 * Times the planned words as the pieces come back from the model. Each word is reported with the
 * piece it ends in, so a word's timing always arrives before the audio that completes it.
 */
export class WordTimer {
  readonly #plan: readonly PlannedWord[];
  /** Per piece seen so far: seconds from its start to each token edge, and its length. */
  readonly #edges: Float64Array[] = [];
  readonly #lengths: number[] = [];
  #next = 0;

  constructor(plan: readonly PlannedWord[]) {
    this.#plan = plan;
  }

  /**
   * Adds piece `piece` (in order): its token durations (padding first and last, as the model gives
   * them) and the samples it produced. Returns the words ending in it, timed from its start.
   */
  piece(piece: number, durations: ArrayLike<number>, samples: number): WordTiming[] {
    this.#edges[piece] = tokenEdges(durations, samples);
    this.#lengths[piece] = samples / SAMPLE_RATE;
    const out: WordTiming[] = [];
    while (this.#next < this.#plan.length && this.#plan[this.#next]!.end.piece <= piece) {
      const i = this.#next++;
      const { word, start, end } = this.#plan[i]!;
      // Words tile the audio: each runs until the next one starts (the pause after it, written as
      // punctuation or a space, is still its own), and the last of a piece until the piece ends.
      const next = this.#plan[i + 1];
      const until =
        next && next.start.piece === end.piece ? next.start : { piece: end.piece, index: Infinity };
      const chars = this.#plan[i]!.chars;
      out.push({
        word,
        start_s: round(this.#time(start, piece)),
        end_s: round(this.#time(until, piece)),
        ...(chars ? { char_start: chars[0], char_end: chars[1] } : {}),
      });
    }
    return out;
  }

  /** Seconds from the start of piece `from` to `position` (in that piece or an earlier one). */
  #time(position: TokenPosition, from: number): number {
    const edges = this.#edges[position.piece];
    const within = !edges
      ? 0
      : position.index >= edges.length
        ? (this.#lengths[position.piece] ?? 0)
        : (edges[position.index] ?? 0);
    let before = 0;
    for (let p = position.piece; p < from; p++) before += this.#lengths[p] ?? 0;
    return within - before;
  }
}

const round = (seconds: number): number => Math.round(seconds * 1000) / 1000;
