/**
 * WebSocket handshakes and sessions with the app in-process. The upgrade request is emitted on the
 * app's server as Node emits it, with one end of an in-memory socket pair; the other end is the
 * client's: a refused handshake is read as its status, headers and JSON body, an accepted one
 * becomes a `ws` client. @fastify/websocket's `injectWS` is not used: its request has no socket
 * (the pipelining limit in app.ts keys on it), and it shows neither a refusal's body nor the
 * handshake's headers (the subprotocol the server selected).
 */
import { randomBytes } from 'node:crypto';
import { IncomingMessage } from 'node:http';
import type { Socket } from 'node:net';
import { Duplex } from 'node:stream';
import type { FastifyInstance } from 'fastify';
import WebSocket from 'ws';

/** One end of an in-memory socket: its peer reads what it writes, and sees its end or its loss. */
class SocketEnd extends Duplex {
  peer: SocketEnd | undefined;

  override _read(): void {}

  override _write(chunk: Buffer, _encoding: BufferEncoding, done: (err?: Error | null) => void): void {
    if (this.peer && !this.peer.destroyed && !this.peer.readableEnded) this.peer.push(chunk);
    done();
  }

  override _final(done: (err?: Error | null) => void): void {
    this.#endPeer();
    done();
  }

  override _destroy(err: Error | null, done: (err?: Error | null) => void): void {
    this.#endPeer();
    done(err);
  }

  #endPeer(): void {
    if (this.peer && !this.peer.destroyed && !this.peer.readableEnded) this.peer.push(null);
  }
}

export type Frame = { kind: 'audio'; bytes: Buffer } | { kind: 'control'; message: Record<string, unknown> };

/** A session's client: every frame in arrival order (text frames are control, binary are audio). */
export class SessionClient {
  readonly frames: Frame[] = [];
  readonly socket: WebSocket;
  closeCode: number | undefined;
  closeReason = '';
  #waiters: (() => void)[] = [];

  constructor(socket: WebSocket) {
    this.socket = socket;
    socket.on('message', (data: Buffer, binary) => {
      this.frames.push(
        binary ? { kind: 'audio', bytes: data } : { kind: 'control', message: JSON.parse(data.toString()) },
      );
      this.#wake();
    });
    socket.on('close', (code, reason) => {
      this.closeCode = code;
      this.closeReason = reason.toString();
      this.#wake();
    });
  }

  /** Sends a JSON object or a string as a binary frame (as SageMaker does), or a text frame. */
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

  /** Audio bytes between each synthesis_start and its synthesis_complete, by request id. */
  requests(): { id: string; audio: number; complete: boolean }[] {
    const out: { id: string; audio: number; complete: boolean }[] = [];
    for (const f of this.frames) {
      const current = out.at(-1);
      if (f.kind === 'audio') {
        if (!current || current.complete) throw new Error('audio outside a request');
        current.audio += f.bytes.length;
      } else if (f.message.type === 'synthesis_start') {
        out.push({ id: String(f.message.request_id), audio: 0, complete: false });
      } else if (f.message.type === 'synthesis_complete') {
        if (!current || current.id !== f.message.request_id)
          throw new Error('synthesis_complete out of order');
        current.complete = true;
      }
    }
    return out;
  }

