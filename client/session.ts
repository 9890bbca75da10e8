/**
 * A client for one WebSocket session with this server (`/invocations-bidirectional-stream`): send a
 * request per sentence without waiting, read audio and control events in arrival order. The server
 * answers requests strictly in order, so every audio frame belongs to the request whose
 * `synthesis_start` came last.
 *
 * Runs in Node.js (the `ws` package, loaded on first use) and in browsers (pass their `WebSocket`).
 */
import { concatBytes } from '../protocol/bytes.ts';
import { decodeControlFrame } from '../protocol/frames.ts';
import type { SynthesisOptions } from '../protocol/request.ts';
import { AsyncQueue } from './async-queue.ts';
import { RequestTracker } from './attribution.ts';
import type { TtsClosedEvent, TtsCompleteEvent, TtsEvent } from './events.ts';

/** What {@link TtsSession.request} resolves to. */
export interface TtsResult {
  /** All audio frames of the request, concatenated (one valid file for container formats). */
  readonly audio: Uint8Array;
  readonly complete: TtsCompleteEvent;
}

/** A request that the server answered with an error frame. */
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

/**
 * The part of the WHATWG WebSocket API that the session uses. Browsers' `WebSocket` and the `ws`
 * package both provide it.
 */
export interface WebSocketLike {
  binaryType: string;
  readonly readyState: number;
  send(data: string | Uint8Array): void;
  close(code?: number, reason?: string): void;
  addEventListener(type: string, listener: (event: unknown) => void): void;
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
  /** Options applied to every request unless the request sets them (not `request_id`). */
  readonly defaults?: Omit<SynthesisOptions, 'request_id'>;
  /** How long to wait for the connection to open; 10 s by default. */
  readonly connectTimeoutMs?: number;
}

const OPEN = 1;
const DEFAULT_CONNECT_TIMEOUT_MS = 10_000;
const DEFAULT_CLOSE_TIMEOUT_MS = 10_000;
/** The code reported when the connection ended without a close frame (RFC 6455). */
const ABNORMAL_CLOSURE = 1006;

const encoder = new TextEncoder();

interface Collector {
  readonly chunks: Uint8Array[];
  resolve(result: TtsResult): void;
  reject(error: Error): void;
}

/**
 * One WebSocket session. Send a request per sentence with {@link send} (it does not wait), and read
 * {@link events} (or iterate the session itself); or let {@link request} collect one request's
 * audio. End with {@link close}.
 *
 * @example
 * const session = await TtsSession.connect('ws://localhost:8080/invocations-bidirectional-stream');
 * session.send('Hello there.');
 * session.send('How are you?', { voice: 'af_bella' });
 * await session.close(); // the server finishes both first; events() still yields them
 * for await (const event of session) if (event.type === 'audio') play(event.bytes);
 */
export class TtsSession {
  readonly #socket: WebSocketLike;
  readonly #binary: boolean;
  readonly #defaults: Omit<SynthesisOptions, 'request_id'>;
  /** Requests sent and not yet completed or failed, oldest first. */
  readonly #tracker = new RequestTracker();
  /** Requests made with request(): their events go to the collector, not to events(). */
  readonly #collectors = new Map<string, Collector>();
  /** Events for events(), in arrival order; it ends after the closed event. */
  readonly #queue = new AsyncQueue<TtsEvent>();
  #closeSent = false;
  #closed: TtsClosedEvent | undefined;
  #closeWaiters: ((event: TtsClosedEvent) => void)[] = [];

