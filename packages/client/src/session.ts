/**
 * A client for one WebSocket session with this server (`/invocations-bidirectional-stream`): send a
 * request per sentence without waiting, or stream text as it is written (`append`, `flush`), cancel
 * what is in flight (barge-in), and read audio and control events in arrival order. The server
 * answers requests strictly in order, so every audio frame belongs to the request whose
 * `synthesis_start` came last.
 *
 * Runs in Node.js (the `ws` package, loaded on first use) and in browsers (pass their `WebSocket`).
 */
import { concatBytes } from '../../../protocol/bytes.ts';
import { decodeControlFrame } from '../../../protocol/frames.ts';
import type { SynthesisOptions } from '../../../protocol/request.ts';
import { AsyncQueue } from './async-queue.ts';
import type { TtsCancelledEvent, TtsClosedEvent, TtsEvent } from './events.ts';
import { SessionCore, type TtsResult } from './session-core.ts';

export { TtsRequestError, type TtsResult } from './session-core.ts';

/**
 * The part of the WHATWG WebSocket API that the session uses. Browsers' `WebSocket` and the `ws`
 * package both provide it.
 */
export interface WebSocketLike {
  binaryType: string;
  readonly readyState: number;
  send(data: string | Uint8Array): void;
  close(code?: number, reason?: string): void;
  addEventListener(type: string, listener: (event: unknown) => void, options?: { once?: boolean }): void;
}

/** A WebSocket constructor: a browser's `WebSocket`, `ws`'s default export, or a wrapper of either. */
export type WebSocketConstructor = new (url: string, protocols?: string | string[]) => WebSocketLike;

/** Options of {@link TtsSession.connect}. */
export interface TtsSessionOptions {
  /** The WebSocket implementation; the `ws` package in Node.js, the global `WebSocket` elsewhere. */
  readonly WebSocket?: WebSocketConstructor;
  /** Subprotocols to offer. */
  readonly protocols?: string | string[];
  /** Send messages as binary frames, as SageMaker delivers them (default), or as text frames. */
  readonly binary?: boolean;
  /** Options applied to every request and utterance unless it sets them (not `request_id`). */
  readonly defaults?: Omit<SynthesisOptions, 'request_id'>;
  /** How long to wait for the connection to open; 10 s by default. */
  readonly connectTimeoutMs?: number;
  /**
   * Attempts after the first when the server refuses the session as retryable: it is at its
   * session limit (close 1013, right after the handshake), shutting down (1001, or 503 to the
   * upgrade), or busy (503). 3 by default; 0 fails at once. Waits grow exponentially from
   * `retryDelayMs` (250 ms by default, at most 5 s), with full jitter, so that refused clients do
   * not come back together.
   */
  readonly retries?: number;
  readonly retryDelayMs?: number;
  /**
   * After the handshake, how long to watch for the server's admission refusal (a close 1013 that
   * it sends straight after the 101) before the session counts as admitted; 50 ms by default,
   * 0 to skip. The close follows the handshake without a round trip, so this does not grow
   * with the network's latency.
   */
  readonly admissionWaitMs?: number;
}

const OPEN = 1;
const DEFAULT_CONNECT_TIMEOUT_MS = 10_000;
const DEFAULT_CLOSE_TIMEOUT_MS = 10_000;
const DEFAULT_RETRIES = 3;
const DEFAULT_RETRY_DELAY_MS = 250;
const MAX_RETRY_DELAY_MS = 5000;
const DEFAULT_ADMISSION_WAIT_MS = 50;
/** Close codes a refused session is retried on: 1013 (try again later) and 1001 (going away). */
const RETRYABLE_CLOSES = new Set([1013, 1001]);

/** A failed attempt to open a session, and whether another attempt may succeed. */
class ConnectError extends Error {
  override readonly name = 'ConnectError';
  constructor(
    message: string,
    readonly retryable: boolean,
  ) {
    super(message);
  }
}
/** The code reported when the connection ended without a close frame (RFC 6455). */
const ABNORMAL_CLOSURE = 1006;

const encoder = new TextEncoder();

