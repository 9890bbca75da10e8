/**
 * The drain in-process: once shutdown begins, new work is refused at the HTTP level (503
 * `shutting_down` with Retry-After, on POSTs and WebSocket upgrades, so that a router can retry it
 * elsewhere) while /ping and /metrics answer; work accepted before it finishes.
 */
import { connect } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { inProcessApp, type InProcessApp } from './in-process.ts';
import { openSession, upgrade } from './ws-client.ts';
import { waitFor } from '../wait.ts';

let running: InProcessApp | undefined;
let open: (() => void) | undefined;
afterEach(async () => {
  open?.();
  await running?.close();
  running = undefined;
  open = undefined;
});

async function held(): Promise<InProcessApp> {
  const hold = new Promise<void>((resolve) => (open = resolve));
  running = await inProcessApp({}, { engine: { hold } });
  return running;
}

const SHUTTING_DOWN = {
  type: 'error',
  code: 'shutting_down',
  error: 'shutting_down',
  message: 'The server is shutting down and takes no new requests; retry on another instance',
};

describe('while draining', () => {
  it('refuses POSTs with 503 shutting_down and Retry-After, in each route’s shape', async () => {
    running = await inProcessApp();
    await running.lifecycle.drain(1000);
    const invocation = await running.app.inject({ method: 'POST', url: '/invocations', payload: 'Hi.' });
    expect(invocation.statusCode).toBe(503);
    expect(invocation.headers['retry-after']).toBe('1');
    expect(invocation.json()).toEqual(SHUTTING_DOWN);
    const phonemize = await running.app.inject({
      method: 'POST',
      url: '/v1/phonemize',
      payload: { text: 'Hi.' },
    });
    expect(phonemize.statusCode).toBe(503);
    expect(phonemize.json()).toEqual(SHUTTING_DOWN);
    const speech = await running.app.inject({
      method: 'POST',
      url: '/v1/audio/speech',
      payload: { model: 'kokoro', input: 'Hi.' },
    });
    expect(speech.statusCode).toBe(503);
    expect(speech.headers['retry-after']).toBe('1');
    expect(speech.json()).toEqual({
      error: { message: SHUTTING_DOWN.message, type: 'server_error', param: null, code: 'shutting_down' },
    });
    expect(running.engine!.requests).toEqual([]);
  });

  it('refuses WebSocket upgrades on both protocols with 503, Retry-After and a JSON body', async () => {
    running = await inProcessApp();
    await running.lifecycle.drain(1000);
    for (const url of ['/invocations-bidirectional-stream', '/v1/speak?model=af_heart']) {
      const refused = await upgrade(running.app, url);
      expect(refused.status).toBe(503);
      expect(refused.headers).toMatchObject({
        'content-type': 'application/json',
        'retry-after': '1',
        connection: 'close',
      });
      expect(refused.body).toEqual(SHUTTING_DOWN);
      expect(refused.client).toBeUndefined();
    }
    expect(running.lifecycle.sessions).toBe(0);
  });

  it('still answers /ping (503 draining) and /metrics', async () => {
    running = await inProcessApp();
    await running.lifecycle.drain(1000);
    const ping = await running.app.inject({ method: 'GET', url: '/ping' });
    expect(ping.statusCode).toBe(503);
    expect(ping.json()).toEqual({ status: 'draining' });
    const metrics = await running.app.inject({ method: 'GET', url: '/metrics?fresh=1' });
    expect(metrics.statusCode).toBe(200);
    expect(metrics.body).toMatch(/tts_active_sessions 0/);
  });
});

