/**
 * Word timestamps, on the timestamped stand-in (its `durations` output sets its audio length, as in
 * Kokoro's timestamped export): over WebSocket, over SSE, with streamed text, and refused on a
 * model without durations.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readSse } from 'kokoro-stream-client';
import {
  TestClient,
  requestsOf,
  TIMESTAMPED_MODEL_DIR,
  sharedServer,
  type Frame,
  type TestServer,
} from './harness.ts';

const TEXT =
  'Dr. Smith paid $5 for it, on 3/4/2024. Of the people, by the people! The numbers 12,345 and 6.78 stay whole.';
const BYTES_PER_SECOND = 24_000 * 2;

type Word = { word: string; start_s: number; end_s: number };

let server: TestServer;
let plain: TestServer;
beforeAll(async () => {
  [server, plain] = await Promise.all([
    sharedServer({ KOKORO_MODEL_DIR: TIMESTAMPED_MODEL_DIR }),
    sharedServer(),
  ]);
});
afterAll(async () => {
  await Promise.all([server.close(), plain.close()]);
});

/** Checks the words of one request against its text and audio; returns them. */
function checkWords(words: readonly Word[], text: string, audioS: number): void {
  expect(words.map((w) => w.word)).toEqual(text.split(/\s+/).filter(Boolean));
  for (const [i, w] of words.entries()) {
    expect(w.end_s).toBeGreaterThanOrEqual(w.start_s);
    if (i > 0) expect(w.start_s).toBeGreaterThanOrEqual(words[i - 1]!.end_s - 0.001);
  }
  expect(words[0]!.start_s).toBeGreaterThanOrEqual(0);
  expect(Math.abs(words.at(-1)!.end_s - audioS)).toBeLessThanOrEqual(0.05);
}

describe('word timestamps', () => {
  it('/ping lists the capability', async () => {
    const ping = async (s: TestServer) =>
      ((await (await fetch(`${s.http}/ping`)).json()) as { capabilities: object }).capabilities;
    expect(await ping(server)).toEqual({ word_timestamps: true });
    expect(await ping(plain)).toEqual({ word_timestamps: false });
  });

  it('WebSocket: one word_timestamps frame per chunk, before its audio; the original words in order, on the audio clock', async () => {
    const client = await TestClient.open(server.ws);
    client.send({ text: TEXT, request_id: 'ts', timestamps: true });
    await client.untilControls('synthesis_complete', 1);
    const frames = client.frames;
    // Every audio frame is preceded (since the previous audio frame) by its chunk's words.
    let sawWords = false;
    for (const f of frames) {
      if (f.kind === 'control' && f.message.type === 'word_timestamps') sawWords = true;
      if (f.kind === 'audio') {
        expect(sawWords).toBe(true);
        sawWords = false;
      }
    }
    const wordFrames = client.controls('word_timestamps');
    const [request] = requestsOf(frames);
    expect(wordFrames).toHaveLength(request!.complete!.chunks as number);
    expect(wordFrames.every((f) => f.request_id === 'ts')).toBe(true);
    const words = wordFrames.flatMap((f) => f.words as Word[]);
    const audioS = Buffer.concat(request!.audio).length / BYTES_PER_SECOND;
    checkWords(words, TEXT, audioS);
    expect(words.find((w) => w.word === '$5')).toBeDefined();
    client.close();
  });

  it('keeps the clock across chunks at another speed and in another format', async () => {
    const client = await TestClient.open(server.ws);
    client.send({ text: TEXT, request_id: 'fast', timestamps: true, speed: 1.5, format: 'wav' });
    await client.untilControls('synthesis_complete', 1);
    const words = client.controls('word_timestamps').flatMap((f) => f.words as Word[]);
    checkWords(words, TEXT, client.controls('synthesis_complete')[0]!.total_duration_s as number);
    client.close();
  });

  it('streamed text: the first append asks, the words follow the appended text', async () => {
    const client = await TestClient.open(server.ws);
    const pieces = TEXT.match(/.{1,7}/g)!;
    client.send({ type: 'append', text: pieces[0], request_id: 'streamed', timestamps: true });
    for (const piece of pieces.slice(1)) client.send({ type: 'append', text: piece });
    client.send({ type: 'flush' });
    await client.untilControls('synthesis_complete', 1);
    const words = client.controls('word_timestamps').flatMap((f) => f.words as Word[]);
    checkWords(words, TEXT, client.controls('synthesis_complete')[0]!.total_duration_s as number);
    client.close();
  });

  it('SSE: a word_timestamps event before each audio_chunk', async () => {
    const response = await fetch(`${server.http}/invocations`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'text/event-stream' },
      body: JSON.stringify({ text: TEXT, timestamps: true, format: 'pcm', request_id: 'sse' }),
    });
    expect(response.status).toBe(200);
    const events: { event: string; data: Record<string, unknown> }[] = [];
    for await (const e of readSse(response.body!))
      events.push({ event: e.event, data: JSON.parse(e.data) as Record<string, unknown> });
    const names = events.map((e) => e.event).filter((n) => n === 'word_timestamps' || n === 'audio_chunk');
    expect(names.length).toBeGreaterThan(2);
    for (let i = 0; i < names.length; i += 2)
      expect(names.slice(i, i + 2)).toEqual(['word_timestamps', 'audio_chunk']);
    const words = events.filter((e) => e.event === 'word_timestamps').flatMap((e) => e.data.words as Word[]);
    const end = events.find((e) => e.event === 'audio_stream_end')!;
    checkWords(words, TEXT, end.data.duration_s as number);
  });

  it('refused with timestamps_unavailable on a model without durations; the session goes on', async () => {
    const client = await TestClient.open(plain.ws);
    client.send({ text: 'Hello.', request_id: 'no', timestamps: true });
    client.send({ text: 'Hello.', request_id: 'yes' });
    await client.untilControls('synthesis_complete', 1);
    expect(client.controls('error')).toEqual([
      expect.objectContaining({ code: 'timestamps_unavailable', request_id: 'no' }),
    ]);
    expect(client.controls('error')[0]!.message).toMatch(/durations output.*timestamped/);
    expect(requestsOf(client.frames as Frame[]).map((r) => r.id)).toEqual(['yes']);
    client.close();
  });

  it('refused on POST without SSE, and for a value that is not a boolean', async () => {
    const post = (body: object) =>
      fetch(`${server.http}/invocations`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
    const binary = await post({ text: 'Hello.', timestamps: true });
    expect(binary.status).toBe(400);
    expect(await binary.json()).toMatchObject({
      code: 'invalid_option',
      message: expect.stringMatching(/transport.*sse/),
    });
    const wrong = await post({ text: 'Hello.', timestamps: 'yes' });
    expect(wrong.status).toBe(400);
    expect(await wrong.json()).toMatchObject({
      code: 'invalid_option',
      message: expect.stringMatching(/timestamps should be true or false/),
    });
  });
});
