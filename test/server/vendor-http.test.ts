/**
 * ElevenLabs' and Cartesia's HTTP routes (and the OpenAI route, for LiveKit's OpenAI plugin) driven
 * by the vendors' real clients, unchanged but for the base URL and a dummy key: ElevenLabs' SDK
 * (`textToSpeech.stream`, `convert`, `streamWithTimestamps`), Cartesia's SDK (`tts.generate`,
 * `tts.generateSSE`), Deepgram's SDK (`speak.v1.audio.generate`), and LiveKit's ElevenLabs,
 * Cartesia, Deepgram and OpenAI plugins' `synthesize()`. Their
 * audio is checked against the same text through POST /invocations, byte for byte. Every bad input
 * is tested in-process (test/app/vendor-http.test.ts).
 */
import https from 'node:https';
import net from 'node:net';
import { Readable } from 'node:stream';
import type { ReadableStream as WebReadableStream } from 'node:stream/web';
import Cartesia, { BadRequestError } from '@cartesia/cartesia-js';
import { ElevenLabsClient, ElevenLabsError } from '@elevenlabs/elevenlabs-js';
import { APIStatusError, initializeLogger } from '@livekit/agents';
import * as livekitCartesia from '@livekit/agents-plugin-cartesia';
import * as livekitDeepgram from '@livekit/agents-plugin-deepgram';
import { DeepgramClient, DeepgramError } from '@deepgram/sdk';
import * as livekitElevenLabs from '@livekit/agents-plugin-elevenlabs';
import * as livekitOpenAi from '@livekit/agents-plugin-openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OPENAI_VOICES } from '../../protocol/openai.ts';
import { CARTESIA_VOICES } from '../../server/dialects/cartesia/voices.ts';
import { ELEVENLABS_VOICES } from '../../server/dialects/elevenlabs/voices.ts';
import { FFMPEG, decode } from './audio-tools.ts';
import { TIMESTAMPED_MODEL_DIR, bytesDiff, referencePcm, sharedServer, type TestServer } from './harness.ts';

const TEXT = 'The vendor clients ask for speech. Kokoro answers, one sentence at a time.';
const WORDS = TEXT.split(' ');
/** ElevenLabs' Rachel and LiveKit's Cartesia default: both af_heart here. */
const RACHEL = '21m00Tcm4TlvDq8ikWAM';
const CARTESIA_DEFAULT = 'f786b574-daa5-4673-aa0c-cbe3e8534c02';

let server: TestServer;
let elevenLabs: ElevenLabsClient;
let cartesia: Cartesia;
beforeAll(async () => {
  // The timestamped stand-in times words, for the routes that send them.
  server = await sharedServer({ KOKORO_MODEL_DIR: TIMESTAMPED_MODEL_DIR });
  elevenLabs = new ElevenLabsClient({ apiKey: 'dummy', baseUrl: server.http, maxRetries: 0 });
  cartesia = new Cartesia({ apiKey: 'dummy', baseURL: server.http, maxRetries: 0 });
  initializeLogger({ pretty: false, level: 'silent' });
});
afterAll(() => server.close());

/** The same text through POST /invocations: raw PCM16 at `rate`. */
const reference = (voice: string, rate = 24_000, text = TEXT) => referencePcm(server, text, voice, rate);

/**
 * Runs `fn` while node:https dials this server over plain TCP: LiveKit's Cartesia and Deepgram
 * plugins post through node:https whatever the URL's scheme (Deepgram's to port 443 always).
 */
async function overPlainHttp<T>(fn: () => Promise<T>): Promise<T> {
  const agent = https.globalAgent as unknown as { createConnection: unknown };
  const original = agent.createConnection;
  const port = Number(new URL(server.http).port);
  agent.createConnection = () => net.connect({ host: '127.0.0.1', port });
  try {
    return await fn();
  } finally {
    agent.createConnection = original;
  }
}

/** A LiveKit plugin's synthesize(): the PCM of its frames, which must be 24 kHz. */
async function synthesizedPcm(tts: {
  synthesize(text: string): { collect(): Promise<{ sampleRate: number; data: Int16Array }> };
  close(): Promise<void>;
}): Promise<Buffer> {
  const frame = await tts.synthesize(TEXT).collect();
  await tts.close();
  expect(frame.sampleRate).toBe(24_000);
  return Buffer.from(frame.data.buffer, frame.data.byteOffset, frame.data.byteLength);
}