  private constructor(socket: WebSocketLike, options: TtsSessionOptions) {
    this.#socket = socket;
    this.#binary = options.binary ?? true;
    this.#defaults = options.defaults ?? {};
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
    const socket = new WebSocketImpl(String(url), options.protocols);
    const session = new TtsSession(socket, options);
    const timeoutMs = options.connectTimeoutMs ?? DEFAULT_CONNECT_TIMEOUT_MS;
    await new Promise<void>((resolve, reject) => {
      let settled = false;
      const settle = (error?: Error) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        if (error) reject(error);
        else resolve();
      };
      const timer = setTimeout(() => {
        socket.close();
        settle(new Error(`Could not connect to ${String(url)} within ${timeoutMs} ms`));
      }, timeoutMs);
      socket.addEventListener('open', () => settle());
      socket.addEventListener('error', (event) => {
        const detail = (event as { message?: unknown }).message;
        settle(new Error(`Could not connect to ${String(url)}${detail ? `: ${String(detail)}` : ''}`));
      });
      socket.addEventListener('close', (event) => {
        const { code } = event as { code?: number };
        settle(
          new Error(`Could not connect to ${String(url)}: closed with code ${code ?? ABNORMAL_CLOSURE}`),
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
    const requestId = options.request_id ?? newRequestId();
    this.#transmit({ text, ...this.#defaults, ...options, request_id: requestId });
    this.#tracker.sent(requestId);
    return requestId;
  }

  /**
   * Sends one request and collects it: resolves with its audio and completion, rejects with a
   * {@link TtsRequestError} when the server answers with an error frame, or with an Error when the
   * session closes first. Its events are not delivered to {@link events}.
   */
  request(text: string, options: SynthesisOptions = {}): Promise<TtsResult> {
    const requestId = options.request_id ?? newRequestId();
    if (this.#collectors.has(requestId)) {
      return Promise.reject(new Error(`A request with id ${requestId} is already being collected`));
    }
    return new Promise<TtsResult>((resolve, reject) => {
      this.#collectors.set(requestId, { chunks: [], resolve, reject });
      try {
        this.send(text, { ...options, request_id: requestId });
      } catch (err) {
        this.#collectors.delete(requestId);
        reject(err as Error);
      }
    });
  }

  /**
   * Events in arrival order: `start`, `audio`…, `complete` (or `error`) per request, and finally
   * `closed`, after which the iteration ends. Breaking out of a loop keeps the session and the
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
      if (control) this.#onControl(control);
      return;
    }
    const bytes = toBytes(data);
    if (!bytes) return;
    const control = decodeControlFrame(bytes);
    if (control) this.#onControl(control);
    else this.#emit(this.#tracker.audio(bytes));
  }

  #onControl(message: Record<string, unknown>): void {
    const event = this.#tracker.control(message);
    if (event) this.#emit(event);
  }

  #onClose(code: number, reason: string): void {
    if (this.#closed) return;
    const event: TtsClosedEvent = { type: 'closed', code, reason };
    this.#closed = event;
    this.#tracker.clear();
    for (const [id, collector] of this.#collectors) {
      collector.reject(new Error(`The session closed (code ${code}) before request ${id} completed`));
    }
    this.#collectors.clear();
    this.#emit(event);
    for (const wake of this.#closeWaiters.splice(0)) wake(event);
  }

  #emit(event: TtsEvent): void {
    const collector =
      event.type !== 'closed' && event.requestId ? this.#collectors.get(event.requestId) : undefined;
    if (collector) {
      this.#collect(collector, event);
      return;
    }
    this.#queue.push(event);
    if (event.type === 'closed') this.#queue.end();
  }

  #collect(collector: Collector, event: TtsEvent): void {
    if (event.type === 'audio') collector.chunks.push(event.bytes);
    else if (event.type === 'complete') {
      this.#collectors.delete(event.requestId);
      collector.resolve({ audio: concatBytes(collector.chunks), complete: event });
    } else if (event.type === 'error') {
      this.#collectors.delete(event.requestId!);
      collector.reject(new TtsRequestError(event.code, event.message, event.requestId));
    }
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

let fallbackCounter = 0;

/** A random request id (crypto.randomUUID is missing in browsers' insecure contexts). */
function newRequestId(): string {
  const cryptoApi = (globalThis as { crypto?: { randomUUID?: () => string } }).crypto;
  if (cryptoApi?.randomUUID) return cryptoApi.randomUUID();
  fallbackCounter++;
  return `${Date.now().toString(36)}-${fallbackCounter.toString(36)}-${Math.random().toString(36).slice(2, 10)}`;
}
