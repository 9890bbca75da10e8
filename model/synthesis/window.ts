/**
 * One request's sentences in flight: the next-needed one and up to `lookahead` after it, which
 * otherwise idle workers compute ahead (dispatch.ts says when). Audio comes out in order, sentence
 * by sentence; a sentence becomes next-needed once the one before it has been handed over, and only
 * then is the next one taken from the text, so a listener that stops reading stops the work after
 * the window.
 *
 * It also says when each of its sentences is due (dispatch.ts, rule 1). Its consumer (run.ts, then
 * the route) takes a piece when it has sent the one before, so the pieces taken and when they were
 * taken are the audio sent and when it left: a listener playing from the first byte in real time
 * runs dry when that audio has played out, waiting (not skipping ahead) whenever it ran out
 * before. The first sentence is due when the request began, a later one when the audio before it
 * will have played out (its own pieces held here, and an estimate for a sentence not yet
 * computed). A consumer that reads slower than real time (or stops) runs dry at each piece it
 * takes, so its deadlines follow its pace rather than falling ever further behind the clock.
 */
import { abortError, ttsError } from '../../protocol/errors.ts';
import type { JobHandle, PieceResult, PoolRequest, SentenceRequest } from '../inference/worker-pool.ts';
import type { SpeechSegment } from './request.ts';
import type { AudioChunk } from './run.ts';
import type { Segment } from './script.ts';

/** Samples of silence per millisecond at 24 kHz. */
const SAMPLES_PER_MS = 24;

/** Silence is made as it is handed over, at most this many samples (one second) at a time. */
const SILENCE_PIECE_SAMPLES = 24_000;

/** Pauses and marks taken from the text ahead of the audio, besides the window's sentences. */
const QUIET_AHEAD = 8;

interface InFlight {
  /** A sentence (else a pause or a mark, which take no worker). */
  readonly speech: boolean;
  /** What the pool runs for a sentence; its audio is estimated from it before it exists. */
  sentence: SentenceRequest | undefined;
  /** A sentence's index in the request, for its pieces. */
  readonly index: number;
  readonly pieces: AudioChunk[];
  /** A pause's samples not yet handed over: kept as a count, made a piece at a time. */
  silence: number;
  job: JobHandle | undefined;
  settled: boolean;
  failure: { readonly error: unknown } | undefined;
}

export class RequestWindow {
  readonly #pool: PoolRequest;
  readonly #sentences: AsyncIterator<Segment>;
  readonly #job: (sentence: SpeechSegment) => SentenceRequest;
  readonly #lookahead: number;
  readonly #maxSamples: number;
  readonly #signal: AbortSignal;
  readonly #inFlight: InFlight[] = [];
  #taken = 0;
  /** Samples handed over so far. */
  #samples = 0;
  /** When the request began (`performance.now()`): its first sentence's deadline. */
  #openedAt = performance.now();
  /** When the audio handed over so far will have played out; unset before any. */
  #playedOutAt: number | undefined;
  #pulling = false;
  #exhausted = false;
  #sourceFailure: { readonly error: unknown } | undefined;
  #wake: (() => void) | undefined;

