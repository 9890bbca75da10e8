/**
 * Barge-in: `{"type":"cancel"}` (or clear, interrupt) on a live session. A stand-in slowed so that
 * one piece of a long sentence takes a few hundred milliseconds keeps work in flight while the
 * cancel arrives; the verdicts are frame orders and inference counts, never timings.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { writeStandinModelDir } from '../../scripts/lib/standin-model.ts';
import { TestClient, requestsOf, startServer, type Frame, type TestServer } from './harness.ts';

/** One sentence that normalization makes into six inferences of about 500 phoneme ids each. */
const SIX_PIECES = `Codes ${Array.from({ length: 30 }, () => '987654321').join(', ')} end.`;
const SHORT = 'A short sentence.';

let server: TestServer;
let dir: string;
beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'kokoro-barge-in-'));
  await writeStandinModelDir(dir, { repeat: 60, voices: ['af_heart'], log: () => {} });
  server = await startServer({ KOKORO_MODEL_DIR: dir, WS_IDLE_TIMEOUT_S: '0' });
});
afterAll(async () => {
  await server.close();
  rmSync(dir, { recursive: true, force: true });
});

const load = () => server.engine!.load();

/** The request ids of audio frames after the frame at `index`. */
function audioAfter(frames: readonly Frame[], index: number): number {
  return frames.slice(index + 1).filter((f) => f.kind === 'audio').length;
}

function indexOfControl(frames: readonly Frame[], type: string, nth = 0): number {
  let seen = 0;
  for (const [i, f] of frames.entries()) {
    if (f.kind === 'control' && f.message.type === type && seen++ === nth) return i;
  }
  return -1;
}

/** Sends a short request and waits for its completion: the session still serves. */
async function stillServes(client: TestClient, id: string): Promise<void> {
  const before = client.controls('synthesis_complete').length;
  client.send({ text: SHORT, request_id: id });
  await client.untilControls('synthesis_complete', before + 1);
  const last = requestsOf(client.frames).at(-1)!;
  expect(last.id).toBe(id);
  expect(last.audio.length).toBeGreaterThan(0);
  expect(client.closeCode).toBeUndefined();
}

