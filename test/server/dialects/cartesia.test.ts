/**
 * Cartesia's protocol driven by real clients, unchanged but for the base URL and a dummy key:
 * LiveKit's Cartesia plugin (the WebSocket, and synthesize() over HTTP), Cartesia's SDK (its
 * WebSocket contexts, `tts.generate`, `tts.generateSSE`); a barge-in answered with what the
 * listener received; bad input in Cartesia's error shape with the other contexts finishing;
 * `max_buffer_delay_ms`; a flood; the dialect chosen by SageMaker's invocation path. Audio is
 * checked against the same text through POST /invocations. Every bad HTTP input is tested
 * in-process (test/app/).
 */
import { createRequire } from 'node:module';
import net from 'node:net';
import Cartesia, { BadRequestError } from '@cartesia/cartesia-js';
import * as lkCartesia from '@livekit/agents-plugin-cartesia';
import { beforeAll, describe, expect, it } from 'vitest';
import { CARTESIA_VOICES } from '../../../server/dialects/cartesia/voices.ts';
import {
  CARTESIA_DEFAULT,
  chunkedBody,
  decodedAudio,
  expectWholeText,
  httpServer,
  liveKitStream,
  LONG,
  messages,
  open,
  overPlainHttp,
  rejection,
  socketServer,
  SPOKEN_WORDS,
  synthesizedPcm,
  TEXT,
  TWO_SENTENCES,
  WORDS,
  wsBase,
  pcmOf,
  reference,
} from './clients.ts';
import { bytesDiff, type TestClient, type TestServer } from '../harness.ts';

// Cartesia's ES module build opens its socket with the runtime's WebSocket, which Node 20 lacks;
// its CommonJS build uses `ws`, as a Node application loading it with require() does.
const { Cartesia: CartesiaWs } = createRequire(import.meta.url)(
  '@cartesia/cartesia-js',
) as typeof import('@cartesia/cartesia-js');

let sockets: TestServer;
let server: TestServer;
let cartesia: Cartesia;
beforeAll(async () => {
  sockets = await socketServer();
  server = await httpServer();
  cartesia = new Cartesia({ apiKey: 'dummy', baseURL: server.http, maxRetries: 0 });
});

describe('LiveKit agents 1.9 TTS plugins, streamed text in', () => {
  it('Cartesia (/tts/websocket): audio frames and word timestamps', async () => {
    const tts = new lkCartesia.TTS({ apiKey: 'dummy', baseUrl: sockets.http, voice: CARTESIA_DEFAULT });
    const out = await liveKitStream(tts as never, [TWO_SENTENCES]);
    await tts.close();
    expect(out.finals).toBe(1);
    await expectWholeText(out, sockets);
    expect(out.transcript.join(' ')).toBe(SPOKEN_WORDS.join(' '));
  });
});

