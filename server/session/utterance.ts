/**
 * Streamed text input: one utterance that grows by `append` messages until `flush`. Text is cut
 * into sentences as it arrives (its markup read as it completes: a tag or `[pause:…]` split across
 * appends is held until whole, never spoken), and each complete sentence is handed to the engine
 * at once, so speech starts while the agent is still writing. The engine reads the segments
 * through the async iterator; the session writes through {@link Utterance.append} and ends with
 * `flush`.
 */
import { spokenText, type Segment, type Segmenter } from '../../model/engine.ts';
import { ttsError } from '../../protocol/errors.ts';
import type { SynthesisOptions } from '../http/request.ts';

export interface UtteranceLimits {
  /** UTF-8 bytes of text received and not yet handed to the engine. */
  readonly maxBufferedBytes: number;
  /** After this long without an append, the buffered tail is spoken (0: never). */
  readonly idleFlushMs: number;
}

/** What a pause or a mark counts for in the buffer's bound: about what its markup takes to write. */
const QUIET_SEGMENT_BYTES = 16;

/**
 * What a segment counts for in the buffer's bound, in UTF-8 bytes: what its sentence speaks
 * (aliases and dictionary readings included); a pause or a mark a fixed amount, so that a client
 * that appends pauses and never reads fills the buffer as it would with text.
 */
const segmentBytes = (segment: Segment): number =>
  segment.kind === 'speech'
    ? segment.parts.reduce((n, p) => n + Buffer.byteLength(spokenText(p)), 0)
    : QUIET_SEGMENT_BYTES;

export class Utterance implements AsyncIterable<Segment> {
  readonly options: SynthesisOptions;
  readonly #limits: UtteranceLimits;
  readonly #segmenter: Segmenter;
  readonly #ready: Segment[] = [];
  #readyBytes = 0;
  #waiter: ((result: IteratorResult<Segment, undefined>) => void) | undefined;
  /** The markup error at `flush` (an unterminated construct), reported after the rest is spoken. */
  #flushError: unknown;
  #ended = false;
  #chars = 0;
  #idleTimer: NodeJS.Timeout | undefined;
  /** The hold of the armed idle timer, in milliseconds. */
  #idleMs = 0;
  /** The end of the text appended so far (a few characters), to see where a sentence ended. */
  #tail = '';

  /** @param segmenter reads the utterance's text (the engine's, with the request's voice and markup settings). */
  constructor(options: SynthesisOptions, limits: UtteranceLimits, segmenter: Segmenter) {
    this.options = options;
    this.#limits = limits;
    this.#segmenter = segmenter;
  }

  /** Markup that was dropped (its text spoken), one sentence per kind. */
  get warnings(): readonly string[] {
    return this.#segmenter.warnings;
  }

  get requestId(): string {
    return this.options.requestId;
  }

  /** No more text will come: flushed, or abandoned. */
  get ended(): boolean {
    return this.#ended;
  }

  /** Characters (code points) appended so far. */
  get chars(): number {
    return this.#chars;
  }

  /** The engine is waiting for text: nothing complete is buffered and the utterance is open. */
  get starved(): boolean {
    return this.#waiter !== undefined;
  }

  /** Text received and not yet handed to the engine, in UTF-8 bytes. */
  get bufferedBytes(): number {
    return this.#readyBytes + Buffer.byteLength(this.#segmenter.buffered) + this.#segmenter.held;
  }

