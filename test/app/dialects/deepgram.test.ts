/**
 * Deepgram's protocols on /v1/speak and /v2/speak in-process: the query read at connection time (a
 * voice or blend as `model`, a mapped Deepgram model, another name falling back with a Warning, what
 * cannot be served refused with a Warning and 1008), the same dialects reached through SageMaker's
 * invocation-path headers, Flux's turns (SpeechStarted … SpeechMetadata, Interrupt, the closing
 * SessionMetadata), and bad messages answered with a Warning while the session lives on. Then
 * POST /v1/speak and /v2/speak: every bad input in Deepgram's error shape, the voices and
 * encodings. The real clients, with real audio, are in test/server/dialects/deepgram.test.ts.
 */
import type { LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SynthesisRequest } from '../../../dist/model/engine.js';
import { DEEPGRAM_VOICES } from '../../../dist/server/dialects/deepgram/voices.js';
import { inProcessApp, type InProcessApp } from '../in-process.ts';
import { upgrade, type TestClient } from '../ws-client.ts';

let running: InProcessApp;
beforeAll(async () => {
  running = await inProcessApp();
});
afterAll(() => running.close());

const lastRequest = (app: InProcessApp = running): SynthesisRequest => app.engine!.requests.at(-1)!;

async function speak(query: string, headers: Record<string, string> = {}, path = '/v1/speak') {
  const handshake = await upgrade(running.app, `${path}${query ? `?${query}` : ''}`, headers);
  expect(handshake.status).toBe(101);
  return handshake.client!;
}

const metadata = (client: TestClient) => client.controls()[0];

describe('/v1/speak query errors: a Warning naming the problem, then 1008', () => {
  it.each([
    ['model=af_heart&encoding=opus', /^encoding "opus" is not supported; use linear16, mulaw or alaw$/],
    ['encoding=mulaw&sample_rate=44100', /^sample_rate "44100" is not supported for mulaw; use one of 8000/],
    ['sample_rate=fast', /^sample_rate "fast" is not supported for linear16; use one of 8000, 16000/],
    ['speed=3', /^speed "3" should be from 0.5 to 2$/],
    ['speed=slow', /^speed "slow" should be from 0.5 to 2$/],
  ])('%s', async (query, description) => {
    const client = await speak(query);
    expect(await client.closed()).toBe(1008);
    expect(client.closeReason).toBe('invalid_option');
    expect(client.controls()).toEqual([
      {
        type: 'Warning',
        code: 'invalid_option',
        description: expect.any(String),
        warn_msg: expect.any(String),
      },
    ]);
    expect(String(client.controls()[0]!.description)).toMatch(description);
    // The next connection is served.
    const next = await speak('model=af_heart');
    next.send({ type: 'Flush' });
    await next.untilControls('Flushed', 1);
    next.close();
  });

  it('while the model loads: a Warning, then 1013', async () => {
    const cold = await inProcessApp({}, { engine: false });
    try {
      const client = (await upgrade(cold.app, '/v1/speak?model=af_heart')).client!;
      expect(await client.closed()).toBe(1013);
      expect(client.controls()).toEqual([
        {
          type: 'Warning',
          code: 'not_ready',
          description: 'The model is still loading; retry when GET /ping answers 200',
          warn_msg: 'The model is still loading; retry when GET /ping answers 200',
        },
      ]);
    } finally {
      await cold.close();
    }
  });
});

