/**
 * The client package against a real listening server (stand-in model): the WebSocket session
 * client and the SSE reader, checked against the server's binary POST for the same text.
 */
import { readFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import {
  TtsRequestError,
  TtsSession,
  decodeAudioEvent,
  postSpeech,
  readSse,
  type AudioStreamEvent,
  type TtsEvent,
  type WebSocketConstructor,
} from 'kokoro-stream-client';
import { startServer, type TestServer } from './harness.ts';

let server: TestServer;
beforeAll(async () => {
  server = await startServer();
});
afterAll(() => server.close());

const BYTES_PER_SECOND = 24_000 * 2;

/** The audio of a binary POST: the reference the other paths must equal byte for byte. */
async function postAudio(body: Record<string, unknown>): Promise<Uint8Array> {
  const res = await fetch(`${server.http}/invocations`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  expect(res.status).toBe(200);
  return new Uint8Array(await res.arrayBuffer());
}

/** Reads events until `done` says so (or the session closes). */
async function readUntil(session: TtsSession, done: (seen: TtsEvent[]) => boolean): Promise<TtsEvent[]> {
  const seen: TtsEvent[] = [];
  for await (const event of session.events()) {
    seen.push(event);
    if (done(seen)) break;
  }
  return seen;
}

const completes = (n: number) => (seen: TtsEvent[]) =>
  seen.filter((e) => e.type === 'complete' || e.type === 'error').length >= n;

function concat(chunks: readonly Uint8Array[]): Uint8Array {
  return Uint8Array.from(chunks.flatMap((c) => [...c]));
}

describe('TtsSession against the server', () => {
  it('sends several requests without waiting and reads their events in order, with timings', async () => {
    const session = await TtsSession.connect(server.ws);
    const texts = ['Hello there.', 'This is the second message. It has two sentences.', 'Third, and last!'];
    const ids = texts.map((text) => session.send(text, { voice: 'af_heart' }));
    expect(new Set(ids).size).toBe(3);
    const events = await readUntil(session, completes(3));

    // Per request: start, at least one audio frame, complete, and never interleaved with another.
    const shape = events.map((e) =>
      e.type === 'closed' ? e.type : `${e.type}:${ids.indexOf(e.requestId!)}`,
    );
    const collapsed = shape.filter((s, i) => s !== shape[i - 1]);
    expect(collapsed).toEqual([
      'start:0',
      'audio:0',
      'complete:0',
      'start:1',
      'audio:1',
      'complete:1',
      'start:2',
      'audio:2',
      'complete:2',
    ]);

    for (const [i, text] of texts.entries()) {
      const audio = concat(
        events.flatMap((e) => (e.type === 'audio' && e.requestId === ids[i] ? [e.bytes] : [])),
      );
      // Attribution is right when every request's audio equals the POST of its text.
      expect(audio).toEqual(await postAudio({ text, format: 'pcm' }));
      const complete = events.find((e) => e.type === 'complete' && e.requestId === ids[i]);
      if (complete?.type !== 'complete') throw new Error('no completion');
      expect(complete.totalDurationS).toBeCloseTo(audio.length / BYTES_PER_SECOND, 3);
      expect(complete.elapsedS).toBeGreaterThan(0);
      expect(complete.timeToFirstAudioS).toBeGreaterThan(0);
      expect(complete.timeToFirstAudioS).toBeLessThanOrEqual(complete.elapsedS);
      expect(complete.raw).toMatchObject({ type: 'synthesis_complete', request_id: ids[i] });
    }
    // The second text has two sentences: audio comes per sentence.
    expect(events.filter((e) => e.type === 'audio' && e.requestId === ids[1]).length).toBeGreaterThanOrEqual(
      2,
    );
    await session.close();
  });

  it('uses the caller request_id, per-request options and session defaults', async () => {
    const session = await TtsSession.connect(server.ws, { defaults: { format: 'wav' } });
    const id = session.send('With my own id.', { request_id: 'mine-1', voice: 'af_bella' });
    expect(id).toBe('mine-1');
    const events = await readUntil(session, completes(1));
    const audio = concat(events.flatMap((e) => (e.type === 'audio' ? [e.bytes] : [])));
    expect(new TextDecoder().decode(audio.subarray(0, 4))).toBe('RIFF');
    expect(audio).toEqual(await postAudio({ text: 'With my own id.', voice: 'af_bella', format: 'wav' }));
    expect(events.at(-1)).toMatchObject({ type: 'complete', requestId: 'mine-1' });
    await session.close();
  });

  it('request() collects one request; several may run at once and each gets its own audio', async () => {
    const session = await TtsSession.connect(server.ws);
    const texts = ['One request.', 'Another request, a little longer than the first.', 'Last.'];
    const results = await Promise.all(texts.map((text) => session.request(text, { format: 'pcm' })));
    for (const [i, result] of results.entries()) {
      expect(result.audio).toEqual(await postAudio({ text: texts[i], format: 'pcm' }));
      expect(result.complete.type).toBe('complete');
      expect(result.complete.totalDurationS).toBeCloseTo(result.audio.length / BYTES_PER_SECOND, 3);
    }
    // Their events were collected, not queued for events().
    const closed = await session.close();
    expect(closed).toEqual({ type: 'closed', code: 1000, reason: expect.any(String) });
    expect(await readUntil(session, () => false)).toEqual([closed]);
  });

  it('reports an invalid option as an error event for that request, and the session keeps working', async () => {
    const session = await TtsSession.connect(server.ws);
    const bad = session.send('Too fast.', { speed: 5 });
    const good = session.send('Still working.');
    const events = await readUntil(session, completes(2));
    expect(events[0]).toEqual({
      type: 'error',
      requestId: bad,
      code: 'invalid_option',
      message: expect.stringMatching(/speed should be a number from 0.5 to 2/),
    });
    expect(events.filter((e) => e.type === 'audio').every((e) => e.requestId === good)).toBe(true);
    expect(events.at(-1)).toMatchObject({ type: 'complete', requestId: good });

    // The same through request(): a TtsRequestError, then the session still answers.
    const refused = session.request('Who?', { voice: 'xx_nobody' });
    await expect(refused).rejects.toBeInstanceOf(TtsRequestError);
    await expect(refused).rejects.toMatchObject({
      code: 'voice_not_found',
      message: /Unknown voice "xx_nobody"/,
    });
    const after = await session.request('After the error.');
    expect(after.audio.length).toBeGreaterThan(0);
    await session.close();
  });

  it('close() lets the server finish what was sent, then resolves with 1000; the events end with closed', async () => {
    const session = await TtsSession.connect(server.ws);
    const ids = [session.send('First before close.'), session.send('Second before close.')];
    const closed = await session.close();
    expect(closed.code).toBe(1000);
    expect(session.isOpen).toBe(false);
    expect(() => session.send('Too late.')).toThrow(/closed or closing/);
    await expect(session.request('Too late.')).rejects.toThrow(/closed or closing/);

    const events: TtsEvent[] = [];
    for await (const event of session) events.push(event);
    expect(events.filter((e) => e.type === 'complete').map((e) => e.requestId)).toEqual(ids);
    expect(events.at(-1)).toEqual({ type: 'closed', code: 1000, reason: expect.any(String) });
    // A second close() and a new iteration return at once.
    expect(await session.close()).toEqual(closed);
    expect(await readUntil(session, () => false)).toEqual([]);
  });

  it('a loop that breaks keeps the unread events for the next loop', async () => {
    const session = await TtsSession.connect(server.ws);
    const first = session.send('First.');
    const second = session.send('Second.');
    const a = await readUntil(session, completes(1));
    const b = await readUntil(session, completes(1));
    expect(a.every((e) => e.type !== 'closed' && e.requestId === first)).toBe(true);
    expect(b.every((e) => e.type !== 'closed' && e.requestId === second)).toBe(true);
    expect(b[0]!.type).toBe('start');
    await session.close();
  });

  it('sends text frames on request, and takes an injected WebSocket constructor', async () => {
    let constructed = 0;
    class CountingWebSocket extends WebSocket {
      constructor(url: string, protocols?: string | string[]) {
        super(url, protocols);
        constructed++;
      }
    }
    const session = await TtsSession.connect(server.ws, {
      WebSocket: CountingWebSocket as unknown as WebSocketConstructor,
      binary: false,
    });
    expect(constructed).toBe(1);
    const result = await session.request('Sent as a text frame.');
    expect(result.audio).toEqual(await postAudio({ text: 'Sent as a text frame.', format: 'pcm' }));
    expect((await session.close()).code).toBe(1000);
  });

  it('rejects connect() for an address where nothing listens, and a wrong route', async () => {
    const port = new URL(server.http).port;
    await expect(TtsSession.connect(`ws://127.0.0.1:1/`, { connectTimeoutMs: 5000 })).rejects.toThrow(
      /Could not connect/,
    );
    await expect(TtsSession.connect(`ws://127.0.0.1:${port}/nowhere`)).rejects.toThrow(/Could not connect/);
  });

  it('abort() closes at once and fails what is still being collected', async () => {
    const session = await TtsSession.connect(server.ws);
    const pending = session.request('A request abandoned by its client.');
    session.abort();
    await expect(pending).rejects.toThrow(/closed \(code \d+\) before request/);
    const events = await readUntil(session, () => false);
    expect(events.at(-1)?.type).toBe('closed');
  });
});

describe('SSE reader against the server', () => {
  async function sseAudio(
    body: Record<string, unknown>,
  ): Promise<{ events: AudioStreamEvent[]; audio: Uint8Array }> {
    const res = await fetch(`${server.http}/invocations`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ ...body, transport: 'sse' }),
    });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/event-stream/);
    const events: AudioStreamEvent[] = [];
    for await (const event of readSse(res.body!)) events.push(decodeAudioEvent(event));
    const audio = concat(events.flatMap((e) => (e.type === 'audio_chunk' ? [e.audio] : [])));
    return { events, audio };
  }

  for (const format of ['pcm', 'wav', 'mp3']) {
    it(`${format}: decoded SSE audio equals the binary POST's bytes`, async () => {
      const text = 'Server-sent events carry the same audio. Sentence by sentence, in base64.';
      const { events, audio } = await sseAudio({ text, format, request_id: `sse-${format}` });
      expect(events[0]).toMatchObject({ type: 'audio_stream_start', request_id: `sse-${format}`, format });
      const chunks = events.filter((e) => e.type === 'audio_chunk');
      expect(chunks.map((c) => c.seq)).toEqual(chunks.map((_, i) => i));
      expect(events.at(-1)).toMatchObject({ type: 'audio_stream_end', total_chunks: chunks.length });
      expect(audio).toEqual(await postAudio({ text, format }));
    });
  }
});

