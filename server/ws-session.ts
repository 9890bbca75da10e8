/**
 * One WebSocket session: many messages over one connection, handled strictly in order —
 * receive → synthesize → send audio → synthesis_complete → next. Messages that arrive meanwhile
 * wait in a bounded queue; none is dropped or reordered.
 */
import { randomUUID } from 'node:crypto';
import type { FastifyBaseLogger } from 'fastify';
import type { WebSocket, RawData } from 'ws';
import type { Config } from './config.ts';
import { toErrorBody, ttsError, withRequestId } from './errors.ts';
import type { Drainable, Lifecycle } from './lifecycle.ts';
import { parseOptions, peekRequestId } from './request.ts';
import { isCancelled, recordClientGone, recordCompletion, recordRefusal } from './outcomes.ts';
import type { ControlFrame } from '../protocol/frames.ts';

/** Above this many unsent bytes, sending waits for the socket to drain. */
const SEND_HIGH_WATER_BYTES = 1024 * 1024;

/** A session that keeps flooding this many times past its cap is closed with 1008. */
const FLOOD_FACTOR = 4;

const utf8 = new TextDecoder('utf-8', { fatal: true });

type Parsed = { kind: 'request'; fields: Record<string, unknown> } | { kind: 'close' };

/**
 * Classifies one client message. Plain text unless it starts with `{` (after whitespace); then
 * it must be a JSON object with an optional `type` of `synthesize` or `close` (any case).
 */
export function parseMessage(data: Buffer): Parsed {
  let text: string;
  try {
    text = utf8.decode(data);
  } catch {
    throw ttsError(
      'TTS_ERR_INVALID_UTF8',
      'The message is not valid UTF-8 text; send UTF-8 encoded JSON or plain text',
    );
  }
  const trimmed = text.trimStart();
  if (!trimmed.startsWith('{')) return { kind: 'request', fields: { text } };
  let value: unknown;
  try {
    value = JSON.parse(trimmed);
  } catch (err) {
    throw ttsError(
      'TTS_ERR_INVALID_JSON',
      `The message starts with "{" but is not valid JSON (${(err as Error).message}); send a JSON object such as {"text": "Hello"}, or plain text that does not start with "{"`,
    );
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    throw ttsError('TTS_ERR_INVALID_JSON', 'The message should be one JSON object such as {"text": "Hello"}');
  }
  const fields = value as Record<string, unknown>;
  if (fields.type === undefined) return { kind: 'request', fields };
  const type = typeof fields.type === 'string' ? fields.type.toLowerCase() : undefined;
  if (type === 'close') return { kind: 'close' };
  if (type === 'synthesize') return { kind: 'request', fields };
  throw withRequestId(
    ttsError(
      'TTS_ERR_UNKNOWN_TYPE',
      `Unknown message type ${describeType(fields.type)}; should be "synthesize" (or no type) for text to speak, or "close" to end the session`,
    ),
    peekRequestId(fields),
  );
}

/** A short, safe rendering of a client's `type` value (it may be huge or deeply nested). */
function describeType(value: unknown): string {
  if (typeof value === 'string') return JSON.stringify(value.length > 40 ? `${value.slice(0, 40)}…` : value);
  if (value === null || typeof value !== 'object') return String(value);
  return Array.isArray(value) ? 'an array' : 'an object';
}

function toBuffer(data: RawData): Buffer {
  if (Buffer.isBuffer(data)) return data;
  if (Array.isArray(data)) return Buffer.concat(data);
  return Buffer.from(data);
}

export interface SessionDeps {
  readonly config: Config;
  readonly lifecycle: Lifecycle;
  readonly log: FastifyBaseLogger;
}

/** A message as received: parsed once, on arrival (or the error that parsing gave). */
interface Pending {
  /** null for the client's close request. */
  readonly message: Parsed | { kind: 'invalid'; error: unknown } | null;
  /** The message's own request_id, when it has a usable one: echoed on its errors. */
  readonly requestId: string | undefined;
  readonly bytes: number;
  readonly receivedAt: number;
}

export class Session implements Drainable {
  readonly id = randomUUID();
  readonly #socket: WebSocket;
  readonly #deps: SessionDeps;
  readonly #log: FastifyBaseLogger;
  readonly #queue: Pending[] = [];
  #queuedBytes = 0;
  #running = false;
  /** `{"type":"close"}` arrived: later messages are ignored. */
  #closeReceived = false;
  #gone = false;
  /** Shutdown began: messages already received are finished, new ones refused. */
  #draining = false;
  #overflow = 0;
  #current: AbortController | undefined;
  /** The request being synthesized, while #current is set. */
  #currentId: string | undefined;
  #untrack: () => void;
  #idle: (() => void)[] = [];
  /** Closes the session after WS_IDLE_TIMEOUT_S without a message or a ping from the client. */
  readonly #idleTimer: NodeJS.Timeout | undefined;