describe('work accepted before the drain', () => {
  it('a POST in flight finishes, and the drain waits for it', async () => {
    const app = await held();
    const post = app.app.inject({ method: 'POST', url: '/invocations', payload: { text: 'Accepted.' } });
    await waitFor(() => app.lifecycle.httpStreams > 0, { what: 'the POST to be streaming' });
    const drained = app.lifecycle.drain(5000);
    open!();
    expect((await post).statusCode).toBe(200);
    expect(await drained).toEqual([]);
  });

  it('a session finishes what it received, refuses what comes after, then closes with 1001', async () => {
    const app = await held();
    const session = await openSession(app.app);
    session.send({ text: 'Received before.', request_id: 'before' });
    await session.untilControls('synthesis_start', 1);
    const drained = app.lifecycle.drain(5000);
    session.send({ text: 'Sent after.', request_id: 'after' });
    await session.untilControls('error', 1);
    expect(session.controls('error')).toEqual([
      {
        type: 'error',
        code: 'shutting_down',
        message: 'The server is shutting down and takes no new requests',
        request_id: 'after',
      },
    ]);
    open!();
    expect(await session.closed()).toBe(1001);
    expect(session.closeReason).toBe('server shutting down');
    expect(session.requests()).toEqual([{ id: 'before', audio: expect.any(Number), complete: true }]);
    expect(await drained).toEqual([]);
  });

  it('an utterance still open (no flush yet) is spoken, completed, and its session closed with 1001; one that would open is refused', async () => {
    const app = await held();
    const session = await openSession(app.app);
    // Half a sentence: nothing is complete yet, so nothing is spoken until a flush or the drain.
    session.send({ type: 'append', text: 'Half of a sentence that never', request_id: 'u1' });
    await session.untilControls('synthesis_start', 1);
    expect(session.requests()).toEqual([{ id: 'u1', audio: 0, complete: false }]);
    const drained = app.lifecycle.drain(5000);
    // Refused while the tail is held: messages are taken one per turn of the event loop, so
    // without the hold the drain could finish, and close, before this one is read.
    session.send({ type: 'append', text: 'Too late.', request_id: 'late' });
    await session.untilControls('error', 1);
    open!();
    expect(await session.closed()).toBe(1001);
    expect(await drained).toEqual([]);
    // The tail was spoken: the fake engine's 10 ms of PCM16 per character.
    expect(session.requests()).toEqual([
      { id: 'u1', audio: ('Half of a sentence that never'.length * 24_000 * 2) / 100, complete: true },
    ]);
    expect(session.controls('error')).toEqual([
      expect.objectContaining({ code: 'shutting_down', request_id: 'late' }),
    ]);
    expect(app.engine!.requests).toHaveLength(1);
  });

  it('what is still running when the grace period ends is cut and named', async () => {
    const app = await held();
    const post = app.app
      .inject({ method: 'POST', url: '/invocations', payload: { text: 'Cut.', request_id: 'cut' } })
      .catch((err: unknown) => err);
    await waitFor(() => app.lifecycle.httpStreams > 0, { what: 'the POST to be streaming' });
    expect(await app.lifecycle.drain(50)).toEqual([{ kind: 'http', requestId: 'cut' }]);
    // Its connection is closed under it.
    expect(await post).toMatchObject({ code: 'LIGHT_ECONNRESET' });
  });
});

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

describe('closing the app', () => {
  it('a request that arrives on an open connection while the app closes gets the coded 503', async () => {
    // On a listening socket: what is tested is Fastify's handling of a connection while it closes.
    running = await inProcessApp();
    const app = running;
    await app.app.listen({ port: 0, host: '127.0.0.1' });
    const socket = connect((app.app.server.address() as { port: number }).port, '127.0.0.1');
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
    void app.lifecycle.drain(5000);
    const closing = app.app.close();
    await waitFor(() => !app.app.server.listening, { what: 'the listener to close' });
    const second = JSON.stringify({ text: 'Too late.' });
    socket.write(
      `${first}POST /invocations HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${second.length}\r\n\r\n${second}`,
    );
    await closed;
    await closing;
    running = undefined;
    const answers = responses(Buffer.concat(received)).filter((r) => r.status !== 100);
    expect(answers.map((r) => r.status)).toEqual([503, 503]);
    // The first was admitted before the drain and refused by its handler; the second by the drain.
    // Both carry Retry-After: another instance can take them.
    expect(JSON.parse(answers[0]!.body)).toMatchObject({ code: 'shutting_down', error: 'shutting_down' });
    expect(answers[0]!.headers['retry-after']).toBe('1');
    expect(answers[1]!.headers['retry-after']).toBe('1');
    expect(JSON.parse(answers[1]!.body)).toEqual(SHUTTING_DOWN);
    expect(app.engine!.requests).toEqual([]);
  });
});
