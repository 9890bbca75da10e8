/**
 * One WebSocket session: many messages over one connection, handled strictly in order —
 * receive → synthesize → send audio → synthesis_complete → next. Messages that arrive meanwhile
 * wait in a bounded queue; none is dropped or reordered. Three kinds act on arrival instead:
 * `append` feeds the open utterance (streamed text input, see utterance.ts), `flush` ends it, and
 * `cancel` cuts the request in flight and drops the queued ones (barge-in).
 *
 * The order is kept by a lane (ws-lane.ts). A session opened with contexts has one lane per
 * context, which stream side by side: every message names its context, `close_context` ends one,
 * and the socket stays open. The session owns what the lanes share: the socket and its
 * backpressure, the bounds on what may wait, the idle clock, the drain.
 */
import { randomUUID } from 'node:crypto';
import type { FastifyBaseLogger } from 'fastify';
import type { WebSocket, RawData } from 'ws';
import type { Config } from '../config/config.ts';
import { toErrorBody, ttsError } from '../http/errors.ts';
import type { Drainable, Lifecycle } from '../http/lifecycle.ts';
import { isCancelled, LineQuota, recordSessionRefusal } from '../observability/outcomes.ts';
import type { Command, SessionDialect } from '../dialects/dialect.ts';
import { NATIVE_DIALECT } from '../dialects/native/messages.ts';
import { itemBytes, Lane, type Item, type LaneHost } from './ws-lane.ts';

/** Above this many unsent bytes, sending waits for the socket to drain. */
const SEND_HIGH_WATER_BYTES = 1024 * 1024;

/** A session that keeps flooding this many times past its cap is closed with 1008. */
const FLOOD_FACTOR = 4;

/** A message may arrive in at most this many fragments (ws's own default, stated here). */
export const WS_MAX_FRAGMENTS = 16_384;

/** Closed contexts remembered per session, so that their ids are refused if used again. */
const CLOSED_CONTEXTS_KEPT = 4096;

/** The lane of a session without contexts. */
const ONLY = '';

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

export class Session implements Drainable {
  readonly id = randomUUID();
  readonly #socket: WebSocket;
  readonly #deps: SessionDeps;
  readonly #dialect: SessionDialect;
  readonly #log: FastifyBaseLogger;
  /** One lane without contexts (key ''), else one per open context. */
  readonly #lanes = new Map<string, Lane>();
  /** Contexts ended by `close_context`, oldest first: their ids are not taken again. */
  readonly #closedContexts = new Set<string>();
  /** Messages waiting in all lanes and answers not yet written, and their bytes. */
  #pending = 0;
  #pendingBytes = 0;
  /** `{"type":"close"}` arrived: later messages are ignored. */
  #closeReceived = false;
  #gone = false;
  /** Shutdown began: messages already received are finished, new ones refused. */
  #draining = false;
  #overflow = 0;
  #idle: (() => void)[] = [];
  #untrack: () => void;
  /** Closes the session after its idle limit without a message or a ping from the client. */
  readonly #idleTimer: NodeJS.Timeout | undefined;
  readonly #host: LaneHost;
  /** Refusals, and cancels that cut nothing: the first few of each logged, the rest counted. */
  readonly #refusals = new LineQuota();
  readonly #emptyCancels = new LineQuota();

