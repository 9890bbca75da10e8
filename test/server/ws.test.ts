/**
 * The WebSocket routes against the real server: the project's protocol (requests answered strictly
 * in order with their audio, text and binary frames, close, fragments, pings, a client that goes
 * away), and Deepgram's on /v1/speak driven by a Python client that does exactly what Pipecat's
 * DeepgramSageMakerTTSService does (test/fixtures/pipecat_like_client.py, Debian's
 * python3-websockets), both on the path SageMaker connects to and through SageMaker's headers on
 * the default path. Bad input, admission and the Deepgram query are tested in-process (test/app/).
 */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TestClient, requestsOf, sharedServer, type TestServer } from './harness.ts';
import { waitFor } from '../wait.ts';
import { expectPythonModules } from './python-replay.ts';

let server: TestServer;
beforeAll(async () => {
  server = await sharedServer();
});
afterAll(() => server.close());

const BYTES_PER_SECOND = 24_000 * 2;

const run = promisify(execFile);
const PYTHON = '/usr/bin/python3';
const CLIENT = fileURLToPath(new URL('../fixtures/pipecat_like_client.py', import.meta.url));

const base = () => server.ws.replace(/\/invocations-bidirectional-stream$/, '');

/** Runs the client (asynchronously: the server runs in this process) and returns its report. */
async function runClient(...args: string[]): Promise<Record<string, unknown>> {
  const { stdout, stderr } = await run(PYTHON, [CLIENT, base(), ...args], { timeout: 60_000 });
  expect(stderr).toBe('');
  return JSON.parse(stdout) as Record<string, unknown>;
}

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
    // Nothing happens for a while: the session is not closed behind the client's back. 300 ms is
    // many times what an answer or a close takes on loopback.
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
    await waitFor(() => server.engine!.load(), {
      until: (load) => load.busy === 0 && load.queued === 0,
      what: 'the pool to drain',
    });
    // 60 sentences were asked for; only those in flight at the disconnect were finished.
    expect(server.engine!.load().completed - before).toBeLessThan(5);
  });
});

describe("Pipecat's DeepgramSageMakerTTSService, unchanged", () => {
  for (const via of ['the v1/speak path', 'SageMaker’s invocation-path headers']) {
    it(`speaks, flushes, clears and closes over ${via}`, async () => {
      expectPythonModules('websockets');
      const report = await runClient(...(via.includes('headers') ? ['--via-headers'] : []));
      // The service's default model, aura-2-helena-en, speaks as the voice table maps it.
      expect(report.opening).toEqual([
        {
          type: 'Metadata',
          request_id: expect.any(String),
          model_name: 'af_bella',
          model_version: 'kokoro-82m-v1.0',
          model_uuid: expect.any(String),
        },
      ]);
      // linear16 at 24 kHz: two bytes a sample, audio before each Flushed.
      expect(report.first_audio).toBeGreaterThan(24_000);
      expect((report.first_audio as number) % 2).toBe(0);
      expect(report.first_controls).toEqual([{ type: 'Flushed', sequence_id: 0 }]);
      // After Cleared, exactly the next response's audio: nothing from before the Clear.
      expect(report.clear_controls).toEqual([expect.objectContaining({ type: 'Cleared', sequence_id: 0 })]);
      // When the Clear cut audio (not when the answer was already done), Cleared says what of it was
      // sent: exactly the audio that arrived before it.
      const { heard } = (report.clear_controls as { heard?: { samples: number } }[])[0]!;
      expect(heard === undefined || heard.samples * 2 === report.interrupted_audio).toBe(true);
      expect(report.after_clear_audio).toBe(report.short_audio);
      expect(report.after_clear_controls).toEqual([{ type: 'Flushed', sequence_id: 2 }]);
      expect(report.empty_flush_audio).toBe(0);
      expect(report.empty_flush_controls).toEqual([{ type: 'Flushed', sequence_id: 3 }]);
      expect(report.unknown_controls).toEqual([
        {
          type: 'Warning',
          code: 'unknown_type',
          description: expect.stringMatching(/Speak, Flush, Clear, KeepAlive or Close/),
          warn_msg: expect.stringMatching(/Speak, Flush, Clear, KeepAlive or Close/),
        },
      ]);
      expect(report.sequence).toEqual(['Flushed', 'Flushed', 'Cleared', 'Flushed', 'Flushed', 'Warning']);
      expect(report.close_code).toBe(1000);
      // mulaw at 8 kHz: one byte a sample, "Hello there." is well under a second.
      expect(report.mulaw_audio).toBeGreaterThan(2_000);
      expect(report.mulaw_audio).toBeLessThan(16_000);
    });
  }
});
