/**
 * One ordered stream of a WebSocket session: its messages answered strictly in turn — receive →
 * synthesize → send audio → completion → next — with the utterance being written, the request in
 * flight, and the answers to cancels. A session without contexts has one lane; a session with
 * contexts (ws-session.ts) has one per context, and they stream side by side, their sentences
 * scheduled against each other and every other request by the pool's dispatch policy.
 */
import { randomUUID } from 'node:crypto';
import type { FastifyBaseLogger } from 'fastify';
import type { PhonemeTiming, WordTiming } from '../../model/engine.ts';
import { NATIVE_SAMPLE_RATE, bytesPerSample } from '../../protocol/formats.ts';
import type { Heard } from '../../protocol/frames.ts';
import type { Config } from '../config/config.ts';
import { ttsError } from '../http/errors.ts';
import type { Lifecycle } from '../http/lifecycle.ts';
import { recordClientGone, recordCompletion, type LineQuota } from '../observability/outcomes.ts';
import {
  parseAppend,
  parseSessionRequest,
  parseUtteranceOptions,
  peekRequestId,
  synthesisRequest,
  textSettingsOf,
  type SynthesisOptions,
} from '../http/request.ts';
import type { AppendOptions, OutgoingFrame, SessionDialect, Turn } from '../dialects/dialect.ts';
import { Utterance } from './utterance.ts';
import { heardOf, type RunInFlight } from './heard.ts';

/** Something a lane answers in turn, parsed once, on arrival. */
export type Item =
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
  /** `close_context` without drop: the context's end, after everything it received. */
  | { readonly kind: 'end' };

/** A cancel's answer (the dialect's frame), with when the cancel arrived and what it cut. */
interface Ack {
  readonly frame: () => object | undefined;
  readonly receivedAt: number;
  readonly target: string | undefined;
  readonly cancelled: readonly string[];
  /** Counted against the session's bounds while it waits (see LaneHost.hold). */
  held?: boolean;
}

/**
 * The reason a cut run is aborted with: one for all, since nothing reads it but its name (a
 * DOMException made per cancel captures a stack each time, a good part of what a cancel costs).
 */
const CUT = new DOMException('The request was cancelled', 'AbortError');

/** The id echoed on an item's errors: only one the client gave (or the utterance's). */
const errorId = (item: Item): string | undefined =>
  item.kind === 'utterance' ? item.utterance.requestId : item.kind === 'end' ? undefined : item.requestId;

/** The id a cancel names an item by. */
const itemId = (item: Item): string | undefined => {
  switch (item.kind) {
    case 'utterance':
      return item.utterance.requestId;
    case 'request':
      return item.assignedId;
    case 'end':
      return undefined;
    default:
      return item.requestId;
  }
};

export const itemBytes = (item: Item): number =>
  item.kind === 'request' || item.kind === 'invalid' ? item.bytes : 0;

/** What a lane needs of its session: the socket, the bounds shared by all lanes, the dialect. */
export interface LaneHost {
  readonly config: Config;
  readonly lifecycle: Lifecycle;
  readonly log: FastifyBaseLogger;
  readonly dialect: SessionDialect;
  /** Cancels that cut nothing: logged while this allows (a client can send them without end). */
  readonly emptyCancels: LineQuota;
  /** The client left: nothing more is sent or started. */
  readonly gone: boolean;
  /** Shutdown began: messages already received are finished, new ones refused. */
  readonly draining: boolean;
  /** Counts an item against the session's bounds; false: refused (the host has answered). */
  admit(item: Item, bytes: number, context: string | undefined): boolean;
  /** An item left the queue. */
  release(item: Item): void;
  /**
   * Counts an answer that waits for its turn (a cancel's, behind the run it cut) against the
   * session's bounds; false when they are full (counted as an overflow instead).
   */
  hold(): boolean;
  /** A held answer was sent. */
  unhold(): void;
  /** Sends in the lane's turn (waits while the socket is backed up). */
  send(data: Uint8Array | string, binary: boolean): Promise<void>;
  sendControl(frame: object): Promise<void>;
  /** Sends a dialect's answer: nothing, one frame or several in order. */
  sendControls(frames: object | readonly object[] | undefined): Promise<void>;
  sendError(err: unknown, requestId: string | undefined, context: string | undefined): Promise<void>;
  /** Sends a frame at once, outside the lane's turn; it counts against the bounds until written. */
  answer(frame: object | undefined): void;
  /** An error answered at once, as `answer` sends. */
  refuse(err: unknown, requestId: string | undefined, context: string | undefined): void;
  /** The lane has nothing queued and nothing running (`ended`: its context is over). */
  idle(lane: Lane, ended: boolean): void;
}

