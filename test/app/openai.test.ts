/**
 * The OpenAI-compatible routes' refusals in-process, through the official `openai` SDK (its fetch
 * is the app's `inject()`): every bad input answered in OpenAI's error shape and status, with the
 * `param` and `code` the SDK exposes, and the server serving on; bodies that are not JSON; unknown
 * routes; bearer auth as the SDK sends it. The happy paths, with real audio, are in
 * test/server/openai.test.ts.
 */
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { injectFetch } from './inject-fetch.ts';
import { inProcessApp, type InProcessApp } from './in-process.ts';

let running: InProcessApp;
let client: OpenAI;
beforeAll(async () => {
  running = await inProcessApp();
  client = sdk(running, 'not-checked');
});
afterAll(() => running.close());

function sdk(app: InProcessApp, apiKey: string): OpenAI {
  return new OpenAI({ baseURL: 'http://in-process/v1', apiKey, maxRetries: 0, fetch: injectFetch(app.app) });
}

/** The SDK's error for a request that must be refused. */
async function refusal(params: Record<string, unknown>): Promise<InstanceType<typeof OpenAI.APIError>> {
  const err = await client.audio.speech
    .create(params as unknown as OpenAI.Audio.SpeechCreateParams)
    .then(() => new Error('the request was accepted'))
    .catch((e: unknown) => e);
  expect(err).toBeInstanceOf(OpenAI.APIError);
  return err as InstanceType<typeof OpenAI.APIError>;
}