  /**
   * @param pool the request's door into the pool; closed when the window ends.
   * @param job what the pool runs for one sentence of the text.
   * @param signal aborts the request: its sentences are dropped and the audio ends with an AbortError.
   * @param maxSamples the most audio (24 kHz samples) the request may make, pauses included: past
   *   it the audio ends with an `audio_too_long` TtsError.
   */
  constructor(
    pool: PoolRequest,
    sentences: AsyncIterator<Segment>,
    job: (sentence: SpeechSegment) => SentenceRequest,
    lookahead: number,
    signal: AbortSignal,
    maxSamples = Infinity,
  ) {
    this.#pool = pool;
    this.#sentences = sentences;
    this.#job = job;
    this.#lookahead = lookahead;
    this.#signal = signal;
    this.#maxSamples = maxSamples;
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
        const piece = head?.pieces.shift() ?? (head?.silence ? this.#silence(head) : undefined);
        if (piece) {
          this.#count(piece.samples.length);
          this.#played(piece.samples.length);
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

  /** The next piece of a pause's silence. */
  #silence(entry: InFlight): AudioChunk {
    const n = Math.min(entry.silence, SILENCE_PIECE_SAMPLES);
    entry.silence -= n;
    return { samples: new Int16Array(n), sentence: entry.index, phonemeCount: 0, inferenceMs: 0 };
  }

  /** Counts audio about to be handed over against the request's bound. */
  #count(samples: number): void {
    this.#samples += samples;
    if (this.#samples <= this.#maxSamples) return;
    const max = this.#maxSamples / (SAMPLES_PER_MS * 1000);
    throw ttsError(
      'TTS_ERR_AUDIO_TOO_LONG',
      `The request's audio reached ${max} s, the most one request may make; the rest was not synthesized`,
    );
  }

  /** A listener that runs dry waits for the next audio, then plays it in real time. */
  #played(samples: number): void {
    if (samples === 0) return; // a mark: no audio
    const now = performance.now();
    this.#playedOutAt = Math.max(this.#playedOutAt ?? now, now) + samples / SAMPLES_PER_MS;
  }

  /**
   * When `entry` is needed: the first sentence when the request began; a later one when the audio
   * handed over and what is ahead of it in the window will have played out.
   */
  #due(entry: InFlight): number {
    let at = this.#playedOutAt ?? this.#openedAt;
    for (const e of this.#inFlight) {
      if (e === entry) break;
      let samples = e.silence;
      for (const piece of e.pieces) samples += piece.samples.length;
      at += samples / SAMPLES_PER_MS;
      // A sentence not computed yet: what its text is expected to make, at least a millisecond,
      // so that no sentence is due before one ahead of it.
      if (e.sentence && !e.settled && e.pieces.length === 0)
        at += Math.max(1, this.#pool.audioMs(e.sentence.text.length, e.sentence.speed));
    }
    return at;
  }

  /** The head has been handed over whole: the next sentence becomes next-needed. */
  #advance(): void {
    this.#inFlight.shift();
    this.#inFlight.find((entry) => entry.speech)?.job?.promote();
    this.#pull();
  }

  /** Takes the next sentence from the text when the window has room (one at a time). */
  #pull(): void {
    const sentences = this.#sentencesInFlight();
    if (
      this.#pulling ||
      this.#exhausted ||
      sentences > this.#lookahead ||
      this.#inFlight.length - sentences >= QUIET_AHEAD ||
      this.#signal.aborted
    )
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

  #submit(segment: Segment): void {
    const index = this.#taken++;
    const speech = segment.kind === 'speech';
    const entry: InFlight = {
      speech,
      sentence: undefined,
      index,
      pieces: [],
      silence: 0,
      job: undefined,
      settled: false,
      failure: undefined,
    };
    if (segment.kind !== 'speech') {
      // Silence and marks need no worker: they are in place at once, in their turn; silence is a
      // count until it is handed over, so pauses cost no memory while they wait.
      if (segment.kind === 'pause') entry.silence = Math.round(segment.ms * SAMPLES_PER_MS);
      else
        entry.pieces.push({
          samples: new Int16Array(0),
          sentence: index,
          phonemeCount: 0,
          inferenceMs: 0,
          mark: segment.name,
        });
      entry.settled = true;
      this.#inFlight.push(entry);
      return;
    }
    const sentence = (entry.sentence = this.#job(segment));
    const onPiece = (piece: PieceResult) => {
      entry.pieces.push({ ...piece, sentence: index });
      this.#notify();
    };
    // The window's first sentence is what the listener waits for (a pause or mark before it is in
    // place already); the rest is look-ahead.
    entry.job = this.#pool.submit(sentence, onPiece, {
      needed: this.#sentencesInFlight() === 0,
      due: () => this.#due(entry),
    });
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

  #sentencesInFlight(): number {
    let n = 0;
    for (const entry of this.#inFlight) if (entry.speech) n++;
    return n;
  }

  #notify(): void {
    const wake = this.#wake;
    this.#wake = undefined;
    wake?.();
  }
}
