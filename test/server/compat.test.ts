/**
 * Compatibility with the reference container's clients, where it needs a real engine: refusal
 * tokens in a session's busy and stale answers, and `error` in the 503s of a drain.
 */
import { request as httpRequest } from 'node:http';
import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { TestClient, startServer, type TestServer } from './harness.ts';

interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: Buffer;
}

/** A POST with exactly the given Content-Type, or none (fetch would add one). */
function post(server: TestServer, body: string, contentType: string | undefined): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(`${server.http}/invocations`, {
      method: 'POST',
      headers: contentType ? { 'content-type': contentType } : {},
    });
    req.on('response', (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () =>
        resolve({ status: res.statusCode!, headers: res.headers, body: Buffer.concat(chunks) }),
      );
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(body);
  });
}

const json = (answer: Answer) => JSON.parse(answer.body.toString('utf8')) as Record<string, unknown>;

/** A refused WebSocket upgrade: its status and JSON body. */
function refusedUpgrade(url: string): Promise<{ status: number; body: Record<string, unknown> }> {
  return new Promise((resolve, reject) => {
    const socket = new WebSocket(url);
    socket.once('open', () => reject(new Error('the upgrade was accepted')));
    socket.once('error', () => {});
    socket.once('unexpected-response', (_req, res) => {
      let body = '';
      res.on('data', (d: Buffer) => (body += d.toString()));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: JSON.parse(body) }));
    });
  });
}

/** The HTTP/1.1 responses in `bytes`, in order (interim 100s included; bodies by Content-Length). */
function responses(bytes: Buffer): { status: number; headers: Record<string, string>; body: string }[] {
  const out: { status: number; headers: Record<string, string>; body: string }[] = [];
  let text = bytes.toString('latin1');
  while (text.length > 0) {
    const end = text.indexOf('\r\n\r\n');
    const [statusLine, ...lines] = text.slice(0, end).split('\r\n');
    const headers = Object.fromEntries(
      lines.map((l) => [l.slice(0, l.indexOf(':')).toLowerCase(), l.slice(l.indexOf(':') + 1).trim()]),
    );
    const length = Number(headers['content-length'] ?? 0);
    out.push({
      status: Number(statusLine!.split(' ')[1]),
      headers,
      body: text.slice(end + 4, end + 4 + length),
    });
    text = text.slice(end + 4 + length);
  }
  return out;
}

describe('refusal tokens in error messages', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startServer({ WS_MAX_PENDING: '1' });
  });
  afterAll(() => server.close());

  it('a session over its queue gets busy frames whose message starts with queue_saturated', async () => {
    const client = await TestClient.open(server.ws);
    // One runs, one waits, two are refused: few enough not to count as a flood (closed with 1008).
    const ids = Array.from({ length: 4 }, (_, i) => `q${i}`);
    for (const id of ids) client.send({ text: 'One. Two. Three. Four.', request_id: id });
    await client.until(
      (c) => c.controls('synthesis_complete').length + c.controls('error').length === ids.length,
      'an answer to every message',
    );
    const errors = client.controls('error');
    expect(errors.length).toBeGreaterThan(0);
    for (const error of errors) {
      expect(Object.keys(error).sort()).toEqual(['code', 'message', 'request_id', 'type']);
      expect(error.code).toBe('busy');
      expect(error.message).toMatch(/^queue_saturated: this session already has \d+ messages/);
    }
    client.close();
  });
});

describe('`error` in HTTP error bodies', () => {
  it('while draining, a POST and a WebSocket upgrade get 503 with error: shutting_down', async () => {
    const server = await startServer();
    try {
      await server.lifecycle.drain(1000);
      const answer = await post(server, 'Hi.', 'text/plain');
      expect(answer.status).toBe(503);
      expect(json(answer)).toMatchObject({ code: 'shutting_down', error: 'shutting_down' });
      const upgrade = await refusedUpgrade(server.ws);
      expect(upgrade.status).toBe(503);
      expect(upgrade.body).toMatchObject({ type: 'error', code: 'shutting_down', error: 'shutting_down' });
    } finally {
      await server.close();
    }
  });

  it('a request that arrives while the app closes gets the coded 503, not an uncoded one', async () => {
    const server = await startServer();
    const socket = connect(Number(new URL(server.http).port), '127.0.0.1');
    const received: Buffer[] = [];
    socket.on('data', (d: Buffer) => received.push(d));
    const closed = new Promise<void>((resolve) => socket.once('close', () => resolve()));
    await new Promise((resolve) => socket.once('connect', resolve));
    // A request whose body is still coming keeps the connection busy while the app closes.
    const first = 'Hello.';
    socket.write(
      `POST /invocations HTTP/1.1\r\nHost: x\r\nContent-Type: text/plain\r\nContent-Length: ${first.length}\r\nExpect: 100-continue\r\n\r\n`,
    );
    await new Promise((resolve) => socket.once('data', resolve)); // 100 Continue: the server has it
    void server.lifecycle.drain(5000);
    const closing = server.app.close();
    while (server.app.server.listening) await new Promise((resolve) => setTimeout(resolve, 10));
    const second = JSON.stringify({ text: 'Too late.' });
    socket.write(
      `${first}POST /invocations HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${second.length}\r\n\r\n${second}`,
    );
    await closed;
    await closing;
    await server.engine?.dispose();
    const answers = responses(Buffer.concat(received)).filter((r) => r.status !== 100);
    expect(answers.map((r) => r.status)).toEqual([503, 503]);
    expect(answers[1]!.headers['retry-after']).toBe('1');
    expect(JSON.parse(answers[1]!.body)).toMatchObject({
      type: 'error',
      code: 'shutting_down',
      error: 'shutting_down',
    });
  });
});