  /** Waits until `predicate` holds; checked after every frame and on close. */
  async until(predicate: (c: SessionClient) => boolean, what: string, timeoutMs = 5000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (!predicate(this)) {
      if (this.closeCode !== undefined) throw new Error(`closed (${this.closeCode}) before ${what}`);
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}: ${this.describe()}`);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, 50);
        this.#waiters.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
  }

  untilControls(type: string, count: number): Promise<void> {
    return this.until((c) => c.controls(type).length >= count, `${count} ${type} frame(s)`);
  }

  /** Resolves with the close code once the session is closed. */
  async closed(timeoutMs = 5000): Promise<number> {
    const deadline = Date.now() + timeoutMs;
    while (this.closeCode === undefined) {
      if (Date.now() > deadline) throw new Error(`not closed: ${this.describe()}`);
      await new Promise((resolve) => setTimeout(resolve, 20));
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

  #wake(): void {
    for (const wake of this.#waiters.splice(0)) wake();
  }
}

export interface Handshake {
  readonly status: number;
  /** The response's headers, names in lower case. */
  readonly headers: Readonly<Record<string, string>>;
  /** A refusal's body, parsed as JSON (undefined when it has none). */
  readonly body: Record<string, unknown> | undefined;
  /** The session, when the server switched protocols. */
  readonly client: SessionClient | undefined;
}

/** ws's constructor as @fastify/websocket's `injectWS` calls it: a client given its socket later. */
type ClientConstructor = new (
  address: null,
  protocols: undefined,
  options: { closeTimeout: number },
) => WebSocket;

interface ClientSocket {
  _isServer: boolean;
  setSocket(socket: Duplex, head: Buffer, options: { maxPayload: number }): void;
}

/** Opens `url` as a WebSocket with these request headers (Sec-WebSocket-Protocol included). */
export function upgrade(
  app: FastifyInstance,
  url: string,
  headers: Readonly<Record<string, string>> = {},
): Promise<Handshake> {
  const serverEnd = new SocketEnd();
  const clientEnd = new SocketEnd();
  serverEnd.peer = clientEnd;
  clientEnd.peer = serverEnd;
  const request = new IncomingMessage(serverEnd as unknown as Socket);
  Object.assign(request, {
    method: 'GET',
    url,
    httpVersion: '1.1',
    httpVersionMajor: 1,
    httpVersionMinor: 1,
    headers: {
      host: 'localhost',
      connection: 'Upgrade',
      upgrade: 'websocket',
      'sec-websocket-version': '13',
      'sec-websocket-key': randomBytes(16).toString('base64'),
      ...Object.fromEntries(Object.entries(headers).map(([k, v]) => [k.toLowerCase(), v])),
    },
  });

  return new Promise((resolve, reject) => {
    let received = Buffer.alloc(0);
    const timer = setTimeout(() => reject(new Error(`no answer to the upgrade of ${url}`)), 5000);
    const finish = (handshake: Handshake) => {
      clearTimeout(timer);
      clientEnd.off('data', onData);
      resolve(handshake);
    };
    const onData = (chunk: Buffer) => {
      received = Buffer.concat([received, chunk]);
      const end = received.indexOf('\r\n\r\n');
      if (end < 0) return;
      const [statusLine = '', ...lines] = received.subarray(0, end).toString('latin1').split('\r\n');
      const status = Number(statusLine.split(' ')[1]);
      const answer = Object.fromEntries(
        lines.map((l) => [l.slice(0, l.indexOf(':')).toLowerCase(), l.slice(l.indexOf(':') + 1).trim()]),
      );
      const rest = received.subarray(end + 4);
      if (status === 101) {
        // The client's listeners are attached before its socket, so no early frame is missed.
        const socket = new (WebSocket as unknown as ClientConstructor)(null, undefined, {
          closeTimeout: 1000,
        });
        const client = new SessionClient(socket);
        const raw = socket as unknown as ClientSocket;
        raw._isServer = false; // a client masks what it sends
        finish({ status, headers: answer, body: undefined, client });
        raw.setSocket(clientEnd, rest, { maxPayload: 0 });
        return;
      }
      const length = Number(answer['content-length'] ?? 0);
      if (rest.length < length) return;
      const text = rest.subarray(0, length).toString();
      finish({ status, headers: answer, body: text ? JSON.parse(text) : undefined, client: undefined });
    };
    clientEnd.on('data', onData);
    app.server.emit('upgrade', request, serverEnd, Buffer.alloc(0));
  });
}

/** Opens a session that the server must accept. */
export async function openSession(
  app: FastifyInstance,
  url = '/invocations-bidirectional-stream',
  headers: Readonly<Record<string, string>> = {},
): Promise<SessionClient> {
  const handshake = await upgrade(app, url, headers);
  if (!handshake.client)
    throw new Error(`upgrade refused: ${handshake.status} ${JSON.stringify(handshake.body)}`);
  return handshake.client;
}
