/**
 * Many synthesis requests over one `InvokeEndpointWithBidirectionalStream` call (the SageMaker
 * Runtime HTTP/2 service), the same shape as a WebSocket session with the container.
 */
import { decodeControlFrame } from '../../../protocol/frames.ts';
import { requestMessage, type SynthesisOptions } from '../../../protocol/request.ts';
import { AsyncQueue } from './async-queue.ts';
import type { TtsCancelledEvent, TtsEvent } from './events.ts';
import {
  BidiStreamError,
  SageMakerBidiChannel,
  type BidiMessage,
  type SageMakerBidiOptions,
} from './sagemaker-channel.ts';
import { SessionCore, type TtsResult } from './session-core.ts';
import { encoder, errorText } from './sagemaker-stream.ts';

/** Options of {@link SageMakerTtsSession.connect}: those of the channel it runs on. */
export type SageMakerSessionOptions = SageMakerBidiOptions;

/**
 * Many synthesis requests over one SageMaker bidirectional stream, answered strictly in order. Every
 * message goes out as one `BINARY` payload part (SageMaker hands it to the container as a binary
 * WebSocket frame); the response parts are reassembled into the container's frames and turned into
 * {@link TtsEvent}s. The methods are those of the WebSocket session (`TtsSession`), with the same
 * events and results: `send`, `request`, `append` and `flush` for streamed text, `cancel`.
 *
 * @example
 * ```ts
 * const session = await SageMakerTtsSession.connect({ endpointName: 'kokoro', region: 'us-east-1' });
 * session.send('Hello there.', { voice: 'af_heart' });
 * const closing = session.close();
 * for await (const event of session.events()) if (event.type === 'audio') play(event.bytes);
 * await closing;
 * ```
 */
