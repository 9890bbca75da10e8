/**
 * A sentence as the front end reads it when some of it is not plain text: the pieces that go
 * through the language's normalization and G2P, and the pieces whose reading is fixed already
 * (inline phonemes, a pronunciation dictionary's entry, an SSML `sub` alias or `say-as`).
 * Plain data: parts cross the worker boundary by structured clone.
 *
 * Every part keeps `text`, the words the user wrote, so word timestamps name them whatever was
 * spoken in their place.
 */
import { codePointLength } from '../../protocol/request.ts';

/** Read by the language's front end (normalization, then G2P). */
export interface TextPart {
  readonly text: string;
}

/** Fed to the model as they are: Kokoro's phoneme symbols for the language, checked already. */
export interface PhonemePart {
  readonly text: string;
  readonly phonemes: string;
}

/** `spoken` is read by the front end in place of `text` (an alias, say-as's reading). */
export interface AliasPart {
  readonly text: string;
  readonly spoken: string;
}

/**
 * English only: misaki's stress markup (`[word](+1)`, `[word](-1)`, `[word](0.5)`) on a word the
 * English G2P reads; other languages read `text` as it is.
 */
export interface StressPart {
  readonly text: string;
  readonly stress: string;
}

/**
 * A part and where it was written: `at` and `to` are its span in the request's text (UTF-16
 * offsets, `to` exclusive; for a fixed reading, its whole construct, markup included), when known.
 * Word timestamps carry them.
 */
export type SpeechPart = (TextPart | PhonemePart | AliasPart | StressPart) & {
  readonly at?: number;
  readonly to?: number;
};

export const isPhonemePart = (part: SpeechPart): part is PhonemePart => 'phonemes' in part;
export const isAliasPart = (part: SpeechPart): part is AliasPart => 'spoken' in part;
export const isStressPart = (part: SpeechPart): part is StressPart => 'stress' in part;

/** Parts that are one plain text: the sentence is read as it always was, whole. */
export const isPlain = (parts: readonly SpeechPart[]): boolean =>
  parts.length === 1 && !isPhonemePart(parts[0]!) && !isAliasPart(parts[0]!) && !isStressPart(parts[0]!);

/** What the front end reads of a part: its alias, its phonemes, or its text. */
export const spokenText = (part: SpeechPart): string =>
  isAliasPart(part) ? part.spoken : isPhonemePart(part) ? part.phonemes : part.text;

/** Characters the front end reads of `parts` (code points), which bound the work they make. */
export function spokenChars(parts: readonly SpeechPart[]): number {
  let n = 0;
  for (const part of parts) n += codePointLength(spokenText(part));
  return n;
}

/** The words the user wrote: every part's `text`, in order. */
export function displayText(parts: readonly SpeechPart[]): string {
  return parts.map((p) => p.text).join('');
}
