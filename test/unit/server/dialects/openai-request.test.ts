/**
 * The OpenAI dialect (server/dialects/openai/speech.ts): a speech request's fields translated into
 * the server's own request or refused with the field named (parseSpeechRequest), and any error as
 * OpenAI's body and status (toOpenAiError).
 */
import { describe, expect, it } from 'vitest';
import type { Engine } from '../../../../dist/model/engine.js';
import { parseConfig } from '../../../../dist/server/config/config.js';
import { TtsError, ttsError } from '../../../../dist/server/http/errors.js';
import {
  parseSpeechRequest,
  toOpenAiError,
  type SpeechOptions,
} from '../../../../dist/server/dialects/openai/speech.js';
import { fakeEngine } from '../../../app/fake-engine.ts';

const config = parseConfig({ KOKORO_MODEL_DIR: '/nonexistent', MAX_TEXT_CHARS: '20' });
const pcmWav = fakeEngine();
/** An engine with every OpenAI format (the real one, when ffmpeg is present). */
const every: Engine = {
  ...pcmWav,
  info: { ...pcmWav.info, formats: ['mp3', 'opus', 'aac', 'flac', 'wav', 'pcm'] },
};
const int32: Engine = {
  ...every,
  info: { ...every.info, contract: { ...every.info.contract, speedType: 'int32' } },
};

const ok = { model: 'kokoro', input: 'Hello.' };
const parse = (body: unknown, engine: Engine = every): SpeechOptions =>
  parseSpeechRequest(body, { config, engine });

function refusal(body: unknown, engine: Engine = every): TtsError {
  try {
    parse(body, engine);
  } catch (err) {
    expect(err).toBeInstanceOf(TtsError);
    return err as TtsError;
  }
  throw new Error('the request was accepted');
}

describe('parseSpeechRequest: accepted', () => {
  it('translates a minimal request with OpenAI’s defaults', () => {
    const { options, streamFormat, speed } = parse(ok);
    expect([streamFormat, speed]).toEqual(['audio', 1]);
    expect(options).toMatchObject({
      text: 'Hello.',
      voiceSpec: 'af_heart',
      format: 'mp3',
      sampleRate: 24000,
      speed: 1,
      stream: true,
      transport: 'binary',
      timestamps: false,
    });
  });

  it.each<
    [string, Record<string, unknown>, Engine, Partial<SpeechOptions['options']>, Partial<SpeechOptions>]
  >([
    ['a dated snapshot of a model', { model: 'gpt-4o-mini-tts-2025-12-15' }, every, {}, {}],
    ['an OpenAI voice name', { voice: 'alloy' }, every, { voiceSpec: 'af_alloy' }, {}],
    ['marin, OpenAI’s recommended voice', { voice: 'marin' }, every, { voiceSpec: 'af_heart' }, {}],
    ['a Kokoro blend', { voice: 'af_bella(2)+af_sky(1)' }, every, { voiceSpec: 'af_bella(2)+af_sky(1)' }, {}],
    ['a voice object', { voice: { id: 'ballad' } }, every, { voiceSpec: 'bm_george' }, {}],
    ['a Kokoro voice object', { voice: { id: 'bm_george' } }, every, { voiceSpec: 'bm_george' }, {}],
    ['a response_format', { response_format: 'opus' }, every, { format: 'opus' }, {}],
    ['pcm where only PCM and WAV are encoded', { response_format: 'pcm' }, pcmWav, { format: 'pcm' }, {}],
    ['a speed inside both ranges', { speed: 1.25 }, every, { speed: 1.25 }, { speed: 1.25 }],
    ['a speed below Kokoro’s, clamped', { speed: 0.25 }, every, { speed: 0.5 }, { speed: 0.5 }],
    ['a speed above Kokoro’s, clamped', { speed: 4 }, every, { speed: 2 }, { speed: 2 }],
    ['null as the speed, the default', { speed: null }, every, { speed: 1 }, { speed: 1 }],
    ['a speed rounded for an int32 export', { speed: 1.4 }, int32, { speed: 1 }, { speed: 1 }],
    ['a slow speed for an int32 export, 1 at least', { speed: 0.25 }, int32, { speed: 1 }, { speed: 1 }],
    ['a fast speed for an int32 export', { speed: 3 }, int32, { speed: 2 }, { speed: 2 }],
    ['SSE events', { stream_format: 'sse' }, every, {}, { streamFormat: 'sse' }],
    ['instructions, ignored', { instructions: 'Speak cheerfully.' }, every, { text: 'Hello.' }, {}],
    [
      'lang_code as the language',
      { lang_code: 'es' },
      every,
      { voice: expect.objectContaining({ lang: 'e' }) },
      {},
    ],
  ])('%s', (_name, fields, engine, options, speech) => {
    const parsed = parse({ ...ok, ...fields }, engine);
    expect(parsed.options).toMatchObject(options);
    expect(parsed).toMatchObject(speech);
  });
});

