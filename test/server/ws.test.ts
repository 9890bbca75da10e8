import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TestClient, requestsOf, startServer, type TestServer } from './harness.ts';

let server: TestServer;
beforeAll(async () => {
  server = await startServer();
});
afterAll(() => server.close());

const BYTES_PER_SECOND = 24_000 * 2;

describe('WS /invocations-bidirectional-stream', () => {
  it('answers several binary-frame requests strictly in order, each with start, audio and completion', async () => {
    const client = await TestClient.open(server.ws);
    const texts = ['Hello there.', 'This is the second message. It has two sentences.', 'Third, and last!'];
    texts.forEach((text, i) =>
      client.send({ text, voice: 'af_heart', request_id: `r${i}`, request_timestamp: Date.now() / 1000 }),
    );
    await client.untilControls('synthesis_complete', 3);
    const requests = requestsOf(client.frames);
    expect(requests.map((r) => r.id)).toEqual(['r0', 'r1', 'r2']);
    for (const r of requests) {
      const bytes = r.audio.reduce((n, b) => n + b.length, 0);
      expect(bytes).toBeGreaterThan(0);
      for (const b of r.audio) expect(b.length % 2).toBe(0);
      expect(r.complete!.total_duration_s).toBeCloseTo(bytes / BYTES_PER_SECOND, 3);
      expect(r.complete!.elapsed_s).toBeGreaterThan(0);
    }
    // Two sentences give two audio frames: audio is sent per sentence, not per request.
    expect(requests[1]!.audio.length).toBeGreaterThanOrEqual(2);
    client.close();
  });

  it('accepts text frames and plain text, including text that starts with a bracket', async () => {
    const client = await TestClient.open(server.ws);
    client.send({ text: 'A text frame.', request_id: 'json-text' }, false);
    client.send('[laughs] Plain text in a binary frame.', true);
    client.send('Plain text in a text frame.', false);
    await client.untilControls('synthesis_complete', 3);
    const requests = requestsOf(client.frames);
    expect(requests[0]!.id).toBe('json-text');
    expect(requests.every((r) => r.audio.length > 0)).toBe(true);
    client.close();
  });

  it('closes with 1000 on {"type":"Close"} only after finishing what came before, ignoring what came after', async () => {
    const client = await TestClient.open(server.ws);
    client.send({ text: 'First before close.', request_id: 'a' });
    client.send({ text: 'Second before close.', request_id: 'b' });
    client.send({ type: 'Close' });
    client.send({ text: 'After close: never spoken.', request_id: 'c' });
    await client.until((c) => c.closeCode !== undefined, 'close');
    expect(client.closeCode).toBe(1000);
    const requests = requestsOf(client.frames);
    expect(requests.map((r) => [r.id, r.complete !== undefined])).toEqual([
      ['a', true],
      ['b', true],
    ]);
  });

  it('keeps the session open when nothing asks it to close', async () => {
    const client = await TestClient.open(server.ws);
    client.send({ text: 'One.' });
    await client.untilControls('synthesis_complete', 1);
    await new Promise((r) => setTimeout(r, 300));
    expect(client.closeCode).toBeUndefined();
    client.send({ text: 'Two.' });
    await client.untilControls('synthesis_complete', 2);
    client.close();
  });

  it('reassembles fragmented messages (continuation frames)', async () => {
    const client = await TestClient.open(server.ws);
    const payload = Buffer.from(JSON.stringify({ text: 'Fragments make a whole.', request_id: 'frag' }));
    const parts = [payload.subarray(0, 5), payload.subarray(5, 20), payload.subarray(20)];
    parts.forEach((part, i) => client.socket.send(part, { binary: true, fin: i === parts.length - 1 }));
    await client.untilControls('synthesis_complete', 1);
    expect(requestsOf(client.frames)[0]!.id).toBe('frag');
    client.close();
  });

  it('answers RFC 6455 pings with pongs', async () => {
    const client = await TestClient.open(server.ws);
    const pong = new Promise<Buffer>((resolve) => client.socket.once('pong', resolve));
    client.socket.ping(Buffer.from('are you there'));
    expect((await pong).toString()).toBe('are you there');
    client.close();
  });
});

describe('a WS client that goes away', () => {
  it('stops the work done for it, queued messages included', async () => {
    const client = await TestClient.open(server.ws);
    const before = server.engine!.load().completed;
    const long = Array.from({ length: 30 }, (_, i) => `Sentence ${i + 1} is here to take time.`).join(' ');
    client.send({ text: long });
    client.send({ text: long });
    await client.until((c) => c.frames.some((f) => f.kind === 'audio'), 'first audio');
    client.socket.terminate();
    const deadline = Date.now() + 10_000;
    for (;;) {
      const load = server.engine!.load();
      if (load.busy === 0 && load.queued === 0) break;
      if (Date.now() > deadline) throw new Error(`still busy: ${JSON.stringify(load)}`);
      await new Promise((r) => setTimeout(r, 20));
    }
    // 60 sentences were asked for; only those in flight at the disconnect were finished.
    expect(server.engine!.load().completed - before).toBeLessThan(5);
  });
});
