/**
 * Phonemes → Kokoro token ids, and the split of long phoneme strings into pieces that fit one
 * inference (at most 510 ids; the model adds nothing, we add the two padding zeros).
 */
import { MAX_PHONEME_IDS } from '../kokoro/constants.ts';
import kokoroConfig from '../kokoro/config.json' with { type: 'json' };

export type Vocab = ReadonlyMap<string, number>;

/** Kokoro v1.0's phoneme vocabulary (114 symbols). */
export const KOKORO_VOCAB: Vocab = new Map(Object.entries(kokoroConfig.vocab as Record<string, number>));

/** Drops characters the vocabulary lacks, so that string length equals id count afterwards. */
export function keepKnownPhonemes(phonemes: string, vocab: Vocab = KOKORO_VOCAB): string {
  return filterToVocab(phonemes, vocab).kept;
}

/**
 * Splits phonemes into those the vocabulary has (in order) and a count of each symbol it lacks.
 * White space other than a space (a line break) counts as a space, not as unknown.
 */
export function filterToVocab(
  phonemes: string,
  vocab: Vocab = KOKORO_VOCAB,
): { kept: string; unknown: Record<string, number> } {
  let kept = '';
  const unknown: Record<string, number> = {};
  for (const raw of phonemes) {
    // Most symbols are known: the white-space test runs only for the rest.
    const ch = vocab.has(raw) || !/\s/.test(raw) ? raw : ' ';
    if (vocab.has(ch)) kept += ch;
    else unknown[ch] = (unknown[ch] ?? 0) + 1;
  }
  return { kept, unknown };
}

/** Maps phonemes to ids; unknown symbols are skipped. */
export function phonemesToIds(phonemes: string, vocab: Vocab = KOKORO_VOCAB): number[] {
  const ids: number[] = [];
  for (const ch of phonemes) {
    const id = vocab.get(ch);
    if (id !== undefined) ids.push(id);
  }
  return ids;
}

/** The model's input: `[0, ...ids, 0]` as int64. */
export function padIds(ids: readonly number[]): BigInt64Array {
  const out = new BigInt64Array(ids.length + 2);
  for (let i = 0; i < ids.length; i++) out[i + 1] = BigInt(ids[i]!);
  return out;
}

const SENTENCE_STOPS = new Set(['.', '!', '?', '…']);
const CLAUSE_STOPS = new Set([',', ';', ':', '—']);

/**
 * Splits a phoneme string (already filtered with `keepKnownPhonemes`, one symbol per id) into
 * pieces of at most `max` symbols. It cuts after a sentence stop if it can, else after a clause
 * stop, else at a space, and only as a last resort inside a word. Nothing is dropped:
 * `pieces.join('')` gives back the input apart from whitespace at the cuts.
 */
export function splitPhonemes(phonemes: string, max: number = MAX_PHONEME_IDS): string[] {
  const symbols = [...phonemes];
  const pieces: string[] = [];
  let start = 0;
  while (symbols.length - start > max) {
    const end = start + max; // exclusive upper bound of this piece
    const cut =
      lastCut(symbols, start, end, (s) => SENTENCE_STOPS.has(s)) ??
      lastCut(symbols, start, end, (s) => CLAUSE_STOPS.has(s)) ??
      lastCut(symbols, start, end, (s) => s === ' ') ??
      end;
    const piece = symbols.slice(start, cut).join('').trim();
    if (piece !== '') pieces.push(piece);
    start = cut;
    while (start < symbols.length && symbols[start] === ' ') start++;
  }
  const rest = symbols.slice(start).join('').trim();
  if (rest !== '') pieces.push(rest);
  return pieces;
}

/** Index just after the last symbol in [start, end) that matches, if that leaves a non-empty piece. */
function lastCut(
  symbols: string[],
  start: number,
  end: number,
  match: (s: string) => boolean,
): number | null {
  for (let i = end - 1; i > start; i--) if (match(symbols[i]!)) return i + 1;
  return null;
}