describe('the voice', () => {
  it('a Kokoro voice or blend as the model speaks with it, without a Warning', async () => {
    const client = await speak(`model=${encodeURIComponent('af_bella+af_sky')}`);
    await client.untilControls('Metadata', 1);
    expect(metadata(client)).toMatchObject({
      type: 'Metadata',
      model_name: 'af_bella+af_sky',
      model_version: 'kokoro-82m-v1.0',
    });
    client.send({ type: 'Flush' });
    await client.untilControls('Flushed', 1);
    expect(client.controls()).toEqual([metadata(client), { type: 'Flushed', sequence_id: 0 }]);
    client.close();
  });

  it('a Deepgram model of the vendor table speaks with its voice, without a Warning', async () => {
    for (const [path, model, voice] of [
      ['/v1/speak', 'aura-2-helena-en', 'af_bella'],
      ['/v2/speak', 'flux-alexis-en', 'af_heart'],
    ] as const) {
      const client = await speak(`model=${model}`, {}, path);
      client.send({ type: 'Speak', text: 'Mapped.' });
      client.send({ type: 'Flush' });
      await client.untilControls(path === '/v1/speak' ? 'Flushed' : 'SpeechMetadata', 1);
      expect(metadata(client), path).toMatchObject({ model_name: voice });
      expect(client.controls('Warning'), path).toEqual([]);
      expect(running.engine!.requests.at(-1)!.voice.key, path).toBe(`${voice}(1)`);
      client.close();
    }
  });

  it('another model name speaks with the default voice, after one Warning', async () => {
    const client = await speak('model=aura-2-zeus-en&encoding=mulaw&sample_rate=8000');
    await client.untilControls('Warning', 1);
    expect(client.controls()).toEqual([
      {
        type: 'Metadata',
        request_id: expect.any(String),
        model_name: 'af_heart',
        model_version: 'kokoro-82m-v1.0',
        model_uuid: expect.any(String),
      },
      {
        type: 'Warning',
        code: 'MODEL_NOT_FOUND',
        description: 'model "aura-2-zeus-en" is not a Kokoro voice; speaking with the default voice af_heart',
        warn_msg: 'model "aura-2-zeus-en" is not a Kokoro voice; speaking with the default voice af_heart',
      },
    ]);
    client.close();
  });

  it('SageMaker’s invocation-path and query-string headers on the default path choose the dialect', async () => {
    const client = await speak(
      '',
      {
        'x-amzn-sagemaker-model-invocation-path': 'v1/speak',
        'x-amzn-sagemaker-model-query-string': 'model=bf_emma&encoding=linear16&sample_rate=24000',
      },
      '/invocations-bidirectional-stream',
    );
    await client.untilControls('Metadata', 1);
    expect(metadata(client)).toMatchObject({ model_name: 'bf_emma' });
    client.send({ type: 'Speak', text: 'Hello there.' });
    client.send({ type: 'Flush' });
    await client.untilControls('Flushed', 1);
    // linear16: two bytes a sample; the in-process engine speaks 10 ms (240 samples) a character.
    const audio = client.frames.filter((f) => f.kind === 'audio').reduce((n, f) => n + f.bytes.length, 0);
    expect(audio).toBe('Hello there.'.length * 240 * 2);
    expect(running.engine!.requests.at(-1)!.voice.key).toMatch(/^bf_emma/);
    client.close();
  });
});