describe('the vendors’ SDKs', () => {
  it('Cartesia SDK: a context pushed in pieces; pcm_f32le is the same audio as floats; timestamps name the words', async () => {
    const client = new CartesiaWs({ apiKey: 'dummy', baseURL: sockets.http, maxRetries: 0 });
    const ws = await client.tts.websocket({
      createConnection: (o: { host: string; port: number }) => net.connect({ host: o.host, port: o.port }),
    } as never);
    const errors: unknown[] = [];
    ws.on('error', (e: unknown) => errors.push(e));
    const ctx = ws.context({
      model_id: 'sonic-3',
      voice: { mode: 'id', id: 'af_heart' },
      output_format: { container: 'raw', encoding: 'pcm_f32le', sample_rate: 24000 },
      add_timestamps: true,
    } as never);
    await ctx.push({ transcript: 'The SDK writes this ' });
    await ctx.push({ transcript: 'in two parts.' });
    await ctx.no_more_inputs();
    const floats: Buffer[] = [];
    const words: string[] = [];
    const types: string[] = [];
    for await (const event of ctx.receive({ timeout: 20_000 })) {
      const e = event as { type: string; audio?: Uint8Array; word_timestamps?: { words: string[] } };
      types.push(e.type);
      if (e.type === 'chunk') floats.push(Buffer.from(e.audio!));
      if (e.type === 'timestamps') words.push(...e.word_timestamps!.words);
    }
    ws.close();
    expect(errors).toEqual([]);
    expect(types.at(-1)).toBe('done');
    expect(words).toEqual(['The', 'SDK', 'writes', 'this', 'in', 'two', 'parts.']);
    // Chunks of Cartesia's size, 16384 bytes of audio, whatever the sentence's length.
    expect(Math.max(...floats.map((f) => f.length))).toBe(16_384);
    const f32 = Buffer.concat(floats);
    const s16 = await pcmOf('The SDK writes this in two parts.');
    expect(f32.length).toBe(s16.length * 2);
    for (let i = 0; i < s16.length / 2; i += 97) {
      expect(f32.readFloatLE(i * 4)).toBe(s16.readInt16LE(i * 2) / 32768);
    }
  });

  it('Cartesia SDK: flush() speaks what is held and answers flush_done after its audio; chunks carry their flush_id', async () => {
    // Cartesia's own example (docs: WebSocket Flushing): push, flush, push, no_more_inputs.
    const client = new CartesiaWs({ apiKey: 'dummy', baseURL: sockets.http, maxRetries: 0 });
    const ws = await client.tts.websocket({
      createConnection: (o: { host: string; port: number }) => net.connect({ host: o.host, port: o.port }),
    } as never);
    const ctx = ws.context({
      model_id: 'sonic-3',
      voice: { mode: 'id', id: 'af_heart' },
      output_format: { container: 'raw', encoding: 'pcm_s16le', sample_rate: 24000 },
    } as never);
    await ctx.push({ transcript: 'Stay hungry, ' });
    await ctx.flush();
    await ctx.push({ transcript: 'stay foolish.' });
    await ctx.no_more_inputs();
    const events: { type: string; flush_id?: number; audio?: Uint8Array }[] = [];
    for await (const event of ctx.receive({ timeout: 20_000 })) events.push(event as never);
    ws.close();
    const flushDone = events.findIndex((e) => e.type === 'flush_done');
    expect(events[flushDone]).toMatchObject({
      type: 'flush_done',
      flush_done: true,
      done: false,
      flush_id: 1,
    });
    const before = events.slice(0, flushDone).filter((e) => e.type === 'chunk');
    const after = events.slice(flushDone + 1).filter((e) => e.type === 'chunk');
    expect(new Set(before.map((e) => e.flush_id))).toEqual(new Set([1]));
    expect(new Set(after.map((e) => e.flush_id))).toEqual(new Set([2]));
    // The flush spoke the unfinished sentence at once; the rest followed it.
    const audio = (chunks: typeof before) => Buffer.concat(chunks.map((e) => Buffer.from(e.audio!)));
    expect(audio(before).equals(await pcmOf('Stay hungry,'))).toBe(true);
    expect(audio(after).equals(await pcmOf('stay foolish.'))).toBe(true);
    expect(events.at(-1)!.type).toBe('done');
  });
});

describe('barge-in on every dialect: the answer says what the listener received', () => {
  it('Cartesia: cancel cuts the context; a done with heard answers it', async () => {
    const client = await open(`${wsBase(sockets)}/tts/websocket`);
    const request = {
      model_id: 'sonic-3',
      voice: { mode: 'id', id: 'af_heart' },
      output_format: { container: 'raw', encoding: 'pcm_s16le', sample_rate: 16000 },
      context_id: 'c1',
    };
    client.send({ ...request, transcript: `First sentence. ${LONG}` }, false);
    await client.until((c) => decodedAudio(c, 'data', () => true).length > 0, 'a chunk');
    client.send({ context_id: 'c1', cancel: true }, false);
    await client.until((c) => messages(c).some((m) => m.type === 'done'), 'done');
    const done = messages(client).find((m) => m.type === 'done')!;
    const sent = decodedAudio(client, 'data', () => true).length;
    expect(done).toMatchObject({
      type: 'done',
      context_id: 'c1',
      cancelled: true,
      heard: { samples: sent / 2, sample_rate: 16000 },
    });
    // A cancelled context is closed: its id is refused, in Cartesia's error shape.
    client.send({ ...request, transcript: 'Again?' }, false);
    await client.until((c) => messages(c).some((m) => m.type === 'error'), 'the error');
    expect(messages(client).find((m) => m.type === 'error')).toMatchObject({
      type: 'error',
      done: true,
      status_code: 409,
      error_code: 'context_closed',
      context_id: 'c1',
      error: expect.stringMatching(/cannot be used again/),
    });
    client.close();
  });
});

