/**
 * Admission in-process, with the engine held so that work stays in flight for as long as a test
 * needs: MAX_HTTP_STREAMS (503 `busy` with Retry-After on both POST routes, the slot freed when a
 * stream ends or its client goes away), MAX_SESSIONS (1013), and a session's own queue
 * (WS_MAX_PENDING: `busy` frames with the `queue_saturated` token, order kept, `close` never refused).
 */
import { request as httpRequest } from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import { inProcessApp, type InProcessApp } from './in-process.ts';
import { openSession, upgrade } from './ws-client.ts';
import { waitFor } from '../wait.ts';

/** A promise the engine waits on, and the function that lets it go. */
function gate(): { hold: Promise<void>; release: () => void } {
  let release!: () => void;
  const hold = new Promise<void>((resolve) => (release = resolve));
  return { hold, release };
}

let running: InProcessApp | undefined;
let open: (() => void) | undefined;
afterEach(async () => {
  open?.();
  await running?.close();
  running = undefined;
  open = undefined;
});

/** Starts an app whose engine holds every sentence until `open` is called. */
async function held(env: Record<string, string>): Promise<InProcessApp> {
  const { hold, release } = gate();
  open = release;
  running = await inProcessApp(env, { engine: { hold } });
  return running;
}

const until = (condition: () => boolean, what: string) => waitFor(condition, { timeoutMs: 5000, what });

describe('MAX_HTTP_STREAMS', () => {
  const speech = (app: InProcessApp) =>
    app.app.inject({
      method: 'POST',
      url: '/v1/audio/speech',
      payload: { model: 'kokoro', input: 'Hello.', voice: 'alloy', response_format: 'pcm' },
    });
  const invocation = (app: InProcessApp) =>
    app.app.inject({
      method: 'POST',
      url: '/invocations',
      payload: 'Hello.',
      headers: { 'content-type': 'text/plain' },
    });

  it('refuses the next stream at once with 503 busy and Retry-After, on both routes, then serves again', async () => {
    const app = await held({ MAX_HTTP_STREAMS: '1' });
    const first = invocation(app);
    await until(() => app.lifecycle.httpStreams === 1, 'the first stream');

    const refused = await invocation(app);
    expect(refused.statusCode).toBe(503);
    expect(refused.headers['retry-after']).toBe('1');
    expect(refused.json()).toMatchObject({
      type: 'error',
      code: 'busy',
      error: 'busy',
      message: expect.stringMatching(
        /^queue_saturated: the server has 1 streams in flight.*MAX_HTTP_STREAMS/,
      ),
    });

    const openai = await speech(app);
    expect(openai.statusCode).toBe(503);
    expect(openai.headers['retry-after']).toBe('1');
    expect(openai.json().error).toMatchObject({ code: 'busy', type: 'server_error', param: null });
    // Refused before any work: the engine was asked once.
    expect(app.engine!.requests).toHaveLength(1);

    open!();
    expect((await first).statusCode).toBe(200);
    expect(app.lifecycle.httpStreams).toBe(0);
    expect((await invocation(app)).statusCode).toBe(200);
    expect((await speech(app)).statusCode).toBe(200);
  });

  it('frees the slot when the client of a stream goes away', async () => {
    const app = await held({ MAX_HTTP_STREAMS: '1' });
    await app.app.listen({ port: 0, host: '127.0.0.1' });
    const address = app.app.server.address() as { port: number };
    const post = httpRequest(`http://127.0.0.1:${address.port}/invocations`, {
      method: 'POST',
      headers: { 'content-type': 'text/plain' },
    });
    post.on('error', () => {});
    post.end('Held until the client leaves.');
    await until(() => app.lifecycle.httpStreams === 1, 'the stream');
    expect((await invocation(app)).statusCode).toBe(503);

    post.destroy();
    // Freed by the client's leaving: the engine is still held.
    await until(() => app.lifecycle.httpStreams === 0, 'the slot');
    expect(
      app.logs().filter((l) => l.msg === 'client went away before the answer was complete'),
    ).toHaveLength(1);
    open!();
    expect((await invocation(app)).statusCode).toBe(200);
  });
});

