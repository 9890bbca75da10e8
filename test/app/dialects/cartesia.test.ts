/**
 * Cartesia's HTTP routes in-process: every bad input answered in Cartesia's error shape
 * (`{"error_code", "title", "message", "request_id", "error"}`) with a message that says what is
 * valid, the engine never asked and the server serving on; how Cartesia's fields become the
 * server's request; its voice ids; a body without Content-Type; /tts/sse. The real clients, with
 * real audio, are in test/server/dialects/cartesia.test.ts.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SynthesisRequest } from '../../../dist/model/engine.js';
import { CARTESIA_VOICES } from '../../../dist/server/dialects/cartesia/voices.js';
import { inProcessApp, type InProcessApp } from '../in-process.ts';
import { CARTESIA_OK, RAW, cartesia, cartesiaError, events } from './vendor-requests.ts';

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
