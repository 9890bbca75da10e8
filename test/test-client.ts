/**
 * A WebSocket client for the tests that records every frame in arrival order, whether the session
 * runs against a listening server (test/server) or in-process (test/app/ws-client.ts). Control
 * frames are told from audio by the contract's rule: text frames are control, binary are audio.
 */
import WebSocket from 'ws';

export type Frame = { kind: 'audio'; bytes: Buffer } | { kind: 'control'; message: Record<string, unknown> };

export class TestClient {
  readonly frames: Frame[] = [];
  readonly socket: WebSocket;
  closeCode: number | undefined;
  closeReason = '';
  #waiters: (() => void)[] = [];

  /** Records what `socket` receives; attach before its first frame can arrive. */
  constructor(socket: WebSocket) {
    this.socket = socket;
    socket.on('message', (data: Buffer, isBinary) => {
      this.frames.push(
        isBinary
          ? { kind: 'audio', bytes: data }
          : { kind: 'control', message: JSON.parse(data.toString('utf8')) },
      );
      this.#wake();
    });
    socket.on('close', (code, reason) => {
      this.closeCode = code;
      this.closeReason = reason.toString();
      this.#wake();
    });
  }

  static open(url: string): Promise<TestClient> {
    return new Promise((resolve, reject) => {
      const socket = new WebSocket(url);
      const client = new TestClient(socket);
      socket.once('open', () => resolve(client));
      socket.once('error', reject);
    });
  }

  /** Sends a JSON object or a string as a binary frame (as SageMaker does) or a text frame. */
  send(message: Record<string, unknown> | string | Buffer, binary = true): void {
    const payload = Buffer.isBuffer(message)
      ? message
      : Buffer.from(typeof message === 'string' ? message : JSON.stringify(message));
    this.socket.send(payload, { binary });
  }

  controls(type?: string): Record<string, unknown>[] {
    return this.frames
      .filter((f): f is Extract<Frame, { kind: 'control' }> => f.kind === 'control')
      .map((f) => f.message)
      .filter((m) => type === undefined || m.type === type);
  }

  /** Each request's audio bytes in total, and whether its synthesis_complete came. */
  requests(): { id: string; audio: number; complete: boolean }[] {
    return requestsOf(this.frames).map((r) => ({
      id: r.id,
      audio: r.audio.reduce((n, b) => n + b.length, 0),
      complete: r.complete !== undefined,
    }));
  }

  /** Waits until `predicate` holds (checked after every frame and on close). */
  async until(predicate: (c: TestClient) => boolean, what = 'condition', timeoutMs = 30_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (!predicate(this)) {
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}; frames: ${this.describe()}`);
      if (this.closeCode !== undefined) {
        throw new Error(`socket closed (${this.closeCode}) before ${what}; frames: ${this.describe()}`);
      }
      await this.#change();
    }
  }

  /** Waits for `count` frames of the given control type. */
  untilControls(type: string, count: number): Promise<void> {
    return this.until((c) => c.controls(type).length >= count, `${count} ${type} frame(s)`);
  }

  /** Resolves with the close code once the session is closed. */
  async closed(timeoutMs = 5000): Promise<number> {
    const deadline = Date.now() + timeoutMs;
    while (this.closeCode === undefined) {
      if (Date.now() > deadline) throw new Error(`not closed: ${this.describe()}`);
      await this.#change();
    }
    return this.closeCode;
  }

  describe(): string {
    return this.frames
      .map((f) => (f.kind === 'audio' ? `audio(${f.bytes.length})` : JSON.stringify(f.message)))
      .join(', ')
      .slice(0, 2000);
  }

  close(): void {
    this.socket.close();
  }

  /** A frame, the close, or 50 ms: whichever comes first. */
  #change(): Promise<void> {
    return new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, 50);
      this.#waiters.push(() => {
        clearTimeout(timer);
        resolve();
      });
    });
  }

  #wake(): void {
    for (const w of this.#waiters.splice(0)) w();
  }
}

/** Per-request view of the frames: audio bytes between synthesis_start and synthesis_complete. */
export function requestsOf(
  frames: readonly Frame[],
): { id: string; audio: Buffer[]; complete?: Record<string, unknown> }[] {
  const out: { id: string; audio: Buffer[]; complete?: Record<string, unknown> }[] = [];
  let current: (typeof out)[number] | undefined;
  for (const f of frames) {
    if (f.kind === 'control' && f.message.type === 'synthesis_start') {
      current = { id: String(f.message.request_id), audio: [] };
      out.push(current);
    } else if (f.kind === 'audio') {
      if (!current) throw new Error('audio before synthesis_start');
      current.audio.push(f.bytes);
    } else if (f.kind === 'control' && f.message.type === 'synthesis_complete') {
      if (!current || current.id !== f.message.request_id) throw new Error('synthesis_complete out of order');
      current.complete = f.message;
      current = undefined;
    }
  }
  return out;
}