  /** Attaches the listeners at once (before any await), so no message can be missed. */
  constructor(socket: WebSocket, deps: SessionDeps) {
    this.#socket = socket;
    this.#deps = deps;
    this.#dialect = deps.dialect ?? NATIVE_DIALECT;
    this.#log = deps.log.child({ sessionId: this.id });
    this.#host = this.#laneHost();
    socket.on('message', (data) => {
      // Once the server has sent its close frame, what still arrives costs nothing: no parse, no log.
      if (socket.readyState !== socket.OPEN) return;
      this.#idleTimer?.refresh();
      this.#receive(toBuffer(data));
    });
    this.#explainProtocolCloses(socket);
    socket.on('ping', () => this.#idleTimer?.refresh());
    socket.on('close', (code) => this.#onGone(code));
    this.#idleTimer = this.#startIdleTimer(this.#idleLimitS());
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
    for (const lane of this.#lanes.values()) lane.finishOpen();
    return new Promise((resolve) => {
      if (this.#gone) resolve();
      else
        this.#whenIdle(() => {
          this.#close(1001, 'server shutting down');
          resolve();
        });
    });
  }

  abort(): void {
    for (const lane of this.#lanes.values()) lane.abort();
    this.#close(1001, 'server shutting down');
  }

  describe(): { sessionId: string; requestId?: string; queued: number; contexts?: number } {
    const requestId = [...this.#lanes.values()].find((lane) => lane.requestId)?.requestId;
    return {
      sessionId: this.id,
      ...(requestId !== undefined ? { requestId } : {}),
      queued: this.#pending,
      ...(this.#dialect.contexts ? { contexts: this.#lanes.size } : {}),
    };
  }

  /** What the lanes share of the session. */
  #laneHost(): LaneHost {
    // eslint-disable-next-line @typescript-eslint/no-this-alias
    const session = this;
    return {
      config: this.#deps.config,
      lifecycle: this.#deps.lifecycle,
      log: this.#log,
      dialect: this.#dialect,
      emptyCancels: this.#emptyCancels,
      get gone() {
        return session.#gone;
      },
      get draining() {
        return session.#draining;
      },
      admit: (item, bytes, context) => this.#admit(item, bytes, context),
      release: (item) => {
        if (item.kind !== 'end') this.#uncount(itemBytes(item));
      },
      hold: () => this.#hold(),
      unhold: () => this.#uncount(0),
      send: (data, binary) => this.#send(data, binary),
      sendControl: (frame) => this.#sendControl(frame),
      sendControls: async (frames) => {
        for (const frame of Array.isArray(frames) ? frames : frames ? [frames] : []) {
          await this.#sendControl(frame as object);
        }
      },
      sendError: (err, requestId, context) => this.#sendError(err, requestId, context),
      answer: (frame) => this.#answer(frame),
      refuse: (err, requestId, context) => this.#refuse(err, requestId, context),
      idle: (lane, ended) => {
        const context = lane.context;
        if (context !== undefined && this.#lanes.get(context) === lane) {
          if (ended) {
            this.#lanes.delete(context);
            this.#rememberClosed(context);
          } else if (this.#dialect.releaseIdleContexts && !lane.closed && !lane.open) {
            this.#lanes.delete(context);
          }
        }
        this.#wakeIfIdle();
      },
    };
  }

  #receive(data: Buffer): void {
    if (this.#closeReceived || this.#gone) return;
    const receivedAt = performance.now();
    let commands: Command | readonly Command[];
    try {
      commands = this.#dialect.parse(data);
    } catch (error) {
      // Answered in turn, like the message it stands for (in the only lane, or at once).
      if (this.#dialect.contexts) this.#refuse(error, undefined, undefined);
      else this.#lane(undefined)?.invalid(error, data.length);
      return;
    }
    const list: readonly Command[] = Array.isArray(commands) ? commands : [commands as Command];
    for (const command of list) {
      if (this.#closeReceived || this.#gone) return;
      // A context refused (closed, or one too many) takes none of the message's other commands.
      if (!this.#run(command, data.length, receivedAt)) return;
    }
  }

  /** Carries out one command; false when its context was refused (the error is sent). */
  #run(command: Command, bytes: number, receivedAt: number): boolean {
    switch (command.kind) {
      case 'close':
        this.#closeReceived = true;
        // What the open utterances received is spoken before the session closes; with contexts,
        // each context's end is answered as a close_context's would be.
        for (const lane of this.#lanes.values()) {
          if (this.#dialect.contexts && !lane.closed) lane.close(false, receivedAt);
          else lane.finishOpen();
        }
        this.#whenIdle(() => {
          const last = this.#dialect.closing?.();
          if (last) void this.#sendControl(last);
          this.#close(1000, 'closed by client request');
        });
        return true;
      case 'keep-alive':
        return true;
      case 'refuse':
        this.#refuse(command.error, undefined, command.context);
        return true;
      case 'cancel':
        if (command.context === undefined && this.#dialect.contexts) {
          for (const lane of this.#lanes.values()) lane.cancel(command.requestId, receivedAt);
          if (this.#lanes.size === 0) this.#answer(this.#dialect.cancelled(command.requestId, [], undefined));
          return true;
        }
        return this.#with(command.context, (lane) => lane.cancel(command.requestId, receivedAt));
      case 'close-context': {
        const lane = this.#lanes.get(command.context);
        if (lane && (!lane.closed || command.tolerant === true)) {
          lane.close(command.drop, receivedAt);
        } else if (this.#isClosed(command.context) && command.tolerant !== true) {
          this.#refuseClosed(command.context);
        } else {
          // Never opened: it is over, and said so at once.
          this.#rememberClosed(command.context);
          this.#answer(this.#dialect.contextClosed(command.context, undefined, undefined));
        }
        return true;
      }
      case 'append':
        return this.#with(command.context, (lane) => lane.append(command.fields, receivedAt, bytes, command));
      case 'flush':
        return this.#with(command.context, (lane) => lane.flush(command.fields));
      case 'request':
        return this.#with(command.context, (lane) =>
          lane.request({ ...this.#dialect.defaults, ...command.fields }, receivedAt, bytes),
        );
    }
  }

  /** Runs `act` on the command's lane (opened if need be); false when its context was refused. */
  #with(context: string | undefined, act: (lane: Lane) => void): boolean {
    const lane = this.#lane(context);
    if (lane === undefined) return false;
    act(lane);
    return true;
  }

  /**
   * The lane a message goes to: the only one, or its context's (opened by its first message). A
   * context that was closed, or one past the limit, is answered with an error here, and the
   * message goes nowhere.
   */
  #lane(context: string | undefined): Lane | undefined {
    const key = context ?? ONLY;
    const lane = this.#lanes.get(key);
    if (lane && !lane.closed) return lane;
    if (context !== undefined && this.#isClosed(context)) {
      this.#refuseClosed(context);
      return undefined;
    }
    if (context !== undefined) {
      const open = [...this.#lanes.values()].filter((l) => !l.closed).length;
      const limit = this.#deps.config.wsMaxContexts;
      if (open >= limit) {
        this.#refuse(
          ttsError(
            'TTS_ERR_TOO_MANY_CONTEXTS',
            `This session has ${open} contexts open, the most it may have (WS_MAX_CONTEXTS); close one (close_context) before opening ${JSON.stringify(context.slice(0, 64))}`,
            { data: { param: 'context_id' } },
          ),
          undefined,
          context,
        );
        return undefined;
      }
    }
    const created = new Lane(this.#host, context);
    this.#lanes.set(key, created);
    return created;
  }

  /** A context closed on this session (closing now, or closed and remembered). */
  #isClosed(context: string): boolean {
    return this.#lanes.get(context)?.closed === true || this.#closedContexts.has(context);
  }

  #refuseClosed(context: string): void {
    this.#refuse(
      ttsError(
        'TTS_ERR_CONTEXT_CLOSED',
        `Context ${JSON.stringify(context.slice(0, 64))} was closed on this session; its id cannot be used again. Open a new context with a new context_id`,
        { data: { param: 'context_id' } },
      ),
      undefined,
      context,
    );
  }

  #rememberClosed(context: string): void {
    this.#closedContexts.add(context);
    if (this.#closedContexts.size > CLOSED_CONTEXTS_KEPT) {
      this.#closedContexts.delete(this.#closedContexts.values().next().value!);
    }
  }

  /** Counts an item against the session's bounds if they allow, else answers `busy` (or closes a flooder). */
  #admit(item: Item, bytes: number, context: string | undefined): boolean {
    if (this.#fits(bytes)) {
      this.#count(itemBytes(item));
      return true;
    }
    if (this.#overflowed()) return false;
    const { wsMaxPending, wsMaxPendingBytes } = this.#deps.config;
    const requestId =
      item.kind === 'utterance' ? item.utterance.requestId : item.kind === 'end' ? undefined : item.requestId;
    const frame = this.#errorFrame(
      ttsError(
        'TTS_ERR_BUSY',
        `This session already has ${this.#pending} messages (${this.#pendingBytes} bytes) waiting, the most it may hold (${wsMaxPending} messages, ${wsMaxPendingBytes} bytes); wait for synthesis_complete before sending more`,
      ),
      requestId,
      context,
    );
    // Not counted: it is the overflow's answer, and overflows are bounded by FLOOD_FACTOR.
    if (frame) this.#socket.send(JSON.stringify(frame), { binary: false });
    return false;
  }

  /** The session's bounds have room for one more message (or answer) of `bytes`. */
  #fits(bytes: number): boolean {
    const { wsMaxPending, wsMaxPendingBytes } = this.#deps.config;
    return this.#pending < wsMaxPending && this.#pendingBytes + bytes <= wsMaxPendingBytes;
  }

  /** Counts an answer waiting its turn (no bytes: its frame is built when sent) if there is room. */
  #hold(): boolean {
    if (this.#fits(0)) {
      this.#count(0);
      return true;
    }
    this.#overflowed();
    return false;
  }

