/**
 * ElevenLabs' and Cartesia's HTTP routes in-process: every bad input answered in the vendor's
 * error shape (ElevenLabs' `{"detail": {"status", "message"}}`, Cartesia's `{"error_code", "title",
 * "message", "request_id", "error"}`) with a message that says what is valid, the engine never
 * asked and the server serving on; how the vendors' fields become the server's request; the
 * vendors' voice ids; a body without Content-Type; admission, the drain and a failure after the
 * event stream began. The real clients, with real audio, are in test/server/vendor-http.test.ts.
 */
import { request as httpRequest } from 'node:http';
import type { LightMyRequestResponse } from 'fastify';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { Engine, SynthesisRequest } from '../../dist/model/engine.js';
import { ttsError } from '../../dist/protocol/errors.js';
import { CARTESIA_VOICES } from '../../dist/server/dialects/cartesia/voices.js';
import { DEEPGRAM_VOICES } from '../../dist/server/dialects/deepgram/voices.js';
import { ELEVENLABS_VOICES } from '../../dist/server/dialects/elevenlabs/voices.js';
import { fakeEngine } from './fake-engine.ts';
import { inProcessApp, type InProcessApp } from './in-process.ts';

let running: InProcessApp;
let timed: InProcessApp;
beforeAll(async () => {
  running = await inProcessApp();
  timed = await inProcessApp({}, { engine: { timestamps: true } });
});
afterAll(async () => {
  await running.close();
  await timed.close();
});

const lastRequest = (app: InProcessApp = running): SynthesisRequest => app.engine!.requests.at(-1)!;

// ---------------------------------------------------------------------------------------------
// ElevenLabs

const EL_PATH = '/v1/text-to-speech';

function elevenLabs(
  app: InProcessApp,
  voice: string,
  body: unknown,
  options: { query?: string; route?: string } = {},
): Promise<LightMyRequestResponse> {
  return app.app.inject({
    method: 'POST',
    url: `${EL_PATH}/${encodeURIComponent(voice)}${options.route ?? '/stream'}?${options.query ?? 'output_format=pcm_24000'}`,
    headers: { 'content-type': 'application/json', 'xi-api-key': 'not-checked' },
    payload: JSON.stringify(body),
  });
}

/** An answer in ElevenLabs' error shape; its status, code and message. */
function elevenLabsError(res: LightMyRequestResponse): { status: number; code: string; message: string } {
  expect(res.headers['content-type']).toMatch(/^application\/json/);
  const body = res.json() as { detail: { status: string; message: string } };
  expect(Object.keys(body)).toEqual(['detail']);
  expect(Object.keys(body.detail).sort()).toEqual(['message', 'status']);
  return { status: res.statusCode, code: body.detail.status, message: body.detail.message };
}