describe('postSpeech against the server', () => {
  const TEXT = 'A streamed answer. It comes sentence by sentence, as the server writes it.';

  async function collect(chunks: AsyncIterable<Uint8Array>): Promise<Uint8Array[]> {
    const out: Uint8Array[] = [];
    for await (const chunk of chunks) out.push(chunk);
    return out;
  }

  it.each(['pcm', 'wav'] as const)(
    '%s: yields the body as it streams, equal to a plain POST',
    async (format) => {
      const chunks = await collect(postSpeech(server.http, TEXT, { format }));
      // Two sentences: at least one chunk each, not one buffered body.
      expect(chunks.length).toBeGreaterThanOrEqual(2);
      expect(concat(chunks)).toEqual(await postAudio({ text: TEXT, format }));
    },
  );

  it('SSE through readSse gives the same audio', async () => {
    const events = [];
    for await (const event of readSse(postSpeech(server.http, TEXT, { format: 'pcm', transport: 'sse' })))
      events.push(decodeAudioEvent(event));
    const audio = concat(events.flatMap((e) => (e.type === 'audio_chunk' ? [e.audio] : [])));
    expect(audio).toEqual(await postAudio({ text: TEXT, format: 'pcm' }));
  });

  it('rejects with the code of the server and the request id; the next call works', async () => {
    const refused = collect(postSpeech(server.http, 'Hello.', { voice: 'xx_nobody', request_id: 'p-1' }));
    await expect(refused).rejects.toBeInstanceOf(TtsRequestError);
    await expect(refused).rejects.toMatchObject({ code: 'voice_not_found', requestId: 'p-1' });
    expect((await collect(postSpeech(server.http, 'Hello.', { format: 'pcm' }))).length).toBeGreaterThan(0);
  });

  it('speaks phonemes as the text they came from', async () => {
    const res = await fetch(`${server.http}/v1/phonemize`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ text: 'Hello there.' }),
    });
    const { phonemes } = (await res.json()) as { phonemes: string };
    const spoken = await collect(postSpeech(server.http, { phonemes }, { format: 'pcm' }));
    expect(concat(spoken)).toEqual(await postAudio({ text: 'Hello there.', format: 'pcm' }));
  });

  it('takes an injected fetch, extra headers and a base URL with a trailing slash', async () => {
    const seen: { url: string; headers: Record<string, string> }[] = [];
    const spy: typeof fetch = (input, init) => {
      seen.push({ url: String(input), headers: init!.headers as Record<string, string> });
      return fetch(input, init);
    };
    const init = { fetch: spy, headers: { 'x-trace': 't1' } };
    await collect(postSpeech(`${server.http}/`, 'Hi.', { format: 'pcm' }, init));
    expect(seen).toEqual([
      { url: `${server.http}/invocations`, headers: { 'content-type': 'application/json', 'x-trace': 't1' } },
    ]);
  });

  it('stopping early leaves nothing pending: the server takes the next request at once', async () => {
    for await (const chunk of postSpeech(server.http, TEXT.repeat(4), { format: 'pcm' })) {
      expect(chunk.byteLength).toBeGreaterThan(0);
      break;
    }
    expect(concat(await collect(postSpeech(server.http, 'Next.', { format: 'pcm' })))).toEqual(
      await postAudio({ text: 'Next.', format: 'pcm' }),
    );
  });
});