  #count(bytes: number): void {
    this.#overflow = 0;
    this.#pending++;
    this.#pendingBytes += bytes;
  }

  #uncount(bytes: number): void {
    this.#pending--;
    this.#pendingBytes -= bytes;
  }

  /**
   * One more message or answer past the session's bounds. A session that keeps going past them
   * (FLOOD_FACTOR times its cap in a row) is closed with 1008, once: true then (and while it
   * closes), and nothing more is answered.
   */
  #overflowed(): boolean {
    if (this.#gone || this.#socket.readyState !== this.#socket.OPEN) return true;
    this.#overflow++;
    if (this.#overflow <= this.#deps.config.wsMaxPending * FLOOD_FACTOR) return false;
    this.#log.warn(
      { pending: this.#pending, pendingBytes: this.#pendingBytes, refusals: this.#refusals.seen },
      'closing a session that floods past its queue',
    );
    this.#close(1008, 'too many pending messages');
    // Nothing more is read: what the flooder sends stays in the kernel's buffers until ws
    // destroys the socket (its close timeout), instead of costing a parse and an answer each.
    this.#socket.pause();
    return true;
  }

  /**
   * Sends a frame at once, outside any lane's turn: a refusal, or the answer to a cancel or a
   * close that had nothing to wait for. Like a queued message it counts against the session's
   * bounds until the socket has written it, so a client that sends without reading fills them with
   * answers as it would with messages, and is refused and closed the same way (`#overflowed`).
   */
  #answer(frame: object | undefined): void {
    if (frame === undefined || this.#gone || this.#socket.readyState !== this.#socket.OPEN) return;
    const data = JSON.stringify(frame);
    const bytes = Buffer.byteLength(data);
    if (this.#fits(bytes)) {
      this.#count(bytes);
      this.#socket.send(data, { binary: false }, () => this.#uncount(bytes));
    } else if (!this.#overflowed()) {
      this.#socket.send(data, { binary: false });
    }
  }

  /** Answers a message with an error at once (see `#answer`). */
  #refuse(err: unknown, requestId: string | undefined, context: string | undefined): void {
    if (this.#gone || isCancelled(err)) return;
    this.#answer(this.#errorFrame(err, requestId, context));
  }

  /** An error as the dialect's frame (undefined: it sends none), recorded as a refusal. */
  #errorFrame(err: unknown, requestId: string | undefined, context: string | undefined): object | undefined {
    const { status, body } = toErrorBody(err, requestId);
    const { metrics } = this.#deps.lifecycle;
    recordSessionRefusal(this.#log, metrics, this.#refusals, err, status, body.code, requestId);
    return this.#dialect.error(body, context);
  }

  /** Runs `then` once no lane has anything queued or running. */
  #whenIdle(then: () => void): void {
    this.#idle.push(then);
    this.#wakeIfIdle();
  }

  #wakeIfIdle(): void {
    if (this.#idle.length === 0) return;
    for (const lane of this.#lanes.values()) if (lane.busy) return;
    for (const wake of this.#idle.splice(0)) wake();
  }

  #sendControl(frame: object): Promise<void> {
    return this.#send(JSON.stringify(frame), false);
  }

  /** Sends an error in its lane's turn (its item was counted while it waited). */
  async #sendError(err: unknown, requestId: string | undefined, context: string | undefined): Promise<void> {
    if (this.#gone || isCancelled(err)) return;
    const frame = this.#errorFrame(err, requestId, context);
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
      this.#refuse(
        ttsError(
          'TTS_ERR_MESSAGE_TOO_FRAGMENTED',
          `A message may arrive in at most ${WS_MAX_FRAGMENTS} fragments; send it in fewer, larger frames (one frame per message is usual)`,
        ),
        undefined,
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
  /** The session's idle limit: the server's, or a dialect's shorter one (ElevenLabs' inactivity_timeout). */
  #idleLimitS(): number {
    const own = this.#deps.config.wsIdleTimeoutS;
    const asked = this.#dialect.idleTimeoutS;
    if (asked === undefined) return own;
    return own === 0 ? asked : Math.min(own, asked);
  }

  #startIdleTimer(seconds: number): NodeJS.Timeout | undefined {
    if (seconds === 0) return undefined;
    const timer = setTimeout(() => {
      const working = [...this.#lanes.values()].some((lane) => lane.busy && !lane.starved);
      if (working) {
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
    for (const lane of this.#lanes.values()) lane.gone();
    this.#untrack();
    for (const wake of this.#idle.splice(0)) wake();
    // What was not logged one by one (a flood's refusals or cancels) is counted here, once.
    const counted = { refusals: this.#refusals, emptyCancels: this.#emptyCancels };
    const unlogged = Object.entries(counted).filter(([, quota]) => quota.unlogged > 0);
    this.#log.info(
      {
        code,
        ...Object.fromEntries(unlogged.map(([kind, quota]) => [kind, quota.seen])),
        ...(unlogged.length > 0
          ? { unlogged: Object.fromEntries(unlogged.map(([kind, quota]) => [kind, quota.unlogged])) }
          : {}),
      },
      'session closed',
    );
  }
}