describe('ElevenLabs: bad input gets ElevenLabs’ error shape, and the server serves on', () => {
  const ok = { text: 'Hello there.', model_id: 'eleven_flash_v2_5' };
  const cases: [string, string, unknown, string | undefined, number, string, RegExp][] = [
    [
      'an unknown voice id',
      'robot',
      ok,
      'output_format=pcm_24000',
      400,
      'voice_not_found',
      /^Unknown voice "robot": name a Kokoro voice/,
    ],
    [
      'flac',
      'af_heart',
      ok,
      'output_format=flac_44100',
      400,
      'invalid_option',
      /^output_format "flac_44100" is not supported; use pcm_<rate>/,
    ],
    [
      'a PCM rate not offered',
      'af_heart',
      ok,
      'output_format=pcm_12000',
      400,
      'invalid_option',
      /^output_format pcm_12000: sample rate 12000 is not offered for it; use one of 8000, 16000, 22050, 24000, 32000/,
    ],
    [
      'an unknown output_format',
      'af_heart',
      ok,
      'output_format=flac_44100',
      400,
      'invalid_option',
      /"flac_44100" is not supported/,
    ],
    [
      'output_format named twice',
      'af_heart',
      ok,
      'output_format=pcm_24000&output_format=pcm_16000',
      400,
      'invalid_option',
      /^output_format should be named once, such as pcm_24000; got an array/,
    ],
    // The in-process engine encodes PCM and WAV only: ElevenLabs' default, mp3, is not offered.
    [
      'a format this server does not encode (the default, mp3)',
      'af_heart',
      ok,
      '',
      400,
      'invalid_option',
      /^output_format mp3_44100_128 is mp3, which this server does not offer; it offers pcm, wav/,
    ],
    [
      'no text',
      'af_heart',
      { model_id: 'm' },
      undefined,
      400,
      'bad_request',
      /^text is required: the text to speak$/,
    ],
    ['an empty text', 'af_heart', { text: '  ' }, undefined, 400, 'empty_text', /^text is empty/],
    [
      'a text that is not a string',
      'af_heart',
      { text: 42 },
      undefined,
      400,
      'invalid_option',
      /^text should be a string; got number 42$/,
    ],
    [
      'a text over the limit',
      'af_heart',
      { text: 'a'.repeat(5000) },
      undefined,
      413,
      'text_too_long',
      /5000 characters, over the limit of 4096/,
    ],
    [
      'a body that is an array',
      'af_heart',
      [ok],
      undefined,
      400,
      'bad_request',
      /^The body should be a JSON object such as \{"text": "Hello".*; got an array$/,
    ],
    [
      'a body that is a string',
      'af_heart',
      'Hello',
      undefined,
      400,
      'bad_request',
      /got the string "Hello"$/,
    ],
    [
      'a model_id that is not a string',
      'af_heart',
      { ...ok, model_id: 5 },
      undefined,
      400,
      'invalid_option',
      /^model_id should be a string .*; got number 5$/,
    ],
    [
      'voice_settings that are not an object',
      'af_heart',
      { ...ok, voice_settings: 'fast' },
      undefined,
      400,
      'invalid_option',
      /^voice_settings should be an object such as \{"speed": 1.1\}; got the string "fast"$/,
    ],
    [
      'a speed that is not a number',
      'af_heart',
      { ...ok, voice_settings: { speed: 'fast' } },
      undefined,
      400,
      'invalid_option',
      /^voice_settings.speed should be a number from 0.5 to 2; got the string "fast"$/,
    ],
    [
      'a speed out of range',
      'af_heart',
      { ...ok, voice_settings: { speed: 3 } },
      undefined,
      400,
      'invalid_option',
      /^voice_settings.speed should be a number from 0.5 to 2; got number 3$/,
    ],
    [
      'a language Kokoro does not speak',
      'af_heart',
      { ...ok, language_code: 'de' },
      undefined,
      400,
      'language_unsupported',
      /^language_code "de" is not a language this server speaks; use one of en, es, fr, hi, it, ja, pt, zh \(or a regional tag: /,
    ],
    [
      'a language_code that names a property of every object',
      'af_heart',
      { ...ok, language_code: 'constructor' },
      undefined,
      400,
      'language_unsupported',
      /^language_code "constructor" is not a language this server speaks/,
    ],
    [
      'a language_code that is not a string',
      'af_heart',
      { ...ok, language_code: 7 },
      undefined,
      400,
      'invalid_option',
      /^language_code should be a language code such as "en" or "es"; got number 7$/,
    ],
    [
      'an unknown apply_text_normalization',
      'af_heart',
      { ...ok, apply_text_normalization: 'sometimes' },
      undefined,
      400,
      'invalid_option',
      /^apply_text_normalization should be one of: auto, on, off; got the string "sometimes"$/,
    ],
  ];

  it.each(cases)('%s', async (_name, voice, body, query, status, code, message) => {
    const asked = running.engine!.requests.length;
    for (const route of ['/stream', '', '/stream/with-timestamps']) {
      const res = await elevenLabs(running, voice, body, {
        route,
        ...(query !== undefined ? { query } : {}),
      });
      const err = elevenLabsError(res);
      expect(err).toMatchObject({ status, code });
      expect(err.message).toMatch(message);
    }
    expect(running.engine!.requests.length).toBe(asked);
    expect((await elevenLabs(running, 'af_heart', ok)).statusCode).toBe(200);
  });

  it('a body that is not JSON: invalid_json, in ElevenLabs’ shape', async () => {
    const res = await running.app.inject({
      method: 'POST',
      url: `${EL_PATH}/af_heart/stream`,
      headers: { 'content-type': 'application/json' },
      payload: '{"text": ',
    });
    const err = elevenLabsError(res);
    expect(err).toMatchObject({ status: 400, code: 'invalid_json' });
    expect(err.message).toMatch(/^The body is not valid JSON/);
  });

  it('no body: bad_request saying what to send', async () => {
    const res = await running.app.inject({ method: 'POST', url: `${EL_PATH}/af_heart/stream` });
    const err = elevenLabsError(res);
    expect(err).toMatchObject({ status: 400, code: 'bad_request' });
    expect(err.message).toMatch(/^The body should be a JSON object such as .*; got no body$/);
  });

  it.each([
    ['GET', `${EL_PATH}/af_heart/stream`],
    ['POST', `${EL_PATH}/af_heart/stream/with-words`],
    ['POST', `${EL_PATH}`],
  ] as const)('%s %s: 404 in ElevenLabs’ shape, naming the routes', async (method, url) => {
    const err = elevenLabsError(await running.app.inject({ method, url }));
    expect(err).toMatchObject({ status: 404, code: 'not_found' });
    expect(err.message).toMatch(/the ElevenLabs-compatible routes are POST \/v1\/text-to-speech\/:voice_id,/);
  });

  it('other /v1 routes keep OpenAI’s shape', async () => {
    const res = await running.app.inject({ method: 'POST', url: '/v1/audio/transcriptions' });
    expect(res.statusCode).toBe(404);
    expect((res.json() as { error: { code: string } }).error.code).toBe('not_found');
  });
});

describe('ElevenLabs: what the fields become', () => {
  it.each(Object.entries(ELEVENLABS_VOICES))('voice id %s speaks as %s', async (id, kokoro) => {
    const res = await elevenLabs(running, id, { text: 'Mapped.' });
    expect(res.statusCode).toBe(200);
    expect(lastRequest().voice.key).toBe(`${kokoro}(1)`);
  });

  it('a Kokoro voice id or blend is taken as it is', async () => {
    expect((await elevenLabs(running, 'bm_george', { text: 'Kokoro.' })).statusCode).toBe(200);
    expect(lastRequest().voice.key).toBe('bm_george(1)');
    expect((await elevenLabs(running, 'af_bella+af_sky', { text: 'Blend.' })).statusCode).toBe(200);
    expect(lastRequest().voice.key).toBe('af_bella(0.5)+af_sky(0.5)');
  });

  it('the output format names the content type (LiveKit needs one that starts with audio/)', async () => {
    const pcm = await elevenLabs(
      running,
      'af_heart',
      { text: 'Rate.' },
      { query: 'output_format=pcm_16000' },
    );
    expect(pcm.headers['content-type']).toBe('audio/pcm;rate=16000;encoding=s16le;channels=1');
  });

  it('voice_settings.speed, language_code and apply_text_normalization reach the request', async () => {
    await elevenLabs(running, 'af_heart', {
      text: 'Fields.',
      voice_settings: { stability: 0.5, similarity_boost: 0.75, speed: 1.1 },
    });
    expect(lastRequest().speed).toBe(1.1);
    expect(lastRequest().normalization).toBeUndefined();
    await elevenLabs(running, 'af_heart', { text: 'Hola.', language_code: 'es' });
    expect(lastRequest().voice.lang).toBe('e');
    // English keeps the voice's own accent.
    await elevenLabs(running, 'bm_george', { text: 'Hello.', language_code: 'en' });
    expect(lastRequest().voice.lang).toBe('b');
    await elevenLabs(running, 'ef_dora', { text: 'Hello.', language_code: 'en' });
    expect(lastRequest().voice.lang).toBe('a');
    await elevenLabs(running, 'af_heart', { text: 'Olá.', language_code: 'pt' });
    expect(lastRequest().voice.lang).toBe('p');
    await elevenLabs(running, 'af_heart', { text: 'Plain.', apply_text_normalization: 'off' });
    expect(lastRequest().normalization?.normalize).toBe(false);
  });

  it('markup is not read: the text is spoken as written, as on the WebSockets', async () => {
    await elevenLabs(running, 'af_heart', { text: '<speak>Hi [pause:1s] there.</speak>' });
    expect(lastRequest().text).toBe('<speak>Hi [pause:1s] there.</speak>');
  });

  it('the fields ElevenLabs’ clients send that Kokoro has no use for are accepted', async () => {
    const res = await elevenLabs(
      running,
      'af_heart',
      {
        text: 'Everything at once.',
        model_id: 'eleven_multilingual_v2',
        voice_settings: { stability: 0.3, similarity_boost: 0.8, style: 0.1, use_speaker_boost: true },
        pronunciation_dictionary_locators: [{ pronunciation_dictionary_id: 'd', version_id: 'v' }],
        seed: 7,
        previous_text: 'Before.',
        next_text: 'After.',
        previous_request_ids: ['a'],
        next_request_ids: ['b'],
        use_pvc_as_ivc: false,
        apply_text_normalization: 'auto',
        apply_language_text_normalization: false,
      },
      { query: 'output_format=pcm_24000&enable_logging=false&optimize_streaming_latency=3' },
    );
    expect(res.statusCode).toBe(200);
    expect(res.rawPayload.length).toBeGreaterThan(0);
  });

  it('the non-streaming route gives the same audio as the streaming one', async () => {
    const streamed = await elevenLabs(running, 'af_heart', { text: 'The same audio. Twice.' });
    const whole = await elevenLabs(running, 'af_heart', { text: 'The same audio. Twice.' }, { route: '' });
    expect(whole.statusCode).toBe(200);
    expect(whole.headers['content-type']).toBe(streamed.headers['content-type']);
    expect(whole.rawPayload.equals(streamed.rawPayload)).toBe(true);
  });
});

interface TimestampLine {
  audio_base64: string;
  alignment: {
    characters: string[];
    character_start_times_seconds: number[];
    character_end_times_seconds: number[];
  } | null;
  normalized_alignment: unknown;
}

const lines = (res: LightMyRequestResponse): TimestampLine[] =>
  res.body
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line) as TimestampLine);

