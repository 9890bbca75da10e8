/**
 * Word and phoneme timestamps, on the timestamped stand-in (its `durations` output sets its audio
 * length, as in Kokoro's timestamped export): over WebSocket, over SSE, with streamed text, in
 * Cartesia's protocol; and on a model without durations, the audio all the same, untimed, with a
 * warning where the protocol has one (ours) and without an error anywhere (Cartesia, ElevenLabs).
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
type Sound = { phoneme: string; viseme: string; start_s: number; duration_s: number };

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

describe('phoneme timestamps', () => {
  /** Words whose phonemes are their own (nothing normalized, no words joined): each is matched exactly. */
  const SPOKEN =
    'Hello there, this is easy: the butter melted. A second sentence follows here, with thirty words!';

  /** Each audio frame with the phoneme_timestamps frames sent since the previous audio frame. */
  function chunks(frames: readonly Frame[]): { sounds: Sound[][]; startS: number; endS: number }[] {
    const out: { sounds: Sound[][]; startS: number; endS: number }[] = [];
    let sounds: Sound[][] = [];
    let at = 0;
    for (const f of frames) {
      if (f.kind === 'control' && f.message.type === 'phoneme_timestamps')
        sounds.push(f.message.phonemes as Sound[]);
      if (f.kind === 'audio') {
        const endS = at + f.bytes.length / BYTES_PER_SECOND;
        out.push({ sounds, startS: at, endS });
        at = endS;
        sounds = [];
      }
    }
    return out;
  }

  it('WebSocket: one frame before each chunk’s audio, its sounds within that audio, words starting where sounds do', async () => {
    const client = await TestClient.open(server.ws);
    client.send({ text: SPOKEN, request_id: 'ph', timestamps: true, phoneme_timestamps: true });
    await client.untilControls('synthesis_complete', 1);
    const complete = client.controls('synthesis_complete')[0]!;
    expect(complete.warnings).toBeUndefined();
    const perChunk = chunks(client.frames);
    expect(perChunk).toHaveLength(complete.chunks as number);
    for (const { sounds, startS, endS } of perChunk) {
      expect(sounds).toHaveLength(1);
      const [chunk] = sounds as [Sound[]];
      expect(chunk.length).toBeGreaterThan(0);
      // The sounds tile the chunk's speech, inside its audio (times to the millisecond).
      expect(chunk[0]!.start_s).toBeGreaterThanOrEqual(startS - 0.001);
      for (const [i, s] of chunk.entries()) {
        expect(s.duration_s).toBeGreaterThan(0);
        expect(s.start_s + s.duration_s).toBeLessThanOrEqual(endS + 0.001);
        if (i > 0)
          expect(
            Math.abs(s.start_s - (chunk[i - 1]!.start_s + chunk[i - 1]!.duration_s)),
          ).toBeLessThanOrEqual(0.002);
      }
    }
    const sounds = client.controls('phoneme_timestamps').flatMap((f) => f.phonemes as Sound[]);
    expect(client.controls('phoneme_timestamps').every((f) => f.request_id === 'ph')).toBe(true);
    expect(new Set(sounds.map((s) => s.viseme)).size).toBeGreaterThan(5);
    // Stress marks are folded into the sound after them: no entry is a mark alone.
    expect(sounds.filter((s) => /^[ˈˌ]+$/.test(s.phoneme))).toEqual([]);
    expect(sounds.some((s) => /^[ˈˌ]./.test(s.phoneme))).toBe(true);
    // Each word starts where one of its sounds does: the same durations time both.
    const words = client.controls('word_timestamps').flatMap((f) => f.words as Word[]);
    for (const word of words)
      expect(Math.min(...sounds.map((s) => Math.abs(s.start_s - word.start_s)))).toBeLessThanOrEqual(0.002);
    client.close();
  });

  it('phonemes requests too: their sounds, as written', async () => {
    const client = await TestClient.open(server.ws);
    client.send({ phonemes: 'həlˈO wˈɜɹld.', phoneme_timestamps: true, request_id: 'raw' });
    await client.untilControls('synthesis_complete', 1);
    const sounds = client.controls('phoneme_timestamps').flatMap((f) => f.phonemes as Sound[]);
    expect(sounds.map((s) => s.phoneme).join('')).toBe('həlˈO wˈɜɹld.');
    expect(sounds.map((s) => s.viseme)).toEqual([
      'kk',
      'aa',
      'nn',
      'oh',
      'sil',
      'ou',
      'E',
      'RR',
      'nn',
      'DD',
      'sil',
    ]);
    client.close();
  });

  it('SSE: a phoneme_timestamps event after each chunk’s words, before its audio', async () => {
    const response = await fetch(`${server.http}/invocations`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'text/event-stream' },
      body: JSON.stringify({ text: TEXT, timestamps: true, phoneme_timestamps: true, format: 'pcm' }),
    });
    const names: string[] = [];
    for await (const e of readSse(response.body!)) names.push(e.event);
    const timed = names.filter((n) => n !== 'audio_stream_start' && n !== 'audio_stream_end');
    expect(timed.length).toBeGreaterThan(3);
    for (let i = 0; i < timed.length; i += 3)
      expect(timed.slice(i, i + 3)).toEqual(['word_timestamps', 'phoneme_timestamps', 'audio_chunk']);
  });

  it('Cartesia: add_phoneme_timestamps sends phoneme_timestamps before each chunk, on the words’ clock', async () => {
    const client = await TestClient.open(`${server.http.replace('http', 'ws')}/tts/websocket`);
    const packet = {
      model_id: 'sonic-3',
      voice: { mode: 'id', id: 'af_heart' },
      output_format: { container: 'raw', encoding: 'pcm_s16le', sample_rate: 24000 },
      add_timestamps: true,
      add_phoneme_timestamps: true,
      context_id: 'c1',
    };
    client.send({ ...packet, transcript: 'Hello there. ', continue: true });
    client.send({ ...packet, transcript: 'How are you?', continue: false });
    await client.until((c) => c.controls('done').length === 1, 'done');
    // A chunk's audio goes in messages of Cartesia's size: one run of `chunk` messages each.
    const types = client
      .controls()
      .map((m) => m.type)
      .filter((t, i, all) => t !== 'timestamps' && !(t === 'chunk' && all[i - 1] === 'chunk'));
    expect(types).toEqual(['phoneme_timestamps', 'chunk', 'phoneme_timestamps', 'chunk', 'done']);
    const sounds = client
      .controls('phoneme_timestamps')
      .map((m) => m.phoneme_timestamps as { phonemes: string[]; start: number[]; end: number[] });
    expect(client.controls('phoneme_timestamps')[0]).toMatchObject({
      context_id: 'c1',
      done: false,
      status_code: 206,
    });
    const words = client
      .controls('timestamps')
      .map((m) => m.word_timestamps as { words: string[]; start: number[] });
    for (const [i, chunk] of sounds.entries()) {
      expect(chunk.start).toHaveLength(chunk.phonemes.length);
      expect(chunk.end).toHaveLength(chunk.phonemes.length);
      // The context's clock: the second sentence's first sound is where its first word starts.
      expect(chunk.start[0]).toBe(words[i]!.start[0]);
    }
    expect(sounds[1]!.start[0]).toBeGreaterThan(sounds[0]!.end.at(-1)!);
    client.close();
  });
});