async function readAll(stream: ReadableStream<Uint8Array>): Promise<Buffer> {
  const parts: Buffer[] = [];
  for await (const part of Readable.fromWeb(stream as WebReadableStream<Uint8Array>))
    parts.push(part as Buffer);
  return Buffer.concat(parts);
}

/**
 * POSTs JSON over a bare socket and reads the chunked answer as it was framed: the head and each
 * chunk's bytes (an HTTP client would join them).
 */
async function chunkedBody(path: string, body: object): Promise<{ head: string; chunks: Buffer[] }> {
  const { hostname, port } = new URL(server.http);
  const json = JSON.stringify(body);
  const socket = net.connect({ host: hostname, port: Number(port) });
  // Written, not ended: the server closes once it has answered (Connection: close).
  socket.write(
    `POST ${path} HTTP/1.1\r\nHost: ${hostname}\r\nContent-Type: application/json\r\n` +
      `Content-Length: ${Buffer.byteLength(json)}\r\nConnection: close\r\n\r\n${json}`,
  );
  const parts: Buffer[] = [];
  for await (const part of socket) parts.push(part as Buffer);
  const raw = Buffer.concat(parts);
  const end = raw.indexOf('\r\n\r\n');
  const chunks: Buffer[] = [];
  for (let at = end + 4; ; ) {
    const line = raw.indexOf('\r\n', at);
    const size = parseInt(raw.subarray(at, line).toString(), 16);
    if (line < 0 || Number.isNaN(size)) throw new Error(`not a chunked body at byte ${at}`);
    if (size === 0) break;
    chunks.push(raw.subarray(line + 2, line + 2 + size));
    at = line + 2 + size + 2;
  }
  return { head: raw.subarray(0, end + 4).toString(), chunks };
}

/** The error a promise rejects with. */
async function rejection(promise: Promise<unknown>): Promise<unknown> {
  return promise.then(
    () => new Error('the request was accepted'),
    (err: unknown) => err,
  );
}