describe('bad input: the dialect’s own error shape, and the socket serves on', () => {
  it('Cartesia: unknown voice, unsupported format, bad messages and too many contexts — errors with context_id; other contexts finish', async () => {
    const client = await open(`${wsBase(sockets)}/tts/websocket`);
    const good = {
      model_id: 'sonic-3',
      voice: 'af_heart',
      output_format: { container: 'raw', encoding: 'pcm_s16le', sample_rate: 24000 },
    };
    client.send(
      { ...good, voice: { mode: 'id', id: 'no-such-voice' }, transcript: 'x', context_id: 'v' },
      false,
    );
    client.send(
      {
        ...good,
        output_format: { container: 'raw', encoding: 'pcm_s24le', sample_rate: 8000 },
        transcript: 'x',
        context_id: 'f',
      },
      false,
    );
    client.send(
      { ...good, output_format: { container: 'mp3', sample_rate: 44100 }, transcript: 'x', context_id: 'm' },
      false,
    );
    client.send({ ...good, transcript: 7, context_id: 't' }, false);
    for (const id of ['k1', 'k2', 'k3', 'k4', 'k5'])
      client.send({ ...good, transcript: 'Open ', continue: true, context_id: id }, false);
    client.send({ ...good, transcript: 'One too many.', context_id: 'k6' }, false);
    await client.until((c) => messages(c).filter((m) => m.type === 'error').length >= 5, 'five errors');
    const errors = messages(client).filter((m) => m.type === 'error');
    expect(errors.map((e) => [e.error_code, e.context_id, e.status_code])).toEqual([
      ['voice_not_found', 'v', 400],
      ['invalid_option', 'f', 400],
      ['invalid_option', 'm', 400],
      ['invalid_option', 't', 400],
      ['too_many_contexts', 'k6', 429],
    ]);
    for (const e of errors)
      expect(e).toMatchObject({ done: true, error: e.message, title: expect.any(String) });
    for (const id of ['k1', 'k2', 'k3', 'k4', 'k5'])
      client.send({ ...good, transcript: 'now ends.', context_id: id }, false);
    await client.until((c) => messages(c).filter((m) => m.type === 'done').length >= 5, 'five done');
    // Finished contexts are let go: a new one opens.
    client.send({ ...good, transcript: 'A new turn.', context_id: 'k7' }, false);
    await client.until((c) => messages(c).some((m) => m.type === 'done' && m.context_id === 'k7'), 'k7');
    expect(client.closeCode).toBeUndefined();
    client.close();
  });

  it('Cartesia: a context whose first request fails holds no slot; a request without context_id is complete', async () => {
    const client = await open(`${wsBase(sockets)}/tts/websocket`);
    const good = {
      model_id: 'sonic-3',
      voice: 'af_heart',
      output_format: { container: 'raw', encoding: 'pcm_s16le', sample_rate: 24000 },
    };
    // Six turns whose first request is refused (speed out of range), more than WS_MAX_CONTEXTS.
    for (let i = 0; i < 6; i++) {
      client.send(
        { ...good, speed: 3, transcript: 'Too fast. ', continue: true, context_id: `bad${i}` },
        false,
      );
    }
    await client.until((c) => messages(c).filter((m) => m.type === 'error').length >= 6, 'six errors');
    expect(new Set(messages(client).map((m) => m.error_code))).toEqual(new Set(['invalid_option']));
    // A request without an id is complete as it is, though it says continue.
    client.send({ ...good, transcript: 'No id, said at once.', continue: true }, false);
    await client.until((c) => messages(c).some((m) => m.type === 'done'), 'the request without an id');
    // None of the refused ones holds a slot: five contexts open at once.
    for (let i = 0; i < 5; i++) {
      client.send({ ...good, transcript: 'Open ', continue: true, context_id: `ok${i}` }, false);
    }
    for (let i = 0; i < 5; i++) client.send({ ...good, transcript: 'done.', context_id: `ok${i}` }, false);
    await client.until((c) => messages(c).filter((m) => m.type === 'done').length >= 6, 'every turn');
    expect(messages(client).filter((m) => m.type === 'error')).toHaveLength(6);
    client.close();
  });
});

describe('Cartesia’s max_buffer_delay_ms', () => {
  const request = {
    model_id: 'sonic-3',
    voice: 'af_heart',
    output_format: { container: 'raw', encoding: 'pcm_s16le', sample_rate: 24000 },
    continue: true,
  };
  const chunks = (client: TestClient, context: string) =>
    decodedAudio(client, 'data', (m) => m.context_id === context);

  it('0 speaks each piece as it arrives; a delay speaks what ends no sentence once it has passed; by default it waits 3 s', async () => {
    const client = await open(`${wsBase(sockets)}/tts/websocket`);
    const unfinished = 'Words that end no sentence';
    client.send({ ...request, context_id: 'held', transcript: unfinished }, false);
    client.send({ ...request, context_id: 'now', transcript: unfinished, max_buffer_delay_ms: 0 }, false);
    client.send({ ...request, context_id: 'soon', transcript: unfinished, max_buffer_delay_ms: 300 }, false);
    await client.until((c) => chunks(c, 'now').length > 0 && chunks(c, 'soon').length > 0, 'now and soon');
    const expected = await pcmOf(unfinished);
    expect(chunks(client, 'now').equals(expected)).toBe(true);
    expect(chunks(client, 'soon').equals(expected)).toBe(true);
    // Cartesia's default, 3 s, has not passed: what "held" has is still held.
    expect(chunks(client, 'held').length).toBe(0);
    for (const context of ['held', 'now', 'soon'])
      client.send({ ...request, context_id: context, transcript: '', continue: false }, false);
    await client.until((c) => messages(c).filter((m) => m.type === 'done').length === 3, 'three done');
    expect(chunks(client, 'held').equals(expected)).toBe(true);
    expect(messages(client).filter((m) => m.type === 'error')).toEqual([]);
    client.close();
  });
});