/**
 * One WebSocket session. Send a request per sentence with {@link send} (it does not wait), and read
 * {@link events} (or iterate the session itself); or let {@link request} collect one request's
 * audio. Stream text as an LLM writes it with {@link append} and {@link flush}; stop what is in
 * flight with {@link cancel}. End with {@link close}.
 *
 * @example
 * const session = await TtsSession.connect('ws://localhost:8080/invocations-bidirectional-stream');
 * session.send('Hello there.');
 * session.send('How are you?', { voice: 'af_bella' });
 * await session.close(); // the server finishes both first; events() still yields them
 * for await (const event of session) if (event.type === 'audio') play(event.bytes);
 *
 * @example
 * for await (const token of llm) session.append(token); // each sentence is spoken once complete
 * const { audio } = await session.flush();              // events() streams the same audio meanwhile
 */
export class TtsSession {
  readonly #socket: WebSocketLike;
  readonly #binary: boolean;
  readonly #defaults: Omit<SynthesisOptions, 'request_id'>;
  /** Requests, utterances and cancels in flight, and where each event goes. */
  readonly #core: SessionCore;
  /** Events for events(), in arrival order; it ends after the closed event. */
  readonly #queue = new AsyncQueue<TtsEvent>();
  #closeSent = false;
  #closed: TtsClosedEvent | undefined;
  #closeWaiters: ((event: TtsClosedEvent) => void)[] = [];