export class SageMakerTtsSession {
  readonly #channel: SageMakerBidiChannel;
  readonly #events = new AsyncQueue<TtsEvent>();
  /** Requests, utterances and cancels in flight, and where each event goes (as in the WebSocket session). */
  readonly #core = new SessionCore({
    transmit: (message) => {
      if (this.closed) throw new Error('the session is closed; connect a new one');
      this.#sendJson(message);
    },
    deliver: (event) => this.#emit(event),
    // With request_timestamp, so that the server can refuse a request that waited too long.
    request: (text, options, requestId) => ({ ...requestMessage(text, options, requestId) }),
  });
  #closing = false;
  #finished = false;
  #eventsTaken = false;
  readonly #done: Promise<void>;

  private constructor(channel: SageMakerBidiChannel) {
    this.#channel = channel;
    this.#done = this.#pump();
  }

  /**
   * Opens the bidirectional stream. Resolves once the SDK has started reading the request stream (or
   * the response has begun), so requests can be sent at once; a failure before that (credentials, a
   * missing SDK package) rejects. Failures after it arrive as an `error` event followed by `closed`.
   */
  static async connect(options: SageMakerSessionOptions): Promise<SageMakerTtsSession> {
    return new SageMakerTtsSession(await SageMakerBidiChannel.connect(options));
  }

  /** True once `close()` or `abort()` was called or the stream ended. */
  get closed(): boolean {
    return this.#closing || this.#finished;
  }

  /**
   * Queues one request and returns its id at once; it never waits for earlier answers.
   * @throws Error when the session is closing or closed.
   */
  send(text: string, options: SynthesisOptions = {}): string {
    return this.#core.send(text, options);
  }

  /**
   * Sends one request and collects it: resolves with its audio, words (with `timestamps: true`) and
   * completion. Rejects with a {@link TtsRequestError} when the server answers with an error frame
   * (its `code`), or when a {@link cancel} cuts or drops the request (code `cancelled`); with an
   * Error when the session ends first. Its events are not delivered to {@link events}.
   */
  request(text: string, options: SynthesisOptions = {}): Promise<TtsResult> {
    return this.#core.request(text, options);
  }

  /**
   * Adds text to the open utterance (streamed text input); the server speaks each sentence as soon
   * as it is complete. The first append opens an utterance, with `options` and a generated
   * `request_id` unless one is given; later appends take no options, until {@link flush}. Returns
   * the utterance's request id. Its events go to {@link events} as they arrive, and its audio is
   * also gathered for the result of flush(). An append that the server refuses is answered with an
   * `error` event naming the utterance and is not spoken; the utterance goes on, and flush() then
   * rejects with that error once the utterance has ended.
   *
   * @throws Error when the session is closing or closed, or when a later append carries options.
   */
  append(text: string, options?: SynthesisOptions): string {
    return this.#core.append(text, options);
  }

  /**
   * Ends the open utterance: the server speaks what it holds and completes it. Resolves like
   * {@link request} with the utterance's audio, words and completion (its events have gone to
   * {@link events} as well); rejects with a {@link TtsRequestError} when the server failed it or
   * refused one of its appends, with code `cancelled` when a cancel cut it, or with an Error when
   * the session ends first. With no utterance open, the server answers at once with an empty
   * completion. The promise may be ignored: a rejection nobody awaits is not reported as unhandled.
   */
  flush(): Promise<TtsResult> {
    return this.#core.flush();
  }

  /**
   * Barge-in: asks the server to stop the request in flight (at its next chunk boundary) and drop
   * every queued one, including the open utterance, or only the request `requestId`. Resolves with
   * the server's answer, the `cancelled` event listing the ids it cut or dropped (and in `heard`,
   * what the listener received of the request in flight that it cut); the event is also
   * delivered to {@link events} after the last audio of what was cut, and no event of a listed
   * request follows it. The {@link request} and {@link flush} promises of the listed requests
   * reject with a {@link TtsRequestError} of code `cancelled`. Rejects when the session is closing
   * or ends before the answer, and when `requestId` is not a usable id.
   */
  cancel(requestId?: string): Promise<TtsCancelledEvent> {
    return this.#core.cancel(requestId);
  }

  /**
   * The session's events in arrival order, ending after `closed`. There is one reader: calling this
   * twice throws. Events are buffered until read.
   */
  events(): AsyncIterableIterator<TtsEvent> {
    if (this.#eventsTaken) throw new Error('events() may be called once per session');
    this.#eventsTaken = true;
    const queue = this.#events;
    return {
      next: () => queue.next(),
      [Symbol.asyncIterator]() {
        return this;
      },
    };
  }

  /**
   * Sends `{"type":"close"}` (the server finishes every request sent before it, then closes) and
   * resolves when the response stream has ended. The request stream is ended after that, so no
   * answer is lost if the service treats the end of the request stream as a disconnect.
   */
  async close(): Promise<void> {
    if (this.#finished) return;
    if (!this.#closing) {
      // The channel may have ended a moment before this session has read its end.
      if (!this.#channel.closed) this.#sendJson({ type: 'close' });
      this.#closing = true;
    }
    await this.#done;
  }

  /** Stops at once: cancels the call, drops unanswered requests and emits `closed` with reason `aborted`. */
  abort(): void {
    if (this.#finished) return;
    this.#closing = true;
    this.#finish('aborted');
    this.#channel.abort();
  }

  /** One BINARY payload part (SageMaker hands it to the container as a binary WebSocket frame). */
  #sendJson(message: object): void {
    this.#channel.send(encoder.encode(JSON.stringify(message)));
  }

  async #pump(): Promise<void> {
    try {
      for await (const message of this.#channel) {
        if (this.#finished) return;
        this.#onMessage(message);
      }
      this.#finish(this.#closing ? 'closed' : 'the response stream ended');
    } catch (err) {
      if (this.#finished) return;
      if (err instanceof BidiStreamError) this.#fail(err.code, err.message);
      else this.#fail('transport_error', `the SageMaker stream failed: ${errorText(err)}`);
    }
  }

  #onMessage({ data, dataType }: BidiMessage): void {
    const control = decodeControlFrame(data);
    if (control) {
      this.#core.control(control);
      return;
    }
    // A UTF8 part is a text frame, so control by transport; one that is not a JSON object is unreadable.
    if (dataType === 'UTF8') return;
    this.#core.audio(data);
  }

  #emit(event: TtsEvent): void {
    if (!this.#finished) this.#events.push(event);
  }

  #fail(code: string, message: string): void {
    this.#emit({ type: 'error', code, message });
    this.#finish(message);
    this.#channel.abort();
  }

  #finish(reason: string): void {
    if (this.#finished) return;
    this.#core.end(`ended (${reason})`);
    this.#events.push({ type: 'closed', reason });
    this.#finished = true;
    this.#events.end();
  }
}
