/**
 * One WebSocket session: many messages over one connection, handled strictly in order —
 * receive → synthesize → send audio → synthesis_complete → next. Messages that arrive meanwhile
 * wait in a bounded queue; none is dropped or reordered. Three kinds act on arrival instead:
 * `append` feeds the open utterance (streamed text input, see utterance.ts), `flush` ends it, and
 * `cancel` cuts the request in flight and drops the queued ones (barge-in).
 */
import { randomUUID } from 'node:crypto';
import type { FastifyBaseLogger } from 'fastify';
import type { WebSocket, RawData } from 'ws';
import { codePointLength } from '../protocol/request.ts';
import type { Config } from './config.ts';
import { toErrorBody, ttsError } from './errors.ts';
import type { Drainable, Lifecycle } from './lifecycle.ts';
import { parseOptions, peekRequestId, synthesisRequest, type SynthesisOptions } from './request.ts';
import type { WordTiming } from '../model/engine.ts';
import { isCancelled, recordClientGone, recordCompletion, recordRefusal } from './outcomes.ts';
import { NATIVE_DIALECT, type Command, type SessionDialect } from './session-messages.ts';
import { Utterance } from './utterance.ts';

/** Above this many unsent bytes, sending waits for the socket to drain. */
const SEND_HIGH_WATER_BYTES = 1024 * 1024;

/** A session that keeps flooding this many times past its cap is closed with 1008. */
const FLOOD_FACTOR = 4;

/** A message may arrive in at most this many fragments (ws's own default, stated here). */
export const WS_MAX_FRAGMENTS = 16_384;

/** Fields that only the first append of an utterance may carry. */
const UTTERANCE_OPTIONS = [
  'voice',
  'speed',
  'lang',
  'format',
  'sample_rate',
  'request_timestamp',
  'timestamps',
  'first_chunk',
  'markup',
  'pronunciations',
  'normalization_options',
] as const;

function toBuffer(data: RawData): Buffer {
  if (Buffer.isBuffer(data)) return data;
  if (Array.isArray(data)) return Buffer.concat(data);
  return Buffer.from(data);
}

export interface SessionDeps {
  readonly config: Config;
  readonly lifecycle: Lifecycle;
  readonly log: FastifyBaseLogger;
  /** The wire dialect; the project's own protocol by default. */
  readonly dialect?: SessionDialect;
}

/** Something the session answers in turn, parsed once, on arrival. */
type Item =
  | {
      readonly kind: 'request';
      readonly fields: Record<string, unknown>;
      /** The message's own request_id, when it has a usable one: echoed on its errors. */
      readonly requestId: string | undefined;
      /** Its id once it runs: its own, else one made on arrival, so a cancel can name it. */
      readonly assignedId: string;
      readonly bytes: number;
      readonly receivedAt: number;
    }
  | { readonly kind: 'utterance'; readonly utterance: Utterance; readonly receivedAt: number }
  /** A flush with no open utterance: answered with an empty completion, in turn. */
  | { readonly kind: 'empty-flush'; readonly requestId: string }
  | {
      readonly kind: 'invalid';
      readonly error: unknown;
      readonly requestId: string | undefined;
      readonly bytes: number;
    }
  | { readonly kind: 'close' };

/** A cancel's answer (the dialect's frame), with when the cancel arrived. */
interface Ack {
  readonly frame: object | undefined;
  readonly receivedAt: number;
}

/** The id echoed on an item's errors: only one the client gave (or the utterance's). */
const errorId = (item: Item): string | undefined =>
  item.kind === 'utterance' ? item.utterance.requestId : item.kind === 'close' ? undefined : item.requestId;

/** The id a cancel names an item by. */
const itemId = (item: Item): string | undefined => {
  switch (item.kind) {
    case 'utterance':
      return item.utterance.requestId;
    case 'request':
      return item.assignedId;
    case 'close':
      return undefined;
    default:
      return item.requestId;
  }
};
const itemBytes = (item: Item): number =>
  item.kind === 'request' || item.kind === 'invalid' ? item.bytes : 0;

