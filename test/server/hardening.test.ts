/**
 * Behaviour under load and faults: fair scheduling (by ordering, not timing), bounded queues,
 * worker failures and metrics. The session limit, auth and CORS are tested in-process
 * (test/app/admission.test.ts, test/app/security.test.ts).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TestClient, requestsOf, startServer, type TestServer } from './harness.ts';

const sentences = (n: number, prefix: string) =>
  Array.from({ length: n }, (_, i) => `${prefix} sentence number ${i + 1} goes here.`).join(' ');

describe('scheduling', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startServer({ KOKORO_WORKERS: '1', MAX_QUEUED_JOBS: '4' });
  });
  afterAll(() => server.close());

  it('a short request from another session gets its audio before a long paragraph finishes', async () => {
    const a = await TestClient.open(server.ws);
    const b = await TestClient.open(server.ws);
    a.send({ text: sentences(25, 'Long'), request_id: 'long' });
    await a.until((c) => c.frames.some((f) => f.kind === 'audio'), 'first audio of the long request');
    b.send({ text: 'Short one.', request_id: 'short' });
    await b.untilControls('synthesis_complete', 1);
    // The one worker took B's sentence between two of A's: A is still going.
    expect(a.controls('synthesis_complete')).toEqual([]);
    await a.untilControls('synthesis_complete', 1);
    expect(requestsOf(a.frames)[0]!.audio.length).toBe(25);
    a.close();
    b.close();
  });

  it('refuses new requests with busy when the inference queue is full, and keeps sessions open', async () => {
    const clients = await Promise.all(Array.from({ length: 8 }, () => TestClient.open(server.ws)));
    clients.forEach((c, i) => c.send({ text: sentences(3, `Session ${i}`), request_id: `s${i}` }));
    const posts = await Promise.all(
      Array.from({ length: 4 }, () =>
        fetch(`${server.http}/invocations`, {
          method: 'POST',
          headers: { 'content-type': 'text/plain' },
          body: 'Also here.',
        }),
      ),
    );
    await Promise.all(
      clients.map((c) =>
        c.until(
          (x) => x.controls('synthesis_complete').length + x.controls('error').length >= 1,
          'an answer',
        ),
      ),
    );
    const busy = clients.flatMap((c) => c.controls('error')).filter((e) => e.code === 'busy');
    const httpBusy = await Promise.all(posts.filter((p) => p.status === 503).map((p) => p.json()));
    expect(busy.length + httpBusy.length).toBeGreaterThan(0);
    for (const e of httpBusy)
      expect(e).toMatchObject({ code: 'busy', message: expect.stringMatching(/retry/) });
    // Admitted requests complete whole: every sentence of each (at least one was admitted).
    const completed = clients.flatMap((c) => requestsOf(c.frames).filter((r) => r.complete));
    expect(completed.length).toBeGreaterThan(0);
    expect(completed.map((r) => r.audio.length)).toEqual(completed.map(() => 3));
    // Every session is still usable.
    for (const c of clients) {
      const n = c.controls('synthesis_complete').length;
      c.send({ text: 'Again.' });
      await c.untilControls('synthesis_complete', n + 1);
      expect(c.closeCode).toBeUndefined();
      c.close();
    }
  });
});

describe('faults', () => {
  let server: TestServer;
  beforeAll(async () => {
    // An utterance's unfinished tail is spoken after UTTERANCE_IDLE_FLUSH_S: 1 s rather than the
    // default 5 s, for the utterance test below, which waits for it.
    server = await startServer({ KOKORO_WORKERS: '1', FAULT_INJECTION: '1', UTTERANCE_IDLE_FLUSH_S: '1' });
  });
  afterAll(() => server.close());

  it('a crashed worker fails only its request; it is replaced and the session goes on', async () => {
    const client = await TestClient.open(server.ws);
    client.send({ text: 'This one __crash_worker__ now.', request_id: 'crash' });
    client.send({ text: 'And this one is fine.', request_id: 'after' });
    await client.until(
      (c) => requestsOf(c.frames).some((r) => r.id === 'after' && r.complete),
      'the next request',
    );
    const [error] = client.controls('error');
    expect(error).toMatchObject({ code: 'inference_failed', request_id: 'crash' });
    expect(String(error!.message)).not.toMatch(/exited|code 70|\/work\//);
    const metrics = await (await fetch(`${server.http}/metrics`)).text();
    expect(metrics).toMatch(/tts_worker_restarts_total\{kind="inference"\} 1/);
    expect((await fetch(`${server.http}/ping`)).status).toBe(200);
    client.close();
  });

  it('an inference error fails only its request, without internals', async () => {
    const client = await TestClient.open(server.ws);
    client.send({ text: 'Break __fail_inference__ please.', request_id: 'fail' });
    client.send({ text: 'Fine.', request_id: 'ok' });
    await client.untilControls('synthesis_complete', 1);
    expect(client.controls('error')).toEqual([
      {
        type: 'error',
        code: 'inference_failed',
        message: 'Synthesis failed inside the model; the error has been logged',
        request_id: 'fail',
      },
    ]);
    client.close();
  });

  it('an utterance whose run failed is dropped: the next append opens a new one, and its flush completes', async () => {
    const client = await TestClient.open(server.ws);
    client.send({ type: 'append', text: 'Break __fail_inference__ please. ', request_id: 'broken' });
    await client.untilControls('error', 1);
    expect(client.controls('error')[0]).toMatchObject({ code: 'inference_failed', request_id: 'broken' });
    client.send({ type: 'append', text: 'A new one.', request_id: 'fresh' });
    client.send({ type: 'flush' });
    await client.untilControls('synthesis_complete', 1);
    expect(client.controls('synthesis_complete')[0]).toMatchObject({ request_id: 'fresh' });
    client.close();
  });
});

describe('GET /metrics', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startServer();
  });
  afterAll(() => server.close());

  it('exposes latency, audio, queue, sessions, errors, provider and process figures', async () => {
    const client = await TestClient.open(server.ws);
    client.send({ text: 'Measure me.' });
    client.send({ text: 'Bad.', voice: 'nobody_here' });
    await client.until(
      (c) => c.controls('synthesis_complete').length === 1 && c.controls('error').length === 1,
      'answers',
    );
    const res = await fetch(`${server.http}/metrics`);
    expect(res.headers.get('content-type')).toMatch(/^text\/plain/);
    const text = await res.text();
    for (const pattern of [
      /tts_time_to_first_audio_seconds_count\{route="ws"\} 1/,
      /tts_synthesis_seconds_bucket/,
      /tts_real_time_factor_count 1/,
      /tts_audio_seconds_total\{format="pcm"\} [0-9.]+/,
      /tts_queue_depth 0/,
      /tts_lookahead_depth 0/,
      /tts_workers_ready 1/,
      /tts_active_sessions 1/,
      /tts_errors_total\{code="voice_not_found"\} 1/,
      /tts_execution_provider\{provider="cpu",dtype="fp32"\} 1/,
      /process_resident_memory_bytes [0-9.e+]+/,
    ]) {
      expect(text).toMatch(pattern);
    }
    client.close();
  });
});