describe('TtsSession frame handling (a scripted socket)', () => {
  /** A stand-in WebSocket that plays back frames as the server would send them. */
  class ScriptedSocket {
    static last: ScriptedSocket | undefined;
    binaryType = 'blob';
    readyState = 0;
    readonly sent: (string | Uint8Array)[] = [];
    readonly #listeners = new Map<string, ((event: unknown) => void)[]>();

    constructor(readonly url: string) {
      ScriptedSocket.last = this;
      setTimeout(() => {
        this.readyState = 1;
        this.dispatch('open', {});
      }, 0);
    }

    addEventListener(type: string, listener: (event: unknown) => void): void {
      this.#listeners.set(type, [...(this.#listeners.get(type) ?? []), listener]);
    }

    send(data: string | Uint8Array): void {
      this.sent.push(data);
    }

    close(code = 1005, reason = ''): void {
      this.readyState = 3;
      this.dispatch('close', { code, reason });
    }

    dispatch(type: string, event: unknown): void {
      for (const listener of this.#listeners.get(type) ?? []) listener(event);
    }

    /** A frame from the server: a string is a text frame, bytes a binary frame (as an ArrayBuffer). */
    receive(data: string | Uint8Array): void {
      const payload = typeof data === 'string' ? data : data.slice().buffer;
      this.dispatch('message', { data: payload });
    }
  }

  const json = (value: unknown) => new TextEncoder().encode(JSON.stringify(value));

  it('sends binary JSON frames, classifies binary control frames, and keeps PCM that starts with "{" as audio', async () => {
    const session = await TtsSession.connect('ws://scripted', {
      WebSocket: ScriptedSocket as unknown as WebSocketConstructor,
    });
    const socket = ScriptedSocket.last!;
    expect(socket.binaryType).toBe('arraybuffer');
    const id = session.send('Hi.', { voice: 'af_sky', speed: 1.25 });
    expect(socket.sent[0]).toBeInstanceOf(Uint8Array);
    expect(JSON.parse(new TextDecoder().decode(socket.sent[0] as Uint8Array))).toEqual({
      text: 'Hi.',
      voice: 'af_sky',
      speed: 1.25,
      request_id: id,
    });

    const pcmLikeJson = Uint8Array.from([...json({ a: 1 }), 0x00, 0x01]);
    socket.receive(json({ type: 'synthesis_start', request_id: id })); // control as a binary frame
    socket.receive(Uint8Array.from([0x7b, 0x00, 0x7b, 0x00]));
    socket.receive(pcmLikeJson);
    socket.receive('{"type":"some_future_type"}'); // unknown control: ignored
    socket.receive(
      json({ type: 'synthesis_complete', request_id: id, total_duration_s: 0.5, elapsed_s: 0.1 }),
    );
    socket.close(1000, 'bye');

    const events: TtsEvent[] = [];
    for await (const event of session) events.push(event);
    expect(events).toEqual([
      { type: 'start', requestId: id },
      { type: 'audio', requestId: id, bytes: Uint8Array.from([0x7b, 0x00, 0x7b, 0x00]) },
      { type: 'audio', requestId: id, bytes: pcmLikeJson },
      {
        type: 'complete',
        requestId: id,
        totalDurationS: 0.5,
        elapsedS: 0.1,
        raw: { type: 'synthesis_complete', request_id: id, total_duration_s: 0.5, elapsed_s: 0.1 },
      },
      { type: 'closed', code: 1000, reason: 'bye' },
    ]);
  });

  it('attributes audio to the oldest open request when a server sends no synthesis_start', async () => {
    const session = await TtsSession.connect('ws://scripted', {
      WebSocket: ScriptedSocket as unknown as WebSocketConstructor,
    });
    const socket = ScriptedSocket.last!;
    const first = session.send('One.');
    const second = session.send('Two.');
    socket.receive(Uint8Array.from([1, 0]));
    socket.receive(
      json({ type: 'synthesis_complete', request_id: first, total_duration_s: 0, elapsed_s: 0 }),
    );
    socket.receive(Uint8Array.from([2, 0]));
    socket.receive(json({ type: 'error', code: 'inference_failed', message: 'failed', request_id: second }));
    socket.receive(json({ type: 'error', code: 'invalid_json', message: 'not JSON' }));
    socket.close(1001, 'going away');
    const events = await readUntil(session, () => false);
    expect(events.map((e) => [e.type, e.type === 'closed' ? e.code : e.requestId])).toEqual([
      ['audio', first],
      ['complete', first],
      ['audio', second],
      ['error', second],
      ['error', undefined],
      ['closed', 1001],
    ]);
  });

  it('close() times out when the server never closes', async () => {
    const session = await TtsSession.connect('ws://scripted', {
      WebSocket: ScriptedSocket as unknown as WebSocketConstructor,
    });
    const socket = ScriptedSocket.last!;
    const closeSent = socket.sent.length;
    // The scripted socket closes only when told to; make close() from the client a no-op first.
    socket.close = () => {};
    await expect(session.close(50)).rejects.toThrow(/did not close the session within 50 ms/);
    expect(new TextDecoder().decode(socket.sent[closeSent] as Uint8Array)).toBe('{"type":"close"}');
  });

  const sentJson = (socket: ScriptedSocket) =>
    socket.sent.map((m) => JSON.parse(typeof m === 'string' ? m : new TextDecoder().decode(m)) as unknown);
  const connectScripted = async () => {
    const session = await TtsSession.connect('ws://scripted', {
      WebSocket: ScriptedSocket as unknown as WebSocketConstructor,
    });
    return { session, socket: ScriptedSocket.last! };
  };

  it('a cancelled answer settles what it names: request() rejects with code cancelled, later audio is never theirs', async () => {
    const { session, socket } = await connectScripted();
    const first = session.send('One.');
    const collected = session.request('Two.', { request_id: 'two' });
    const answer = session.cancel();
    expect(sentJson(socket).at(-1)).toEqual({ type: 'cancel' });
    socket.receive(Uint8Array.from([1, 0])); // no synthesis_start: the oldest open request's
    socket.receive(json({ type: 'synthesis_cancelled', request_id: first, cancelled: [first, 'two'] }));
    const third = session.send('Three.');
    // Again no synthesis_start: the cancelled requests are no longer open, so it is the third's.
    socket.receive(Uint8Array.from([3, 0]));
    socket.receive(
      json({
        type: 'word_timestamps',
        request_id: third,
        words: [{ word: 'Three.', start_s: 0, end_s: 0.5 }],
      }),
    );
    socket.receive(
      json({ type: 'synthesis_complete', request_id: third, total_duration_s: 0, elapsed_s: 0 }),
    );
    socket.close(1000, 'bye');

    const cancelled = { type: 'cancelled', requestId: first, cancelled: [first, 'two'] };
    expect(await answer).toEqual(cancelled);
    await expect(collected).rejects.toBeInstanceOf(TtsRequestError);
    await expect(collected).rejects.toMatchObject({ code: 'cancelled', requestId: 'two' });
    const events = await readUntil(session, () => false);
    expect(events.map((e) => [e.type, e.type === 'closed' ? e.code : e.requestId])).toEqual([
      ['audio', first],
      ['cancelled', first],
      ['audio', third],
      ['words', third],
      ['complete', third],
      ['closed', 1000],
    ]);
    expect(events[1]).toEqual(cancelled);
    expect(events[3]).toEqual({
      type: 'words',
      requestId: third,
      words: [{ word: 'Three.', startS: 0, endS: 0.5 }],
    });
  });

  it('cancel() refuses an unusable id without sending, and fails when the session closes before the answer', async () => {
    const { session, socket } = await connectScripted();
    await expect(session.cancel('')).rejects.toThrow(RangeError);
    await expect(session.cancel('x'.repeat(129))).rejects.toThrow(/at most 128 characters/);
    expect(socket.sent).toEqual([]);
    const answer = session.cancel('some-id');
    expect(sentJson(socket)).toEqual([{ type: 'cancel', request_id: 'some-id' }]);
    socket.close(1006, '');
    await expect(answer).rejects.toThrow(/closed \(code 1006\) before the cancel was answered/);
    await expect(session.cancel()).rejects.toThrow(/closed or closing/);
  });

  it('append() sends options and the id on the first append only; flush() resolves with the audio, words and completion', async () => {
    const { session, socket } = await connectScripted();
    const id = session.append('Hel', { voice: 'af_sky', timestamps: true });
    expect(session.append('lo. ')).toBe(id);
    expect(() => session.append('Bye.', { speed: 2 })).toThrow(/Only the first append.*speed/);
    expect(session.append('Bye.')).toBe(id);
    const flushed = session.flush();
    expect(sentJson(socket)).toEqual([
      { type: 'append', text: 'Hel', voice: 'af_sky', timestamps: true, request_id: id },
      { type: 'append', text: 'lo. ', request_id: id },
      { type: 'append', text: 'Bye.', request_id: id },
      { type: 'flush', request_id: id },
    ]);
    socket.receive(json({ type: 'synthesis_start', request_id: id }));
    socket.receive(
      json({ type: 'word_timestamps', request_id: id, words: [{ word: 'Hello.', start_s: 0, end_s: 0.1 }] }),
    );
    socket.receive(Uint8Array.from([1, 0]));
    socket.receive(
      json({ type: 'word_timestamps', request_id: id, words: [{ word: 'Bye.', start_s: 0.1, end_s: 0.2 }] }),
    );
    socket.receive(Uint8Array.from([2, 0]));
    socket.receive(
      json({ type: 'synthesis_complete', request_id: id, total_duration_s: 0.2, elapsed_s: 0.1 }),
    );
    const result = await flushed;
    expect(result.audio).toEqual(Uint8Array.from([1, 0, 2, 0]));
    expect(result.words).toEqual([
      { word: 'Hello.', startS: 0, endS: 0.1 },
      { word: 'Bye.', startS: 0.1, endS: 0.2 },
    ]);
    expect(result.complete).toMatchObject({ type: 'complete', requestId: id, totalDurationS: 0.2 });
    // Unlike request(), the utterance's events also went to events(), for playing as they come.
    socket.close(1000, 'bye');
    const events = await readUntil(session, () => false);
    expect(events.map((e) => e.type)).toEqual([
      'start',
      'words',
      'audio',
      'words',
      'audio',
      'complete',
      'closed',
    ]);
  });

  it('an append the server refuses does not end the utterance, but its flush() rejects with it; a failed synthesis ends it', async () => {
    const { session, socket } = await connectScripted();
    const id = session.append('Kept. ');
    session.append('Too long.');
    const flushed = session.flush();
    socket.receive(json({ type: 'error', request_id: id, code: 'text_too_long', message: 'not added' }));
    socket.receive(json({ type: 'synthesis_start', request_id: id }));
    socket.receive(Uint8Array.from([1, 0]));
    socket.receive(json({ type: 'synthesis_complete', request_id: id, total_duration_s: 0, elapsed_s: 0 }));
    await expect(flushed).rejects.toMatchObject({
      name: 'TtsRequestError',
      code: 'text_too_long',
      requestId: id,
    });

    const failing = session.append('Fails.');
    const second = session.flush();
    expect(failing).not.toBe(id);
    socket.receive(json({ type: 'synthesis_start', request_id: failing }));
    socket.receive(json({ type: 'error', request_id: failing, code: 'inference_failed', message: 'failed' }));
    await expect(second).rejects.toMatchObject({ code: 'inference_failed', requestId: failing });
    // Ended: audio without a synthesis_start is not the failed utterance's.
    socket.receive(Uint8Array.from([9, 0]));
    socket.close(1000, 'bye');
    const events = await readUntil(session, () => false);
    expect(events.map((e) => [e.type, e.type === 'closed' ? e.code : e.requestId])).toEqual([
      ['error', id],
      ['start', id],
      ['audio', id],
      ['complete', id],
      ['start', failing],
      ['error', failing],
      ['audio', ''],
      ['closed', 1000],
    ]);
  });

  it('a cancel drops the open utterance on the client too: the next append opens a new one, with its options', async () => {
    const { session, socket } = await connectScripted();
    const first = session.append('Never started', { voice: 'zz_nobody' });
    socket.receive(
      json({ type: 'error', request_id: first, code: 'voice_not_found', message: 'no such voice' }),
    );
    const answer = session.cancel();
    const second = session.append('Again.', { voice: 'af_sky' });
    expect(second).not.toBe(first);
    // The server never opened the first utterance, so it lists nothing: the client ends it anyway.
    socket.receive(json({ type: 'synthesis_cancelled', cancelled: [] }));
    expect(await answer).toEqual({ type: 'cancelled', cancelled: [] });
    socket.receive(Uint8Array.from([5, 0])); // no synthesis_start: the open utterance's
    const flushed = session.flush();
    socket.receive(
      json({ type: 'synthesis_complete', request_id: second, total_duration_s: 0, elapsed_s: 0 }),
    );
    expect((await flushed).audio).toEqual(Uint8Array.from([5, 0]));
    expect(sentJson(socket)).toEqual([
      { type: 'append', text: 'Never started', voice: 'zz_nobody', request_id: first },
      { type: 'cancel' },
      { type: 'append', text: 'Again.', voice: 'af_sky', request_id: second },
      { type: 'flush', request_id: second },
    ]);
  });

  it('flush() with nothing open sends a flush with a new id and resolves with the empty completion', async () => {
    const { session, socket } = await connectScripted();
    const flushed = session.flush();
    const [message] = sentJson(socket) as { type: string; request_id: string }[];
    expect(message).toEqual({ type: 'flush', request_id: expect.any(String) });
    socket.receive(
      json({
        type: 'synthesis_complete',
        request_id: message!.request_id,
        total_duration_s: 0,
        elapsed_s: 0,
        chunks: 0,
      }),
    );
    const result = await flushed;
    expect(result.audio.length).toBe(0);
    expect(result.complete.requestId).toBe(message!.request_id);
    // The promise of a flush may be ignored: a session that closes under it reports nothing unhandled.
    session.flush();
    socket.close(1006, '');
  });
});

describe('client module boundaries', () => {
  /** Every module reachable from the client's index.ts through relative imports, with its bare imports. */
  function importGraph(entry: string): Map<string, string[]> {
    const graph = new Map<string, string[]>();
    const visit = (file: string) => {
      if (graph.has(file)) return;
      const source = readFileSync(file, 'utf8');
      const specifiers = [
        ...source.matchAll(/(?:import|export)\s[^'"]*?from\s+'([^']+)'|import\('([^']+)'\)/g),
      ].map((m) => (m[1] ?? m[2])!);
      graph.set(
        file,
        specifiers.filter((s) => !s.startsWith('.')),
      );
      for (const s of specifiers.filter((s) => s.startsWith('.'))) visit(resolve(dirname(file), s));
    };
    visit(entry);
    return graph;
  }

  it('loads no server code: no Fastify, onnxruntime-node, worker threads, espeak-ng or server/', () => {
    const graph = importGraph(fileURLToPath(new URL('../../packages/client/src/index.ts', import.meta.url)));
    const root = fileURLToPath(new URL('../../', import.meta.url));
    const files = [...graph.keys()].map((f) => f.slice(root.length));
    expect(files).toEqual(
      expect.arrayContaining([
        'packages/client/src/index.ts',
        'packages/client/src/session.ts',
        'model/text/sentences.ts',
        'protocol/index.ts',
      ]),
    );
    // The client, the pure wire contract and the sentence chunker: nothing else.
    expect(
      files.filter(
        (f) =>
          !f.startsWith('packages/client/src/') &&
          !f.startsWith('protocol/') &&
          f !== 'model/text/sentences.ts',
      ),
    ).toEqual([]);
    const bare = [...graph.values()].flat();
    expect(
      bare.filter((s) => /fastify|onnxruntime|worker_threads|espeak|phonemizer|pino|aws-sdk/.test(s)),
    ).toEqual([]);
    // Browser-safe: no Node built-in module is imported (the `ws` fallback is loaded only in Node).
    expect(bare.filter((s) => s.startsWith('node:'))).toEqual([]);
  });
});