export class Session implements Drainable {
  readonly id = randomUUID();
  readonly #socket: WebSocket;
  readonly #deps: SessionDeps;
  readonly #dialect: SessionDialect;
  readonly #log: FastifyBaseLogger;
  #queue: Item[] = [];
  #queuedBytes = 0;
  #running = false;
  /** `{"type":"close"}` arrived: later messages are ignored. */
  #closeReceived = false;
  #gone = false;
  /** Shutdown began: messages already received are finished, new ones refused. */
  #draining = false;
  #overflow = 0;
  /** The utterance that appends go to (queued or being synthesized), until its flush. */
  #open: Utterance | undefined;
  /** The request being synthesized. */
  #current:
    | { readonly controller: AbortController; readonly requestId: string; readonly utterance?: Utterance }
    | undefined;
  /** Answers to cancels, sent once the run they cut has sent its last byte. */
  readonly #acks: Ack[] = [];
  #untrack: () => void;
  #idle: (() => void)[] = [];
  /** Closes the session after WS_IDLE_TIMEOUT_S without a message or a ping from the client. */
  readonly #idleTimer: NodeJS.Timeout | undefined;

  /** Attaches the listeners at once (before any await), so no message can be missed. */
  constructor(socket: WebSocket, deps: SessionDeps) {
    this.#socket = socket;
    this.#deps = deps;
    this.#dialect = deps.dialect ?? NATIVE_DIALECT;
    this.#log = deps.log.child({ sessionId: this.id });
    socket.on('message', (data) => {
      // Once the server has sent its close frame, what still arrives costs nothing: no parse, no log.
      if (socket.readyState !== socket.OPEN) return;
      this.#idleTimer?.refresh();
      this.#receive(toBuffer(data));
    });
    this.#explainProtocolCloses(socket);
    socket.on('ping', () => this.#idleTimer?.refresh());
    socket.on('close', (code) => this.#onGone(code));
    this.#idleTimer = this.#startIdleTimer(deps.config.wsIdleTimeoutS);
    socket.on('error', (err) => this.#log.warn({ err: err.message }, 'websocket error'));
    this.#untrack = deps.lifecycle.track(this);
    for (const frame of this.#dialect.opening(this.id)) void this.#sendControl(frame);
    this.#log.info('session opened');
  }

  /**
   * Finish the messages already received (an open utterance is flushed: what it received is
   * spoken), then close with 1001 (server going away).
   */
  drain(): Promise<void> {
    this.#draining = true;
    this.#open?.flush();
    this.#open = undefined;
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
    this.#current?.controller.abort();
    this.#close(1001, 'server shutting down');
  }

  describe(): { sessionId: string; requestId?: string; queued: number } {
    return {
      sessionId: this.id,
      ...(this.#current ? { requestId: this.#current.requestId } : {}),
      queued: this.#queue.length,
    };
  }

  #receive(data: Buffer): void {
    if (this.#closeReceived || this.#gone) return;
    const receivedAt = performance.now();
    let command: Command;
    try {
      command = this.#dialect.parse(data);
    } catch (error) {
      // Answered in turn, like the message it stands for.
      this.#admit({ kind: 'invalid', error, requestId: undefined, bytes: data.length }, data.length);
      return;
    }
    switch (command.kind) {
      case 'close':
        this.#closeReceived = true;
        // What the open utterance received is spoken before the session closes.
        this.#open?.flush();
        this.#open = undefined;
        this.#enqueue({ kind: 'close' });
        return;
      case 'cancel':
        this.#cancel(command.requestId, receivedAt);
        return;
      case 'append':
        this.#append(command.fields, receivedAt, data.length);
        return;
      case 'flush':
        this.#flush(command.fields);
        return;
      case 'request': {
        const fields = { ...this.#dialect.defaults, ...command.fields };
        const requestId = peekRequestId(fields);
        if (this.#refuseWhileDraining(requestId)) return;
        const assignedId = requestId ?? randomUUID();
        this.#admit(
          { kind: 'request', fields, requestId, assignedId, bytes: data.length, receivedAt },
          data.length,
        );
        return;
      }
    }
  }

  #refuseWhileDraining(requestId: string | undefined): boolean {
    if (!this.#draining) return false;
    void this.#sendError(
      ttsError('TTS_ERR_SHUTTING_DOWN', 'The server is shutting down and takes no new requests'),
      requestId,
    );
    return true;
  }

  /** Queues an item if the session's bounds allow, else answers `busy` (or closes a flooder). */
  #admit(item: Item, bytes: number): boolean {
    const { wsMaxPending, wsMaxPendingBytes } = this.#deps.config;
    if (this.#queue.length >= wsMaxPending || this.#queuedBytes + bytes > wsMaxPendingBytes) {
      this.#overflow++;
      if (this.#overflow > wsMaxPending * FLOOD_FACTOR) {
        this.#log.warn({ pending: this.#queue.length }, 'closing a session that floods past its queue');
        this.#close(1008, 'too many pending messages');
        // Nothing more is read: what the flooder sends stays in the kernel's buffers until ws
        // destroys the socket (its close timeout), instead of costing a parse and a log line each.
        this.#socket.pause();
        return false;
      }
      void this.#sendError(
        ttsError(
          'TTS_ERR_BUSY',
          `This session already has ${this.#queue.length} messages (${this.#queuedBytes} bytes) waiting, the most it may hold (${wsMaxPending} messages, ${wsMaxPendingBytes} bytes); wait for synthesis_complete before sending more`,
        ),
        errorId(item),
      );
      return false;
    }
    this.#overflow = 0;
    this.#enqueue(item);
    return true;
  }

  #enqueue(item: Item): void {
    this.#queue.push(item);
    this.#queuedBytes += itemBytes(item);
    if (!this.#running) void this.#pump();
  }

  /** `append`: text for the open utterance; the first one opens it, with the request's options. */
  #append(fields: Record<string, unknown>, receivedAt: number, bytes: number): void {
    const requestId = this.#open?.requestId ?? peekRequestId(fields);
    try {
      const text = fields.text;
      if (typeof text !== 'string') {
        throw ttsError(
          'TTS_ERR_INVALID_OPTION',
          `An append carries its text as a string: {"type": "append", "text": "…"}; got ${text === undefined ? 'no text' : typeof text}`,
        );
      }
      const chars = codePointLength(text);
      if (chars > this.#deps.config.maxTextChars) {
        throw ttsError(
          'TTS_ERR_TEXT_TOO_LONG',
          `This append has ${chars} characters, over the limit of ${this.#deps.config.maxTextChars} per message; it was not added. Send the text in smaller appends`,
        );
      }
      let utterance = this.#open;
      if (utterance) {
        const extra = UTTERANCE_OPTIONS.filter((key) => fields[key] !== undefined);
        if (
          extra.length > 0 ||
          (fields.request_id !== undefined && fields.request_id !== utterance.requestId)
        ) {
          throw ttsError(
            'TTS_ERR_INVALID_OPTION',
            `Only the first append of an utterance may carry options (${[...extra, ...(fields.request_id !== undefined ? ['request_id'] : [])].join(', ')} here); this append was not added. Flush the utterance to start one with other options`,
          );
        }
      } else {
        if (this.#refuseWhileDraining(requestId)) return;
        const options = this.#utteranceOptions({ ...this.#dialect.defaults, ...fields });
        const engine = this.#deps.lifecycle.requireEngine({ accepted: true });
        utterance = new Utterance(
          options,
          {
            maxBufferedBytes: this.#deps.config.utteranceMaxBufferBytes,
            idleFlushMs: this.#deps.config.utteranceIdleFlushS * 1000,
          },
          engine.segmenter({
            voice: options.voice,
            speed: options.speed,
            markup: options.markup,
            firstChunk: options.firstChunk,
            ...(options.lang !== undefined ? { lang: options.lang } : {}),
            ...(options.pronunciations ? { pronunciations: options.pronunciations } : {}),
          }),
        );
        if (!this.#admit({ kind: 'utterance', utterance, receivedAt }, bytes)) return;
        this.#open = utterance;
      }
      utterance.append(text, chars);
    } catch (err) {
      void this.#sendError(err, requestId);
    }
  }

  /** The options of an utterance's first append, validated as a request's (the text comes later). */
  #utteranceOptions(fields: Record<string, unknown>): SynthesisOptions {
    const engine = this.#deps.lifecycle.requireEngine({ accepted: true });
    return parseOptions({ ...fields, text: '.' }, { route: 'ws', config: this.#deps.config, engine });
  }

  /** `flush`: the open utterance speaks what it holds and ends. */
  #flush(fields: Record<string, unknown>): void {
    if (this.#open) {
      this.#open.flush();
      this.#open = undefined;
      return;
    }
    this.#admit({ kind: 'empty-flush', requestId: peekRequestId(fields) ?? randomUUID() }, 0);
  }

  /**
   * `cancel`: cuts the request in flight at its next chunk and drops the queued ones (only the one
   * named, with a request_id). The answer follows the last byte of what was cut.
   */
  #cancel(target: string | undefined, receivedAt: number): void {
    const cancelled: string[] = [];
    const matches = (id: string | undefined) => target === undefined || id === target;
    const current = this.#current;
    let cutting = false;
    if (current && !current.controller.signal.aborted && matches(current.requestId)) {
      current.controller.abort();
      current.utterance?.abandon();
      if (this.#open === current.utterance) this.#open = undefined;
      cancelled.push(current.requestId);
      cutting = true;
    }
    const kept: Item[] = [];
    for (const item of this.#queue) {
      const id = itemId(item);
      if (item.kind === 'close' || !matches(id)) {
        kept.push(item);
        continue;
      }
      this.#queuedBytes -= itemBytes(item);
      if (item.kind === 'utterance') {
        item.utterance.abandon();
        if (this.#open === item.utterance) this.#open = undefined;
      }
      if (id !== undefined && item.kind !== 'invalid') cancelled.push(id);
    }
    this.#queue = kept;
    this.#log.info({ target, cancelled }, 'cancel received');
    const frame = this.#dialect.cancelled(target ?? (cutting ? current?.requestId : undefined), cancelled);
    // In order behind the answers to earlier cancels, and after the cut run's last byte.
    const ack: Ack = { frame, receivedAt };
    if (cutting || this.#acks.length > 0) this.#acks.push(ack);
    else void this.#acknowledge(ack);
  }

  /** Sends a cancel's answer and records how long after its arrival it left. */
  async #acknowledge(ack: Ack): Promise<void> {
    if (ack.frame) await this.#sendControl(ack.frame);
    const seconds = (performance.now() - ack.receivedAt) / 1000;
    this.#deps.lifecycle.metrics.cancelAck.observe(seconds);
    this.#log.info({ ackMs: Math.round(seconds * 1e4) / 10 }, 'cancel acknowledged');
  }

  async #pump(): Promise<void> {
    this.#running = true;
    try {
      while (this.#queue.length > 0 && !this.#gone) {
        const next = this.#queue.shift()!;
        this.#queuedBytes -= itemBytes(next);
        if (next.kind === 'close') {
          // Everything received before the close is done.
          for (const item of this.#queue) if (item.kind === 'utterance') item.utterance.abandon();
          this.#queue.length = 0;
          this.#close(1000, 'closed by client request');
          return;
        }
        await this.#handle(next);
        for (const ack of this.#acks.splice(0)) await this.#acknowledge(ack);
      }
    } finally {
      this.#running = false;
      if (this.#queue.length === 0) for (const wake of this.#idle.splice(0)) wake();
    }
  }

  async #handle(item: Exclude<Item, { kind: 'close' }>): Promise<void> {
    let requestId = errorId(item);
    try {
      switch (item.kind) {
        case 'invalid':
          throw item.error;
        case 'empty-flush': {
          const frame = this.#dialect.complete(item.requestId, undefined);
          if (frame) await this.#sendControl(frame);
          return;
        }
        case 'utterance': {
          const engine = this.#deps.lifecycle.requireEngine({ accepted: true });
          const { utterance } = item;
          await this.#synthesize(
            engine,
            utterance.options,
            utterance,
            () => utterance.chars,
            item.receivedAt,
          );
          return;
        }
        case 'request': {
          // Received before any shutdown began (later ones are refused on arrival): finish it.
          const engine = this.#deps.lifecycle.requireEngine({ accepted: true });
          const fields =
            item.fields.request_id === undefined
              ? { ...item.fields, request_id: item.assignedId }
              : item.fields;
          const options = parseOptions(fields, { route: 'ws', config: this.#deps.config, engine });
          requestId = options.requestId;
          await this.#synthesize(engine, options, options.text, () => options.chars, item.receivedAt);
          return;
        }
      }
    } catch (err) {
      await this.#sendError(err, requestId);
    }
  }

  async #synthesize(
    engine: ReturnType<Lifecycle['requireEngine']>,
    options: SynthesisOptions,
    text: string | Utterance,
    chars: () => number,
    receivedAt: number,
  ): Promise<void> {
    const controller = new AbortController();
    this.#current = {
      controller,
      requestId: options.requestId,
      ...(typeof text === 'string' ? {} : { utterance: text }),
    };
    try {
      const start = this.#dialect.start(options.requestId);
      if (start) await this.#sendControl(start);
      const run = engine.synthesize(
        synthesisRequest(options, text),
        {
          format: options.format,
          sampleRate: options.sampleRate,
          // Sent as the chunk's audio is handed over, so it goes out before that audio.
          ...(options.timestamps
            ? {
                onWords: (words: readonly WordTiming[]) => {
                  const frame = this.#dialect.words(options.requestId, words);
                  if (frame && !controller.signal.aborted) void this.#sendControl(frame);
                },
              }
            : {}),
          onMark: (name: string, timeS: number) => {
            const frame = this.#dialect.mark(options.requestId, name, timeS);
            if (frame && !controller.signal.aborted) void this.#sendControl(frame);
          },
        },
        { signal: controller.signal, startedAt: receivedAt },
      );
      for await (const bytes of run) {
        // A cancel or the client's leaving: nothing more of this request is sent.
        if (this.#gone || controller.signal.aborted) break;
        await this.#send(bytes, true);
      }
      if (this.#gone || controller.signal.aborted) return;
      // A construct still open at the flush: not spoken; said after the rest, before completion.
      if (typeof text !== 'string' && text.flushError !== undefined)
        await this.#sendError(text.flushError, options.requestId);
      const figures = run.figures();
      const warnings = typeof text === 'string' ? options.warnings : text.warnings;
      const complete = this.#dialect.complete(options.requestId, figures, warnings);
      if (complete) await this.#sendControl(complete);
      recordCompletion(this.#log, this.#deps.lifecycle.metrics, {
        route: 'ws',
        requestId: options.requestId,
        format: options.format,
        chars: chars(),
        figures,
      });
    } finally {
      this.#current = undefined;
    }
  }

  #sendControl(frame: object): Promise<void> {
    return this.#send(JSON.stringify(frame), false);
  }

  async #sendError(err: unknown, requestId: string | undefined): Promise<void> {
    if (this.#gone || isCancelled(err)) return;
    const { status, body } = toErrorBody(err, requestId);
    recordRefusal(this.#log, this.#deps.lifecycle.metrics, err, status, body.code, requestId);
    const frame = this.#dialect.error(body);
    if (frame) await this.#sendControl(frame);
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
    if (this.#gone || this.#socket.readyState !== this.#socket.OPEN) return;
    this.#socket.close(code, reason);
  }

  /**
   * ws refuses a message in more than WS_MAX_FRAGMENTS fragments (or chunks) by closing with a bare
   * 1008 itself, before it emits the error. Its receiver reports the error first, so this listener,
   * put ahead of ws's own, sends the client an error frame and a close whose reason names it; ws's
   * own close then finds the session already closing and does nothing more.
   */
  #explainProtocolCloses(socket: WebSocket): void {
    const receiver = (socket as unknown as { _receiver?: NodeJS.EventEmitter })._receiver;
    receiver?.prependListener('error', (err: NodeJS.ErrnoException) => {
      if (err.code !== 'WS_ERR_TOO_MANY_BUFFERED_PARTS' || socket.readyState !== socket.OPEN) return;
      void this.#sendError(
        ttsError(
          'TTS_ERR_MESSAGE_TOO_FRAGMENTED',
          `A message may arrive in at most ${WS_MAX_FRAGMENTS} fragments; send it in fewer, larger frames (one frame per message is usual)`,
        ),
        undefined,
      );
      this.#close(1008, 'message_too_fragmented');
    });
  }

  /**
   * The idle clock: one timer, refreshed by every message and ping. Voice agents hold sessions
   * through long silences, so the limit is generous. A session synthesizing or holding messages is
   * never idle, unless all it does is wait for the text of an utterance that no append feeds.
   */
  #startIdleTimer(seconds: number): NodeJS.Timeout | undefined {
    if (seconds === 0) return undefined;
    const timer = setTimeout(() => {
      const starved = this.#current?.utterance?.starved === true;
      if (!starved && (this.#running || this.#queue.length > 0)) {
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
    if (this.#current) {
      recordClientGone(this.#log, this.#deps.lifecycle.metrics, this.#current.requestId, 'ws');
      this.#current.controller.abort();
      this.#current.utterance?.abandon();
    }
    for (const item of this.#queue) if (item.kind === 'utterance') item.utterance.abandon();
    this.#open?.abandon();
    this.#queue.length = 0;
    this.#untrack();
    for (const wake of this.#idle.splice(0)) wake();
    this.#log.info({ code }, 'session closed');
  }
}