describe('ElevenLabs’ SDK', () => {
  it('textToSpeech.stream: PCM at 24 and 16 kHz, the same samples as POST /invocations', async () => {
    for (const [format, rate] of [
      ['pcm_24000', 24_000],
      ['pcm_16000', 16_000],
    ] as const) {
      const audio = await readAll(
        await elevenLabs.textToSpeech.stream(RACHEL, { text: TEXT, outputFormat: format }),
      );
      expect(audio.length).toBeGreaterThan(rate); // over half a second
      expect(bytesDiff(audio, await reference('af_heart', rate))).toBeUndefined();
    }
  });

  it('μ-law at 8 kHz: one byte for each sample of PCM at 8 kHz', async () => {
    const { data, rawResponse } = await elevenLabs.textToSpeech
      .stream(RACHEL, { text: TEXT, outputFormat: 'ulaw_8000' })
      .withRawResponse();
    expect(rawResponse.headers.get('content-type')).toBe('audio/basic;rate=8000');
    expect((await readAll(data)).length).toBe((await reference('af_heart', 8000)).length / 2);
  });

  it('textToSpeech.convert (the non-streaming route) gives the stream’s audio', async () => {
    const streamed = await readAll(
      await elevenLabs.textToSpeech.stream(RACHEL, { text: TEXT, outputFormat: 'pcm_24000' }),
    );
    const whole = await readAll(
      await elevenLabs.textToSpeech.convert(RACHEL, { text: TEXT, outputFormat: 'pcm_24000' }),
    );
    expect(bytesDiff(whole, streamed)).toBeUndefined();
  });

  it('the fields the SDK sends are taken: speed, language, normalization, the model', async () => {
    const audio = await readAll(
      await elevenLabs.textToSpeech.stream('bm_george', {
        text: TEXT,
        modelId: 'eleven_flash_v2_5',
        languageCode: 'en',
        applyTextNormalization: 'off',
        voiceSettings: { stability: 0.5, similarityBoost: 0.75, speed: 1.2 },
        outputFormat: 'pcm_24000',
        optimizeStreamingLatency: 2,
        enableLogging: false,
      }),
    );
    const res = await fetch(`${server.http}/invocations`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        text: TEXT,
        voice: 'bm_george',
        format: 'pcm',
        speed: 1.2,
        normalization_options: { normalize: false },
      }),
    });
    expect(bytesDiff(audio, Buffer.from(await res.arrayBuffer()))).toBeUndefined();
  });

  it('with no output_format, mp3 (ElevenLabs’ default): MPEG frames', async () => {
    const { data, rawResponse } = await elevenLabs.textToSpeech
      .stream(RACHEL, { text: TEXT })
      .withRawResponse();
    expect(rawResponse.headers.get('content-type')).toBe('audio/mpeg');
    const mp3 = await readAll(data);
    // An MPEG audio frame header: 11 bits of frame sync.
    expect(mp3[0]).toBe(0xff);
    expect(mp3[1]! & 0xe0).toBe(0xe0);
  });

  it.skipIf(!FFMPEG.available)(`mp3 at 44.1 kHz decodes to the text’s length${FFMPEG.note}`, async () => {
    const mp3 = await readAll(
      await elevenLabs.textToSpeech.stream(RACHEL, { text: TEXT, outputFormat: 'mp3_44100_128' }),
    );
    const decoded = decode(mp3, 'mp3', 44_100);
    expect(decoded.ok, decoded.stderr).toBe(true);
    const seconds = (await reference('af_heart')).length / 2 / 24_000;
    expect(Math.abs(decoded.samples.length / 44_100 - seconds)).toBeLessThan(0.12);
  });

  it('streamWithTimestamps: the stream’s audio, and each chunk’s characters timed', async () => {
    const chunks = [];
    for await (const chunk of await elevenLabs.textToSpeech.streamWithTimestamps(RACHEL, {
      text: TEXT,
      outputFormat: 'pcm_24000',
    })) {
      chunks.push(chunk);
    }
    expect(chunks.length).toBeGreaterThan(1);
    const audio = Buffer.concat(chunks.map((c) => Buffer.from(c.audioBase64!, 'base64')));
    expect(bytesDiff(audio, await reference('af_heart'))).toBeUndefined();
    const characters = chunks.flatMap((c) => c.alignment!.characters!);
    expect(characters.join('')).toBe(`${WORDS.join(' ')} `);
    const starts = chunks.flatMap((c) => c.alignment!.characterStartTimesSeconds!);
    const ends = chunks.flatMap((c) => c.alignment!.characterEndTimesSeconds!);
    expect(starts).toEqual([...starts].sort((a, b) => a - b));
    expect(ends.every((end, i) => end >= starts[i]!)).toBe(true);
    // The last character ends with the audio (to the millisecond the alignment keeps).
    expect(Math.abs(ends.at(-1)! - audio.length / 2 / 24_000)).toBeLessThanOrEqual(0.001);
    for (const chunk of chunks) expect(chunk.normalizedAlignment).toEqual(chunk.alignment);
  });

  it('every mapped ElevenLabs voice speaks as its Kokoro voice', async () => {
    for (const [id, kokoro] of Object.entries(ELEVENLABS_VOICES).slice(0, 3)) {
      const audio = await readAll(
        await elevenLabs.textToSpeech.stream(id, { text: 'Mapped.', outputFormat: 'pcm_24000' }),
      );
      expect(bytesDiff(audio, await reference(kokoro, 24_000, 'Mapped.'))).toBeUndefined();
    }
  });

  it('a refusal is an ElevenLabsError carrying our status, code and message', async () => {
    const err = await rejection(
      elevenLabs.textToSpeech.stream('robot', { text: TEXT, outputFormat: 'pcm_24000' }),
    );
    expect(err).toBeInstanceOf(ElevenLabsError);
    const { statusCode, body, message } = err as ElevenLabsError;
    expect(statusCode).toBe(400);
    expect(body).toEqual({
      detail: {
        status: 'voice_not_found',
        message: expect.stringMatching(/^Unknown voice "robot": name a Kokoro voice/),
      },
    });
    expect(message).toMatch(/Unknown voice \\"robot\\"/);
    // Every format ElevenLabs documents is served, A-law too.
    const alaw = await elevenLabs.textToSpeech.convert(RACHEL, { text: TEXT, outputFormat: 'alaw_8000' });
    let alawBytes = 0;
    for await (const chunk of alaw) alawBytes += chunk.length;
    expect(alawBytes).toBeGreaterThan(0);
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
    const { chunks, head } = await chunkedBody('/tts/bytes', request);
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

describe('Deepgram’s SDK', () => {
  it('speak.v1.audio.generate (POST /v1/speak): linear16 without a container, the same samples', async () => {
    const deepgram = new DeepgramClient({ apiKey: 'dummy', baseUrl: server.http });
    const response = await deepgram.speak.v1.audio.generate({
      text: TEXT,
      model: 'af_heart',
      encoding: 'linear16',
      container: 'none',
      sample_rate: 16000,
    } as never);
    const pcm = Buffer.from(await (response as unknown as Response).arrayBuffer());
    expect(bytesDiff(pcm, await reference('af_heart', 16_000))).toBeUndefined();
  });

  it('linear16 with Deepgram’s default container is a WAV file; mulaw is one byte a sample', async () => {
    const wav = await fetch(`${server.http}/v1/speak?model=af_heart&encoding=linear16&sample_rate=24000`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: 'Token dummy' },
      body: JSON.stringify({ text: TEXT }),
    });
    expect(wav.headers.get('content-type')).toBe('audio/wav');
    expect(
      Buffer.from(await wav.arrayBuffer())
        .subarray(0, 4)
        .toString(),
    ).toBe('RIFF');
    const mulaw = await fetch(`${server.http}/v1/speak?model=af_heart&encoding=mulaw`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ text: TEXT }),
    });
    expect((await mulaw.arrayBuffer()).byteLength).toBe((await reference('af_heart', 8000)).length / 2);
  });

  it('the other encodings: mp3, Ogg Opus, FLAC, each with its content type', async () => {
    for (const [query, type] of [
      ['encoding=mp3', 'audio/mpeg'],
      ['encoding=opus&container=ogg', 'audio/ogg; codecs=opus'],
      ['encoding=flac', 'audio/flac'],
    ] as const) {
      const res = await fetch(`${server.http}/v1/speak?model=af_heart&${query}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ text: TEXT }),
      });
      expect(res.status, query).toBe(200);
      expect(res.headers.get('content-type'), query).toBe(type);
      expect((await res.arrayBuffer()).byteLength, query).toBeGreaterThan(100);
    }
  });

  it.skipIf(!FFMPEG.available)(
    `alaw (v1 and v2): raw A-law that ffmpeg decodes to the text's length${FFMPEG.note}`,
    async () => {
      const samples = (await reference('af_heart', 8000)).length / 2;
      for (const [path, rate] of [
        ['/v1/speak', 8000],
        ['/v2/speak', 16000],
      ] as const) {
        const res = await fetch(`${server.http}${path}?model=af_heart&encoding=alaw&sample_rate=${rate}`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ text: TEXT }),
        });
        expect(res.headers.get('content-type'), path).toBe(`audio/x-alaw-basic;rate=${rate}`);
        const bytes = Buffer.from(await res.arrayBuffer());
        const decoded = decode(bytes, 'alaw', rate);
        expect(decoded.ok, decoded.stderr).toBe(true);
        // One byte a sample: the text's samples at the rate asked for.
        expect(decoded.samples.length).toBe(bytes.length);
        expect(Math.abs(bytes.length - (samples * rate) / 8000)).toBeLessThanOrEqual(rate / 1000);
      }
    },
  );

  it('speak.v2.audio.generate (POST /v2/speak): Flux’s default model speaks as af_heart, linear16 without a container', async () => {
    const deepgram = new DeepgramClient({ apiKey: 'dummy', baseUrl: server.http });
    const response = await deepgram.speak.v2.audio.generate({
      text: TEXT,
      model: 'flux-alexis-en',
      encoding: 'linear16',
      container: 'none',
      sample_rate: 24000,
    } as never);
    const pcm = Buffer.from(await (response as unknown as Response).arrayBuffer());
    expect(bytesDiff(pcm, await reference('af_heart'))).toBeUndefined();
  });

  it('a refusal is a DeepgramError carrying our status and Deepgram’s error shape', async () => {
    const deepgram = new DeepgramClient({ apiKey: 'dummy', baseUrl: server.http });
    const refused = await deepgram.speak.v1.audio
      .generate({ text: TEXT, model: 'af_heart', encoding: 'speex' } as never)
      .then(
        () => undefined,
        (err: unknown) => err,
      );
    expect(refused).toBeInstanceOf(DeepgramError);
    expect(refused).toMatchObject({
      statusCode: 400,
      body: {
        err_code: 'INVALID_OPTION',
        err_msg: expect.stringMatching(/^encoding "speex" is not supported/),
      },
    });
  });
});

