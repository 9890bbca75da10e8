import { request as httpRequest } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TestClient, startServer, type TestServer } from './harness.ts';

let server: TestServer;
beforeAll(async () => {
  server = await startServer({ MAX_BODY_BYTES: '65536' });
});
afterAll(() => server.close());

interface Response {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  /** Body as received, one entry per chunk the socket delivered. */
  chunks: Buffer[];
  body: Buffer;
  /** True when the chunked stream ended with its final marker. */
  complete: boolean;
}

/** A plain HTTP client that records the body as it streams in. */
function post(
  path: string,
  body: string | Buffer,
  contentType: string | undefined,
  extraHeaders: Record<string, string> = {},
): Promise<Response> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(`${server.http}${path}`, {
      method: 'POST',
      headers: { ...(contentType ? { 'content-type': contentType } : {}), ...extraHeaders },
    });
    req.on('response', (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () =>
        resolve({
          status: res.statusCode!,
          headers: res.headers,
          chunks,
          body: Buffer.concat(chunks),
          complete: res.complete,
        }),
      );
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(body);
  });
}

const json = (value: unknown) => JSON.stringify(value);

describe('GET /ping', () => {
  it('answers 200 with the provider once warm, on GET and POST', async () => {
    const res = await fetch(`${server.http}/ping`);
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ status: 'healthy', provider: 'cpu', workers: 1 });
    expect((await fetch(`${server.http}/ping`, { method: 'POST' })).status).toBe(200);
  });

  it('answers 503 while the model is loading, and invocations say so', async () => {
    const cold = await startServer({}, { ready: false });
    try {
      const res = await fetch(`${cold.http}/ping`);
      expect(res.status).toBe(503);
      expect(await res.json()).toEqual({ status: 'starting' });
      const inv = await fetch(`${cold.http}/invocations`, {
        method: 'POST',
        headers: { 'content-type': 'text/plain' },
        body: 'Hi.',
      });
      expect(inv.status).toBe(503);
      expect(await inv.json()).toMatchObject({
        code: 'not_ready',
        message: expect.stringMatching(/still loading/),
      });
    } finally {
      await cold.close();
    }
  });

  it('is answered while a long synthesis runs (ordering, not timing)', async () => {
    const client = await TestClient.open(server.ws);
    const long = Array.from(
      { length: 12 },
      (_, i) => `This is sentence number ${i + 1} of a long paragraph.`,
    ).join(' ');
    client.send({ text: long, request_id: 'long' });
    await client.until((c) => c.frames.some((f) => f.kind === 'audio'), 'first audio');
    const ping = await fetch(`${server.http}/ping`);
    expect(ping.status).toBe(200);
    // The ping came back while the paragraph was still being synthesized.
    expect(client.controls('synthesis_complete')).toEqual([]);
    await client.untilControls('synthesis_complete', 1);
    client.close();
  });
});

describe('POST /invocations', () => {
  it('streams WAV by default, sentence by sentence, with a streaming header', async () => {
    const text = 'The first sentence. The second sentence. A third one.';
    const res = await post('/invocations', json({ text, request_id: 'p1' }), 'application/json');
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toBe('audio/wav');
    expect(res.headers['transfer-encoding']).toBe('chunked');
    expect(res.headers['x-request-id']).toBe('p1');
    expect(res.complete).toBe(true);
    expect(res.body.toString('ascii', 0, 4)).toBe('RIFF');
    expect(res.body.readUInt32LE(40)).toBe(0xffffffff);
    expect((res.body.length - 44) % 2).toBe(0);
    expect(res.body.length).toBeGreaterThan(44 + 1000);
  });

  it('synthesizes text/plain with defaults', async () => {
    const res = await post('/invocations', 'Plain text body.', 'text/plain; charset=utf-8');
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toBe('audio/wav');
  });

  it('streams raw PCM when asked, with whole samples', async () => {
    const res = await post(
      '/invocations',
      json({ text: 'Raw samples please.', format: 'pcm' }),
      'application/json',
    );
    expect(res.headers['content-type']).toBe('audio/pcm;rate=24000;encoding=s16le;channels=1');
    expect(res.body.length % 2).toBe(0);
    expect(res.body.length).toBeGreaterThan(0);
  });

  it('returns one complete WAV with real sizes for stream:false', async () => {
    const res = await post(
      '/invocations',
      json({ text: 'One piece. Two pieces.', stream: false }),
      'application/json',
    );
    expect(res.status).toBe(200);
    expect(res.headers['content-length']).toBe(String(res.body.length));
    const dataBytes = res.body.readUInt32LE(40);
    expect(res.body.length).toBe(44 + dataBytes);
    expect(res.body.readUInt32LE(4)).toBe(36 + dataBytes);
  });

  it('gives the same audio streamed and whole (same text, same voice)', async () => {
    const text = 'Determinism matters. So does streaming.';
    const streamed = await post('/invocations', json({ text, format: 'pcm' }), 'application/json');
    const whole = await post(
      '/invocations',
      json({ text, format: 'pcm', stream: false }),
      'application/json',
    );
    expect(streamed.body.equals(whole.body)).toBe(true);
  });

  it('speaks slower at speed 0.5 and faster at 2', async () => {
    const size = async (speed: number) =>
      (
        await post(
          '/invocations',
          json({ text: 'Speed test sentence.', format: 'pcm', speed, stream: false }),
          'application/json',
        )
      ).body.length;
    const [slow, normal, fast] = [await size(0.5), await size(1), await size(2)];
    expect(slow).toBeGreaterThan(normal);
    expect(fast).toBeLessThan(normal);
  });

  it('accepts voice blends', async () => {
    const res = await post(
      '/invocations',
      json({ text: 'Blended.', voice: 'af_bella(2)+af_sky(1)', format: 'pcm' }),
      'application/json',
    );
    expect(res.status).toBe(200);
    const single = await post(
      '/invocations',
      json({ text: 'Blended.', voice: 'af_bella', format: 'pcm' }),
      'application/json',
    );
    expect(res.body.equals(single.body)).toBe(false);
  });
});

