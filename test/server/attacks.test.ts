/**
 * Attacks by a hostile or clumsy client, scaled down to run in CI, kept so that each hole stays
 * closed. Each test proves a clear answer (or a bounded cut) and that the server goes on serving.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TestClient, startServer, type TestServer } from './harness.ts';

describe('hostile fields', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startServer();
  });
  afterAll(() => server.close());

  // Once quadratic: "a" + 60,000 spaces + "b" held the event loop for 8.6 s before voice_not_found.
  const hostileVoice = `a${' '.repeat(60_000)}b`;

  it('a huge voice spec is refused by its length, before it is parsed (POST)', async () => {
    const response = await fetch(`${server.http}/invocations`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ text: 'Hello.', voice: hostileVoice }),
    });
    expect(response.status).toBe(400);
    expect(await response.json()).toMatchObject({
      code: 'invalid_option',
      message: expect.stringMatching(/voice is 60002 characters long; .* at most 256/),
    });
    const ping = await fetch(`${server.http}/ping`);
    expect(ping.status).toBe(200);
  });

  it('a huge voice spec gets an error frame, and the session goes on (WebSocket)', async () => {
    const client = await TestClient.open(server.ws);
    client.send({ text: 'Hello.', voice: hostileVoice, request_id: 'v1' });
    client.send({ text: 'Still here.', request_id: 'v2' });
    await client.untilControls('synthesis_complete', 1);
    expect(client.controls('error')).toEqual([
      expect.objectContaining({ code: 'invalid_option', request_id: 'v1' }),
    ]);
    expect(client.controls('synthesis_complete')[0]).toMatchObject({ request_id: 'v2' });
    client.close();
  });
});
