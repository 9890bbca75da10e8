/**
 * The client package's session without a server: frame handling over a scripted socket that plays
 * back what a server would send, and the package's module boundaries (no server code, browser-safe).
 */
import { readFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { TtsRequestError, TtsSession, type TtsEvent, type WebSocketConstructor } from 'kokoro-stream-client';

/** Reads events until `done` says so (or the session closes). */
async function readUntil(session: TtsSession, done: (seen: TtsEvent[]) => boolean): Promise<TtsEvent[]> {
  const seen: TtsEvent[] = [];
  for await (const event of session.events()) {
    seen.push(event);
    if (done(seen)) break;
  }
  return seen;
}

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

  it('phoneme_timestamps frames become phonemes events, each sound with its viseme, before the audio', async () => {
    const { session, socket } = await connectScripted();
    const id = session.append('Hi.', { phoneme_timestamps: true });
    const flushed = session.flush();
    socket.receive(json({ type: 'synthesis_start', request_id: id }));
    socket.receive(
      json({
        type: 'phoneme_timestamps',
        request_id: id,
        phonemes: [
          { phoneme: 'h', viseme: 'kk', start_s: 0, duration_s: 0.05 },
          { phoneme: 'ˈI', viseme: 'aa', start_s: 0.05, duration_s: 0.1 },
        ],
      }),
    );
    socket.receive(Uint8Array.from([1, 0]));
    socket.receive(
      json({ type: 'synthesis_complete', request_id: id, total_duration_s: 0.15, elapsed_s: 0.1 }),
    );
    await flushed;
    socket.close(1000, 'bye');
    const events = await readUntil(session, () => false);
    expect(events.map((e) => e.type)).toEqual(['start', 'phonemes', 'audio', 'complete', 'closed']);
    expect(events[1]).toEqual({
      type: 'phonemes',
      requestId: id,
      phonemes: [
        { phoneme: 'h', viseme: 'kk', startS: 0, durationS: 0.05 },
        { phoneme: 'ˈI', viseme: 'aa', startS: 0.05, durationS: 0.1 },
      ],
    });
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
    const graph = importGraph(
      fileURLToPath(new URL('../../../packages/client/src/index.ts', import.meta.url)),
    );
    const root = fileURLToPath(new URL('../../../', import.meta.url));
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