  /** Attaches the listeners at once (before any await), so no message can be missed. */
  constructor(socket: WebSocket, deps: SessionDeps) {
    this.#socket = socket;
    this.#deps = deps;
    this.#log = deps.log.child({ sessionId: this.id });
    socket.on('message', (data) => {
      this.#idleTimer?.refresh();
      this.#receive(toBuffer(data));
    });
    socket.on('ping', () => this.#idleTimer?.refresh());
    socket.on('close', (code) => this.#onGone(code));
    this.#idleTimer = this.#startIdleTimer(deps.config.wsIdleTimeoutS);
    socket.on('error', (err) => this.#log.warn({ err: err.message }, 'websocket error'));
    this.#untrack = deps.lifecycle.track(this);
    this.#log.info('session opened');
  }

  /** Finish the messages already received, then close with 1001 (server going away). */
  drain(): Promise<void> {
    this.#draining = true;
    return new Promise((resolve) => {
      const close = () => {
        this.#close(1001, 'server shutting down');
        resolve();
      };
      if (this.#gone) resolve();
      else if (!this.#running && this.#queue.length === 0) close();
      else this.#idle.push(close);
    });
  }

  abort(): void {
    this.#current?.abort();
    this.#close(1001, 'server shutting down');
  }

  describe(): { sessionId: string; requestId?: string; queued: number } {
    return {
      sessionId: this.id,
      ...(this.#currentId !== undefined ? { requestId: this.#currentId } : {}),
      queued: this.#queue.length,
    };
  }

  #receive(data: Buffer): void {
    if (this.#closeReceived || this.#gone) return;
    const receivedAt = performance.now();
    let message: Pending['message'];
    try {
      message = parseMessage(data);
    } catch (error) {
      message = { kind: 'invalid', error }; // answered in turn, by #handle
    }
    if (message.kind === 'close') {
      this.#closeReceived = true;
      this.#enqueue({ message: null, requestId: undefined, bytes: 0, receivedAt });
      return;
    }
    const requestId = message.kind === 'request' ? peekRequestId(message.fields) : undefined;
    if (this.#draining) {
      void this.#sendError(
        ttsError('TTS_ERR_SHUTTING_DOWN', 'The server is shutting down and takes no new requests'),
        requestId,
      );
      return;
    }
    const { wsMaxPending, wsMaxPendingBytes } = this.#deps.config;
    if (this.#queue.length >= wsMaxPending || this.#queuedBytes + data.length > wsMaxPendingBytes) {
      this.#overflow++;
      if (this.#overflow > wsMaxPending * FLOOD_FACTOR) {
        this.#log.warn({ pending: this.#queue.length }, 'closing a session that floods past its queue');
        this.#close(1008, 'too many pending messages');
        return;
      }
      void this.#sendError(
        ttsError(
          'TTS_ERR_BUSY',
          `This session already has ${this.#queue.length} messages (${this.#queuedBytes} bytes) waiting, the most it may hold (${wsMaxPending} messages, ${wsMaxPendingBytes} bytes); wait for synthesis_complete before sending more`,
        ),
        requestId,
      );
      return;
    }
    this.#overflow = 0;
    this.#enqueue({ message, requestId, bytes: data.length, receivedAt });
  }

  #enqueue(pending: Pending): void {
    this.#queue.push(pending);
    this.#queuedBytes += pending.bytes;
    if (!this.#running) void this.#pump();
  }

  async #pump(): Promise<void> {
    this.#running = true;
    try {
      while (this.#queue.length > 0 && !this.#gone) {
        const next = this.#queue.shift()!;
        this.#queuedBytes -= next.bytes;
        if (next.message === null) {
          // Everything received before the close is done.
          this.#queue.length = 0;
          this.#close(1000, 'closed by client request');
          return;
        }
        await this.#handle(next.message, next.requestId, next.receivedAt);
      }
    } finally {
      this.#running = false;
      if (this.#queue.length === 0) for (const wake of this.#idle.splice(0)) wake();
    }
  }

  async #handle(
    message: Exclude<Pending['message'], null>,
    peekedId: string | undefined,
    receivedAt: number,
  ): Promise<void> {
    let requestId = peekedId;
    try {
      if (message.kind === 'invalid') throw message.error;
      if (message.kind === 'close') return; // handled on arrival
      // Received before any shutdown began (later ones are refused on arrival): finish it.
      const engine = this.#deps.lifecycle.requireEngine({ accepted: true });
      const options = parseOptions(message.fields, { route: 'ws', config: this.#deps.config, engine });
      requestId = options.requestId;
      await this.#synthesize(engine, options, receivedAt);
    } catch (err) {
      await this.#sendError(err, requestId);
    }
  }

  async #synthesize(
    engine: ReturnType<Lifecycle['requireEngine']>,
    options: ReturnType<typeof parseOptions>,
    receivedAt: number,
  ): Promise<void> {
    const controller = new AbortController();
    this.#current = controller;
    this.#currentId = options.requestId;
    try {
      await this.#sendControl({ type: 'synthesis_start', request_id: options.requestId });
      const run = engine.synthesize(
        { text: options.text, voice: options.voice, speed: options.speed },
        { format: options.format, sampleRate: options.sampleRate },
        { signal: controller.signal, startedAt: receivedAt },
      );
      for await (const bytes of run) {
        if (this.#gone) break;
        await this.#send(bytes, true);
      }
      if (this.#gone) return;
      const figures = run.figures();
      await this.#sendControl({
        type: 'synthesis_complete',
        request_id: options.requestId,
        total_duration_s: figures.audioS,
        elapsed_s: figures.elapsedMs / 1000,
        time_to_first_audio_s: figures.ttfaMs / 1000,
        inference_s: figures.inferenceMs / 1000,
        first_chunk_inference_s: figures.firstInferenceMs / 1000,
        first_chunk_frontend_s: figures.firstFrontEndMs / 1000,
        chunks: figures.chunks,
      });
      recordCompletion(this.#log, this.#deps.lifecycle.metrics, {
        route: 'ws',
        requestId: options.requestId,
        format: options.format,
        chars: options.chars,
        figures,
      });
    } finally {
      this.#current = undefined;
      this.#currentId = undefined;
    }
  }

  #sendControl(frame: ControlFrame): Promise<void> {
    return this.#send(JSON.stringify(frame), false);
  }

  async #sendError(err: unknown, requestId: string | undefined): Promise<void> {
    if (this.#gone || isCancelled(err)) return;
    const { status, body } = toErrorBody(err, requestId);
    recordRefusal(this.#log, this.#deps.lifecycle.metrics, err, status, body.code, requestId);
    await this.#sendControl(body);
  }

  /**
   * Sends a frame. Frames keep their order inside ws, so there is nothing to wait for unless the
   * client reads slower than we synthesize: then wait until ws has flushed this frame
   * (backpressure), so a slow reader cannot make the server buffer without bound.
   */
  #send(data: Uint8Array | string, binary: boolean): Promise<void> {
    const socket = this.#socket;
    if (this.#gone || socket.readyState !== socket.OPEN) return Promise.resolve();
    if (socket.bufferedAmount < SEND_HIGH_WATER_BYTES) {
      socket.send(data, { binary });
      return Promise.resolve();
    }
    return new Promise((resolve) => socket.send(data, { binary }, () => resolve()));
  }

  #close(code: number, reason: string): void {
    if (this.#gone) return;
    this.#socket.close(code, reason);
  }

  /**
   * The idle clock: one timer, refreshed by every message and ping. Voice agents hold sessions
   * through long silences, so the limit is generous; a session still synthesizing or holding
   * messages is never idle.
   */
  #startIdleTimer(seconds: number): NodeJS.Timeout | undefined {
    if (seconds === 0) return undefined;
    const timer = setTimeout(() => {
      if (this.#running || this.#queue.length > 0) {
        timer.refresh();
        return;
      }
      this.#log.info({ idleS: seconds }, 'closing an idle session');
      this.#close(1000, 'idle');
    }, seconds * 1000);
    return timer.unref();
  }

  #onGone(code: number): void {
    if (this.#gone) return;
    this.#gone = true;
    clearTimeout(this.#idleTimer);
    if (this.#current && this.#currentId !== undefined) {
      recordClientGone(this.#log, this.#deps.lifecycle.metrics, this.#currentId, 'ws');
    }
    this.#current?.abort();
    this.#queue.length = 0;
    this.#untrack();
    for (const wake of this.#idle.splice(0)) wake();
    this.#log.info({ code }, 'session closed');
  }
}
