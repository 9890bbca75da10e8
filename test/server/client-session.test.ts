/**
 * The client package against a real listening server (stand-in model): the WebSocket session
 * client, the SSE reader and the streaming POST, checked against the server's binary POST for the
 * same text. Its frame handling without a server: test/unit/client/client-session.test.ts.
 */
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
import { bytesDiff, sharedServer, type TestServer } from './harness.ts';

let server: TestServer;
beforeAll(async () => {
  server = await sharedServer();
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
      expect(bytesDiff(audio, await postAudio({ text, format: 'pcm' }))).toBeUndefined();
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
    expect(
      bytesDiff(audio, await postAudio({ text: 'With my own id.', voice: 'af_bella', format: 'wav' })),
    ).toBeUndefined();
    expect(events.at(-1)).toMatchObject({ type: 'complete', requestId: 'mine-1' });
    await session.close();
  });

  it('request() collects one request; several may run at once and each gets its own audio', async () => {
    const session = await TtsSession.connect(server.ws);
    const texts = ['One request.', 'Another request, a little longer than the first.', 'Last.'];
    const results = await Promise.all(texts.map((text) => session.request(text, { format: 'pcm' })));
    for (const [i, result] of results.entries()) {
      expect(bytesDiff(result.audio, await postAudio({ text: texts[i], format: 'pcm' }))).toBeUndefined();
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
    expect(
      bytesDiff(result.audio, await postAudio({ text: 'Sent as a text frame.', format: 'pcm' })),
    ).toBeUndefined();
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
      expect(bytesDiff(audio, await postAudio({ text, format }))).toBeUndefined();
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
      expect(bytesDiff(concat(chunks), await postAudio({ text: TEXT, format }))).toBeUndefined();
    },
  );

  it('SSE through readSse gives the same audio', async () => {
    const events = [];
    for await (const event of readSse(postSpeech(server.http, TEXT, { format: 'pcm', transport: 'sse' })))
      events.push(decodeAudioEvent(event));
    const audio = concat(events.flatMap((e) => (e.type === 'audio_chunk' ? [e.audio] : [])));
    expect(bytesDiff(audio, await postAudio({ text: TEXT, format: 'pcm' }))).toBeUndefined();
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
    expect(
      bytesDiff(concat(spoken), await postAudio({ text: 'Hello there.', format: 'pcm' })),
    ).toBeUndefined();
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
    expect(
      bytesDiff(
        concat(await collect(postSpeech(server.http, 'Next.', { format: 'pcm' }))),
        await postAudio({ text: 'Next.', format: 'pcm' }),
      ),
    ).toBeUndefined();
  });
});