describe('ElevenLabs: stream/with-timestamps', () => {
  const TEXT = 'First sentence here. And a second one.';

  it('one JSON object per line; the audio adds up to the stream’s; no alignment without timestamps', async () => {
    const res = await elevenLabs(running, 'af_heart', { text: TEXT }, { route: '/stream/with-timestamps' });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toMatch(/^application\/json/);
    const parsed = lines(res);
    expect(parsed.length).toBe(2);
    for (const line of parsed)
      expect(line).toEqual({ audio_base64: line.audio_base64, alignment: null, normalized_alignment: null });
    const audio = Buffer.concat(parsed.map((l) => Buffer.from(l.audio_base64, 'base64')));
    const plain = await elevenLabs(running, 'af_heart', { text: TEXT });
    expect(audio.equals(plain.rawPayload)).toBe(true);
  });

  it('with a model that times words: each line’s characters, timed on the request’s clock', async () => {
    const res = await elevenLabs(timed, 'af_heart', { text: TEXT }, { route: '/stream/with-timestamps' });
    expect(res.statusCode).toBe(200);
    const parsed = lines(res);
    expect(parsed.map((l) => l.alignment!.characters.join(''))).toEqual([
      'First sentence here. ',
      'And a second one. ',
    ]);
    const starts = parsed.flatMap((l) => l.alignment!.character_start_times_seconds);
    const ends = parsed.flatMap((l) => l.alignment!.character_end_times_seconds);
    expect(starts).toEqual([...starts].sort((a, b) => a - b));
    for (const [i, start] of starts.entries()) expect(ends[i]!).toBeGreaterThanOrEqual(start);
    // The second sentence starts where the first one's audio ends (10 ms a character, 20 characters).
    expect(parsed[1]!.alignment!.character_start_times_seconds[0]).toBe(0.2);
    for (const line of parsed) expect(line.normalized_alignment).toEqual(line.alignment);
  });

  it('long audio comes in lines under 64 KB, cut where words start, each covering its audio', async () => {
    // One sentence of about 5.6 s (10 ms a character): 268 800 bytes of PCM at 24 kHz.
    const text = `${Array.from({ length: 80 }, (_, i) => `word${String(i).padStart(2, '0')}`).join(' ')}.`;
    const res = await elevenLabs(timed, 'af_heart', { text }, { route: '/stream/with-timestamps' });
    expect(res.statusCode).toBe(200);
    const raw = res.body.split('\n').filter(Boolean);
    for (const line of raw) expect(Buffer.byteLength(line) + 1).toBeLessThanOrEqual(64_000);
    const parsed = raw.map((line) => JSON.parse(line) as TimestampLine);
    expect(parsed.length).toBeGreaterThanOrEqual(7);
    expect(parsed.flatMap((l) => l.alignment!.characters).join('')).toBe(`${text} `);
    // Pipecat's clock: times from the response's first sample; each line's last character ends
    // where its audio does, and the next line's audio starts there.
    let seconds = 0;
    for (const line of parsed) {
      const audio = Buffer.from(line.audio_base64, 'base64');
      expect(audio.length / 2 / 24_000).toBeLessThanOrEqual(1);
      expect(line.alignment!.character_start_times_seconds[0]).toBeGreaterThanOrEqual(seconds);
      seconds += audio.length / 2 / 24_000;
      expect(line.alignment!.character_end_times_seconds.at(-1)).toBeCloseTo(seconds, 3);
    }
    const plain = await elevenLabs(timed, 'af_heart', { text });
    expect(seconds).toBe(plain.rawPayload.length / 2 / 24_000);
  });
});

// ---------------------------------------------------------------------------------------------
// Cartesia

const RAW = { container: 'raw', encoding: 'pcm_s16le', sample_rate: 24000 };
const CARTESIA_OK = {
  model_id: 'sonic-3',
  transcript: 'Hello there.',
  voice: { mode: 'id', id: 'af_heart' },
  output_format: RAW,
};

function cartesia(
  app: InProcessApp,
  route: 'bytes' | 'sse',
  body: unknown,
  headers: Record<string, string> = {
    'content-type': 'application/json',
    authorization: 'Bearer not-checked',
  },
): Promise<LightMyRequestResponse> {
  return app.app.inject({
    method: 'POST',
    url: `/tts/${route}`,
    headers: { 'cartesia-version': '2026-03-01', ...headers },
    payload: typeof body === 'string' ? body : JSON.stringify(body),
  });
}