describe('parseSpeechRequest: refusals', () => {
  const cases: [string, unknown, Engine, string, string, RegExp][] = [
    ...[null, [1, 2], 'Hello', 5].map((body): [string, unknown, Engine, string, string, RegExp] => [
      `the body ${JSON.stringify(body)}`,
      body,
      every,
      'bad_request',
      'body',
      /^The body should be a JSON object such as \{"model": "kokoro", "input": "Hello", "voice": "af_heart"\}; got /,
    ]),
    [
      'no model',
      { input: 'Hi.' },
      every,
      'bad_request',
      'model',
      /^model is required: one of kokoro, tts-1, tts-1-hd, gpt-4o-mini-tts$/,
    ],
    ['an empty model', { ...ok, model: '' }, every, 'bad_request', 'model', /^model is required/],
    [
      'a model that is not a string',
      { ...ok, model: 5 },
      every,
      'invalid_option',
      'model',
      /^model should be a string; got number 5$/,
    ],
    [
      'an unknown model',
      { ...ok, model: `tts-2${'x'.repeat(100)}` },
      every,
      'not_found',
      'model',
      /^The model "tts-2x{55}" does not exist here; this server serves kokoro, tts-1, tts-1-hd, gpt-4o-mini-tts \(all of them Kokoro-82M\)$/,
    ],
    [
      'no input',
      { model: 'kokoro' },
      every,
      'bad_request',
      'input',
      /^input is required: the text to speak$/,
    ],
    [
      'an input that is not a string',
      { ...ok, input: ['Hi.'] },
      every,
      'invalid_option',
      'input',
      /got an array$/,
    ],
    ['an empty input', { ...ok, input: ' ' }, every, 'empty_text', 'text', /^text is empty/],
    [
      'an input over the limit',
      { ...ok, input: 'a'.repeat(21) },
      every,
      'text_too_long',
      'text',
      /21 characters/,
    ],
    [
      'a voice of the wrong type',
      { ...ok, voice: 7 },
      every,
      'invalid_option',
      'voice',
      /^voice should be an OpenAI voice name \(alloy, ash, .*\), a Kokoro voice id or blend .*; got number 7$/,
    ],
    [
      'a voice object without an id',
      { ...ok, voice: { name: 'alloy' } },
      every,
      'invalid_option',
      'voice',
      /got an object$/,
    ],
    ['null as the voice', { ...ok, voice: null }, every, 'invalid_option', 'voice', /got null$/],
    [
      'an unknown voice',
      { ...ok, voice: 'robot' },
      every,
      'voice_not_found',
      'voice',
      /^Unknown voice "robot"/,
    ],
    [
      'a language without a front end',
      { ...ok, lang_code: 'de' },
      every,
      'language_unsupported',
      'lang',
      /"de"/,
    ],
    [
      'an unknown response_format',
      { ...ok, response_format: 'ogg' },
      every,
      'invalid_option',
      'response_format',
      /^response_format should be one of: mp3, opus, aac, flac, wav, pcm; got the string "ogg"$/,
    ],
    [
      'a response_format that needs ffmpeg, without it',
      ok,
      pcmWav,
      'invalid_option',
      'response_format',
      /^response_format should be one of: wav, pcm; got the string "mp3" \(mp3, opus, aac, flac needs ffmpeg on the server, which was not found\)$/,
    ],
    [
      'a speed below OpenAI’s range',
      { ...ok, speed: 0.2 },
      every,
      'invalid_option',
      'speed',
      /^speed should be a number from 0.25 to 4; got number 0.2$/,
    ],
    [
      'a speed above OpenAI’s range',
      { ...ok, speed: 4.01 },
      every,
      'invalid_option',
      'speed',
      /got number 4.01$/,
    ],
    [
      'a speed that is not a number',
      { ...ok, speed: '1' },
      every,
      'invalid_option',
      'speed',
      /got the string "1"$/,
    ],
    [
      'an unknown stream_format',
      { ...ok, stream_format: 'chunks' },
      every,
      'invalid_option',
      'stream_format',
      /^stream_format should be "audio" or "sse"; got the string "chunks"$/,
    ],
    [
      'instructions that are not text',
      { ...ok, instructions: 5 },
      every,
      'invalid_option',
      'instructions',
      /^instructions should be a string; got number 5$/,
    ],
  ];
  it.each(cases)('%s', (_name, body, engine, code, param, message) => {
    const err = refusal(body, engine);
    expect(err.code).toBe(code);
    expect(err.data.param).toBe(param);
    expect(err.message).toMatch(message);
  });
});

