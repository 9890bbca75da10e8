/**
 * Admission by predicted first audio (MAX_FIRST_AUDIO_MS) through a running server: a request
 * that would wait is answered at once with `busy` (503 and Retry-After over HTTP, an error frame
 * on a WebSocket that stays usable), before the work ahead of it is done, and counted in
 * /metrics; an idle server refuses nothing. One worker on a stand-in slowed to tens of
 * milliseconds a sentence, and a bound of 1 ms: any wait for a worker is past it.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TtsSession } from 'kokoro-stream-client';
import { writeStandinModelDir } from '../../scripts/lib/standin-model.ts';
import { startServer, type TestServer } from './harness.ts';
import { waitFor } from '../wait.ts';

/** One sentence of about 300 characters, spoken whole: it holds the one worker for a while. */
const LONG = `${Array.from({ length: 12 }, (_, i) => `and then part ${i + 1} of it`).join(', ')}.`;

let dir: string;
let server: TestServer;
beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'kokoro-first-audio-'));
  await writeStandinModelDir(dir, { repeat: 60, voices: ['af_heart'], log: () => {} });
  server = await startServer({ KOKORO_MODEL_DIR: dir, MAX_FIRST_AUDIO_MS: '1' });
});
afterAll(async () => {
  await server?.close();
  rmSync(dir, { recursive: true, force: true });
});

const invocation = (text: string) =>
  fetch(`${server.http}/invocations`, {
    method: 'POST',
    headers: { 'content-type': 'text/plain' },
    body: text,
  });

const refusals = async () => {
  const metrics = await (await fetch(`${server.http}/metrics`)).text();
  return Number(/^tts_admission_refused_total\{reason="first_audio"\} (\d+)$/m.exec(metrics)?.[1] ?? 0);
};

/**
 * Runs `during` while the one worker runs the long sentence, and records whether its answer came
 * before the long sentence's audio.
 */
async function whileBusy<T>(during: () => Promise<T>): Promise<{ result: T; order: string[] }> {
  const order: string[] = [];
  const long = fetch(`${server.http}/invocations`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ text: LONG, format: 'pcm', first_chunk: 'sentence' }),
  }).then(async (res) => {
    await res.arrayBuffer();
    order.push('long answer');
  });
  await waitFor(() => server.engine!.load().busy > 0, { intervalMs: 1, what: 'the long sentence to run' });
  const result = await during();
  order.push('refusal');
  await long;
  return { result, order };
}

describe('MAX_FIRST_AUDIO_MS', () => {
  it('an idle server refuses nothing, whatever the bound', async () => {
    const res = await invocation('Nothing waits ahead of this one.');
    expect(res.status).toBe(200);
    expect((await res.arrayBuffer()).byteLength).toBeGreaterThan(0);
  });

  it('a POST that would wait gets 503 busy with Retry-After at once, before the work ahead ends, and is counted', async () => {
    const before = await refusals();
    const { result, order } = await whileBusy(async () => {
      const res = await invocation('A request that would have to wait.');
      const body = (await res.json()) as { code: string; message: string };
      return { status: res.status, retryAfter: res.headers.get('retry-after'), body };
    });
    expect(result).toMatchObject({ status: 503, retryAfter: '1', body: { code: 'busy' } });
    expect(result.body.message).toMatch(/first audio would take about/);
    expect(order).toEqual(['refusal', 'long answer']);
    // /metrics renders at most once a second.
    await expect.poll(refusals, { timeout: 5_000 }).toBe(before + 1);
  });

  it('on a WebSocket the refusal is a busy error frame, and the session goes on', async () => {
    const session = await TtsSession.connect(server.ws);
    try {
      const { result } = await whileBusy(async () => {
        const id = session.send('A request that would have to wait.');
        for await (const e of session.events())
          if ((e.type === 'error' || e.type === 'complete') && e.requestId === id) return e;
        throw new Error('the session closed');
      });
      expect(result).toMatchObject({ type: 'error', code: 'busy' });
      // Idle again: the same session is served.
      const answer = await session.request('Served once the server is idle.');
      expect(answer.audio.byteLength).toBeGreaterThan(0);
    } finally {
      await session.close();
    }
  });
});
