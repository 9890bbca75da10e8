/**
 * One request's sentences in flight: the next-needed one and up to `lookahead` after it, which
 * otherwise idle workers compute ahead (dispatch.ts says when). Audio comes out in order, sentence
 * by sentence; a sentence becomes next-needed once the one before it has been handed over, and only
 * then is the next one taken from the text, so a listener that stops reading stops the work after
 * the window.
 */
import { abortError } from '../../protocol/errors.ts';
import type { JobHandle, PieceResult, PoolRequest, SentenceRequest } from '../inference/worker-pool.ts';
import type { AudioChunk } from './run.ts';

interface InFlight {
  readonly pieces: AudioChunk[];
  job: JobHandle | undefined;
  settled: boolean;
  failure: { readonly error: unknown } | undefined;
}

export class RequestWindow {
  readonly #pool: PoolRequest;
  readonly #sentences: AsyncIterator<string>;
  readonly #job: (sentence: string) => SentenceRequest;
  readonly #lookahead: number;
  readonly #signal: AbortSignal;
  readonly #inFlight: InFlight[] = [];
  #taken = 0;
  #pulling = false;
  #exhausted = false;
  #sourceFailure: { readonly error: unknown } | undefined;
  #wake: (() => void) | undefined;

  /**
   * @param pool the request's door into the pool; closed when the window ends.
   * @param job what the pool runs for one sentence of the text.
   * @param signal aborts the request: its sentences are dropped and the audio ends with an AbortError.
   */
  constructor(
    pool: PoolRequest,
    sentences: AsyncIterator<string>,
    job: (sentence: string) => SentenceRequest,
    lookahead: number,
    signal: AbortSignal,
  ) {
    this.#pool = pool;
    this.#sentences = sentences;
    this.#job = job;
    this.#lookahead = lookahead;
    this.#signal = signal;
  }

  /** The request's audio, in order. The request leaves the pool when this ends, however it ends. */
  async *audio(): AsyncGenerator<AudioChunk> {
    const abort = () => {
      this.#pool.close();
      this.#notify();
    };
    this.#signal.addEventListener('abort', abort, { once: true });
    try {
      this.#pull();
      for (;;) {
        if (this.#signal.aborted) throw abortError();
        const head = this.#inFlight[0];
        const piece = head?.pieces.shift();
        if (piece) {
          yield piece;
          continue;
        }
        if (head?.settled) {
          if (head.failure) throw head.failure.error;
          this.#advance();
          continue;
        }
        if (!head && this.#exhausted && !this.#pulling) {
          if (this.#sourceFailure) throw this.#sourceFailure.error;
          return;
        }
        await new Promise<void>((resolve) => (this.#wake = resolve));
      }
    } finally {
      this.#signal.removeEventListener('abort', abort);
      this.#pool.close();
    }
  }

  /** The head has been handed over whole: the next sentence becomes next-needed. */
  #advance(): void {
    this.#inFlight.shift();
    this.#inFlight[0]?.job?.promote();
    this.#pull();
  }

  /** Takes the next sentence from the text when the window has room (one at a time). */
  #pull(): void {
    if (this.#pulling || this.#exhausted || this.#inFlight.length > this.#lookahead || this.#signal.aborted)
      return;
    this.#pulling = true;
    this.#sentences.next().then(
      (result) => {
        this.#pulling = false;
        if (result.done) this.#exhausted = true;
        else this.#submit(result.value);
        this.#notify();
        this.#pull();
      },
      (error: unknown) => {
        this.#pulling = false;
        this.#exhausted = true;
        this.#sourceFailure = { error };
        this.#notify();
      },
    );
  }

  #submit(sentence: string): void {
    const index = this.#taken++;
    const entry: InFlight = { pieces: [], job: undefined, settled: false, failure: undefined };
    const onPiece = (piece: PieceResult) => {
      entry.pieces.push({ ...piece, sentence: index });
      this.#notify();
    };
    // The window's head is what the listener waits for; the rest is look-ahead.
    entry.job = this.#pool.submit(this.#job(sentence), onPiece, this.#inFlight.length === 0);
    entry.job.done.then(
      () => {
        entry.settled = true;
        this.#notify();
      },
      (error: unknown) => {
        entry.failure = { error };
        entry.settled = true;
        this.#notify();
      },
    );
    this.#inFlight.push(entry);
  }

  #notify(): void {
    const wake = this.#wake;
    this.#wake = undefined;
    wake?.();
  }
}