describe('POST /invocations bad input: a clear 4xx before any audio', () => {
  const cases: {
    name: string;
    body: string | Buffer;
    type?: string;
    status: number;
    code: string;
    message: RegExp;
  }[] = [
    {
      name: 'an unsupported content type',
      body: 'x',
      type: 'application/xml',
      status: 415,
      code: 'unsupported_media_type',
      message: /application\/json.*text\/plain/,
    },
    {
      name: 'no content type',
      body: 'x',
      type: undefined,
      status: 415,
      code: 'unsupported_media_type',
      message: /Content-Type/,
    },
    {
      name: 'broken JSON',
      body: '{"text": ',
      type: 'application/json',
      status: 400,
      code: 'invalid_json',
      message: /not valid JSON/,
    },
    {
      name: 'a JSON array',
      body: '["Hello"]',
      type: 'application/json',
      status: 400,
      code: 'bad_request',
      message: /should be an object.*got an array/,
    },
    {
      name: 'a JSON string',
      body: '"Hello"',
      type: 'application/json',
      status: 400,
      code: 'bad_request',
      message: /should be an object.*got string/,
    },
    {
      name: 'JSON null',
      body: 'null',
      type: 'application/json',
      status: 400,
      code: 'bad_request',
      message: /got null/,
    },
    {
      name: 'no text',
      body: json({ voice: 'af_heart' }),
      type: 'application/json',
      status: 400,
      code: 'bad_request',
      message: /has no text/,
    },
    {
      name: 'empty text',
      body: json({ text: '' }),
      type: 'application/json',
      status: 400,
      code: 'empty_text',
      message: /text is empty/,
    },
    {
      name: 'empty plain text',
      body: '  ',
      type: 'text/plain',
      status: 400,
      code: 'empty_text',
      message: /text is empty/,
    },
    {
      name: 'text over the limit',
      body: json({ text: '😀'.repeat(4097) }),
      type: 'application/json',
      status: 413,
      code: 'text_too_long',
      message: /4097 characters, over the limit of 4096/,
    },
    {
      name: 'a body over the size limit',
      body: json({ text: 'a'.repeat(70_000) }),
      type: 'application/json',
      status: 413,
      code: 'payload_too_large',
      message: /65536-byte limit/,
    },
    {
      name: 'an unknown voice',
      body: json({ text: 'Hi.', voice: 'zz_top' }),
      type: 'application/json',
      status: 400,
      code: 'voice_not_found',
      message: /Unknown voice "zz_top"/,
    },
    {
      name: 'speed out of range',
      body: json({ text: 'Hi.', speed: 2.5 }),
      type: 'application/json',
      status: 400,
      code: 'invalid_option',
      message: /speed should be a number from 0.5 to 2/,
    },
    {
      name: 'stream as a string',
      body: json({ text: 'Hi.', stream: 'no' }),
      type: 'application/json',
      status: 400,
      code: 'invalid_option',
      message: /stream should be true or false/,
    },
    {
      name: 'an unknown transport',
      body: json({ text: 'Hi.', transport: 'carrier-pigeon' }),
      type: 'application/json',
      status: 400,
      code: 'invalid_option',
      message: /transport should be one of: binary/,
    },
    {
      name: 'a stale request',
      body: json({ text: 'Hi.', request_timestamp: Date.now() / 1000 - 60 }),
      type: 'application/json',
      status: 408,
      code: 'request_stale',
      message: /over the 56 s limit/,
    },
  ];
  for (const c of cases) {
    it(`${c.name} → ${c.status} ${c.code}`, async () => {
      const res = await post('/invocations', c.body, c.type);
      expect(res.status).toBe(c.status);
      expect(res.headers['content-type']).toMatch(/^application\/json/);
      const body = JSON.parse(res.body.toString());
      expect(body).toMatchObject({ type: 'error', code: c.code });
      expect(body.message).toMatch(c.message);
      // And the server still works.
      expect((await post('/invocations', 'Still fine.', 'text/plain')).status).toBe(200);
    });
  }

  it('echoes request_id on errors', async () => {
    const res = await post(
      '/invocations',
      json({ text: 'Hi.', voice: 'nope_x', request_id: 'abc' }),
      'application/json',
    );
    expect(JSON.parse(res.body.toString())).toMatchObject({ request_id: 'abc' });
  });

  it('answers unknown routes with a JSON 404 naming the real ones', async () => {
    const res = await fetch(`${server.http}/nothing`);
    expect(res.status).toBe(404);
    expect(((await res.json()) as { message: string }).message).toMatch(/POST \/invocations/);
  });
});