describe('a flood in Cartesia’s dialect', () => {
  it('text past the unspoken-text bound: an error naming the context; the context and socket go on', async () => {
    const client = await open(`${wsBase(sockets)}/tts/websocket`);
    const good = {
      model_id: 'sonic-3',
      voice: 'af_heart',
      output_format: { container: 'raw', encoding: 'pcm_s16le', sample_rate: 16000 },
      context_id: 'flood',
      continue: true,
    };
    const unending = 'word '.repeat(2000);
    for (let i = 0; i < 12; i++) client.send({ ...good, transcript: unending }, false);
    await client.until((c) => messages(c).some((m) => m.type === 'error'), 'the error');
    expect(messages(client).find((m) => m.type === 'error')).toMatchObject({
      error_code: 'text_too_long',
      status_code: 413,
      context_id: 'flood',
    });
    client.send({ ...good, transcript: 'The end.', continue: false }, false);
    await client.until((c) => messages(c).some((m) => m.type === 'done' && m.context_id === 'flood'), 'done');
    expect(client.closeCode).toBeUndefined();
    client.close();
  });
});

describe('SageMaker: the invocation path header selects each dialect', () => {
  const sagemaker = (path: string, query?: string) =>
    open(`${wsBase(sockets)}/invocations-bidirectional-stream`, {
      'x-amzn-sagemaker-model-invocation-path': path,
      ...(query !== undefined ? { 'x-amzn-sagemaker-model-query-string': query } : {}),
    });

  it('Cartesia', async () => {
    const client = await sagemaker('tts/websocket');
    client.send(
      {
        model_id: 'sonic-3',
        voice: 'af_heart',
        output_format: { container: 'raw', encoding: 'pcm_s16le', sample_rate: 24000 },
        transcript: 'Through SageMaker.',
        context_id: 's',
      },
      false,
    );
    await client.until((c) => messages(c).some((m) => m.type === 'done'), 'done');
    expect(decodedAudio(client, 'data', () => true).equals(await pcmOf('Through SageMaker.'))).toBe(true);
    client.close();
  });
});