  private constructor(socket: WebSocketLike, options: TtsSessionOptions) {
    this.#socket = socket;
    this.#binary = options.binary ?? true;
    this.#defaults = options.defaults ?? {};
    this.#core = new SessionCore({
      transmit: (message) => this.#transmit(message),
      deliver: (event) => this.#queue.push(event),
      request: (text, requestOptions, requestId) => ({
        text,
        ...this.#defaults,
        ...requestOptions,
        request_id: requestId,
      }),
    });
    socket.binaryType = 'arraybuffer';
    // Listeners go on before the connection opens, so no frame can be missed.
    socket.addEventListener('message', (event) => this.#onMessage((event as { data: unknown }).data));
    socket.addEventListener('close', (event) => {
      const { code, reason } = event as { code?: number; reason?: string };
      this.#onClose(code ?? ABNORMAL_CLOSURE, reason ?? '');
    });
    // Without a listener, ws would throw an 'error' event; a close event always follows it.
    socket.addEventListener('error', () => {});
  }

  /**
   * Opens a session.
   *
   * @param url The server's WebSocket URL, e.g. `ws://host:8080/invocations-bidirectional-stream`.
   * @throws Error when the connection fails, closes or does not open within `connectTimeoutMs`.
   */
  static async connect(url: string | URL, options: TtsSessionOptions = {}): Promise<TtsSession> {
    const WebSocketImpl = options.WebSocket ?? (await defaultWebSocket());
    const retries = options.retries ?? DEFAULT_RETRIES;
    const baseDelay = options.retryDelayMs ?? DEFAULT_RETRY_DELAY_MS;
    for (let attempt = 0; ; attempt++) {
      try {
        return await TtsSession.#attempt(WebSocketImpl, url, options);
      } catch (err) {
        if (!(err instanceof ConnectError) || !err.retryable || attempt >= retries) {
          throw new Error(
            attempt > 0
              ? `${(err as Error).message} (after ${attempt + 1} attempts)`
              : (err as Error).message,
          );
        }
        const ceiling = Math.min(MAX_RETRY_DELAY_MS, baseDelay * 2 ** attempt);
        await new Promise((resolve) => setTimeout(resolve, Math.random() * ceiling));
      }
    }
  }

  /** One attempt: open, then watch `admissionWaitMs` for the server's refusal. */
  static async #attempt(
    WebSocketImpl: WebSocketConstructor,
    url: string | URL,
    options: TtsSessionOptions,
  ): Promise<TtsSession> {
    const socket = new WebSocketImpl(String(url), options.protocols);
    const session = new TtsSession(socket, options);
    const timeoutMs = options.connectTimeoutMs ?? DEFAULT_CONNECT_TIMEOUT_MS;
    const admissionMs = options.admissionWaitMs ?? DEFAULT_ADMISSION_WAIT_MS;
    await new Promise<void>((resolve, reject) => {
      let settled = false;
      let opened = false;
      let admission: ReturnType<typeof setTimeout> | undefined;
      const settle = (error?: Error) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        clearTimeout(admission);
        if (error) reject(error);
        else resolve();
      };
      const timer = setTimeout(() => {
        socket.close();
        settle(new ConnectError(`Could not connect to ${String(url)} within ${timeoutMs} ms`, false));
      }, timeoutMs);
      socket.addEventListener('open', () => {
        opened = true;
        if (admissionMs <= 0) settle();
        else admission = setTimeout(() => settle(), admissionMs);
      });
      // A message means the server took the session (once: not a call on every later frame).
      socket.addEventListener('message', () => settle(), { once: true });
      socket.addEventListener('error', (event) => {
        const detail = (event as { message?: unknown }).message;
        // ws reports a refused upgrade as "Unexpected server response: 503"; a browser says nothing.
        const refused = /\b50[23]\b/.test(String(detail ?? ''));
        settle(
          new ConnectError(
            `Could not connect to ${String(url)}${detail ? `: ${String(detail)}` : ''}`,
            refused,
          ),
        );
      });
      socket.addEventListener('close', (event) => {
        const { code, reason } = event as { code?: number; reason?: string };
        const refused = opened && code !== undefined && RETRYABLE_CLOSES.has(code);
        settle(
          new ConnectError(
            `Could not connect to ${String(url)}: closed with code ${code ?? ABNORMAL_CLOSURE}${reason ? ` (${reason})` : ''}`,
            refused,
          ),
        );
      });
    });
    return session;
  }

  /** Whether the connection is open and `close()` has not been called: `send()` works. */
  get isOpen(): boolean {
    return !this.#closeSent && this.#closed === undefined && this.#socket.readyState === OPEN;
  }

  /**
   * Sends one request (a sentence, typically) and returns its request id at once, without waiting
   * for audio. Its events arrive through {@link events}, after those of every earlier request.
   *
   * @throws Error when the session is closed or closing.
   */
  send(text: string, options: SynthesisOptions = {}): string {
    return this.#core.send(text, options);
  }

  /**
   * Sends one request and collects it: resolves with its audio, words (with `timestamps: true`) and
   * completion. Rejects with a {@link TtsRequestError} when the server answers with an error frame
   * (its `code`), or when a {@link cancel} cuts or drops the request (code `cancelled`); with an
   * Error when the session closes first. Its events are not delivered to {@link events}.
   */
  request(text: string, options: SynthesisOptions = {}): Promise<TtsResult> {
    return this.#core.request(text, options);
  }

  /**
   * Adds text to the open utterance (streamed text input, e.g. an LLM's tokens); the server speaks
   * each sentence as soon as it is complete. The first append opens an utterance, with `options`
   * (and the session defaults) and a generated `request_id` unless one is given; later appends take
   * no options, until {@link flush} ends the utterance. Returns the utterance's request id, which
   * its events carry. The events go to {@link events} as they arrive, and its audio is also
   * gathered for the result of {@link flush}.
   *
   * An append that the server refuses (text over its limits, say) is answered with an `error`
   * event naming the utterance and is not spoken; the utterance goes on, and flush() then rejects
   * with that error once the utterance has ended.
   *
   * @throws Error when the session is closed or closing, or when a later append carries options.
   */
  append(text: string, options?: SynthesisOptions): string {
    return this.#core.append(text, options);
  }

  /**
   * Ends the open utterance: the server speaks what it holds and completes it. Resolves like
   * {@link request} with the utterance's audio, words and completion (its events have gone to
   * {@link events} as well); rejects with a {@link TtsRequestError} when the server failed it or
   * refused one of its appends, with code `cancelled` when a cancel cut it, or with an Error when
   * the session closes first. With no utterance open, the server answers at once with an empty
   * completion (no audio). The promise may be ignored: a rejection nobody awaits is not reported
   * as unhandled.
   */
  flush(): Promise<TtsResult> {
    return this.#core.flush();
  }

  /**
   * Barge-in: asks the server to stop the request in flight (at its next chunk boundary) and drop
   * every queued one, including the open utterance, or only the request `requestId`. Resolves with
   * the server's answer, the `cancelled` event, which lists the ids it cut or dropped (and in
   * `heard`, what the listener received of the request in flight that it cut); that event
   * is also delivered to {@link events}, after the last audio of what was cut: no event of a listed
   * request follows it. Audio of the request in flight may still arrive before it. The
   * {@link request} and {@link flush} promises of the listed requests reject with a
   * {@link TtsRequestError} of code `cancelled`; a request that completed before the cancel
   * reached the server is not listed and resolves as usual. The session stays open.
   *
   * Rejects when the session is closed or closes before the answer, and when `requestId` is not
   * a usable id (a non-empty string of at most 128 characters).
   */
  cancel(requestId?: string): Promise<TtsCancelledEvent> {
    return this.#core.cancel(requestId);
  }

  /**
   * Events in arrival order: `start`, (`words`,) `audio`…, `complete` (or `error`) per request,
   * `cancelled` for each cancel, and finally `closed`, after which the iteration ends. Breaking out of a loop keeps the session and the
   * events not yet read, so a later loop continues where it stopped. Read it with one consumer at a
   * time; events are kept until read.
   */
  async *events(): AsyncGenerator<TtsEvent, void, undefined> {
    for (let next = await this.#queue.next(); !next.done; next = await this.#queue.next()) yield next.value;
  }

  /** The same as {@link events}. */
  [Symbol.asyncIterator](): AsyncGenerator<TtsEvent, void, undefined> {
    return this.events();
  }

  /**
   * Asks the server to close (`{"type":"close"}`): it finishes every request sent before, then
   * closes with code 1000. Resolves with the close code and reason; events() still yields every
   * event up to `closed`.
   *
   * @throws Error when the server has not closed within `timeoutMs` (the connection is then
   * closed from this side).
   */
  close(timeoutMs = DEFAULT_CLOSE_TIMEOUT_MS): Promise<TtsClosedEvent> {
    if (this.#closed) return Promise.resolve(this.#closed);
    if (!this.#closeSent) {
      if (this.#socket.readyState === OPEN) this.#transmit({ type: 'close' });
      this.#closeSent = true;
    }
    return new Promise<TtsClosedEvent>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.#socket.close(1000, 'close timed out');
        reject(new Error(`The server did not close the session within ${timeoutMs} ms`));
      }, timeoutMs);
      this.#closeWaiters.push((event) => {
        clearTimeout(timer);
        resolve(event);
      });
    });
  }

  /** Closes the connection at once, from this side; requests still open are abandoned. */
  abort(): void {
    this.#closeSent = true;
    if (!this.#closed) this.#socket.close(1000, 'aborted by client');
  }

  #transmit(message: Record<string, unknown>): void {
    if (this.#closeSent || this.#closed || this.#socket.readyState !== OPEN) {
      throw new Error('The session is closed or closing; connect a new one');
    }
    const json = JSON.stringify(message);
    this.#socket.send(this.#binary ? encoder.encode(json) : json);
  }

  #onMessage(data: unknown): void {
    if (typeof data === 'string') {
      // A text frame is always control; one that is not a JSON object is ignored like an unknown type.
      const control = decodeControlFrame(data);
      if (control) this.#core.control(control);
      return;
    }
    const bytes = toBytes(data);
    if (!bytes) return;
    const control = decodeControlFrame(bytes);
    if (control) this.#core.control(control);
    else this.#core.audio(bytes);
  }

  #onClose(code: number, reason: string): void {
    if (this.#closed) return;
    const event: TtsClosedEvent = { type: 'closed', code, reason };
    this.#closed = event;
    this.#core.end(`closed (code ${code})`);
    this.#queue.push(event);
    this.#queue.end();
    for (const wake of this.#closeWaiters.splice(0)) wake(event);
  }
}

/** The `ws` package in Node.js (and runtimes that mimic it), the global WebSocket elsewhere. */
async function defaultWebSocket(): Promise<WebSocketConstructor> {
  const scope = globalThis as {
    process?: { versions?: { node?: string } };
    WebSocket?: WebSocketConstructor;
  };
  if (scope.process?.versions?.node) {
    // Loaded lazily so that browser bundles, which pass their own WebSocket, never need it.
    const ws = await import('ws');
    return ws.default as unknown as WebSocketConstructor;
  }
  if (scope.WebSocket) return scope.WebSocket;
  throw new Error('No WebSocket implementation found; pass one as options.WebSocket');
}

/** Binary frame data as bytes: ArrayBuffer (binaryType 'arraybuffer'), or a view such as a Buffer. */
function toBytes(data: unknown): Uint8Array | undefined {
  if (data instanceof ArrayBuffer) return new Uint8Array(data);
  if (ArrayBuffer.isView(data)) return new Uint8Array(data.buffer, data.byteOffset, data.byteLength);
  if (Array.isArray(data)) return concatBytes(data as Uint8Array[]); // ws's 'fragments' binaryType
  return undefined;
}
