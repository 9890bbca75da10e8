/**
 * Admission at the planned per-instance limits: a server with MAX_HTTP_STREAMS streams in flight
 * refuses the next POST at once with 503 `busy` and `Retry-After` (on both POST routes), one with
 * MAX_SESSIONS sessions open closes the next with 1013; and the client toolkit retries such a
 * refusal with backoff, and gives up when told to.
 */
import { request as httpRequest, type IncomingMessage } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TtsSession } from 'kokoro-stream-client';
import { startServer, type TestServer } from './harness.ts';

const LONG = Array.from({ length: 40 }, (_, i) => `This is sentence ${i + 1} of a long answer.`).join(' ');

describe('MAX_HTTP_STREAMS', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startServer({ MAX_HTTP_STREAMS: '1' });
  });
  afterAll(() => server.close());

  /** A POST whose answer has begun and is not read: a stream in flight until it is destroyed. */
  async function heldStream(): Promise<IncomingMessage> {
    const post = httpRequest(`${server.http}/invocations`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
    });
    post.on('error', () => {});
    post.end(JSON.stringify({ text: LONG, format: 'pcm' }));
    const response = await new Promise<IncomingMessage>((resolve) => post.once('response', resolve));
    response.pause();
    return response;
  }

  it('refuses the next stream at once with 503 busy and Retry-After, on both routes, then serves again', async () => {
    const held = await heldStream();
    expect(held.statusCode).toBe(200);

    const refused = await fetch(`${server.http}/invocations`, { method: 'POST', body: 'Hello.' });
    expect(refused.status).toBe(503);
    expect(refused.headers.get('retry-after')).toBe('1');
    expect(await refused.json()).toMatchObject({
      code: 'busy',
      message: expect.stringMatching(/MAX_HTTP_STREAMS/),
    });

    const openai = await fetch(`${server.http}/v1/audio/speech`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'kokoro', input: 'Hello.', voice: 'alloy' }),
    });
    expect(openai.status).toBe(503);
    expect(openai.headers.get('retry-after')).toBe('1');
    expect(((await openai.json()) as { error: { code: string; type: string } }).error).toMatchObject({
      code: 'busy',
      type: 'server_error',
    });

    held.destroy();
    await expect
      .poll(
        async () => (await fetch(`${server.http}/invocations`, { method: 'POST', body: 'Hello.' })).status,
        {
          timeout: 10_000,
        },
      )
      .toBe(200);
  });
});

describe('MAX_SESSIONS and the client toolkit’s retries', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startServer({ MAX_SESSIONS: '1' });
  });
  afterAll(() => server.close());

  it('a session over the limit is closed with 1013; with retries: 0 the client says so at once', async () => {
    const first = await TtsSession.connect(server.ws);
    try {
      await expect(TtsSession.connect(server.ws, { retries: 0 })).rejects.toThrow(/closed with code 1013/);
    } finally {
      first.abort();
    }
  });

  it('retries with backoff until the server admits it, then works', async () => {
    const first = await TtsSession.connect(server.ws);
    setTimeout(() => first.abort(), 400);
    const started = Date.now();
    const second = await TtsSession.connect(server.ws, { retries: 8, retryDelayMs: 100 });
    try {
      // It was admitted only after the first left, so it must have been refused at least once.
      expect(Date.now() - started).toBeGreaterThanOrEqual(400);
      const result = await second.request('Admitted after a retry.');
      expect(result.audio.byteLength).toBeGreaterThan(0);
    } finally {
      await second.close();
    }
  });

  it('gives up after its retries, naming how many attempts it made', async () => {
    const first = await TtsSession.connect(server.ws);
    try {
      await expect(TtsSession.connect(server.ws, { retries: 2, retryDelayMs: 10 })).rejects.toThrow(
        /closed with code 1013.*after 3 attempts/,
      );
    } finally {
      first.abort();
    }
  });
});