describe('Cartesia’s SDK', () => {
  const request = {
    model_id: 'sonic-3',
    transcript: TEXT,
    voice: { mode: 'id', id: CARTESIA_DEFAULT },
    output_format: { container: 'raw', encoding: 'pcm_s16le', sample_rate: 24000 },
  } as const;

  it('tts.generate (/tts/bytes): raw PCM16, the same samples as POST /invocations', async () => {
    const res = await cartesia.tts.generate(request);
    expect(res.headers.get('content-type')).toBe('audio/pcm;rate=24000;encoding=s16le;channels=1');
    expect(bytesDiff(Buffer.from(await res.arrayBuffer()), await reference('af_heart'))).toBeUndefined();
  });

  it('pcm_f32le is pcm_s16le over 32768, sample for sample', async () => {
    const s16 = Buffer.from(await (await cartesia.tts.generate(request)).arrayBuffer());
    const f32 = Buffer.from(
      await (
        await cartesia.tts.generate({
          ...request,
          output_format: { ...request.output_format, encoding: 'pcm_f32le' },
        })
      ).arrayBuffer(),
    );
    expect(f32.length).toBe(s16.length * 2);
    const expected = Buffer.alloc(f32.length);
    for (let i = 0; i < s16.length / 2; i++) expected.writeFloatLE(s16.readInt16LE(i * 2) / 32768, i * 4);
    expect(bytesDiff(f32, expected)).toBeUndefined();
  });

  it('wav at 16 kHz: a header and the samples of PCM at 16 kHz; the voice as a bare id', async () => {
    const res = await cartesia.tts.generate({
      ...request,
      voice: CARTESIA_DEFAULT,
      output_format: { container: 'wav', encoding: 'pcm_s16le', sample_rate: 16000 },
    });
    expect(res.headers.get('content-type')).toBe('audio/wav');
    const wav = Buffer.from(await res.arrayBuffer());
    expect(wav.subarray(0, 4).toString()).toBe('RIFF');
    expect(wav.readUInt32LE(24)).toBe(16000);
    expect(bytesDiff(wav.subarray(44), await reference('af_heart', 16_000))).toBeUndefined();
  });

  it('tts.generateSSE (/tts/sse): chunk events with the audio, timestamps with the words, then done', async () => {
    const stream = await cartesia.tts.generateSSE({
      ...request,
      add_timestamps: true,
      context_id: 'ctx-sse',
    });
    const events: Record<string, unknown>[] = [];
    for await (const event of stream) events.push(event as unknown as Record<string, unknown>);
    expect(events.at(-1)).toEqual({ type: 'done', done: true, status_code: 200, context_id: 'ctx-sse' });
    const chunks = events.filter((e) => e.type === 'chunk');
    expect(chunks.length).toBeGreaterThan(1);
    for (const chunk of chunks)
      expect(chunk).toMatchObject({ done: false, status_code: 206, context_id: 'ctx-sse' });
    const pieces = chunks.map((c) => Buffer.from(c.data as string, 'base64'));
    // Cartesia's chunk size, 16384 bytes of audio, however long the sentence.
    expect(Math.max(...pieces.map((p) => p.length))).toBe(16_384);
    const audio = Buffer.concat(pieces);
    expect(bytesDiff(audio, await reference('af_heart'))).toBeUndefined();
    const stamps = events
      .filter((e) => e.type === 'timestamps')
      .map((e) => e.word_timestamps as { words: string[]; start: number[]; end: number[] });
    expect(stamps.flatMap((s) => s.words)).toEqual(WORDS);
    const starts = stamps.flatMap((s) => s.start);
    expect(starts).toEqual([...starts].sort((a, b) => a - b));
    expect(Math.abs(stamps.at(-1)!.end.at(-1)! - audio.length / 2 / 24_000)).toBeLessThanOrEqual(0.05);
  });

  it('/tts/bytes writes its audio in chunks of at most 16384 bytes, as the SSE route does', async () => {
    const { chunks, head } = await chunkedBody(server, '/tts/bytes', request);
    expect(head).toMatch(/^HTTP\/1\.1 200 /);
    expect(head).toMatch(/\r\ntransfer-encoding: chunked\r\n/i);
    expect(Math.max(...chunks.map((c) => c.length))).toBe(16_384);
    expect(bytesDiff(Buffer.concat(chunks), await reference('af_heart'))).toBeUndefined();
  });

  it('every mapped Cartesia voice speaks as its Kokoro voice', async () => {
    for (const [id, kokoro] of Object.entries(CARTESIA_VOICES)) {
      const res = await cartesia.tts.generate({ ...request, transcript: 'Mapped.', voice: id });
      expect(
        bytesDiff(Buffer.from(await res.arrayBuffer()), await reference(kokoro, 24_000, 'Mapped.')),
      ).toBeUndefined();
    }
  });

  it('a refusal is a BadRequestError carrying our code and message', async () => {
    const err = await rejection(cartesia.tts.generate({ ...request, voice: { mode: 'id', id: 'robot' } }));
    expect(err).toBeInstanceOf(BadRequestError);
    const { status, message, error } = err as BadRequestError;
    expect(status).toBe(400);
    expect(message).toMatch(/^400 Unknown voice "robot": name a Kokoro voice/);
    expect(error).toMatchObject({ error_code: 'voice_not_found', title: 'voice not found' });
    const sse = await rejection(
      cartesia.tts.generateSSE({
        ...request,
        // Not raw, which SSE takes (the SDK's type says so too).
        output_format: { container: 'mp3', sample_rate: 44100, bit_rate: 128000 } as never,
      }),
    );
    expect(sse).toBeInstanceOf(BadRequestError);
    expect((sse as BadRequestError).message).toMatch(/^400 output_format .*: container should be raw$/);
  });
});

describe('LiveKit’s plugins, synthesize()', () => {
  it('Cartesia: POST /tts/bytes without a Content-Type; the frames hold the same samples', async () => {
    const pcm = await overPlainHttp(server, () =>
      synthesizedPcm(new lkCartesia.TTS({ apiKey: 'dummy', baseUrl: server.http })),
    );
    expect(bytesDiff(pcm, await reference('af_heart'))).toBeUndefined();
  });
});
