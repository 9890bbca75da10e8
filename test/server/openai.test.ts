/**
 * The OpenAI-compatible API through the official `openai` SDK as the client: every response
 * format streamed to a file and decoded by ffmpeg, the speech events of `stream_format: "sse"`,
 * the listings, and refusals in OpenAI's error shape. Every bad input and bearer auth are tested
 * in-process, through the same SDK (test/app/openai.test.ts).
 */
import { createWriteStream } from 'node:fs';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { ReadableStream as WebReadableStream } from 'node:stream/web';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OPENAI_FORMATS, OPENAI_MODELS, OPENAI_VOICES } from '../../protocol/openai.ts';
import { FFMPEG, decode } from './audio-tools.ts';
import { sharedServer, type TestServer } from './harness.ts';

const TEXT = 'The OpenAI client asks for speech. Kokoro answers, one sentence at a time.';

let server: TestServer;
let client: OpenAI;
let dir: string;
beforeAll(async () => {
  server = await sharedServer();
  client = new OpenAI({ baseURL: `${server.http}/v1`, apiKey: 'not-checked', maxRetries: 0 });
  dir = await mkdtemp(join(tmpdir(), 'openai-test-'));
});
afterAll(async () => {
  await server.close();
  await rm(dir, { recursive: true, force: true });
});

/** Streams a response body to a file, as an application saving speech would; returns the bytes. */
async function save(response: Response, name: string): Promise<Buffer> {
  const file = join(dir, name);
  await pipeline(Readable.fromWeb(response.body as WebReadableStream<Uint8Array>), createWriteStream(file));
  return readFile(file);
}

/** The speech events of an SSE body, in order. */
function speechEvents(text: string): { event: string; data: Record<string, unknown> }[] {
  return text
    .split('\n\n')
    .filter((block) => block.trim() !== '')
    .map((block) => {
      const event = /^event: (.+)$/m.exec(block)?.[1] ?? '';
      const data = JSON.parse(/^data: (.+)$/m.exec(block)?.[1] ?? 'null') as Record<string, unknown>;
      return { event, data };
    });
}

/** Seconds of audio in the reference PCM (24 kHz, 16-bit) of TEXT. */
let referenceSeconds = 0;
beforeAll(async () => {
  const pcm = await client.audio.speech.create({
    model: 'kokoro',
    voice: 'alloy',
    input: TEXT,
    response_format: 'pcm',
  });
  referenceSeconds = (await pcm.arrayBuffer()).byteLength / 2 / 24_000;
});

describe.skipIf(!FFMPEG.available)(
  `client.audio.speech.create in every response_format${FFMPEG.note}`,
  () => {
    it.each(OPENAI_FORMATS)('%s: streamed to a file, ffmpeg decodes the whole text', async (format) => {
      const response = await client.audio.speech.create({
        model: 'tts-1',
        voice: 'alloy',
        input: TEXT,
        response_format: format,
      });
      expect(response.status).toBe(200);
      // Streamed as synthesized: chunked, no length known up front.
      expect(response.headers.get('content-length')).toBeNull();
      const bytes = await save(response, `speech.${format}`);
      const decoded = decode(bytes, format, 24_000);
      expect(decoded.ok, decoded.stderr).toBe(true);
      expect(Math.abs(decoded.samples.length / 24_000 - referenceSeconds)).toBeLessThan(0.12);
    });
  },
);

