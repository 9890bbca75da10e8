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
import { TestClient } from '../test-client.ts';

export type { TestClient } from '../test-client.ts';

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

export interface Handshake {
  readonly status: number;
  /** The response's headers, names in lower case. */
  readonly headers: Readonly<Record<string, string>>;
  /** A refusal's body, parsed as JSON (undefined when it has none). */
  readonly body: Record<string, unknown> | undefined;
  /** The session, when the server switched protocols. */
  readonly client: TestClient | undefined;
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
        const client = new TestClient(socket);
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
): Promise<TestClient> {
  const handshake = await upgrade(app, url, headers);
  if (!handshake.client)
    throw new Error(`upgrade refused: ${handshake.status} ${JSON.stringify(handshake.body)}`);
  return handshake.client;
}
