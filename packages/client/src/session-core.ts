/**
 * What the WebSocket and the SageMaker sessions share above their transports: the messages for
 * requests, streamed text and cancels; which request each frame belongs to; the results that
 * `request()` and `flush()` collect; and the answers that `cancel()` waits for.
 */
import { concatBytes } from '../../../protocol/bytes.ts';
import { MAX_REQUEST_ID_CHARS, type SynthesisOptions } from '../../../protocol/request.ts';
import { RequestTracker, type TtsControlEvent } from './attribution.ts';
import type { TtsCancelledEvent, TtsCompleteEvent, TtsEvent, TtsWord } from './events.ts';

/** What `request()` and `flush()` resolve to. */
export interface TtsResult {
  /** All audio frames of the request, concatenated (one valid file for container formats). */
  readonly audio: Uint8Array;
  /** Its words with their times, in text order (with `timestamps: true`); empty otherwise. */
  readonly words: readonly TtsWord[];
  readonly complete: TtsCompleteEvent;
}

/**
 * A request that did not complete: the server answered with an error frame (`code` is the
 * server's, e.g. `voice_not_found`), or a cancel cut or dropped it (`code` is `cancelled`).
 */
export class TtsRequestError extends Error {
  override readonly name = 'TtsRequestError';
  readonly code: string;
  readonly requestId: string | undefined;

  constructor(code: string, message: string, requestId?: string) {
    super(message);
    this.code = code;
    this.requestId = requestId;
  }
}

/** The transport under a {@link SessionCore}. */
export interface SessionTransport {
  /** Sends one message; throws when the session is closed or closing. */
  transmit(message: Record<string, unknown>): void;
  /** Hands an event to the session's `events()`. */
  deliver(event: TtsEvent): void;
  /** The fields of a request (or of an utterance's first append): the text, the options and the session's own. */
  request(text: string, options: SynthesisOptions, requestId: string): Record<string, unknown>;
}

interface Collector {
  readonly chunks: Uint8Array[];
  readonly words: TtsWord[];
  /** request(): its events go to the collector only. An utterance's go to events() as well. */
  readonly divert: boolean;
  /** The first append of the utterance that the server refused: the flush rejects with it. */
  refusal?: TtsRequestError;
  resolve(result: TtsResult): void;
  reject(error: Error): void;
}

interface PendingCancel {
  resolve(event: TtsCancelledEvent): void;
  reject(error: Error): void;
  /** The utterance that this cancel closed on the client side. */
  readonly utterance: string | undefined;
}

export class SessionCore {
  readonly #transport: SessionTransport;
  readonly #tracker = new RequestTracker();
  /** Requests whose result is being collected, by id. */
  readonly #collectors = new Map<string, Collector>();
  /** cancel() calls not yet answered, in the order sent (the server answers in that order). */
  readonly #cancels: PendingCancel[] = [];
  /** The utterance that append() adds to, until flush() or a cancel that covers it. */
  #utterance: { readonly requestId: string; readonly result: Promise<TtsResult> } | undefined;

  constructor(transport: SessionTransport) {
    this.#transport = transport;
  }

  send(text: string, options: SynthesisOptions): string {
    const requestId = options.request_id ?? newRequestId();
    this.#transport.transmit(this.#transport.request(text, options, requestId));
    this.#tracker.sent(requestId);
    return requestId;
  }

  request(text: string, options: SynthesisOptions): Promise<TtsResult> {
    const requestId = options.request_id ?? newRequestId();
    if (this.#collectors.has(requestId)) {
      return Promise.reject(new Error(`A request with id ${requestId} is already being collected`));
    }
    const result = this.#collect(requestId, true);
    try {
      this.send(text, { ...options, request_id: requestId });
    } catch (err) {
      this.#collectors.get(requestId)?.reject(err as Error);
      this.#collectors.delete(requestId);
    }
    return result;
  }

  append(text: string, options?: SynthesisOptions): string {
    const open = this.#utterance;
    if (open) {
      const given = Object.entries(options ?? {}).filter(([, value]) => value !== undefined);
      if (given.length > 0) {
        throw new Error(
          `Only the first append of an utterance takes options (${given.map(([key]) => key).join(', ')} given while utterance ${open.requestId} is open); flush() it first to start one with other options`,
        );
      }
      // The id on every append: if the server refused the first, the next one opens the utterance
      // under the same id, so its answers still reach this utterance.
      this.#transport.transmit({ type: 'append', text, request_id: open.requestId });
      return open.requestId;
    }
    const requestId = options?.request_id ?? newRequestId();
    if (this.#collectors.has(requestId)) {
      throw new Error(`A request with id ${requestId} is still open; give the utterance another id`);
    }
    this.#transport.transmit({ ...this.#transport.request(text, options ?? {}, requestId), type: 'append' });
    this.#tracker.sent(requestId, { utterance: true });
    this.#utterance = { requestId, result: handled(this.#collect(requestId, false)) };
    return requestId;
  }