describe('stream_format: "sse" (OpenAI speech events)', () => {
  it.skipIf(!FFMPEG.available)(
    `speech.audio.delta events carry the audio, speech.audio.done its usage${FFMPEG.note}`,
    async () => {
      const response = await client.audio.speech.create({
        model: 'gpt-4o-mini-tts',
        voice: 'nova',
        input: TEXT,
        response_format: 'mp3',
        stream_format: 'sse',
      });
      expect(response.headers.get('content-type')).toMatch(/^text\/event-stream/);
      const events = speechEvents(await response.text());
      const deltas = events.filter((e) => e.event === 'speech.audio.delta');
      expect(deltas.length).toBeGreaterThan(0);
      for (const delta of deltas) expect(delta.data.type).toBe('speech.audio.delta');
      expect(events.at(-1)!.event).toBe('speech.audio.done');
      const audio = Buffer.concat(deltas.map((d) => Buffer.from(d.data.audio as string, 'base64')));
      const decoded = decode(audio, 'mp3', 24_000);
      expect(decoded.ok, decoded.stderr).toBe(true);
      const seconds = decoded.samples.length / 24_000;
      expect(Math.abs(seconds - referenceSeconds)).toBeLessThan(0.12);
      const usage = events.at(-1)!.data.usage as Record<string, number>;
      expect(usage.input_tokens).toBe([...TEXT].length);
      expect(Math.abs(usage.output_tokens! - referenceSeconds * 40)).toBeLessThanOrEqual(1);
      expect(usage.total_tokens).toBe(usage.input_tokens! + usage.output_tokens!);
    },
  );

  it('pcm deltas add up to the same samples as the audio stream', async () => {
    const sse = await client.audio.speech.create({
      model: 'tts-1',
      voice: 'alloy',
      input: TEXT,
      response_format: 'pcm',
      stream_format: 'sse',
    });
    const deltas = speechEvents(await sse.text()).filter((e) => e.event === 'speech.audio.delta');
    const bytes = deltas.reduce((n, d) => n + Buffer.from(d.data.audio as string, 'base64').length, 0);
    expect(bytes / 2 / 24_000).toBe(referenceSeconds);
  });
});

describe('request fields', () => {
  async function pcmSeconds(params: Partial<OpenAI.Audio.SpeechCreateParams>): Promise<number> {
    const response = await client.audio.speech.create({
      model: 'kokoro',
      voice: 'alloy',
      input: TEXT,
      response_format: 'pcm',
      ...params,
    });
    return (await response.arrayBuffer()).byteLength / 2 / 24_000;
  }

  it.each(OPENAI_MODELS)('model %s is accepted', async (model) => {
    expect(await pcmSeconds({ model })).toBe(referenceSeconds);
  });

  it('a dated snapshot of gpt-4o-mini-tts is accepted', async () => {
    expect(await pcmSeconds({ model: 'gpt-4o-mini-tts-2025-12-15' })).toBe(referenceSeconds);
  });

  it.each(Object.keys(OPENAI_VOICES))('OpenAI voice %s speaks', async (voice) => {
    expect(await pcmSeconds({ voice })).toBeGreaterThan(0);
  });

  it('Kokoro ids, blends and {"id": …} are voices too', async () => {
    expect(await pcmSeconds({ voice: 'af_heart' })).toBeGreaterThan(0);
    expect(await pcmSeconds({ voice: 'af_bella(2)+af_sky(1)' })).toBeGreaterThan(0);
    expect(await pcmSeconds({ voice: { id: 'bm_george' } })).toBeGreaterThan(0);
  });

  it('speed inside OpenAI’s range is clamped to Kokoro’s, and the header says to what', async () => {
    const slow = await client.audio.speech
      .create({ model: 'kokoro', voice: 'alloy', input: TEXT, response_format: 'pcm', speed: 0.25 })
      .asResponse();
    expect(slow.headers.get('x-kokoro-speed')).toBe('0.5');
    const slowBytes = (await slow.arrayBuffer()).byteLength;
    expect(slowBytes / 2 / 24_000).toBe(await pcmSeconds({ speed: 0.5 }));
    expect(await pcmSeconds({ speed: 4 })).toBe(await pcmSeconds({ speed: 2 }));
    expect(await pcmSeconds({ speed: 2 })).toBeLessThan(referenceSeconds);
  });

  it('instructions are accepted and do not change the audio', async () => {
    expect(await pcmSeconds({ instructions: 'Speak cheerfully.' })).toBe(referenceSeconds);
  });

  it('without a voice, the server’s default voice speaks', async () => {
    const res = await fetch(`${server.http}/v1/audio/speech`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'kokoro', input: 'Hello.', response_format: 'wav' }),
    });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('audio/wav');
  });

  it('mp3 is the default format, as on OpenAI', async () => {
    const response = await client.audio.speech.create({ model: 'kokoro', voice: 'alloy', input: 'Hi.' });
    expect(response.headers.get('content-type')).toBe('audio/mpeg');
  });
});

