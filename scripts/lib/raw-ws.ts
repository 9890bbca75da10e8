/**
 * A bare WebSocket session for the benchmarks: raw JSON messages out, frames in with their arrival
 * time, and waiting for the next frame that matches. No client toolkit in between, so a bench
 * measures the wire protocol itself.
 */
import WebSocket from 'ws';

/** One frame from the server: audio (binary) or a control frame (text, parsed). */
export interface RawFrame {
  /** performance.now() when it arrived. */
  readonly at: number;
  readonly binary: boolean;
  readonly bytes: number;
  /** The control frame's JSON object; undefined for audio. */
  readonly message: Record<string, unknown> | undefined;
}

interface Waiter {
  readonly match: (frame: RawFrame) => boolean;
  readonly resolve: (frame: RawFrame) => void;
  readonly reject: (err: Error) => void;
  readonly timer: NodeJS.Timeout;
}

export class RawWsSession {
  readonly #socket: WebSocket;
  #waiters: Waiter[] = [];
  readonly #listeners = new Set<(frame: RawFrame) => void>();
  #closed: Error | undefined;

  private constructor(socket: WebSocket) {
    this.#socket = socket;
    socket.on('message', (data: Buffer, isBinary: boolean) => this.#receive(data, isBinary));
    socket.on('close', (code) => this.#fail(new Error(`the session closed (${code})`)));
    socket.on('error', (err) => this.#fail(err));
  }

  /** Opens a session on `url` (ws://…/invocations-bidirectional-stream). */
  static open(url: string): Promise<RawWsSession> {
    return new Promise((resolve, reject) => {
      const socket = new WebSocket(url);
      socket.once('open', () => resolve(new RawWsSession(socket)));
      socket.once('error', reject);
    });
  }

  /**
   * Sends one JSON message as a binary frame (as SageMaker delivers them); returns the time just
   * before the write. Not after: on two cores the write can yield to the server, which may answer
   * before the call returns.
   */
  send(message: Record<string, unknown>): number {
    const data = Buffer.from(JSON.stringify(message));
    const at = performance.now();
    this.#socket.send(data);
    return at;
  }

  /** Calls `listener` with every frame from now on; returns the function that stops it. */
  onFrame(listener: (frame: RawFrame) => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  /**
   * The next frame (arriving after this call) that `match` accepts. Call it before sending what
   * the frame answers, or in the same tick: frames are only ever handled on a later tick.
   */
  next(match: (frame: RawFrame) => boolean, timeoutMs = 120_000, what = 'a frame'): Promise<RawFrame> {
    if (this.#closed) return Promise.reject(this.#closed);
    return new Promise((resolve, reject) => {
      const waiter: Waiter = {
        match,
        resolve,
        reject,
        timer: setTimeout(() => {
          this.#waiters = this.#waiters.filter((w) => w !== waiter);
          reject(new Error(`no ${what} within ${timeoutMs} ms`));
        }, timeoutMs),
      };
      this.#waiters.push(waiter);
    });
  }

  /** Closes the socket (the server stops whatever it was doing for this session). */
  close(): Promise<void> {
    if (this.#socket.readyState === WebSocket.CLOSED) return Promise.resolve();
    return new Promise((resolve) => {
      this.#socket.once('close', () => resolve());
      this.#socket.close();
    });
  }

  #receive(data: Buffer, binary: boolean): void {
    const frame: RawFrame = {
      at: performance.now(),
      binary,
      bytes: data.length,
      message: binary ? undefined : (JSON.parse(data.toString()) as Record<string, unknown>),
    };
    for (const listener of this.#listeners) listener(frame);
    const matched = this.#waiters.filter((w) => w.match(frame));
    if (matched.length === 0) return;
    this.#waiters = this.#waiters.filter((w) => !matched.includes(w));
    for (const w of matched) {
      clearTimeout(w.timer);
      w.resolve(frame);
    }
  }

  #fail(err: Error): void {
    this.#closed ??= err;
    for (const w of this.#waiters.splice(0)) {
      clearTimeout(w.timer);
      w.reject(err);
    }
  }
}

/** A matcher for the control frame of `type` (and of `requestId`, when given). */
export function control(type: string, requestId?: string): (frame: RawFrame) => boolean {
  return (f) => f.message?.type === type && (requestId === undefined || f.message.request_id === requestId);
}

/** A matcher for an error frame about `requestId` (or any error frame). */
export const errorFrame = (requestId?: string) => control('error', requestId);