describe('LiveKit’s plugins, synthesize()', () => {
  it('Deepgram: POST /v1/speak (the plugin always dials port 443: its socket goes to the server)', async () => {
    const pcm = await overPlainHttp(() =>
      synthesizedPcm(new livekitDeepgram.TTS({ apiKey: 'dummy', baseUrl: server.http, model: 'af_heart' })),
    );
    expect(bytesDiff(pcm, await reference('af_heart'))).toBeUndefined();
  });

  it('ElevenLabs: POST …/stream with pcm_24000; the frames hold the same samples', async () => {
    const tts = new livekitElevenLabs.TTS({
      apiKey: 'dummy',
      baseURL: `${server.http}/v1`,
      voiceId: RACHEL,
      // Any pcm_<rate> works (the plugin reads the rate from the name); its type lists three.
      encoding: 'pcm_24000' as never,
    });
    const frame = await tts.synthesize(TEXT).collect();
    await tts.close();
    expect(frame.sampleRate).toBe(24_000);
    const pcm = Buffer.from(frame.data.buffer, frame.data.byteOffset, frame.data.byteLength);
    expect(bytesDiff(pcm, await reference('af_heart'))).toBeUndefined();
  });

  it('ElevenLabs: a refusal is an APIStatusError carrying our status and body', async () => {
    // The plugin's synthesis task also rejects with it unhandled (its ChunkedStream never catches
    // it): the runner's listeners step aside until that rejection has come, so that it is checked
    // here instead of failing the run.
    const runners = process.listeners('unhandledRejection');
    process.removeAllListeners('unhandledRejection');
    let unhandled!: (err: unknown) => void;
    const escaped = new Promise<unknown>((resolve) => (unhandled = resolve));
    process.on('unhandledRejection', unhandled);
    try {
      const tts = new livekitElevenLabs.TTS({
        apiKey: 'dummy',
        baseURL: `${server.http}/v1`,
        voiceId: 'robot',
        encoding: 'pcm_24000' as never,
      });
      const errors: { error: unknown; recoverable: boolean }[] = [];
      tts.on('error', (event) => errors.push(event));
      const frames = [];
      for await (const frame of tts.synthesize(TEXT)) frames.push(frame);
      expect(frames).toEqual([]);
      expect(await escaped).toBe(errors[0]!.error);
      await tts.close();
      expect(errors).toHaveLength(1);
      expect(errors[0]!.recoverable).toBe(false);
      expect(errors[0]!.error).toBeInstanceOf(APIStatusError);
      const error = errors[0]!.error as APIStatusError;
      expect(error.statusCode).toBe(400);
      expect(error.message).toMatch(
        /^ElevenLabs API error: \{"detail":\{"status":"voice_not_found","message":"Unknown voice \\"robot\\": name a Kokoro voice/,
      );
    } finally {
      process.removeAllListeners('unhandledRejection');
      for (const listener of runners) process.on('unhandledRejection', listener);
    }
  });

  it('Cartesia: POST /tts/bytes without a Content-Type; the frames hold the same samples', async () => {
    const pcm = await overPlainHttp(() =>
      synthesizedPcm(new livekitCartesia.TTS({ apiKey: 'dummy', baseUrl: server.http })),
    );
    expect(bytesDiff(pcm, await reference('af_heart'))).toBeUndefined();
  });

  it('OpenAI: POST /v1/audio/speech with pcm; the frames hold the same samples', async () => {
    const tts = new livekitOpenAi.TTS({ apiKey: 'dummy', baseURL: `${server.http}/v1`, voice: 'alloy' });
    const frame = await tts.synthesize(TEXT).collect();
    await tts.close();
    expect(frame.sampleRate).toBe(24_000);
    const pcm = Buffer.from(frame.data.buffer, frame.data.byteOffset, frame.data.byteLength);
    expect(bytesDiff(pcm, await reference(OPENAI_VOICES.alloy!))).toBeUndefined();
  });
});