describe('listings', () => {
  it('client.models.list() lists every accepted model id', async () => {
    const ids: string[] = [];
    for await (const model of client.models.list()) ids.push(model.id);
    expect(ids).toEqual([...OPENAI_MODELS]);
  });

  it('client.models.retrieve() finds a model, and a 404 in OpenAI’s shape for another', async () => {
    expect((await client.models.retrieve('tts-1-hd')).id).toBe('tts-1-hd');
    const err = await client.models.retrieve('whisper-1').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OpenAI.NotFoundError);
    expect((err as InstanceType<typeof OpenAI.NotFoundError>).code).toBe('model_not_found');
  });

  it('GET /v1/audio/voices lists voices as objects, the OpenAI names, and how blends work', async () => {
    const res = await fetch(`${server.http}/v1/audio/voices`);
    expect(res.status).toBe(200);
    const listing = (await res.json()) as {
      data: {
        id: string;
        name: string;
        language: string;
        gender: string;
        supported: boolean;
        aliases: string[];
      }[];
      voices: string[];
      default_voice: string;
      openai_voices: Record<string, string>;
      blends: { syntax: string; examples: string[]; rules: string };
    };
    const heart = listing.data.find((v) => v.id === 'af_heart');
    expect(heart).toEqual({
      id: 'af_heart',
      object: 'voice',
      name: 'Heart',
      language: 'en-US',
      gender: 'female',
      supported: true,
      aliases: ['marin'],
    });
    expect(listing.data.find((v) => v.id === 'bm_george')).toMatchObject({
      language: 'en-GB',
      gender: 'male',
    });
    expect(listing.voices).toEqual(listing.data.map((v) => v.id));
    expect(listing.default_voice).toBe(server.config.defaultVoice);
    // Every OpenAI name maps to a voice that is listed and speaks.
    for (const id of Object.values(listing.openai_voices)) {
      expect(listing.data.find((v) => v.id === id)?.supported).toBe(true);
    }
    expect(listing.blends.examples.length).toBeGreaterThan(0);
    expect(listing.blends.rules).toMatch(/one language/);
  });
});

/** The SDK's error for a request, or the response when none. */
async function refusal(params: Record<string, unknown>): Promise<InstanceType<typeof OpenAI.APIError>> {
  const err = await client.audio.speech
    .create(params as unknown as OpenAI.Audio.SpeechCreateParams)
    .then(() => new Error('the request was accepted'))
    .catch((e: unknown) => e);
  expect(err).toBeInstanceOf(OpenAI.APIError);
  return err as InstanceType<typeof OpenAI.APIError>;
}

describe('a refusal through the SDK: OpenAI’s error shape and status, and the server serves on', () => {
  // The full table of refusals runs in-process (test/app/openai.test.ts).
  const ok = { model: 'kokoro', voice: 'alloy', input: 'Hello.' };
  const cases: [string, Record<string, unknown>, number, string, string][] = [
    ['an unknown model', { ...ok, model: 'tts-2' }, 404, 'model', 'model_not_found'],
    ['an unknown voice', { ...ok, voice: 'robot' }, 400, 'voice', 'voice_not_found'],
  ];

  it.each(cases)('%s', async (_name, params, status, param, code) => {
    const err = await refusal(params);
    expect(err.status).toBe(status);
    expect(err.param).toBe(param);
    expect(err.code).toBe(code);
    expect(err.type).toBe('invalid_request_error');
    expect(err.message.length).toBeGreaterThan(20);
    // The server serves on.
    expect((await client.audio.speech.create({ ...ok, response_format: 'pcm' })).status).toBe(200);
  });
});
