/**
 * The client toolkit against a server at its MAX_SESSIONS: a session over the limit is closed with
 * 1013, and the toolkit retries such a refusal with backoff, and gives up when told to. The
 * server's own admission (MAX_HTTP_STREAMS, MAX_SESSIONS, a session's queue) is tested in-process
 * (test/app/admission.test.ts).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TtsSession } from 'kokoro-stream-client';
import { startServer, type TestServer } from './harness.ts';

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