describe('bad messages: a Warning, and the session lives on', () => {
  it.each([
    ['plain text', 'Hello there.', 'invalid_json', /^Send JSON messages such as \{"type": "Speak"/],
    ['broken JSON', '{"type": "Speak"', 'invalid_json', /not valid JSON/],
    [
      'an unknown type',
      '{"type": "Dance"}',
      'unknown_type',
      /^Unknown message type "Dance"; should be Speak, Flush, Clear, KeepAlive or Close$/,
    ],
    ['no type', '{"text": "Hi."}', 'unknown_type', /^Unknown message type "undefined"/],
    ['bytes that are not UTF-8', Buffer.from([0x7b, 0xff]), 'invalid_utf8', /not valid UTF-8/],
  ])('%s', async (_name, message, code, description) => {
    const client = await speak('model=af_heart');
    client.send(message, false);
    await client.untilControls('Warning', 1);
    const [warning] = client.controls('Warning');
    expect(warning).toEqual({
      type: 'Warning',
      code,
      description: expect.any(String),
      warn_msg: warning!.description,
    });
    expect(String(warning!.description)).toMatch(description);
    client.send({ type: 'Speak', text: 'Still here.' });
    client.send({ type: 'Flush' });
    await client.untilControls('Flushed', 1);
    expect(client.frames.some((f) => f.kind === 'audio')).toBe(true);
    expect(client.closeCode).toBeUndefined();
    client.close();
  });
});

describe('/v2/speak (Flux): turns reported as Flux reports them', () => {
  const audioBytes = (client: TestClient) =>
    client.frames.filter((f) => f.kind === 'audio').reduce((n, f) => n + f.bytes.length, 0);

  it('Connected, then per turn SpeechStarted, its audio, SpeechMetadata and Flushed; Close answers SessionMetadata', async () => {
    const client = await speak('model=flux-heather-en&encoding=linear16&sample_rate=24000', {}, '/v2/speak');
    client.send({ type: 'Speak', text: 'Hello ' });
    client.send({ type: 'Speak', text: 'there.' });
    client.send({ type: 'Flush' });
    await client.untilControls('SpeechMetadata', 1);
    const [connected, started, spoken, flushed] = client.controls();
    expect(connected).toEqual({
      type: 'Connected',
      request_id: expect.any(String),
      model_name: 'af_bella',
      model_version: 'kokoro-82m-v1.0',
      model_uuids: [expect.any(String)],
    });
    const speechId = started!.speech_id as string;
    expect(started).toEqual({
      type: 'SpeechStarted',
      speech_id: expect.stringMatching(/^dg_sp_[0-9a-f]{12}$/),
    });
    // The in-process engine speaks 10 ms (240 samples) a character: 12 characters, 120 ms.
    expect(audioBytes(client)).toBe('Hello there.'.length * 240 * 2);
    expect(spoken).toEqual({
      type: 'SpeechMetadata',
      speech_id: speechId,
      audio_duration_ms: 120,
      input_character_count: 12,
      billable_character_count: 12,
      controls_applied: { pronunciations_applied: 0, breaks_applied: 0, pronunciation_warnings: 0 },
    });
    // Every audio frame of the turn came between SpeechStarted and SpeechMetadata.
    const kinds = client.frames.map((f) => (f.kind === 'audio' ? 'audio' : String(f.message.type)));
    expect(kinds.lastIndexOf('audio')).toBeLessThan(kinds.indexOf('SpeechMetadata'));
    expect(kinds.indexOf('audio')).toBeGreaterThan(kinds.indexOf('SpeechStarted'));
    await client.untilControls('Flushed', 1);
    expect(flushed ?? client.controls('Flushed')[0]).toEqual({ type: 'Flushed', speech_id: speechId });
    client.send({ type: 'Close' });
    expect(await client.closed()).toBe(1000);
    expect(client.controls().at(-1)).toEqual({
      type: 'SessionMetadata',
      total_audio_duration_ms: 120,
      total_input_character_count: 12,
      total_billable_character_count: 12,
    });
  });

  it('Interrupt: SpeechInterrupted for the turn it cut; with no turn, a NO_ACTIVE_SPEECH Warning', async () => {
    const client = await speak('model=af_heart', {}, '/v2/speak');
    client.send({ type: 'Interrupt' });
    await client.untilControls('Warning', 1);
    expect(client.controls('Warning')[0]).toMatchObject({ code: 'NO_ACTIVE_SPEECH' });
    client.send({ type: 'Speak', text: 'A turn that is cut before its flush.' });
    await client.untilControls('SpeechStarted', 1);
    client.send({ type: 'Interrupt' });
    await client.untilControls('SpeechInterrupted', 1);
    const speechId = client.controls('SpeechStarted')[0]!.speech_id;
    expect(client.controls('SpeechInterrupted')[0]).toMatchObject({
      type: 'SpeechInterrupted',
      metadata: { speech_id: speechId, input_character_count: 36 },
    });
    expect(client.controls('SpeechMetadata')).toEqual([]);
    // The next Speak is a turn of its own, spoken whole.
    client.send({ type: 'Speak', text: 'Next.' });
    client.send({ type: 'Flush' });
    await client.untilControls('SpeechMetadata', 1);
    expect(client.controls('SpeechStarted')[1]!.speech_id).not.toBe(speechId);
    expect(client.controls('SpeechMetadata')[0]).toMatchObject({
      audio_duration_ms: 50,
      input_character_count: 5,
    });
    client.close();
  });

  it('SageMaker’s invocation path v2/speak chooses Flux; Configure is refused with a Warning and the session lives on', async () => {
    const client = await speak(
      '',
      {
        'x-amzn-sagemaker-model-invocation-path': 'v2/speak',
        'x-amzn-sagemaker-model-query-string': 'model=flux-heather-en&encoding=linear16&sample_rate=24000',
      },
      '/invocations-bidirectional-stream',
    );
    await client.untilControls('Connected', 1);
    client.send({ type: 'Configure', speed: 1.1 });
    await client.untilControls('Warning', 1);
    expect(client.controls('Warning')[0]).toMatchObject({
      code: 'unknown_type',
      description: expect.stringMatching(/^Configure is not supported here/),
    });
    client.send({ type: 'Speak', text: 'Still here.' });
    client.send({ type: 'Flush' });
    await client.untilControls('SpeechMetadata', 1);
    expect(audioBytes(client)).toBe('Still here.'.length * 240 * 2);
    client.close();
  });
});

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
