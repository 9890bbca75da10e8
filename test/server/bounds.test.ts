/**
 * What a small request can make the server spend, whatever its markup: pauses, pronunciations and
 * aliases are bounded where their cost is known (after expansion, as audio is made), each with a
 * clear error, and the server goes on serving. Each case is a hostile request that once made
 * gigabytes or hours of audio from 4 KB.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { startServerProcess, type ServerProcess } from '../../scripts/lib/server-process.ts';
import { rssMb } from './malformed-burst.ts';
import { STANDIN_MODEL_DIR, TestClient, requestsOf, startServer, type TestServer } from './harness.ts';

const MIB = 1024 * 1024;
/** The bound on one request's audio for this file's server, in seconds. */
const MAX_AUDIO_S = 60;
/** 409 pauses of 10 s: 4,090 bytes asking for 4,090 s of silence. */
const PAUSES = '[pause:10]'.repeat(409);
/** A reading of 40 words for a one-letter word. */
const LONG_ALIAS = Array.from({ length: 40 }, () => 'word').join(' ');

let server: TestServer;
beforeAll(async () => {
  server = await startServer({
    MAX_AUDIO_S: String(MAX_AUDIO_S),
    MAX_COMPLETE_REPLY_BYTES: String(MIB),
  });
});
afterAll(() => server.close());

