/**
 * Streamed text input: one utterance that grows by `append` messages until `flush`. Text is cut
 * into sentences as it arrives, and each complete sentence is handed to the engine at once, so
 * speech starts while the agent is still writing. The engine reads the sentences through the
 * async iterator; the session writes through {@link Utterance.append} and ends with `flush`.
 */
import { IncrementalSentenceChunker } from '../model/engine.ts';
import { ttsError } from '../protocol/errors.ts';
import type { SynthesisOptions } from './request.ts';

export interface UtteranceLimits {
  /** UTF-8 bytes of text received and not yet handed to the engine. */
  readonly maxBufferedBytes: number;
  /** After this long without an append, the buffered tail is spoken (0: never). */
  readonly idleFlushMs: number;
  /** The first chunk is released at its first clause mark once it holds this many characters; 0: off. */
  readonly firstChunkMinChars: number;
}

export class Utterance implements AsyncIterable<string> {
  readonly options: SynthesisOptions;
  readonly #limits: UtteranceLimits;
  readonly #chunker: IncrementalSentenceChunker;
  readonly #ready: string[] = [];
  #readyBytes = 0;
  #waiter: ((result: IteratorResult<string, undefined>) => void) | undefined;
  #ended = false;
  #chars = 0;
  #idleTimer: NodeJS.Timeout | undefined;

  constructor(options: SynthesisOptions, limits: UtteranceLimits) {
    this.options = options;
    this.#limits = limits;
    this.#chunker = new IncrementalSentenceChunker({
      firstChunkMinChars: options.firstChunk === 'sentence' ? 0 : limits.firstChunkMinChars,
    });
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
    return this.#readyBytes + Buffer.byteLength(this.#chunker.buffered);
  }

  /**
   * Adds text; every sentence it completes goes to the engine now.
   * @throws TtsError `text_too_long` when the text would hold more than the limit unspoken (nothing
   *   is added; the utterance stays open).
   */
  append(text: string, chars: number): void {
    if (this.#ended) throw new Error('append after the utterance ended');
    const bytes = Buffer.byteLength(text);
    const { maxBufferedBytes } = this.#limits;
    if (this.bufferedBytes + bytes > maxBufferedBytes) {
      throw ttsError(
        'TTS_ERR_TEXT_TOO_LONG',
        `This utterance already holds ${this.bufferedBytes} bytes of text not yet spoken, and this append of ${bytes} bytes would pass the limit of ${maxBufferedBytes}; it was not added. Wait for audio before appending more, or flush`,
      );
    }
    this.#chars += chars;
    this.#push(this.#chunker.feed(text));
    this.#armIdleFlush();
  }

  /** Speaks what is buffered and ends the utterance. */
  flush(): void {
    if (this.#ended) return;
    this.#push(this.#chunker.flush());
    this.#end();
  }

  /** Ends the utterance without speaking what is buffered (cancelled, or the client left). */
  abandon(): void {
    if (this.#ended) return;
    this.#chunker.reset();
    this.#ready.length = 0;
    this.#readyBytes = 0;
    this.#end();
  }

  [Symbol.asyncIterator](): AsyncIterator<string> {
    return {
      next: () => {
        const sentence = this.#ready.shift();
        if (sentence !== undefined) {
          this.#readyBytes -= Buffer.byteLength(sentence);
          return Promise.resolve({ value: sentence, done: false });
        }
        if (this.#ended) return Promise.resolve({ value: undefined, done: true });
        return new Promise((resolve) => (this.#waiter = resolve));
      },
    };
  }

  #push(sentences: readonly string[]): void {
    for (const sentence of sentences) {
      const waiter = this.#waiter;
      if (waiter) {
        this.#waiter = undefined;
        waiter({ value: sentence, done: false });
      } else {
        this.#ready.push(sentence);
        this.#readyBytes += Buffer.byteLength(sentence);
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

  /** An agent that stalls mid-sentence (a tool call, say) still has its words spoken. */
  #armIdleFlush(): void {
    const ms = this.#limits.idleFlushMs;
    if (ms === 0) return;
    if (this.#idleTimer) {
      this.#idleTimer.refresh();
      return;
    }
    this.#idleTimer = setTimeout(() => {
      if (!this.#ended) this.#push(this.#chunker.flush());
    }, ms).unref();
  }
}