  flush(): Promise<TtsResult> {
    const open = this.#utterance;
    const requestId = open?.requestId ?? newRequestId();
    try {
      this.#transport.transmit({ type: 'flush', request_id: requestId });
    } catch (err) {
      return handled(Promise.reject(err as Error));
    }
    this.#utterance = undefined;
    if (open) return open.result;
    // Nothing appended: the server answers with an empty completion under this id.
    this.#tracker.sent(requestId, { utterance: true });
    return handled(this.#collect(requestId, false));
  }

  cancel(requestId?: string): Promise<TtsCancelledEvent> {
    if (
      requestId !== undefined &&
      (typeof requestId !== 'string' || requestId.length === 0 || requestId.length > MAX_REQUEST_ID_CHARS)
    ) {
      return Promise.reject(
        new RangeError(
          `cancel() takes the id of a request of this session (a non-empty string of at most ${MAX_REQUEST_ID_CHARS} characters), or nothing to cancel everything`,
        ),
      );
    }
    try {
      this.#transport.transmit({
        type: 'cancel',
        ...(requestId !== undefined ? { request_id: requestId } : {}),
      });
    } catch (err) {
      return handled(Promise.reject(err as Error));
    }
    // The server drops the open utterance with the cancel; the next append opens a new one.
    const open = this.#utterance;
    const utterance =
      open && (requestId === undefined || requestId === open.requestId) ? open.requestId : undefined;
    if (utterance !== undefined) this.#utterance = undefined;
    return handled(
      new Promise<TtsCancelledEvent>((resolve, reject) => this.#cancels.push({ resolve, reject, utterance })),
    );
  }

  /** An audio frame from the server. */
  audio(bytes: Uint8Array): void {
    this.#route(this.#tracker.audio(bytes));
  }

  /** A control frame from the server. */
  control(message: Record<string, unknown>): void {
    const event = this.#tracker.control(message);
    if (event) this.#route(event);
  }

  /** The session ended: everything still awaited fails with `The session <how> before …`. */
  end(how: string): void {
    this.#tracker.clear();
    this.#utterance = undefined;
    for (const [id, collector] of this.#collectors) {
      collector.reject(new Error(`The session ${how} before request ${id} completed`));
    }
    this.#collectors.clear();
    for (const cancel of this.#cancels.splice(0)) {
      cancel.reject(new Error(`The session ${how} before the cancel was answered`));
    }
  }

  #collect(requestId: string, divert: boolean): Promise<TtsResult> {
    return new Promise<TtsResult>((resolve, reject) => {
      this.#collectors.set(requestId, { chunks: [], words: [], divert, resolve, reject });
    });
  }

  #route(event: TtsControlEvent | Extract<TtsEvent, { type: 'audio' }>): void {
    if (event.type === 'cancelled') {
      this.#transport.deliver(event);
      this.#cancelled(event);
      return;
    }
    const collector = event.requestId ? this.#collectors.get(event.requestId) : undefined;
    if (!collector) {
      this.#transport.deliver(event);
      return;
    }
    if (!collector.divert) this.#transport.deliver(event);
    switch (event.type) {
      case 'audio':
        collector.chunks.push(event.bytes);
        return;
      case 'words':
        collector.words.push(...event.words);
        return;
      case 'complete':
        this.#collectors.delete(event.requestId);
        if (collector.refusal) collector.reject(collector.refusal);
        else
          collector.resolve({
            audio: concatBytes(collector.chunks),
            words: collector.words,
            complete: event,
          });
        return;
      case 'error': {
        const error = new TtsRequestError(event.code, event.message, event.requestId);
        if (this.#tracker.isOpen(event.requestId!)) {
          // An append of the utterance was refused (not added); the utterance goes on.
          collector.refusal ??= error;
        } else {
          this.#collectors.delete(event.requestId!);
          collector.reject(error);
        }
        return;
      }
    }
  }

  #cancelled(event: TtsCancelledEvent): void {
    const pending = this.#cancels.shift();
    const ended = [...event.cancelled];
    // An utterance that the server never opened (its appends were all refused) is not listed; it
    // is over all the same.
    const utterance = pending?.utterance;
    if (utterance !== undefined && !ended.includes(utterance) && this.#tracker.isOpen(utterance)) {
      this.#tracker.settle(utterance);
      ended.push(utterance);
    }
    for (const id of ended) {
      const collector = this.#collectors.get(id);
      if (!collector) continue;
      this.#collectors.delete(id);
      collector.reject(new TtsRequestError('cancelled', `Request ${id} was cancelled`, id));
    }
    pending?.resolve(event);
  }
}

/** Marks a promise as handled, so that a caller may ignore it; awaiting it still throws. */
function handled<T>(promise: Promise<T>): Promise<T> {
  promise.catch(() => {});
  return promise;
}

let fallbackCounter = 0;

/** A random request id (crypto.randomUUID is missing in browsers' insecure contexts). */
export function newRequestId(): string {
  const cryptoApi = (globalThis as { crypto?: { randomUUID?: () => string } }).crypto;
  if (cryptoApi?.randomUUID) return cryptoApi.randomUUID();
  fallbackCounter++;
  return `${Date.now().toString(36)}-${fallbackCounter.toString(36)}-${Math.random().toString(36).slice(2, 10)}`;
}