function post(path: string, body: unknown): Promise<Response> {
  return fetch(`${server.http}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
}

/** The server still synthesizes a plain request. */
async function stillServes(): Promise<void> {
  const response = await post('/invocations', { text: 'Still here.', format: 'pcm' });
  expect(response.status).toBe(200);
  expect((await response.arrayBuffer()).byteLength).toBeGreaterThan(0);
}

describe('pauses', () => {
  it.each([
    ['wav', 24_000],
    ['wav', 48_000],
    ['opus', 48_000],
  ])(
    '4,090 s of pauses in one POST (%s at %i Hz, stream false): 413 at once, before any audio',
    async (format, rate) => {
      const response = await post('/invocations', {
        text: PAUSES,
        format,
        sample_rate: rate,
        stream: false,
      });
      expect(response.status).toBe(413);
      expect(await response.json()).toMatchObject({
        code: 'audio_too_long',
        message: expect.stringContaining(`over the ${MAX_AUDIO_S} s of audio one request may make`),
      });
      await stillServes();
    },
  );

  it('the same text on the WebSocket: an error frame, and the session goes on', async () => {
    const client = await TestClient.open(server.ws);
    client.send({ text: PAUSES, request_id: 'pauses' });
    client.send({ text: 'After the pauses.', request_id: 'next' });
    await client.untilControls('synthesis_complete', 1);
    expect(client.controls('error')).toEqual([
      expect.objectContaining({ code: 'audio_too_long', request_id: 'pauses' }),
    ]);
    expect(client.requests()).toEqual([{ id: 'next', audio: expect.any(Number), complete: true }]);
    client.close();
  });

  it('a streamed utterance of pauses speaks up to the bound, says so, and completes', async () => {
    const client = await TestClient.open(server.ws);
    client.send({ type: 'append', text: PAUSES, format: 'pcm', request_id: 'u' });
    client.send({ type: 'append', text: PAUSES });
    client.send({ type: 'flush' });
    await client.untilControls('synthesis_complete', 1);
    const errors = client.controls('error');
    expect(errors.length).toBeGreaterThanOrEqual(1);
    for (const error of errors) expect(error).toMatchObject({ code: 'audio_too_long', request_id: 'u' });
    // Exactly the pauses that fit: 6 of 10 s, as silence of 24,000 samples a second.
    const [request] = requestsOf(client.frames);
    const bytes = request!.audio.reduce((n, b) => n + b.length, 0);
    expect(bytes).toBe(MAX_AUDIO_S * 24_000 * 2);
    expect(Buffer.concat(request!.audio).every((b) => b === 0)).toBe(true);
    client.close();
  });

  it('a reply held until complete is bounded: past MAX_COMPLETE_REPLY_BYTES it is a 413, and the stream works', async () => {
    // 12 s at 48 kHz is 1.15 MB of WAV, over this server's 1 MiB.
    const body = { text: '[pause:10] [pause:2] Hello.', format: 'wav', sample_rate: 48_000 };
    const whole = await post('/invocations', { ...body, stream: false });
    expect(whole.status).toBe(413);
    expect(await whole.json()).toMatchObject({
      code: 'audio_too_long',
      message: expect.stringContaining('ask for a stream instead'),
    });
    const streamed = await post('/invocations', body);
    expect(streamed.status).toBe(200);
    expect((await streamed.arrayBuffer()).byteLength).toBeGreaterThan(12 * 48_000 * 2);
  });
});

describe('pronunciations and aliases', () => {
  const aliased = {
    text: 'a '.repeat(2000),
    pronunciations: { a: { alias: LONG_ALIAS } },
  };

  it('POST: the text limit holds after the dictionary is applied (413, naming it)', async () => {
    const response = await post('/invocations', aliased);
    expect(response.status).toBe(413);
    expect(await response.json()).toMatchObject({
      code: 'text_too_long',
      message: expect.stringMatching(
        /would speak \d+ characters once its pronunciations and aliases are applied, over the limit of 4096/,
      ),
    });
    await stillServes();
  });

  it('in SSML, where markup is read sentence by sentence, the readings count the same way', async () => {
    const response = await post('/invocations', { ...aliased, text: `<speak>${aliased.text}</speak>` });
    expect(response.status).toBe(413);
    expect(await response.json()).toMatchObject({
      code: 'text_too_long',
      message: expect.stringContaining('once its pronunciations and aliases are applied'),
    });
  });

  it('/v1/phonemize: a 413, not a 500', async () => {
    const response = await post('/v1/phonemize', aliased);
    expect(response.status).toBe(413);
    expect(await response.json()).toMatchObject({ code: 'text_too_long' });
  });

  it('WebSocket: an error frame, and the session goes on', async () => {
    const client = await TestClient.open(server.ws);
    client.send({ ...aliased, request_id: 'aliased' });
    client.send({ text: 'Plain words.', request_id: 'plain' });
    await client.untilControls('synthesis_complete', 1);
    expect(client.controls('error')).toEqual([
      expect.objectContaining({ code: 'text_too_long', request_id: 'aliased' }),
    ]);
    expect(client.requests()).toEqual([{ id: 'plain', audio: expect.any(Number), complete: true }]);
    client.close();
  });

  it('in a streamed utterance, pronunciations may add at most MAX_TEXT_CHARS to what was sent', async () => {
    const client = await TestClient.open(server.ws);
    const sentence = `${'a '.repeat(30)}end.`;
    client.send({ type: 'append', ...aliased, text: sentence, request_id: 'u' });
    for (let i = 0; i < 40; i++) client.send({ type: 'append', text: ` ${sentence}` });
    client.send({ type: 'flush' });
    await client.untilControls('synthesis_complete', 1);
    const errors = client.controls('error');
    expect(errors.length).toBeGreaterThanOrEqual(1);
    for (const error of errors) {
      expect(error).toMatchObject({
        code: 'text_too_long',
        message: expect.stringContaining('to what it was sent, over the limit of 4096'),
      });
    }
    // Each sentence's readings add about 5,900 characters to the 64 it was sent: none fits.
    expect(client.controls('synthesis_complete')).toEqual([
      expect.objectContaining({ request_id: 'u', total_duration_s: 0 }),
    ]);
    client.send({ text: 'Plain words.', request_id: 'after' });
    await client.untilControls('synthesis_complete', 2);
    expect(client.requests()[1]).toEqual({ id: 'after', audio: expect.any(Number), complete: true });
    client.close();
  });
});

describe('memory: a client that appends pauses and never reads', () => {
  let proc: ServerProcess;
  beforeAll(async () => {
    proc = await startServerProcess({
      KOKORO_MODEL_DIR: STANDIN_MODEL_DIR,
      KOKORO_WORKERS: '1',
      LOG_LEVEL: 'warn',
    });
  });
  afterAll(() => proc.stop());

  it('stays bounded while it floods and comes back when it leaves; a reading session gets all its audio', async () => {
    const pid = proc.child.pid!;
    const baseline = rssMb(pid);
    const flooder = new WebSocket(`${proc.ws}`);
    await new Promise((resolve, reject) => {
      flooder.once('open', resolve);
      flooder.once('error', reject);
    });
    // Nothing is read from here on: the server's frames stay in the kernel's buffers.
    (flooder as unknown as { _socket: { pause(): void } })._socket.pause();
    flooder.send(JSON.stringify({ type: 'append', text: PAUSES, format: 'pcm' }));
    let peak = 0;
    for (let i = 0; i < 40; i++) {
      flooder.send(JSON.stringify({ type: 'append', text: PAUSES }));
      // The client's pace: an append every 50 ms, RSS read between them.
      await new Promise((r) => setTimeout(r, 50));
      peak = Math.max(peak, rssMb(pid));
    }
    // A well-behaved session meanwhile.
    const reader = await TestClient.open(proc.ws);
    reader.send({ text: 'A sentence while another session floods. And a second one.', request_id: 'ok' });
    await reader.untilControls('synthesis_complete', 1);
    expect(reader.requests()).toEqual([{ id: 'ok', audio: expect.any(Number), complete: true }]);
    expect(reader.controls('error')).toEqual([]);
    reader.close();
    // Before, each append made its 4,090 s of silence at once: +190 MB an append.
    expect(peak - baseline).toBeLessThan(80);
    flooder.terminate();
    await expect.poll(() => rssMb(pid) - baseline, { timeout: 15_000, interval: 500 }).toBeLessThan(80);
    expect((await fetch(`${proc.http}/ping`)).status).toBe(200);
  });
});