describe('cancel', () => {
  it('during the first chunk: no audio of it is sent, the worker stops after the call in progress', async () => {
    await expect.poll(() => load().busy, { timeout: 10_000 }).toBe(0);
    const before = load().inferences;
    const client = await TestClient.open(server.ws);
    client.send({ text: SIX_PIECES, request_id: 'long' });
    await client.untilControls('synthesis_start', 1);
    client.send({ type: 'cancel' });
    await client.untilControls('synthesis_cancelled', 1);
    // Nothing of it left the server, and the answer says so.
    expect(client.controls('synthesis_cancelled')).toEqual([
      {
        type: 'synthesis_cancelled',
        request_id: 'long',
        cancelled: ['long'],
        heard: { request_id: 'long', samples: 0, sample_rate: 24000, ms: 0 },
      },
    ]);
    expect(client.frames.filter((f) => f.kind === 'audio')).toEqual([]);
    expect(client.controls('synthesis_complete')).toEqual([]);
    // The job was really cancelled: of its six inferences, at most the one running was finished.
    await expect.poll(() => load().busy, { timeout: 10_000 }).toBe(0);
    expect(load().inferences - before).toBeLessThanOrEqual(1);
    await stillServes(client, 'after');
    client.close();
  });

  it('during a later sentence: the audio sent so far stays, nothing of the request follows the answer', async () => {
    const client = await TestClient.open(server.ws);
    client.send({ text: `First sentence. ${SIX_PIECES} Last sentence.`, request_id: 'multi' });
    await client.until((c) => c.frames.some((f) => f.kind === 'audio'), 'the first sentence');
    client.send({ type: 'Interrupt' });
    await client.untilControls('synthesis_cancelled', 1);
    const at = indexOfControl(client.frames, 'synthesis_cancelled');
    const answer = client.controls('synthesis_cancelled')[0]!;
    expect(answer).toMatchObject({ type: 'synthesis_cancelled', request_id: 'multi', cancelled: ['multi'] });
    // What was heard is exactly the PCM that arrived before the answer: 2 bytes a sample, 24 kHz.
    const sentBytes = client.frames
      .slice(0, at)
      .reduce((n, f) => n + (f.kind === 'audio' ? f.bytes.length : 0), 0);
    expect(answer.heard).toEqual({
      request_id: 'multi',
      samples: sentBytes / 2,
      sample_rate: 24000,
      ms: Math.round(sentBytes / 2 / 2.4) / 10,
    });
    await stillServes(client, 'next');
    // Between the answer and the next request's start, no audio: the cut request sent no more.
    const nextStart = indexOfControl(client.frames, 'synthesis_start', 1);
    expect(client.frames.slice(at + 1, nextStart)).toEqual([]);
    expect(client.frames.slice(0, at).filter((f) => f.kind === 'audio').length).toBeGreaterThan(0);
    client.close();
  });

  it('with messages queued: drops them all, names them in order, and the next message is served', async () => {
    const client = await TestClient.open(server.ws);
    client.send({ text: SIX_PIECES, request_id: 'a' });
    client.send({ text: SHORT, request_id: 'b' });
    client.send(SHORT); // plain text: it has no id the client knows, but one was generated for it
    client.send({ text: SHORT, request_id: 'c' });
    await client.untilControls('synthesis_start', 1);
    client.send({ type: 'clear' });
    await client.untilControls('synthesis_cancelled', 1);
    const answer = client.controls('synthesis_cancelled')[0]!;
    expect(answer.request_id).toBe('a');
    expect(answer.cancelled).toEqual(['a', 'b', expect.any(String), 'c']);
    await stillServes(client, 'd');
    expect(requestsOf(client.frames).map((r) => r.id)).toEqual(['a', 'd']);
    client.close();
  });

  it('twice in a row: two answers in order, the second cuts nothing', async () => {
    const client = await TestClient.open(server.ws);
    client.send({ text: SIX_PIECES, request_id: 'x' });
    await client.untilControls('synthesis_start', 1);
    client.send({ type: 'cancel' });
    client.send({ type: 'cancel' });
    await client.untilControls('synthesis_cancelled', 2);
    expect(client.controls('synthesis_cancelled')).toEqual([
      {
        type: 'synthesis_cancelled',
        request_id: 'x',
        cancelled: ['x'],
        heard: { request_id: 'x', samples: 0, sample_rate: 24000, ms: 0 },
      },
      { type: 'synthesis_cancelled', cancelled: [] },
    ]);
    expect(audioAfter(client.frames, indexOfControl(client.frames, 'synthesis_cancelled'))).toBe(0);
    await stillServes(client, 'y');
    client.close();
  });

  it('with nothing running: answered at once, cutting nothing', async () => {
    const client = await TestClient.open(server.ws);
    client.send({ type: 'cancel', request_id: 'ghost' });
    await client.untilControls('synthesis_cancelled', 1);
    expect(client.controls('synthesis_cancelled')).toEqual([
      { type: 'synthesis_cancelled', request_id: 'ghost', cancelled: [] },
    ]);
    await stillServes(client, 'fine');
    client.close();
  });

  it('with a request_id: only that request is dropped; the others are served in order', async () => {
    const client = await TestClient.open(server.ws);
    client.send({ text: SHORT, request_id: 'p' });
    client.send({ text: SHORT, request_id: 'q' });
    client.send({ text: SHORT, request_id: 'r' });
    client.send({ type: 'cancel', request_id: 'q' });
    await client.untilControls('synthesis_complete', 2);
    expect(client.controls('synthesis_cancelled')).toEqual([
      { type: 'synthesis_cancelled', request_id: 'q', cancelled: ['q'] },
    ]);
    expect(requestsOf(client.frames).map((r) => [r.id, r.complete !== undefined])).toEqual([
      ['p', true],
      ['r', true],
    ]);
    client.close();
  });

  it('refuses a cancel whose request_id is not a usable id, and the session goes on', async () => {
    const client = await TestClient.open(server.ws);
    client.send({ type: 'cancel', request_id: 42 });
    await client.untilControls('error', 1);
    expect(client.controls('error')[0]).toMatchObject({ code: 'invalid_option' });
    expect(client.controls('error')[0]!.message).toMatch(/request_id on a cancel/);
    await stillServes(client, 'ok');
    client.close();
  });

  it('cancels an utterance that is still being written; later appends open a new one', async () => {
    const client = await TestClient.open(server.ws);
    client.send({ type: 'append', text: `${SIX_PIECES} And then`, request_id: 'u1' });
    await client.untilControls('synthesis_start', 1);
    client.send({ type: 'cancel' });
    await client.untilControls('synthesis_cancelled', 1);
    expect(client.controls('synthesis_cancelled')[0]).toMatchObject({ cancelled: ['u1'] });
    client.send({ type: 'append', text: SHORT, request_id: 'u2' });
    client.send({ type: 'flush' });
    await client.untilControls('synthesis_complete', 1);
    expect(requestsOf(client.frames).map((r) => [r.id, r.complete !== undefined])).toEqual([
      ['u1', false],
      ['u2', true],
    ]);
    client.close();
  });
});