  /**
   * Adds text; every sentence it completes goes to the engine now. `holdMs`: how long what ends no
   * sentence waits for more before it is spoken (the limits' idle flush otherwise; 0: never).
   * `spaceSentences`: the pieces are sentences that may lack the space between them.
   * @throws TtsError `text_too_long` when the text would hold more than the limit unspoken (nothing
   *   is added; the utterance stays open); `invalid_markup` (and the others markup may raise: an
   *   unknown voice, a speed out of range) for markup that cannot be spoken.
   */
  append(
    written: string,
    chars: number,
    { holdMs, spaceSentences = false }: { holdMs?: number; spaceSentences?: boolean } = {},
  ): void {
    if (this.#ended) throw new Error('append after the utterance ended');
    const text = spaceSentences && startsSentenceAfterOne(this.#tail, written) ? ` ${written}` : written;
    const bytes = Buffer.byteLength(text);
    const { maxBufferedBytes } = this.#limits;
    if (this.bufferedBytes + bytes > maxBufferedBytes) {
      throw ttsError(
        'TTS_ERR_TEXT_TOO_LONG',
        `This utterance already holds ${this.bufferedBytes} bytes of text not yet spoken, and this append of ${bytes} bytes would pass the limit of ${maxBufferedBytes}; it was not added. Wait for audio before appending more, or flush`,
      );
    }
    this.#chars += chars;
    // Only the last few characters are kept: no copy of a long append.
    if (text !== '')
      this.#tail =
        text.length >= TAIL_CHARS ? text.slice(-TAIL_CHARS) : (this.#tail + text).slice(-TAIL_CHARS);
    // A construct that cannot be spoken is skipped, the rest of the append spoken, and the error
    // sent; the utterance goes on.
    const { segments, error } = this.#segmenter.read(text);
    this.#push(segments);
    this.#armIdleFlush(holdMs ?? this.#limits.idleFlushMs);
    if (error !== undefined) throw error;
  }

  /**
   * Speaks what is buffered and ends the utterance. A construct that cannot be spoken (one still
   * open, say) is not: its error is kept ({@link flushError}) for the session to send after the
   * rest, before completion.
   */
  flush(): void {
    if (this.#ended) return;
    const { segments, error } = this.#segmenter.read(undefined);
    this.#push(segments);
    this.#flushError = error;
    this.#end();
  }

  /**
   * Speaks what is buffered now, even a sentence not yet ended, and stays open (ElevenLabs'
   * `flush`). A construct still open stays held.
   */
  generate(): void {
    if (this.#ended) return;
    this.#push(this.#segmenter.flushSentence());
  }

  /**
   * Speaks what is buffered now and puts a named point after it: the run reports it (`onMark`)
   * once the audio before it is out. The utterance stays open.
   */
  mark(name: string): void {
    if (this.#ended) return;
    this.#push([...this.#segmenter.flushSentence(), { kind: 'mark', name }]);
  }

  /** The error of a construct still open at `flush`, if there was one. */
  get flushError(): unknown {
    return this.#flushError;
  }

  /** Ends the utterance without speaking what is buffered (cancelled, or the client left). */
  abandon(): void {
    if (this.#ended) return;
    this.#ready.length = 0;
    this.#readyBytes = 0;
    this.#end();
  }

  [Symbol.asyncIterator](): AsyncIterator<Segment> {
    return {
      next: () => {
        const segment = this.#ready.shift();
        if (segment !== undefined) {
          this.#readyBytes -= segmentBytes(segment);
          return Promise.resolve({ value: segment, done: false });
        }
        if (this.#ended) return Promise.resolve({ value: undefined, done: true });
        return new Promise((resolve) => (this.#waiter = resolve));
      },
    };
  }

  #push(segments: readonly Segment[]): void {
    for (const segment of segments) {
      const waiter = this.#waiter;
      if (waiter) {
        this.#waiter = undefined;
        waiter({ value: segment, done: false });
      } else {
        this.#ready.push(segment);
        this.#readyBytes += segmentBytes(segment);
      }
    }
  }

  #end(): void {
    this.#ended = true;
    clearTimeout(this.#idleTimer);
    const waiter = this.#waiter;
    this.#waiter = undefined;
    waiter?.({ value: undefined, done: true });
  }

  /**
   * An agent that stalls mid-sentence (a tool call, say) still has its words spoken, `ms` after
   * its last append (0: never).
   */
  #armIdleFlush(ms: number): void {
    if (this.#idleTimer && ms === this.#idleMs) {
      this.#idleTimer.refresh();
      return;
    }
    clearTimeout(this.#idleTimer);
    this.#idleTimer = undefined;
    this.#idleMs = ms;
    if (ms === 0) return;
    this.#idleTimer = setTimeout(() => {
      if (!this.#ended) this.#push(this.#segmenter.flushSentence());
    }, ms).unref();
  }
}

/** Characters of the text's end kept to see where a sentence ended. */
const TAIL_CHARS = 8;

/** A sentence's end: its mark, then any closing quotes or brackets. */
const SENTENCE_END = /[.!?…]["'”’)\]]*$/u;
/** A sentence's start: a capital, perhaps after an opening quote or bracket. */
const SENTENCE_START = /^["'“‘([]?\p{Lu}/u;

/**
 * `next` starts a sentence right after `before` ended one, with no space between them ("there."
 * then "How"): read together they would make one word. Digits and lower case after a full stop
 * (3.5, example.com) are left as written.
 */
export function startsSentenceAfterOne(before: string, next: string): boolean {
  return SENTENCE_END.test(before) && SENTENCE_START.test(next);
}
