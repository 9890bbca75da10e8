/**
 * A request's text as the sentences the engine synthesizes, one at a time: a whole text split
 * here, its first sentence cut at a clause mark only where that buys time; a phoneme string split
 * at its sentence ends; or the segments of markup (script.ts), whole or as they are written.
 */
import type { CostModel } from '../inference/dispatch.ts';
import { splitSentences } from '../text/sentences.ts';
import { speechOf, type SynthesisRequest } from './request.ts';
import type { Segment } from './script.ts';
import type { PronunciationMatcher } from '../text/pronunciations/index.ts';

/** Above this many characters the chunker cuts a sentence anyway. */
const CHUNKER_LIMIT = 400;

export interface FirstChunkSettings {
  /** The first chunk may end at its first clause mark once it holds this many characters; 0: off. */
  readonly minChars: number;
  /**
   * A whole text's first sentence is cut only when one pool session would take longer than this
   * over it whole; 0: whenever `minChars` allows.
   */
  readonly budgetMs: number;
}

/**
 * The segments of `request`, one at a time: a plain whole text split into sentences here (each read
 * through the request's dictionary), segments the server read from markup as they are. Streamed
 * text stops being waited for once `signal` aborts, even if it never ends by itself.
 */
export function segmentSource(
  request: SynthesisRequest,
  dictionary: PronunciationMatcher | undefined,
  first: FirstChunkSettings,
  costs: CostModel,
  signal: AbortSignal,
): AsyncIterator<Segment> {
  const { text } = request;
  if (typeof text !== 'string') return isStreamed(text) ? untilAborted(text, signal) : listed(text);
  const sentences = wholeTextSentences(request, text, first, costs);
  // Each sentence is the text's own characters, trimmed: found in order, it has its offset.
  let cursor = 0;
  return listed(
    sentences.map((s) => {
      const at = text.indexOf(s, cursor);
      if (at >= 0) cursor = at + s.length;
      return speechOf(request, s, dictionary, at >= 0 ? at : undefined);
    }),
  );
}

function wholeTextSentences(
  request: SynthesisRequest,
  text: string,
  first: FirstChunkSettings,
  costs: CostModel,
): string[] {
  if (request.phonemes) return phonemeSentences(text);
  if (request.firstChunk === 'sentence' || first.minChars === 0) return splitSentences(text);
  const whole = splitSentences(text, { firstChunkMinChars: 0 });
  const fastEnough =
    first.budgetMs > 0 && whole.length > 0 && costs.poolMs(whole[0]!.length) <= first.budgetMs;
  return fastEnough ? whole : splitSentences(text, { firstChunkMinChars: first.minChars });
}

/**
 * The early-release threshold for streamed text, whose first sentence is not known ahead: its
 * first chunk is cut at a clause mark only once the text before it would already take longer than
 * the budget whole, and never before `minChars` (0: off).
 */
export function streamedFirstChunkMinChars(first: FirstChunkSettings, costs: CostModel): number {
  if (first.minChars === 0 || first.budgetMs === 0) return first.minChars;
  const perChar = costs.poolMs(1);
  const chars = Number.isFinite(perChar) && perChar > 0 ? Math.ceil(first.budgetMs / perChar) : 0;
  return Math.min(Math.max(first.minChars, chars), CHUNKER_LIMIT);
}

/**
 * A plain text as the front end reads it alone (`POST /v1/phonemize`): its sentences, as
 * synthesis splits them, with consecutive ones joined up to the chunker's limit. Each piece is one
 * job of the pool, no longer than one sentence may be, and short sentences share a job so that
 * each does not pay a round trip to the worker and a call of the phonemizer of its own.
 */
export function frontEndPieces(text: string): string[] {
  const pieces: string[] = [];
  for (const sentence of splitSentences(text)) {
    const last = pieces.length - 1;
    if (last >= 0 && pieces[last]!.length + 1 + sentence.length <= CHUNKER_LIMIT)
      pieces[last] += ` ${sentence}`;
    else pieces.push(sentence);
  }
  return pieces;
}

/** Sentences of a phoneme string: after each `.`, `!`, `?` or `…` that a space follows. */
export function phonemeSentences(phonemes: string): string[] {
  return phonemes
    .split(/(?<=[.!?…])\s+/)
    .map((s) => s.trim())
    .filter((s) => s !== '');
}

const isStreamed = (text: readonly Segment[] | AsyncIterable<Segment>): text is AsyncIterable<Segment> =>
  Symbol.asyncIterator in text;

async function* listed<T>(items: readonly T[]): AsyncGenerator<T> {
  yield* items;
}

async function* untilAborted<T>(items: AsyncIterable<T>, signal: AbortSignal): AsyncGenerator<T> {
  const iterator = items[Symbol.asyncIterator]();
  const aborted = new Promise<IteratorResult<T>>((resolve) => {
    const done = () => resolve({ value: undefined, done: true });
    if (signal.aborted) done();
    else signal.addEventListener('abort', done, { once: true });
  });
  for (;;) {
    const next = await Promise.race([iterator.next(), aborted]);
    if (next.done || signal.aborted) return;
    yield next.value;
  }
}
