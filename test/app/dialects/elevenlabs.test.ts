/**
 * ElevenLabs' HTTP routes in-process: every bad input answered in ElevenLabs' error shape
 * (`{"detail": {"status", "message"}}`) with a message that says what is valid, the engine never
 * asked and the server serving on; how ElevenLabs' fields become the server's request; its voice
 * ids; stream/with-timestamps. The real clients, with real audio, are in
 * test/server/dialects/elevenlabs.test.ts.
 */
import type { LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SynthesisRequest } from '../../../dist/model/engine.js';
import { ELEVENLABS_VOICES } from '../../../dist/server/dialects/elevenlabs/voices.js';
import { inProcessApp, type InProcessApp } from '../in-process.ts';
import { EL_PATH, elevenLabs, elevenLabsError } from './vendor-requests.ts';

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