export class Lane {
  /** The context's id, in a session with contexts. */
  readonly context: string | undefined;
  readonly #host: LaneHost;
  #queue: Item[] = [];
  #running = false;
  /** The utterance that appends go to (queued or being synthesized), until its flush. */
  #open: Utterance | undefined;
  #current: RunInFlight | undefined;
  /** Answers to cancels, sent once the run they cut has sent its last byte. */
  readonly #acks: Ack[] = [];
  /** `close_context` arrived: nothing more is taken. */
  #closed = false;
  /** The context's end was answered. */
  #ended = false;

  constructor(host: LaneHost, context: string | undefined) {
    this.#host = host;
    this.context = context;
  }

  get closed(): boolean {
    return this.#closed;
  }

  /** An utterance is open: appends still go to it. */
  get open(): boolean {
    return this.#open !== undefined;
  }

  get busy(): boolean {
    return this.#running || this.#queue.length > 0;
  }

  get queued(): number {
    return this.#queue.length;
  }

  get requestId(): string | undefined {
    return this.#current?.requestId;
  }

  /** The run in flight waits for text that no append feeds. */
  get starved(): boolean {
    return this.#current?.utterance?.starved === true;
  }

  #turn(requestId: string): Turn {
    return this.context === undefined ? { requestId } : { requestId, context: this.context };
  }

  /** Queues a complete request. */
  request(fields: Record<string, unknown>, receivedAt: number, bytes: number): void {
    const requestId = peekRequestId(fields);
    if (this.#refuseWhileDraining(requestId)) return;
    const assignedId = requestId ?? randomUUID();
    this.#admit({ kind: 'request', fields, requestId, assignedId, bytes, receivedAt }, bytes);
  }

  /** A message that could not be parsed: answered in turn, like the message it stands for. */
  invalid(error: unknown, bytes: number): void {
    this.#admit({ kind: 'invalid', error, requestId: undefined, bytes }, bytes);
  }

  /**
   * `append`: text for the open utterance; the first one opens it, with the request's options;
   * the dialect's {@link AppendOptions} say how it is taken.
   */
  append(
    fields: Record<string, unknown>,
    receivedAt: number,
    bytes: number,
    { generate = false, repeatsOptions = false, holdMs, spaceSentences, mark }: AppendOptions = {},
  ): void {
    const requestId = this.#open?.requestId ?? peekRequestId(fields);
    try {
      let utterance = this.#open;
      const { text, chars } = parseAppend(
        fields,
        this.#host.config.maxTextChars,
        repeatsOptions ? undefined : utterance?.requestId,
      );
      if (!utterance) {
        if (this.#refuseWhileDraining(requestId)) return;
        const engine = this.#host.lifecycle.requireEngine({ accepted: true });
        const options = parseUtteranceOptions(fields, {
          config: this.#host.config,
          engine,
          defaults: this.#host.dialect.defaults,
        });
        utterance = new Utterance(
          options,
          {
            maxBufferedBytes: this.#host.config.utteranceMaxBufferBytes,
            idleFlushMs: this.#host.config.utteranceIdleFlushS * 1000,
          },
          engine.segmenter(textSettingsOf(options)),
        );
        if (!this.#admit({ kind: 'utterance', utterance, receivedAt }, bytes)) return;
        this.#open = utterance;
      }
      utterance.append(text, chars, {
        ...(holdMs !== undefined ? { holdMs } : {}),
        ...(spaceSentences !== undefined ? { spaceSentences } : {}),
      });
      if (generate) utterance.generate();
      if (mark !== undefined) utterance.mark(mark);
    } catch (err) {
      this.#host.refuse(err, requestId, this.context);
      // A context whose first message failed holds nothing: it may be let go.
      this.#settle();
    }
  }

  /** `flush`: the open utterance speaks what it holds and ends. */
  flush(fields: Record<string, unknown>): void {
    if (this.#open) {
      this.#open.flush();
      this.#open = undefined;
      return;
    }
    this.#admit({ kind: 'empty-flush', requestId: peekRequestId(fields) ?? randomUUID() }, 0);
  }

  /** The open utterance (if any) speaks what it holds and ends: the session closes or drains. */
  finishOpen(): void {
    this.#open?.flush();
    this.#open = undefined;
  }

  /**
   * `close_context`: the context takes nothing more. Without `drop`, what it received is spoken and
   * the end answered after it; with `drop`, it is cut as by a cancel, and the end answered after
   * the last byte of what was cut. A context closed again while it still speaks: a `drop` cuts the
   * rest, and its end is answered once, after the cut.
   */
  close(drop: boolean, receivedAt: number): void {
    if (this.#ended || (this.#closed && !drop)) return;
    this.#closed = true;
    if (drop) {
      // The end a first close queued is answered by the cut instead.
      this.#queue = this.#queue.filter((item) => item.kind !== 'end');
      this.#cut(undefined, receivedAt, (cancelled, heard) =>
        this.#host.dialect.contextClosed(this.context!, cancelled, heard),
      );
      this.#ended = true;
      this.#settle();
      return;
    }
    this.finishOpen();
    this.#queue.push({ kind: 'end' });
    if (!this.#running) void this.#pump();
  }

  /**
   * `cancel`: cuts the request in flight at its next chunk and drops the queued ones (only the one
   * named, with a request_id). The answer follows the last byte of what was cut.
   */
  cancel(target: string | undefined, receivedAt: number): void {
    this.#cut(target, receivedAt, (cancelled, heard, cut) =>
      this.#host.dialect.cancelled(target ?? cut, cancelled, heard, this.context),
    );
  }

  #cut(
    target: string | undefined,
    receivedAt: number,
    answer: (
      cancelled: readonly string[],
      heard: Heard | undefined,
      cut: string | undefined,
    ) => object | undefined,
  ): void {
    const cancelled: string[] = [];
    const matches = (id: string | undefined) => target === undefined || id === target;
    const current = this.#current;
    let cutting: RunInFlight | undefined;
    if (current && !current.controller.signal.aborted && matches(current.requestId)) {
      current.controller.abort(CUT);
      current.utterance?.abandon();
      if (this.#open === current.utterance) this.#open = undefined;
      cancelled.push(current.requestId);
      cutting = current;
    }
    const kept: Item[] = [];
    for (const item of this.#queue) {
      const id = itemId(item);
      // A context's end is never cut: a cancel stops what it speaks, not its close.
      if (!matches(id) || item.kind === 'end') {
        kept.push(item);
        continue;
      }
      this.#host.release(item);
      if (item.kind === 'utterance') {
        item.utterance.abandon();
        if (this.#open === item.utterance) this.#open = undefined;
      }
      if (id !== undefined && item.kind !== 'invalid') cancelled.push(id);
    }
    this.#queue = kept;
    // Built when sent: by then the cut run has sent its last byte, so what was heard is final.
    const ack: Ack = {
      frame: () => answer(cancelled, cutting ? heardOf(cutting) : undefined, cutting?.requestId),
      receivedAt,
      target,
      cancelled,
    };
    // In order behind the answers to earlier cancels, and after the cut run's last byte; counted
    // while it waits, so that cancels sent faster than the run's end can leave stay bounded.
    if (cutting || this.#acks.length > 0) {
      ack.held = this.#host.hold();
      this.#acks.push(ack);
    } else {
      this.#host.answer(ack.frame());
      this.#acknowledged(ack);
    }
  }

  /** Sends a cancel's answer in the lane's turn. */
  async #acknowledge(ack: Ack): Promise<void> {
    const frame = ack.frame();
    if (frame) await this.#host.sendControl(frame);
    if (ack.held) this.#host.unhold();
    this.#acknowledged(ack);
  }

  /** Records how long after its arrival a cancel's answer left: a line per cancel that cut something. */
  #acknowledged({ receivedAt, target, cancelled }: Ack): void {
    const seconds = (performance.now() - receivedAt) / 1000;
    this.#host.lifecycle.metrics.cancelAck.observe(seconds);
    if (cancelled.length === 0 && !this.#host.emptyCancels.take()) return;
    this.#host.log.info(
      { target, context: this.context, cancelled, ackMs: Math.round(seconds * 1e4) / 10 },
      'cancel acknowledged',
    );
  }

  /** The client left: everything stops, nothing is sent. */
  gone(): void {
    if (this.#current) {
      recordClientGone(this.#host.log, this.#host.lifecycle.metrics, this.#current.requestId, 'ws');
      this.#current.controller.abort();
      this.#current.utterance?.abandon();
    }
    this.abandonQueued();
    this.#open?.abandon();
  }

  /** Drops what is queued without answering (the session is closing). */
  abandonQueued(): void {
    for (const item of this.#queue) if (item.kind === 'utterance') item.utterance.abandon();
    for (const item of this.#queue) this.#host.release(item);
    this.#queue.length = 0;
  }

  /** Stops the run in flight (the drain's deadline). */
  abort(): void {
    this.#current?.controller.abort();
  }

  #refuseWhileDraining(requestId: string | undefined): boolean {
    if (!this.#host.draining) return false;
    this.#host.refuse(
      ttsError('TTS_ERR_SHUTTING_DOWN', 'The server is shutting down and takes no new requests'),
      requestId,
      this.context,
    );
    return true;
  }

  #admit(item: Item, bytes: number): boolean {
    if (!this.#host.admit(item, bytes, this.context)) return false;
    this.#queue.push(item);
    if (!this.#running) void this.#pump();
    return true;
  }

  async #pump(): Promise<void> {
    this.#running = true;
    try {
      while (this.#queue.length > 0 && !this.#host.gone) {
        const next = this.#queue.shift()!;
        this.#host.release(next);
        if (next.kind === 'end') {
          const frame = this.#host.dialect.contextClosed(this.context!, undefined, undefined);
          if (frame) await this.#host.sendControl(frame);
          this.#ended = true;
          this.#queue.length = 0;
          break;
        }
        await this.#handle(next);
        // One at a time, each taken off only once sent: a cancel arriving meanwhile queues behind.
        while (this.#acks.length > 0) {
          await this.#acknowledge(this.#acks[0]!);
          this.#acks.shift();
        }
      }
    } finally {
      this.#running = false;
      this.#settle();
    }
  }

  /** Tells the host when the lane has nothing to do (and whether its context is over). */
  #settle(): void {
    if (this.#running) return;
    if (this.#queue.length === 0 && this.#acks.length === 0) this.#host.idle(this, this.#ended);
  }

  async #handle(item: Exclude<Item, { kind: 'end' }>): Promise<void> {
    let requestId = errorId(item);
    try {
      switch (item.kind) {
        case 'invalid':
          throw item.error;
        case 'empty-flush': {
          await this.#host.sendControls(this.#host.dialect.complete(this.#turn(item.requestId), undefined));
          return;
        }
        case 'utterance': {
          const { utterance } = item;
          await this.#synthesize(utterance.options, utterance, () => utterance.chars, item.receivedAt);
          return;
        }
        case 'request': {
          // Received before any shutdown began (later ones are refused on arrival): finish it.
          const engine = this.#host.lifecycle.requireEngine({ accepted: true });
          const options = parseSessionRequest(item.fields, item.assignedId, {
            config: this.#host.config,
            engine,
          });
          requestId = options.requestId;
          await this.#synthesize(options, options.text, () => options.chars, item.receivedAt);
          return;
        }
      }
    } catch (err) {
      await this.#host.sendError(err, requestId, this.context);
    }
  }

  async #synthesize(
    options: SynthesisOptions,
    text: string | Utterance,
    chars: () => number,
    receivedAt: number,
  ): Promise<void> {
    const host = this.#host;
    const { dialect } = host;
    const engine = host.lifecycle.requireEngine({ accepted: true });
    const controller = new AbortController();
    const turn = this.#turn(options.requestId);
    // Words are timed whenever the model can, so that a cancel can say which were heard; they are
    // sent only where asked for.
    const timed = engine.info.capabilities.timestamps && !options.phonemes;
    const current: RunInFlight = {
      controller,
      requestId: options.requestId,
      ...(typeof text === 'string' ? {} : { utterance: text }),
      sampleRate: options.sampleRate,
      sampleBytes: bytesPerSample(options.format),
      sentSamples: 0,
      sentOutput: 0,
      words: timed ? [] : undefined,
    };
    const sendWords = options.timestamps || dialect.alwaysWords === true;
    this.#current = current;
    try {
      const start = dialect.start(turn);
      if (start) await host.sendControl(start);
      const run = engine.synthesize(
        { ...synthesisRequest(options, text), ...(timed ? { timestamps: true } : {}) },
        {
          format: options.format,
          sampleRate: options.sampleRate,
          // Sent as the chunk's audio is handed over, so it goes out before that audio.
          ...(timed
            ? {
                onWords: (words: readonly WordTiming[]) => {
                  current.words!.push(...words);
                  if (!sendWords || controller.signal.aborted) return;
                  const frame = dialect.words(turn, words);
                  if (frame) void host.sendControl(frame);
                },
              }
            : {}),
          ...(options.phonemeTimestamps && dialect.phonemes
            ? {
                onPhonemes: (phonemes: readonly PhonemeTiming[]) => {
                  if (controller.signal.aborted) return;
                  const frame = dialect.phonemes?.(turn, phonemes);
                  if (frame) void host.sendControl(frame);
                },
              }
            : {}),
          onMark: (name: string, timeS: number) => {
            const frame = dialect.mark(turn, name, timeS);
            if (frame && !controller.signal.aborted) void host.sendControl(frame);
          },
        },
        { signal: controller.signal, startedAt: receivedAt },
      );
      const maxBytes = dialect.maxAudioBytes?.(turn) ?? Infinity;
      /** Where the audio sent so far ends, on the request's clock (exact where bytes count samples). */
      let sentS = 0;
      for await (const bytes of run) {
        const samples = run.samplesSoFar();
        for (let at = 0; at < bytes.length; at += maxBytes) {
          // A cancel or the client's leaving: nothing more of this request is sent.
          if (host.gone || controller.signal.aborted) break;
          const piece = bytes.subarray(at, at + maxBytes);
          const last = at + maxBytes >= bytes.length;
          if (current.sampleBytes > 0) current.sentOutput += piece.length / current.sampleBytes;
          const endS = Math.max(
            sentS,
            current.sampleBytes > 0
              ? current.sentOutput / options.sampleRate
              : last
                ? samples / NATIVE_SAMPLE_RATE
                : sentS,
          );
          const frames = dialect.audio(turn, piece, { startS: sentS, endS });
          sentS = endS;
          // Every frame of the piece is handed over at once: a cut takes effect between pieces.
          const sent = (Array.isArray(frames) ? frames : [frames as OutgoingFrame]).map((frame) =>
            host.send(frame.data, frame.binary),
          );
          if (last) current.sentSamples = samples;
          await Promise.all(sent);
        }
        if (host.gone || controller.signal.aborted) break;
      }
      if (host.gone || controller.signal.aborted) return;
      // A construct still open at the flush: not spoken; said after the rest, before completion.
      if (typeof text !== 'string' && text.flushError !== undefined)
        await host.sendError(text.flushError, options.requestId, this.context);
      const figures = run.figures();
      // An utterance's markup is read as it is written: its warnings come after the options'.
      const warnings = typeof text === 'string' ? options.warnings : [...options.warnings, ...text.warnings];
      await host.sendControls(dialect.complete(turn, figures, warnings));
      recordCompletion(host.log, host.lifecycle.metrics, {
        route: 'ws',
        requestId: options.requestId,
        format: options.format,
        chars: chars(),
        figures,
      });
    } finally {
      this.#current = undefined;
      // A run that failed leaves its utterance unread: drop it, so later appends open a new one.
      if (typeof text !== 'string' && this.#open === text) {
        text.abandon();
        this.#open = undefined;
      }
      dialect.ended?.(turn);
    }
  }
}