describe('toOpenAiError', () => {
  const GENERIC = 'The server failed while handling this request; it has been logged.';
  const cases: [string, unknown, number, string, string | null, string, string][] = [
    [
      'a bad option',
      ttsError('TTS_ERR_INVALID_OPTION', 'speed …', { data: { param: 'speed' } }),
      400,
      'invalid_value',
      'speed',
      'invalid_request_error',
      'invalid_option',
    ],
    [
      'text too long, a 400 there',
      ttsError('TTS_ERR_TEXT_TOO_LONG', 'long', { data: { param: 'text' } }),
      400,
      'string_above_max_length',
      'input',
      'invalid_request_error',
      'text_too_long',
    ],
    [
      'phonemes, named input',
      ttsError('TTS_ERR_EMPTY_TEXT', 'empty', { data: { param: 'phonemes' } }),
      400,
      'empty_text',
      'input',
      'invalid_request_error',
      'empty_text',
    ],
    [
      'format, named response_format',
      ttsError('TTS_ERR_INVALID_OPTION', 'f', { data: { param: 'format' } }),
      400,
      'invalid_value',
      'response_format',
      'invalid_request_error',
      'invalid_option',
    ],
    [
      'lang, named lang_code',
      ttsError('TTS_ERR_LANGUAGE_UNSUPPORTED', 'de', { data: { param: 'lang' } }),
      400,
      'language_unsupported',
      'lang_code',
      'invalid_request_error',
      'language_unsupported',
    ],
    [
      'an unknown model',
      ttsError('TTS_ERR_NOT_FOUND', 'no model', { data: { param: 'model' } }),
      404,
      'model_not_found',
      'model',
      'invalid_request_error',
      'not_found',
    ],
    [
      'an unknown route',
      ttsError('TTS_ERR_NOT_FOUND', 'no route'),
      404,
      'not_found',
      null,
      'invalid_request_error',
      'not_found',
    ],
    [
      'wrong credentials',
      ttsError('TTS_ERR_UNAUTHORIZED', 'creds'),
      401,
      'invalid_api_key',
      null,
      'invalid_request_error',
      'unauthorized',
    ],
    [
      'invalid JSON',
      ttsError('TTS_ERR_INVALID_JSON', 'JSON …'),
      400,
      'invalid_json',
      null,
      'invalid_request_error',
      'invalid_json',
    ],
    ['busy', ttsError('TTS_ERR_BUSY', 'full'), 503, 'busy', null, 'server_error', 'busy'],
    [
      'an inference failure',
      ttsError('TTS_ERR_INFERENCE', 'failed inside'),
      500,
      'inference_failed',
      null,
      'server_error',
      'inference_failed',
    ],
    [
      'a plain Error',
      new Error('/secret/path'),
      500,
      'internal_error',
      null,
      'server_error',
      'internal_error',
    ],
    ['a thrown string', 'oops', 500, 'internal_error', null, 'server_error', 'internal_error'],
  ];
  it.each(cases)('%s', (_name, err, status, code, param, type, own) => {
    const mapped = toOpenAiError(err);
    expect(mapped).toEqual({
      status,
      code: own,
      body: { error: { message: expect.any(String), type, param, code } },
    });
    expect(mapped.body.error.message).not.toContain('/secret');
  });

  it('keeps the message, with its token, and hides internals', () => {
    expect(toOpenAiError(ttsError('TTS_ERR_BUSY', 'The server is full')).body.error.message).toBe(
      'queue_saturated: the server is full',
    );
    expect(toOpenAiError(new Error('/secret/path')).body.error.message).toBe(GENERIC);
  });
});