describe('bad input: OpenAI’s error shape and status, and the server serves on', () => {
  // The in-process engine encodes PCM and WAV only, so requests name one.
  const ok = { model: 'kokoro', voice: 'alloy', input: 'Hello.', response_format: 'pcm' };
  const cases: [string, Record<string, unknown>, number, string, string, RegExp][] = [
    [
      'an unknown model',
      { ...ok, model: 'tts-2' },
      404,
      'model',
      'model_not_found',
      /"tts-2" does not exist/,
    ],
    [
      'no model',
      { ...ok, model: undefined },
      400,
      'model',
      'bad_request',
      /^model is required: one of kokoro/,
    ],
    ['a model that is not a string', { ...ok, model: 1 }, 400, 'model', 'invalid_value', /got number 1/],
    ['no input', { ...ok, input: undefined }, 400, 'input', 'bad_request', /^input is required/],
    ['an empty input', { ...ok, input: '   ' }, 400, 'input', 'empty_text', /is empty/],
    ['an input that is not a string', { ...ok, input: 42 }, 400, 'input', 'invalid_value', /got number 42/],
    [
      'an input over the limit',
      { ...ok, input: 'a'.repeat(5000) },
      400,
      'input',
      'string_above_max_length',
      /5000 characters, over the limit of 4096/,
    ],
    ['an unknown voice', { ...ok, voice: 'robot' }, 400, 'voice', 'voice_not_found', /Unknown voice "robot"/],
    ['a voice of the wrong type', { ...ok, voice: 7 }, 400, 'voice', 'invalid_value', /got number 7/],
    ['a voice object without an id', { ...ok, voice: { id: 7 } }, 400, 'voice', 'invalid_value', /an object/],
    [
      'a blend across languages',
      { ...ok, voice: 'af_bella+bf_emma+ef_dora' },
      400,
      'voice',
      'language_unsupported',
      /one language/,
    ],
    [
      'a language it has no front end for',
      { ...ok, lang_code: 'de' },
      400,
      'lang_code',
      'language_unsupported',
      /Unknown lang "de"/,
    ],
    [
      'an unknown response_format',
      { ...ok, response_format: 'ogg' },
      400,
      'response_format',
      'invalid_value',
      /^response_format should be one of: wav, pcm; got the string "ogg" \(mp3, opus, aac, flac needs ffmpeg/,
    ],
    [
      'a response_format this server cannot encode',
      { ...ok, response_format: 'mp3' },
      400,
      'response_format',
      'invalid_value',
      /needs ffmpeg on the server, which was not found/,
    ],
    ['a speed below OpenAI’s range', { ...ok, speed: 0.1 }, 400, 'speed', 'invalid_value', /from 0.25 to 4/],
    ['a speed above OpenAI’s range', { ...ok, speed: 4.5 }, 400, 'speed', 'invalid_value', /got number 4.5/],
    ['a speed that is not a number', { ...ok, speed: 'fast' }, 400, 'speed', 'invalid_value', /"fast"/],
    [
      'an unknown stream_format',
      { ...ok, stream_format: 'chunks' },
      400,
      'stream_format',
      'invalid_value',
      /should be "audio" or "sse"/,
    ],
    [
      'instructions that are not text',
      { ...ok, instructions: ['calm'] },
      400,
      'instructions',
      'invalid_value',
      /instructions should be a string; got an array/,
    ],
  ];

  it.each(cases)('%s', async (_name, params, status, param, code, message) => {
    const asked = running.engine!.requests.length;
    const err = await refusal(params);
    expect(err.status).toBe(status);
    expect(err.param).toBe(param);
    expect(err.code).toBe(code);
    expect(err.type).toBe('invalid_request_error');
    expect(err.message.length).toBeGreaterThan(20);
    expect((err.error as { message: string }).message).toMatch(message);
    expect(running.engine!.requests.length).toBe(asked);
    // The server serves on.
    expect((await client.audio.speech.create({ ...ok, response_format: 'pcm' })).status).toBe(200);
  });

  it.each([
    ['{"model": ', 'invalid_json', null, /^The body is not valid JSON/],
    ['[1, 2]', 'bad_request', 'body', /^The body should be a JSON object .*; got an array$/],
    ['null', 'bad_request', 'body', /got null$/],
  ])('a body %j that is not a JSON object', async (body, code, param, message) => {
    const res = await running.app.inject({
      method: 'POST',
      url: '/v1/audio/speech',
      payload: body,
      headers: { 'content-type': 'application/json' },
    });
    expect(res.statusCode).toBe(400);
    const json = res.json() as { error: { message: string; type: string; code: string; param: unknown } };
    expect(json.error).toMatchObject({ type: 'invalid_request_error', code, param });
    expect(json.error.message).toMatch(/JSON/);
    expect(json.error.message).toMatch(message);
  });

  it('an unknown model id: 404 model_not_found from models.retrieve', async () => {
    const err = await client.models.retrieve('whisper-1').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OpenAI.NotFoundError);
    expect(err).toMatchObject({ status: 404, code: 'model_not_found', param: 'model' });
  });

  it('an unknown /v1 route answers 404 in OpenAI’s shape', async () => {
    const res = await running.app.inject({ method: 'POST', url: '/v1/audio/transcriptions' });
    expect(res.statusCode).toBe(404);
    const json = res.json() as { error: { message: string; code: string } };
    expect(json.error.code).toBe('not_found');
    expect(json.error.message).toMatch(/POST \/v1\/audio\/speech/);
  });
});

describe('bearer auth, when the server has a token', () => {
  let guarded: InProcessApp;
  beforeAll(async () => {
    guarded = await inProcessApp({ AUTH_TOKEN: 'sk-local-secret' });
  });
  afterAll(() => guarded.close());

  it('the SDK’s Authorization: Bearer header is checked', async () => {
    const err = await sdk(guarded, 'sk-wrong')
      .models.list()
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OpenAI.AuthenticationError);
    expect((err as InstanceType<typeof OpenAI.AuthenticationError>).code).toBe('invalid_api_key');

    const response = await sdk(guarded, 'sk-local-secret').audio.speech.create({
      model: 'tts-1',
      voice: 'echo',
      input: 'Authorized.',
      response_format: 'wav',
    });
    expect(response.status).toBe(200);
    expect((await response.arrayBuffer()).byteLength).toBeGreaterThan(44);
  });
});
