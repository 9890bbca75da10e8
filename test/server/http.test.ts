/**
 * The HTTP routes against the real server: POST /invocations' audio streamed and whole, its
 * formats, speeds and voices, a phoneme string spoken as it is, what POST /v1/phonemize makes of a
 * text with the real front end, /ping answered while a synthesis runs, and a client that goes away
 * stopping the work done for it. Parsing, validation and error bodies are tested in-process
 * (test/app/).
 */
import { readFileSync } from 'node:fs';
import { type IncomingMessage, request as httpRequest } from 'node:http';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { STANDIN_MODEL_DIR, TestClient, sharedServer, type TestServer } from './harness.ts';
import { nextEvent, waitFor } from '../wait.ts';

let server: TestServer;
beforeAll(async () => {
  server = await sharedServer();
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
  it('answers 200 with the real engine’s facts, on GET and POST, while a long synthesis runs (ordering, not timing)', async () => {
    const client = await TestClient.open(server.ws);
    const long = Array.from(
      { length: 12 },
      (_, i) => `This is sentence number ${i + 1} of a long paragraph.`,
    ).join(' ');
    client.send({ text: long, request_id: 'long' });
    await client.until((c) => c.frames.some((f) => f.kind === 'audio'), 'first audio');
    const ping = await fetch(`${server.http}/ping`);
    expect(ping.status).toBe(200);
    expect(await ping.json()).toMatchObject({ status: 'healthy', provider: 'cpu', workers: 1 });
    expect((await fetch(`${server.http}/ping`, { method: 'POST' })).status).toBe(200);
    // The pings came back while the paragraph was still being synthesized.
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

describe('a client that goes away', () => {
  it('stops the work done for it', async () => {
    const long = Array.from({ length: 30 }, (_, i) => `Sentence ${i + 1} is here to take time.`).join(' ');
    const before = server.engine!.load().completed;
    const req = httpRequest(`${server.http}/invocations`, {
      method: 'POST',
      headers: { 'content-type': 'text/plain' },
    });
    req.on('error', () => {});
    req.end(long);
    const [res] = await nextEvent<[IncomingMessage]>(req, 'response', {
      timeoutMs: 20_000,
      what: 'the answer',
    });
    await nextEvent(res, 'data', { timeoutMs: 20_000, what: 'the first audio' });
    req.destroy();
    // The pool drains at once instead of synthesizing the 29 remaining sentences.
    await waitFor(() => server.engine!.load(), {
      until: (load) => load.busy === 0 && load.queued === 0,
      what: 'the pool to drain',
    });
    // It stopped rather than finished: only the sentences in flight at the disconnect completed.
    expect(server.engine!.load().completed - before).toBeLessThan(5);
    expect((await post('/invocations', 'Next.', 'text/plain')).status).toBe(200);
  });
});

describe('phonemes', () => {
  const vocab = (
    JSON.parse(readFileSync(join(STANDIN_MODEL_DIR, 'config.json'), 'utf8')) as {
      vocab: Record<string, number>;
    }
  ).vocab;
  const phonemize = async (body: unknown) => {
    const res = await post('/v1/phonemize', json(body), 'application/json');
    expect(res.status).toBe(200);
    return JSON.parse(res.body.toString()) as {
      phonemes: string;
      tokens: number[];
      front_end: string;
      lang: string;
    };
  };

  it("POST /v1/phonemize gives misaki's phonemes for English, their ids and the front end", async () => {
    expect(await phonemize({ text: 'The butter is better than the water.', lang: 'a' })).toEqual({
      phonemes: 'ðə bˈʌTəɹ ɪz bˈɛTəɹ ðən ðə wˈɔTəɹ.',
      tokens: [...'ðə bˈʌTəɹ ɪz bˈɛTəɹ ðən ðə wˈɔTəɹ.'].map((c) => vocab[c]),
      front_end: 'misaki',
      lang: 'a',
    });
  });

  it('POST /v1/phonemize reads British English, another language by its tag, and the default voice’s language by default', async () => {
    expect(await phonemize({ text: 'Hello, world.', lang: 'en-gb' })).toMatchObject({
      phonemes: 'həlˈQ, wˈɜːld.',
      lang: 'b',
    });
    expect(await phonemize({ text: 'Hola, mundo.', lang: 'es' })).toMatchObject({
      front_end: 'espeak-ng',
      lang: 'e',
    });
    expect((await phonemize({ text: 'Hello.' })).lang).toBe('a');
  });

  it('POST /invocations speaks a phoneme string as it is', async () => {
    const res = await post(
      '/invocations',
      json({ phonemes: 'həlˈO wˈɜɹld. ɡˈʊd mˈɔɹnɪŋ!' }),
      'application/json',
    );
    expect(res.status).toBe(200);
    expect(res.body.subarray(0, 4).toString('latin1')).toBe('RIFF');
    expect(res.body.length).toBeGreaterThan(44 + 1000);
  });
});