describe('a client that goes away', () => {
  it('stops the work done for it', async () => {
    const long = Array.from({ length: 30 }, (_, i) => `Sentence ${i + 1} is here to take time.`).join(' ');
    const before = server.engine!.load().completed;
    await new Promise<void>((resolve, reject) => {
      const req = httpRequest(`${server.http}/invocations`, {
        method: 'POST',
        headers: { 'content-type': 'text/plain' },
      });
      req.on('response', (res) => {
        res.once('data', () => {
          req.destroy();
          resolve();
        });
      });
      req.on('error', () => {});
      req.end(long);
      setTimeout(() => reject(new Error('no audio')), 20_000);
    });
    // The pool drains at once instead of synthesizing the 29 remaining sentences.
    const deadline = Date.now() + 10_000;
    for (;;) {
      const load = server.engine!.load();
      if (load.busy === 0 && load.queued === 0) break;
      if (Date.now() > deadline) throw new Error(`still busy: ${JSON.stringify(load)}`);
      await new Promise((r) => setTimeout(r, 20));
    }
    // It stopped rather than finished: only the sentences in flight at the disconnect completed.
    expect(server.engine!.load().completed - before).toBeLessThan(5);
    expect((await post('/invocations', 'Next.', 'text/plain')).status).toBe(200);
  });
});

describe('POST /invocations edge cases', () => {
  it('accepts any request_id, but only puts header-safe ones in the x-request-id header', async () => {
    const res = await post(
      '/invocations',
      json({ text: 'Unicode id.', request_id: '日本\n語' }),
      'application/json',
    );
    expect(res.status).toBe(200);
    expect(res.headers['x-request-id']).toBeUndefined();
    const bad = await post(
      '/invocations',
      json({ text: 'x', speed: 9, request_id: '日本' }),
      'application/json',
    );
    expect(JSON.parse(bad.body.toString())).toMatchObject({ code: 'invalid_option', request_id: '日本' });
  });

  it('refuses null options, another charset, and bytes that are not UTF-8', async () => {
    const nul = await post('/invocations', json({ text: 'x', transport: null }), 'application/json');
    expect(JSON.parse(nul.body.toString())).toMatchObject({
      code: 'invalid_option',
      message: expect.stringMatching(/got null/),
    });
    const utf16 = await post('/invocations', Buffer.from('hi', 'utf16le'), 'text/plain; charset=utf-16');
    expect(utf16.status).toBe(415);
    expect(JSON.parse(utf16.body.toString())).toMatchObject({
      code: 'unsupported_media_type',
      message: expect.stringMatching(/charset=utf-16/),
    });
    const broken = await post('/invocations', Buffer.from([0x48, 0xc3, 0x28]), 'text/plain');
    expect(broken.status).toBe(400);
    expect(JSON.parse(broken.body.toString())).toMatchObject({ code: 'invalid_utf8' });
  });

  it('answers a plain GET on the WebSocket route with 426', async () => {
    const res = await fetch(`${server.http}/invocations-bidirectional-stream`);
    expect(res.status).toBe(426);
    expect(await res.json()).toMatchObject({ code: 'upgrade_required' });
  });
});