describe('a model without durations: the audio all the same, untimed', () => {
  const WARNING =
    /^timestamps and phoneme_timestamps: the loaded model export has no durations output, so this audio comes without them; load a timestamped export such as onnx-community\/Kokoro-82M-v1.0-ONNX-timestamped/;

  it('WebSocket: the audio, no timing frames, and the warning on synthesis_complete; the session goes on', async () => {
    const client = await TestClient.open(plain.ws);
    client.send({ text: 'Hello. Again.', request_id: 'no', timestamps: true, phoneme_timestamps: true });
    client.send({ text: 'Hello.', request_id: 'yes' });
    await client.untilControls('synthesis_complete', 2);
    expect(client.controls('error')).toEqual([]);
    expect(client.controls('word_timestamps')).toEqual([]);
    expect(client.controls('phoneme_timestamps')).toEqual([]);
    const [untimed, next] = requestsOf(client.frames as Frame[]);
    expect(untimed!.id).toBe('no');
    expect(Buffer.concat(untimed!.audio).length).toBeGreaterThan(BYTES_PER_SECOND / 2);
    expect(untimed!.complete!.warnings).toEqual([expect.stringMatching(WARNING)]);
    expect(next!.complete!.warnings).toBeUndefined();
    client.close();
  });

  it('SSE: the audio, no timing events, and the warning on audio_stream_end', async () => {
    const response = await fetch(`${plain.http}/invocations`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'text/event-stream' },
      body: JSON.stringify({ text: 'Hello. Again.', timestamps: true, phoneme_timestamps: true }),
    });
    expect(response.status).toBe(200);
    const events: { event: string; data: Record<string, unknown> }[] = [];
    for await (const e of readSse(response.body!))
      events.push({ event: e.event, data: JSON.parse(e.data) as Record<string, unknown> });
    expect(events.map((e) => e.event)).toEqual([
      'audio_stream_start',
      'audio_chunk',
      'audio_chunk',
      'audio_stream_end',
    ]);
    expect(events.at(-1)!.data.warnings).toEqual([expect.stringMatching(WARNING)]);
  });

  it('Cartesia, as LiveKit’s plugin sends it (add_timestamps always): chunks, then done; no error', async () => {
    const client = await TestClient.open(`${plain.http.replace('http', 'ws')}/tts/websocket`);
    const packet = {
      model_id: 'sonic-3',
      voice: { mode: 'id', id: 'f786b574-daa5-4673-aa0c-cbe3e8534c02' },
      output_format: { container: 'raw', encoding: 'pcm_s16le', sample_rate: 24000 },
      language: 'en',
      add_timestamps: true,
      max_buffer_delay_ms: 0,
      context_id: 'lk',
    };
    client.send({ ...packet, transcript: 'Hello there. ', continue: true });
    client.send({ ...packet, transcript: ' ', continue: false });
    await client.until((c) => c.controls().some((m) => m.done === true), 'done');
    const messages = client.controls();
    expect(new Set(messages.slice(0, -1).map((m) => m.type))).toEqual(new Set(['chunk']));
    expect(messages.at(-1)).toEqual({ type: 'done', done: true, status_code: 200, context_id: 'lk' });
    const audio = messages
      .slice(0, -1)
      .reduce((n, m) => n + Buffer.from(m.data as string, 'base64').length, 0);
    expect(audio).toBeGreaterThan(BYTES_PER_SECOND / 4);
    client.close();
  });

  it('ElevenLabs multi-stream-input: the audio with alignment null, then isFinal; no error', async () => {
    const url = `${plain.http.replace('http', 'ws')}/v1/text-to-speech/af_heart/multi-stream-input?output_format=pcm_24000`;
    const client = await TestClient.open(url);
    client.send({ text: ' ', context_id: 'el' });
    client.send({ text: 'Hello there.', context_id: 'el' });
    client.send({ context_id: 'el', flush: true, text: '' });
    client.send({ context_id: 'el', close_context: true });
    await client.until((c) => c.controls().some((m) => m.isFinal === true), 'isFinal');
    const messages = client.controls();
    expect(messages.filter((m) => 'error' in m)).toEqual([]);
    const audio = messages.filter((m) => typeof m.audio === 'string');
    expect(audio.length).toBeGreaterThan(0);
    for (const m of audio)
      expect(m).toMatchObject({ alignment: null, normalizedAlignment: null, contextId: 'el' });
    expect(messages.at(-1)).toEqual({ isFinal: true, contextId: 'el' });
    client.close();
  });
});