describe('MAX_SESSIONS', () => {
  it('closes sessions past the limit with 1013, and admits one again when another leaves', async () => {
    running = await inProcessApp({ MAX_SESSIONS: '2' });
    const a = await openSession(running.app);
    const b = await openSession(running.app);
    const c = await openSession(running.app);
    expect(await c.closed()).toBe(1013);
    expect(c.closeReason).toBe('the server has 2 sessions open, its limit');
    expect(c.frames).toEqual([]);

    a.close();
    await a.closed();
    await until(() => running!.lifecycle.sessions === 1, 'the first session to end');
    const d = await openSession(running.app);
    d.send({ text: 'Admitted.', request_id: 'd' });
    await d.untilControls('synthesis_complete', 1);
    expect(d.closeCode).toBeUndefined();
    b.close();
    d.close();
  });

  it('counts sessions of both protocols', async () => {
    running = await inProcessApp({ MAX_SESSIONS: '1' });
    const native = await openSession(running.app);
    const deepgram = await upgrade(running.app, '/v1/speak');
    expect(deepgram.status).toBe(101);
    expect(await deepgram.client!.closed()).toBe(1013);
    native.close();
  });
});

describe('a session’s queue (WS_MAX_PENDING)', () => {
  const BUSY_KEYS = ['code', 'message', 'request_id', 'type'];

  it('gives busy errors past the pending cap, with queue_saturated, and keeps every accepted message in order', async () => {
    const app = await held({ WS_MAX_PENDING: '8' });
    const client = await openSession(app.app);
    for (let i = 0; i < 14; i++) client.send({ text: `Message number ${i}.`, request_id: `q${i}` });
    // One runs (held), eight wait, five are refused.
    await client.untilControls('error', 5);
    const busy = client.controls('error');
    expect(busy.map((b) => b.request_id)).toEqual(['q9', 'q10', 'q11', 'q12', 'q13']);
    for (const b of busy) {
      expect(Object.keys(b).sort()).toEqual(BUSY_KEYS);
      expect(b.code).toBe('busy');
      expect(b.message).toMatch(
        /^queue_saturated: this session already has 8 messages \(\d+ bytes\) waiting/,
      );
    }
    open!();
    await client.untilControls('synthesis_complete', 9);
    const done = client.requests().map((r) => r.id);
    expect(done).toEqual(['q0', 'q1', 'q2', 'q3', 'q4', 'q5', 'q6', 'q7', 'q8']);
    expect(done.length + busy.length).toBe(14);
    client.send({ text: 'After the flood.', request_id: 'after' });
    await client.until((c) => c.requests().some((r) => r.id === 'after' && r.complete), 'after');
    expect(client.closeCode).toBeUndefined();
    client.close();
  });

  it('never refuses {"type":"close"} as busy, and ignores everything after it', async () => {
    const app = await held({ WS_MAX_PENDING: '8' });
    const client = await openSession(app.app);
    for (let i = 0; i < 20; i++) client.send({ text: `Flood ${i}.`, request_id: `f${i}` });
    client.send({ type: 'close' });
    for (let i = 0; i < 30; i++) client.send({ text: `After close ${i}.`, request_id: `late${i}` });
    await client.untilControls('error', 11);
    open!();
    expect(await client.closed()).toBe(1000);
    const busy = client.controls('error');
    // Every busy error names a message sent before the close; none answers a later one.
    expect(busy.map((b) => b.request_id)).toEqual(Array.from({ length: 11 }, (_, i) => `f${i + 9}`));
    for (const b of busy) expect(b).toMatchObject({ code: 'busy' });
    const done = client.requests().map((r) => r.id);
    expect(done).toEqual(Array.from({ length: 9 }, (_, i) => `f${i}`));
    expect(done.length + busy.length).toBe(20);
    expect(client.describe()).not.toMatch(/late\d/);
    expect(app.engine!.requests).toHaveLength(9);
  });
});
