/**
 * Phoneme timestamps: each sound of a piece the model ran, with its viseme, timed from the model's
 * per-token durations (the same edges as the words', alignment.ts). A mark that is no sound of its
 * own (visemes.ts) is folded into the sound it belongs to, so the sounds and pauses tile the
 * piece's speech from its first token to its last, and a word starts where one of its sounds does.
 */
import { tokenEdges } from './alignment.ts';
import { MARKS_AFTER, MARKS_BEFORE, visemeOf, type Viseme } from './visemes.ts';

export interface PhonemeTiming {
  /** Kokoro's symbol, with the marks folded into it (`ˈɛ`, `ɑː`, `tʰ`); `" "` between words. */
  readonly phoneme: string;
  readonly viseme: Viseme;
  /** Seconds from the start of the piece the timing is reported with, as WordTiming's. */
  readonly start_s: number;
  readonly end_s: number;
}

/**
 * The symbols of `piece` grouped into sounds: each group's first and last token index (end
 * exclusive). A mark before a sound joins the next group, a mark after one the previous group;
 * marks with nothing to join stay a group of their own.
 */
export function soundGroups(
  piece: string,
): { readonly text: string; readonly from: number; readonly to: number }[] {
  const symbols = [...piece];
  const groups: { text: string; from: number; to: number }[] = [];
  let pending = -1; // index where marks-before waiting for their sound began
  for (const [i, symbol] of symbols.entries()) {
    const last = groups.at(-1);
    if (MARKS_BEFORE.has(symbol)) {
      if (pending < 0) pending = i;
      continue;
    }
    if (MARKS_AFTER.has(symbol) && pending < 0 && last !== undefined && isSound(last.text)) {
      last.text += symbol;
      last.to = i + 1;
      continue;
    }
    const from = pending < 0 ? i : pending;
    groups.push({ text: symbols.slice(from, i + 1).join(''), from, to: i + 1 });
    pending = -1;
  }
  if (pending >= 0) {
    const last = groups.at(-1);
    const marks = symbols.slice(pending).join('');
    if (last !== undefined && isSound(last.text)) {
      last.text += marks;
      last.to = symbols.length;
    } else groups.push({ text: marks, from: pending, to: symbols.length });
  }
  return groups;
}

/**
 * Times the sounds of one piece: `durations` as the model gave them for it (pads first and last),
 * `samples` the audio it produced. Seconds from the piece's start, to the millisecond.
 */
export function timePhonemes(piece: string, durations: ArrayLike<number>, samples: number): PhonemeTiming[] {
  const edges = tokenEdges(durations, samples);
  const tokens = edges.length - 1;
  if ([...piece].length !== tokens) return []; // not the piece these durations are for
  return soundGroups(piece).map(({ text, from, to }) => ({
    phoneme: text,
    viseme: visemeOf(text),
    start_s: round(edges[from]!),
    end_s: round(edges[to]!),
  }));
}

const isSound = (text: string): boolean => visemeOf(text) !== 'sil';

const round = (seconds: number): number => Math.round(seconds * 1000) / 1000;