/** An answer in Cartesia's error shape; its status, code and message. */
function cartesiaError(res: LightMyRequestResponse): { status: number; code: string; message: string } {
  expect(res.headers['content-type']).toMatch(/^application\/json/);
  const body = res.json() as Record<string, string>;
  expect(Object.keys(body).sort()).toEqual(['error', 'error_code', 'message', 'request_id', 'title']);
  expect(body.error).toBe(body.message);
  expect(body.request_id!.length).toBeGreaterThan(0);
  expect(body.title).toBe(body.error_code!.replace(/_/g, ' '));
  return { status: res.statusCode, code: body.error_code!, message: body.message! };
}

describe('Cartesia: bad input gets Cartesia’s error shape, and the server serves on', () => {
  const ok = CARTESIA_OK;
  const both = ['bytes', 'sse'] as const;
  const cases: [string, readonly ('bytes' | 'sse')[], unknown, number, string, RegExp][] = [
    [
      'an unknown voice id',
      both,
      { ...ok, voice: { mode: 'id', id: 'robot' } },
      400,
      'voice_not_found',
      /^Unknown voice "robot": name a Kokoro voice/,
    ],
    [
      'an unknown voice id as a string',
      both,
      { ...ok, voice: 'robot' },
      400,
      'voice_not_found',
      /^Unknown voice "robot"/,
    ],
    [
      'a voice by embedding',
      both,
      { ...ok, voice: { mode: 'embedding', embedding: [0.1, 0.2] } },
      400,
      'invalid_option',
      /^voice embeddings are not supported here: Kokoro speaks its own voices; name one by its id, as \{"mode": "id", "id": "af_heart"\} \(a Kokoro voice or a mapped Cartesia id\)$/,
    ],
    [
      'a voice of the wrong type',
      both,
      { ...ok, voice: 7 },
      400,
      'invalid_option',
      /^voice should be a voice id, as "af_heart" or \{"mode": "id", "id": "af_heart"\}$/,
    ],
    [
      'a voice object without an id',
      both,
      { ...ok, voice: { mode: 'id' } },
      400,
      'invalid_option',
      /^voice should be a voice id, as "af_heart"/,
    ],
    [
      'no voice',
      both,
      { ...ok, voice: undefined },
      400,
      'invalid_option',
      /^voice should be a voice id, as "af_heart"/,
    ],
    [
      'no output_format',
      both,
      { ...ok, output_format: undefined },
      400,
      'invalid_option',
      /^output_format should be an object such as \{"container": "raw"/,
    ],
    [
      'no container',
      both,
      { ...ok, output_format: { encoding: 'pcm_s16le', sample_rate: 24000 } },
      400,
      'invalid_option',
      /: container should be raw/,
    ],
    [
      'the mp3 container on SSE',
      ['sse'],
      { ...ok, output_format: { container: 'mp3', sample_rate: 44100, bit_rate: 128000 } },
      400,
      'invalid_option',
      /: container should be raw$/,
    ],
    [
      'the wav container on SSE',
      ['sse'],
      { ...ok, output_format: { ...RAW, container: 'wav' } },
      400,
      'invalid_option',
      /: container should be raw$/,
    ],
    [
      'an unknown container',
      ['bytes'],
      { ...ok, output_format: { ...RAW, container: 'ogg' } },
      400,
      'invalid_option',
      /: container should be raw or wav or mp3$/,
    ],
    [
      '24-bit PCM',
      both,
      { ...ok, output_format: { ...RAW, encoding: 'pcm_s24le' } },
      400,
      'invalid_option',
      /: encoding should be pcm_s16le, pcm_f32le, pcm_mulaw or pcm_alaw$/,
    ],
    [
      'a rate not offered',
      both,
      { ...ok, output_format: { ...RAW, sample_rate: 12000 } },
      400,
      'invalid_option',
      /sample rate 12000 is not offered for it; use one of 8000, 16000, 22050, 24000, 32000, 44100, 48000$/,
    ],
    [
      'μ-law at 16 kHz',
      both,
      { ...ok, output_format: { ...RAW, encoding: 'pcm_mulaw', sample_rate: 16000 } },
      400,
      'invalid_option',
      /sample rate 16000 is not offered for it; use one of 8000$/,
    ],
    [
      'a rate that is not a number',
      both,
      { ...ok, output_format: { ...RAW, sample_rate: '24000' } },
      400,
      'invalid_option',
      /sample_rate should be a number$/,
    ],
    [
      'float samples in wav',
      ['bytes'],
      { ...ok, output_format: { ...RAW, container: 'wav', encoding: 'pcm_f32le' } },
      400,
      'invalid_option',
      /a wav container holds pcm_s16le here$/,
    ],
    // The in-process engine encodes PCM and WAV only.
    [
      'mp3 where the server does not encode it',
      ['bytes'],
      { ...ok, output_format: { container: 'mp3', sample_rate: 44100, bit_rate: 128000 } },
      400,
      'invalid_option',
      /: mp3 is not offered by this server; it offers pcm, wav/,
    ],
    [
      'no transcript',
      both,
      { ...ok, transcript: undefined },
      400,
      'bad_request',
      /^transcript is required: the text to speak$/,
    ],
    ['an empty transcript', both, { ...ok, transcript: ' ' }, 400, 'empty_text', /^transcript is empty/],
    [
      'a transcript that is not a string',
      both,
      { ...ok, transcript: ['Hi'] },
      400,
      'invalid_option',
      /^transcript should be a string; got an array$/,
    ],
    [
      'a transcript over the limit',
      both,
      { ...ok, transcript: 'a'.repeat(5000) },
      413,
      'text_too_long',
      /5000 characters, over the limit of 4096/,
    ],
    [
      'a body that is an array',
      both,
      [ok],
      400,
      'bad_request',
      /^The body should be a JSON object such as \{"model_id": "sonic-3", "transcript": "Hello"/,
    ],
    [
      'a model_id that is not a string',
      both,
      { ...ok, model_id: 3 },
      400,
      'invalid_option',
      /^model_id should be a string .*; got number 3$/,
    ],
    [
      'a speed name Cartesia does not have',
      both,
      { ...ok, speed: 'ludicrous' },
      400,
      'invalid_option',
      /^speed should be a number \(0.6 to 1.5\) or slow, normal or fast$/,
    ],
    [
      'a speed out of range',
      both,
      { ...ok, speed: 5 },
      400,
      'invalid_option',
      /^speed should be a number from 0.5 to 2; got number 5$/,
    ],
    [
      'a generation_config speed out of range',
      both,
      { ...ok, generation_config: { speed: 0.1 } },
      400,
      'invalid_option',
      /^speed should be a number from 0.5 to 2; got number 0.1$/,
    ],
    [
      'a generation_config that is not an object',
      both,
      { ...ok, generation_config: [1] },
      400,
      'invalid_option',
      /^generation_config should be an object such as \{"speed": 1.1\}; got an array$/,
    ],
    [
      'a language Kokoro does not speak',
      both,
      { ...ok, language: 'ko' },
      400,
      'language_unsupported',
      /^language "ko" is not a language this server speaks; use one of en, es, fr, hi, it, ja, pt, zh/,
    ],
    [
      'a locale Kokoro does not speak',
      both,
      { ...ok, locale: 'de-DE' },
      400,
      'language_unsupported',
      /^locale "de-DE" is not a language this server speaks/,
    ],
    [
      'both language and locale',
      both,
      { ...ok, language: 'en', locale: 'en-GB' },
      400,
      'invalid_option',
      /^send language or locale, not both$/,
    ],
    [
      'a normalization that is not a string',
      both,
      { ...ok, normalization: false },
      400,
      'invalid_option',
      /^normalization should be "auto", "off" or a locale; got boolean false$/,
    ],
    [
      'add_timestamps that is not a boolean',
      ['sse'],
      { ...ok, add_timestamps: 'yes' },
      400,
      'invalid_option',
      /^add_timestamps should be true or false; got the string "yes"$/,
    ],
    [
      'add_phoneme_timestamps that is not a boolean',
      ['sse'],
      { ...ok, add_phoneme_timestamps: 1 },
      400,
      'invalid_option',
      /^add_phoneme_timestamps should be true or false; got number 1$/,
    ],
    [
      'a context_id that is not a string',
      ['sse'],
      { ...ok, context_id: 12 },
      400,
      'invalid_option',
      /^context_id should be a string; got number 12$/,
    ],
  ];

  it.each(cases)('%s', async (_name, routes, body, status, code, message) => {
    const asked = running.engine!.requests.length;
    for (const route of routes) {
      const err = cartesiaError(await cartesia(running, route, body));
      expect(err).toMatchObject({ status, code });
      expect(err.message).toMatch(message);
    }
    expect(running.engine!.requests.length).toBe(asked);
    expect((await cartesia(running, 'bytes', ok)).statusCode).toBe(200);
  });

  it('a body that is not JSON: invalid_json, in Cartesia’s shape', async () => {
    const err = cartesiaError(await cartesia(running, 'bytes', '{"transcript": '));
    expect(err).toMatchObject({ status: 400, code: 'invalid_json' });
  });

  it.each([
    ['GET', '/tts/bytes'],
    ['POST', '/tts/wav'],
    ['POST', '/tts/bytes/extra'],
  ] as const)('%s %s: 404 in Cartesia’s shape, naming the routes', async (method, url) => {
    const err = cartesiaError(await running.app.inject({ method, url }));
    expect(err).toMatchObject({ status: 404, code: 'not_found' });
    expect(err.message).toMatch(/the Cartesia-compatible routes are POST \/tts\/bytes and POST \/tts\/sse$/);
  });
});

describe('Cartesia: a body without Content-Type (as LiveKit’s plugin sends it)', () => {
  // The app's parser for bodies of any other type reads one that starts with { as JSON.
  it('is read as JSON on /tts/bytes and /tts/sse', async () => {
    for (const route of ['bytes', 'sse'] as const) {
      const res = await cartesia(running, route, CARTESIA_OK, {});
      expect(res.statusCode).toBe(200);
    }
    const res = await cartesia(running, 'bytes', CARTESIA_OK, {});
    expect(res.headers['content-type']).toBe('audio/pcm;rate=24000;encoding=s16le;channels=1');
    expect(res.rawPayload.length).toBeGreaterThan(0);
  });
});

/** The events of an SSE body, in order. */
function events(res: LightMyRequestResponse): { event: string; data: Record<string, unknown> }[] {
  return res.body
    .split('\n\n')
    .filter((block) => block.trim() !== '')
    .map((block) => ({
      event: /^event: (.+)$/m.exec(block)?.[1] ?? '',
      data: JSON.parse(/^data: (.+)$/m.exec(block)?.[1] ?? 'null') as Record<string, unknown>,
    }));
}

describe('Cartesia: what the fields become', () => {
  it.each(Object.entries(CARTESIA_VOICES))('voice id %s speaks as %s', async (id, kokoro) => {
    expect((await cartesia(running, 'bytes', { ...CARTESIA_OK, voice: { mode: 'id', id } })).statusCode).toBe(
      200,
    );
    expect(lastRequest().voice.key).toBe(`${kokoro}(1)`);
    expect((await cartesia(running, 'bytes', { ...CARTESIA_OK, voice: id })).statusCode).toBe(200);
    expect(lastRequest().voice.key).toBe(`${kokoro}(1)`);
  });

  it('a voice as a string, {id}, or {mode: "id", id}', async () => {
    for (const voice of ['bm_george', { id: 'bm_george' }, { mode: 'id', id: 'bm_george' }]) {
      expect((await cartesia(running, 'bytes', { ...CARTESIA_OK, voice })).statusCode).toBe(200);
      expect(lastRequest().voice.key).toBe('bm_george(1)');
    }
  });

  it('speed: generation_config.speed, a number, or slow/normal/fast', async () => {
    const speeds: [Record<string, unknown>, number][] = [
      [{ generation_config: { speed: 0.8, volume: 1, emotion: 'calm' } }, 0.8],
      [{ speed: 1.5 }, 1.5],
      [{ speed: 'slow' }, 0.8],
      [{ speed: 'normal' }, 1],
      [{ speed: 'fast' }, 1.2],
      [{ speed: 'fast', generation_config: { speed: 1.1 } }, 1.1],
    ];
    for (const [fields, speed] of speeds) {
      expect((await cartesia(running, 'bytes', { ...CARTESIA_OK, ...fields })).statusCode).toBe(200);
      expect(lastRequest().speed).toBe(speed);
    }
  });

  it('language, locale and normalization', async () => {
    await cartesia(running, 'bytes', { ...CARTESIA_OK, language: 'fr' });
    expect(lastRequest().voice.lang).toBe('f');
    await cartesia(running, 'bytes', { ...CARTESIA_OK, locale: 'en-GB' });
    expect(lastRequest().voice.lang).toBe('b');
    await cartesia(running, 'bytes', { ...CARTESIA_OK, language: 'en' });
    expect(lastRequest().voice.lang).toBe('a');
    await cartesia(running, 'bytes', { ...CARTESIA_OK, normalization: 'off' });
    expect(lastRequest().normalization?.normalize).toBe(false);
    await cartesia(running, 'bytes', { ...CARTESIA_OK, normalization: 'en-IN' });
    expect(lastRequest().normalization).toBeUndefined();
  });

  it('markup is not read: the transcript is spoken as written, as on the WebSocket', async () => {
    await cartesia(running, 'bytes', { ...CARTESIA_OK, transcript: '<speak>Hi [pause:1s] there.</speak>' });
    expect(lastRequest().text).toBe('<speak>Hi [pause:1s] there.</speak>');
  });

  it('the fields Kokoro has no use for are accepted', async () => {
    const res = await cartesia(running, 'sse', {
      ...CARTESIA_OK,
      model_id: 'sonic-3.5',
      pronunciation_dict_id: 'dict',
      save: false,
      max_buffer_delay_ms: 0,
      use_normalized_timestamps: true,
      add_phoneme_timestamps: false,
      duration: 3,
    });
    expect(res.statusCode).toBe(200);
  });

  it('raw, wav: content types; pcm_f32le is pcm_s16le over 32768', async () => {
    const s16 = await cartesia(running, 'bytes', CARTESIA_OK);
    const wav = await cartesia(running, 'bytes', {
      ...CARTESIA_OK,
      output_format: { ...RAW, container: 'wav' },
    });
    const f32 = await cartesia(running, 'bytes', {
      ...CARTESIA_OK,
      output_format: { ...RAW, encoding: 'pcm_f32le' },
    });
    expect(wav.headers['content-type']).toBe('audio/wav');
    expect(wav.rawPayload.subarray(44).equals(s16.rawPayload)).toBe(true);
    expect(f32.headers['content-type']).toBe('audio/pcm;rate=24000;encoding=f32le;channels=1');
    expect(f32.rawPayload.length).toBe(s16.rawPayload.length * 2);
    const ints = new Int16Array(
      s16.rawPayload.buffer.slice(
        s16.rawPayload.byteOffset,
        s16.rawPayload.byteOffset + s16.rawPayload.length,
      ),
    );
    const floats = new Float32Array(
      f32.rawPayload.buffer.slice(
        f32.rawPayload.byteOffset,
        f32.rawPayload.byteOffset + f32.rawPayload.length,
      ),
    );
    expect(floats.every((f, i) => f === ints[i]! / 32768)).toBe(true);
  });
});

describe('Cartesia: /tts/sse', () => {
  const TEXT = 'First sentence here. And a second one.';

  it('chunk events carry the audio of /tts/bytes, then done; context_id is echoed', async () => {
    const body = { ...CARTESIA_OK, transcript: TEXT, context_id: 'ctx-1' };
    const res = await cartesia(running, 'sse', body);
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toBe('text/event-stream; charset=utf-8');
    const all = events(res);
    expect(all.map((e) => e.event)).toEqual(['chunk', 'chunk', 'done']);
    for (const { event, data } of all.slice(0, -1)) {
      expect(data).toEqual({
        type: event,
        context_id: 'ctx-1',
        data: data.data,
        done: false,
        status_code: 206,
        step_time: data.step_time,
      });
      expect(typeof data.step_time).toBe('number');
    }
    expect(all.at(-1)!.data).toEqual({ type: 'done', context_id: 'ctx-1', done: true, status_code: 200 });
    const audio = Buffer.concat(all.slice(0, -1).map((e) => Buffer.from(e.data.data as string, 'base64')));
    expect(audio.equals((await cartesia(running, 'bytes', body)).rawPayload)).toBe(true);
  });

  it('without context_id, none is sent', async () => {
    const all = events(await cartesia(running, 'sse', CARTESIA_OK));
    for (const { data } of all) expect(data).not.toHaveProperty('context_id');
  });

  it('add_timestamps: each chunk’s words before it, in seconds on the request’s clock', async () => {
    const res = await cartesia(timed, 'sse', { ...CARTESIA_OK, transcript: TEXT, add_timestamps: true });
    expect(res.statusCode).toBe(200);
    const all = events(res);
    expect(all.map((e) => e.event)).toEqual(['timestamps', 'chunk', 'timestamps', 'chunk', 'done']);
    const stamps = all.filter((e) => e.event === 'timestamps').map((e) => e.data);
    expect(stamps[0]).toEqual({
      type: 'timestamps',
      word_timestamps: {
        words: ['First', 'sentence', 'here.'],
        start: expect.any(Array),
        end: expect.any(Array),
      },
      done: false,
      status_code: 206,
    });
    expect((stamps[1]!.word_timestamps as { words: string[] }).words).toEqual(['And', 'a', 'second', 'one.']);
    expect((stamps[1]!.word_timestamps as { start: number[] }).start[0]).toBe(0.2);
  });

  it('add_phoneme_timestamps: each chunk’s sounds before it, after its words, in seconds on the request’s clock', async () => {
    const body = { ...CARTESIA_OK, transcript: TEXT, add_timestamps: true, add_phoneme_timestamps: true };
    const all = events(await cartesia(timed, 'sse', { ...body, context_id: 'p' }));
    expect(all.map((e) => e.event)).toEqual([
      'timestamps',
      'phoneme_timestamps',
      'chunk',
      'timestamps',
      'phoneme_timestamps',
      'chunk',
      'done',
    ]);
    const sounds = all.filter((e) => e.event === 'phoneme_timestamps').map((e) => e.data);
    expect(sounds[0]).toEqual({
      type: 'phoneme_timestamps',
      context_id: 'p',
      phoneme_timestamps: { phonemes: expect.any(Array), start: expect.any(Array), end: expect.any(Array) },
      done: false,
      status_code: 206,
    });
    // The fake engine makes each character a sound of 10 ms: the second chunk's start after the first's.
    const second = sounds[1]!.phoneme_timestamps as { phonemes: string[]; start: number[]; end: number[] };
    expect(second.phonemes.join('')).toBe('And a second one.');
    expect(second.start[0]).toBe(0.2);
    expect(second.end.at(-1)).toBe(0.37);
  });

  it('timestamps asked of a model that cannot time: the audio and done, no timing events', async () => {
    const body = { ...CARTESIA_OK, transcript: TEXT, add_timestamps: true, add_phoneme_timestamps: true };
    const res = await cartesia(running, 'sse', body);
    expect(res.statusCode).toBe(200);
    expect(events(res).map((e) => e.event)).toEqual(['chunk', 'chunk', 'done']);
  });
});

// ---------------------------------------------------------------------------------------------
// Shared behaviour: admission, the drain, failures

describe('admission, drain and failures, in each vendor’s shape', () => {
  let app: InProcessApp | undefined;
  let release: (() => void) | undefined;
  afterEach(async () => {
    release?.();
    await app?.close();
    app = undefined;
    release = undefined;
  });

  const until = async (condition: () => boolean, what: string) => {
    const deadline = Date.now() + 5000;
    while (!condition()) {
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
  };

  it('MAX_HTTP_STREAMS: 503 busy with Retry-After, then served again', async () => {
    const hold = new Promise<void>((resolve) => (release = resolve));
    app = await inProcessApp({ MAX_HTTP_STREAMS: '1' }, { engine: { hold } });
    const first = elevenLabs(app, 'af_heart', { text: 'Held.' });
    await until(() => app!.lifecycle.httpStreams === 1, 'the first stream');
    const el = await elevenLabs(app, 'af_heart', { text: 'Refused.' });
    expect(el.headers['retry-after']).toBe('1');
    expect(elevenLabsError(el)).toMatchObject({
      status: 503,
      code: 'busy',
      message: expect.stringMatching(/^queue_saturated: .*MAX_HTTP_STREAMS/),
    });
    const ca = await cartesia(app, 'sse', CARTESIA_OK);
    expect(ca.headers['retry-after']).toBe('1');
    expect(cartesiaError(ca)).toMatchObject({ status: 503, code: 'busy' });
    expect(app.engine!.requests).toHaveLength(1);
    release!();
    expect((await first).statusCode).toBe(200);
    expect((await cartesia(app, 'bytes', CARTESIA_OK)).statusCode).toBe(200);
  });

  it('a client that goes away frees its slot, on each route', async () => {
    const hold = new Promise<void>((resolve) => (release = resolve));
    app = await inProcessApp({ MAX_HTTP_STREAMS: '1' }, { engine: { hold } });
    await app.app.listen({ port: 0, host: '127.0.0.1' });
    const { port } = app.app.server.address() as { port: number };
    const routes: [string, unknown][] = [
      [`${EL_PATH}/af_heart/stream?output_format=pcm_24000`, { text: 'Held.' }],
      [`${EL_PATH}/af_heart/stream/with-timestamps?output_format=pcm_24000`, { text: 'Held.' }],
      ['/tts/bytes', CARTESIA_OK],
      ['/tts/sse', CARTESIA_OK],
    ];
    for (const [index, [path, body]] of routes.entries()) {
      const post = httpRequest(`http://127.0.0.1:${port}${path}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
      });
      post.on('error', () => {});
      post.end(JSON.stringify(body));
      await until(() => app!.lifecycle.httpStreams === 1, `the stream on ${path}`);
      post.destroy();
      await until(() => app!.lifecycle.httpStreams === 0, `the slot of ${path}`);
      expect(
        app.logs().filter((l) => l.msg === 'client went away before the answer was complete'),
      ).toHaveLength(index + 1);
    }
  });

  it('while draining: 503 shutting_down with Retry-After', async () => {
    app = await inProcessApp();
    await app.lifecycle.drain(1000);
    const el = await elevenLabs(app, 'af_heart', { text: 'Late.' }, { route: '/stream/with-timestamps' });
    expect(el.headers['retry-after']).toBe('1');
    expect(elevenLabsError(el)).toMatchObject({ status: 503, code: 'shutting_down' });
    const ca = await cartesia(app, 'bytes', CARTESIA_OK);
    expect(ca.headers['retry-after']).toBe('1');
    expect(cartesiaError(ca)).toMatchObject({ status: 503, code: 'shutting_down' });
    expect(app.engine!.requests).toEqual([]);
  });

  it('bearer auth, when the server has a token: the vendors’ key headers', async () => {
    app = await inProcessApp({ AUTH_TOKEN: 'local-secret' });
    const wrong = await elevenLabs(app, 'af_heart', { text: 'Hi.' });
    expect(elevenLabsError(wrong)).toMatchObject({ status: 401, code: 'unauthorized' });
    expect(cartesiaError(await cartesia(app, 'bytes', CARTESIA_OK))).toMatchObject({
      status: 401,
      code: 'unauthorized',
    });
    const right = await app.app.inject({
      method: 'POST',
      url: `${EL_PATH}/af_heart/stream?output_format=pcm_24000`,
      headers: { 'xi-api-key': 'local-secret', 'content-type': 'application/json' },
      payload: { text: 'Hi.' },
    });
    expect(right.statusCode).toBe(200);
    expect((await cartesia(app, 'bytes', CARTESIA_OK, { 'x-api-key': 'local-secret' })).statusCode).toBe(200);
  });

  it('a failure before the first audio: a 500 in the vendor’s shape, without internals', async () => {
    app = await inProcessApp({}, { engine: { fail: new Error('/secret/path exploded') } });
    for (const res of [
      await elevenLabs(app, 'af_heart', { text: 'Fails.' }),
      await elevenLabs(app, 'af_heart', { text: 'Fails.' }, { route: '/stream/with-timestamps' }),
    ]) {
      const err = elevenLabsError(res);
      expect(err).toMatchObject({ status: 500, code: 'internal_error' });
      expect(err.message).not.toMatch(/secret/);
    }
    for (const route of ['bytes', 'sse'] as const) {
      const err = cartesiaError(await cartesia(app, route, CARTESIA_OK));
      expect(err).toMatchObject({ status: 500, code: 'internal_error' });
      expect(err.message).not.toMatch(/secret/);
    }
  });

  it('a failure after the first audio: an error event on /tts/sse; the body cut elsewhere', async () => {
    app = await inProcessApp({}, { engine: false });
    app.lifecycle.setReady(failingAfterFirstChunk(fakeEngine()));
    const text = 'First sentence here. And a second one.';
    const sse = await cartesia(app, 'sse', { ...CARTESIA_OK, transcript: text, context_id: 'c' });
    expect(sse.statusCode).toBe(200);
    const all = events(sse);
    expect(all.map((e) => e.event)).toEqual(['chunk', 'error']);
    expect(all[1]!.data).toEqual({
      type: 'error',
      context_id: 'c',
      done: true,
      status_code: 500,
      error_code: 'inference_failed',
      title: 'inference failed',
      message: 'The model failed on the second sentence',
      error: 'The model failed on the second sentence',
      request_id: expect.any(String),
    });
    expect(app.logs().some((l) => l.msg === 'synthesis failed after the event stream began')).toBe(true);
  });
});

/** The engine, failing once its first chunk of audio is out. */
function failingAfterFirstChunk(engine: Engine): Engine {
  return {
    ...engine,
    synthesize: (request, output, options) => {
      const run = engine.synthesize(request, output, options);
      return {
        figures: () => run.figures(),
        samplesSoFar: () => run.samplesSoFar(),
        async *[Symbol.asyncIterator]() {
          for await (const bytes of run) {
            yield bytes;
            throw ttsError('TTS_ERR_INFERENCE', 'The model failed on the second sentence');
          }
        },
      };
    },
  };
}

// ---------------------------------------------------------------------------------------------
// Deepgram

function deepgram(query: string, body: unknown, path = '/v1/speak'): Promise<LightMyRequestResponse> {
  return running.app.inject({
    method: 'POST',
    url: `${path}?${query}`,
    headers: { 'content-type': 'application/json', authorization: 'Token not-checked' },
    payload: typeof body === 'string' ? body : JSON.stringify(body),
  });
}

describe('Deepgram POST /v1/speak: bad input gets Deepgram’s error shape, and the server serves on', () => {
  it.each([
    [
      'model=af_heart&encoding=speex',
      { text: 'Hi.' },
      400,
      'INVALID_OPTION',
      /^encoding "speex" is not supported; use linear16, mulaw, alaw, mp3, opus, flac or aac$/,
    ],
    [
      'model=af_heart&encoding=alaw&container=wav',
      { text: 'Hi.' },
      400,
      'INVALID_OPTION',
      /^container "wav" does not hold alaw here$/,
    ],
    [
      'model=af_heart&encoding=alaw&sample_rate=24000',
      { text: 'Hi.' },
      400,
      'INVALID_OPTION',
      /^sample_rate "24000" is not offered for this encoding; use one of 8000, 16000$/,
    ],
    [
      'model=af_heart&encoding=mulaw&container=wav',
      { text: 'Hi.' },
      400,
      'INVALID_OPTION',
      /^container "wav" does not hold mulaw here$/,
    ],
    [
      'model=af_heart&encoding=mp3&container=ogg',
      { text: 'Hi.' },
      400,
      'INVALID_OPTION',
      /^container "ogg" does not hold mp3 here$/,
    ],
    [
      'model=af_heart&encoding=mulaw&sample_rate=16000',
      { text: 'Hi.' },
      400,
      'INVALID_OPTION',
      /^sample_rate "16000" is not offered for this encoding; use one of 8000$/,
    ],
    ['model=af_heart&speed=fast', { text: 'Hi.' }, 400, 'INVALID_OPTION', /speed/],
    [
      'model=%E4%BD%A0%0A&encoding=linear16',
      { text: 'Hi.' },
      400,
      'INVALID_OPTION',
      /^model must not hold control characters \(CR, LF, TAB, NUL…\); found U\+000A at position 1$/,
    ],
    ['model=af_heart', {}, 400, 'BAD_REQUEST', /text/],
    [
      'model=af_heart',
      [1, 2],
      400,
      'BAD_REQUEST',
      /^The body should be a JSON object such as \{"text": "Hello"\}/,
    ],
  ])('%s %j → %i %s', async (query, body, status, code, message) => {
    const before = running.engine!.requests.length;
    const res = await deepgram(query, body);
    expect(res.statusCode).toBe(status);
    const answer = res.json() as { err_code: string; err_msg: string };
    expect(answer.err_code).toBe(code);
    expect(answer.err_msg).toMatch(message);
    expect(running.engine!.requests.length).toBe(before);
    const next = await deepgram('model=af_heart&encoding=linear16&container=none', { text: 'Still here.' });
    expect(next.statusCode).toBe(200);
  });

  it('a model name that is not header-safe is percent-encoded in the warning header', async () => {
    const res = await deepgram('model=%E4%BD%A0%20x&encoding=linear16&container=none', { text: 'Hi.' });
    expect(res.statusCode).toBe(200);
    expect(res.headers['dg-warning']).toBe('model %E4%BD%A0%20x is not a Kokoro voice; spoke with af_heart');
  });

  it('a model that is not a Kokoro voice speaks with the default voice and says so in a header', async () => {
    const res = await deepgram('model=aura-2-zeus-en&encoding=linear16&container=none', { text: 'Hi.' });
    expect(res.statusCode).toBe(200);
    expect(res.headers['dg-model-name']).toBe('af_heart');
    expect(res.headers['dg-warning']).toMatch(
      /^model aura-2-zeus-en is not a Kokoro voice; spoke with af_heart$/,
    );
    expect(lastRequest().voice).toMatchObject({ key: 'af_heart(1)' });
  });

  it.each(Object.entries(DEEPGRAM_VOICES))(
    'the model %s speaks as %s, on /v1/speak and /v2/speak',
    async (model, kokoro) => {
      for (const path of ['/v1/speak', '/v2/speak']) {
        const res = await deepgram(
          `model=${model}&encoding=linear16&container=none`,
          { text: 'Mapped.' },
          path,
        );
        expect(res.statusCode, path).toBe(200);
        expect(res.headers['dg-model-name'], path).toBe(kokoro);
        expect(res.headers['dg-warning'], path).toBeUndefined();
        expect(lastRequest().voice.key, path).toBe(`${kokoro}(1)`);
      }
    },
  );

  // The in-process engine encodes PCM and WAV only; the codecs are checked on a real server.
  it('maps linear16 and its container onto WAV or raw PCM', async () => {
    const cases: [string, string][] = [
      ['encoding=linear16', 'audio/wav'],
      ['encoding=linear16&container=wav', 'audio/wav'],
      [
        'encoding=linear16&container=none&sample_rate=16000',
        'audio/pcm;rate=16000;encoding=s16le;channels=1',
      ],
    ];
    for (const [query, type] of cases) {
      const res = await deepgram(`model=af_heart&${query}`, { text: 'Hi.' });
      expect(res.statusCode, query).toBe(200);
      expect(res.headers['content-type'], query).toBe(type);
    }
  });
});
