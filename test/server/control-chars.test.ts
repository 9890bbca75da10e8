/**
 * Control characters in the names a client sends (voices, model names) are refused on every route
 * before they are trimmed, parsed, echoed in a response header or logged: a 400 `invalid_option`
 * naming the field, in the route's own error shape (never Fastify's default 500), and the server
 * serves on. On a WebSocket a message's voice gets an error frame and the session goes on; a
 * socket's query or path is refused at connection time (1008) and the next connection is served.
 * Values the parser forgives that are still not header text (Unicode white space around a voice)
 * reach Deepgram's headers percent-encoded.
 */
import { Writable } from 'node:stream';
import WebSocket from 'ws';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TestClient, startServer, type TestServer } from './harness.ts';

/** A control character of each kind, and how the refusal names it (each at position 0). */
const CONTROLS: readonly [string, string][] = [
  ['\r\n', 'U+000D'],
  ['\u0000', 'U+0000'],
  ['\t', 'U+0009'],
  ['\u007f', 'U+007F'],
  ['\u0085', 'U+0085'],
];
const refusal = (param: string, code: string) =>
  new RegExp(
    `^${param} must not hold control characters .*; found ${code.replace('+', '\\+')} at position 0$`,
  );
/** ElevenLabs' Rachel: af_heart here. */
const RACHEL = '21m00Tcm4TlvDq8ikWAM';
const CARTESIA_WAV = { container: 'wav', encoding: 'pcm_s16le', sample_rate: 24000 };
const CARTESIA_RAW = { container: 'raw', encoding: 'pcm_s16le', sample_rate: 24000 };

const lines: string[] = [];
let server: TestServer;
beforeAll(async () => {
  const log = new Writable({
    write(chunk: Buffer, _encoding, done) {
      lines.push(chunk.toString('utf8'));
      done();
    },
  });
  server = await startServer({ LOG_LEVEL: 'info', WS_IDLE_TIMEOUT_S: '0' }, { log });
});
afterAll(() => server.close());

const wsBase = () => server.http.replace('http:', 'ws:');

async function post(path: string, body: unknown): Promise<{ status: number; body: unknown }> {
  const response = await fetch(`${server.http}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  const type = response.headers.get('content-type') ?? '';
  return {
    status: response.status,
    body: type.startsWith('application/json')
      ? await response.json()
      : (await response.arrayBuffer()).byteLength,
  };
}

async function open(path: string): Promise<TestClient> {
  const socket = new WebSocket(`${wsBase()}${path}`);
  const client = new TestClient(socket);
  await new Promise((resolve, reject) => socket.once('open', resolve).once('error', reject));
  return client;
}

/**
 * Each HTTP route and field: the request with `bad` in it, and the body it must be answered with
 * (`message`: the refusal's expected text). Then `good`, which the same server must serve.
 */
interface HttpCase {
  readonly send: (bad: string) => Promise<{ status: number; body: unknown }>;
  readonly shape: (message: RegExp) => object;
  readonly param: string;
  readonly good: () => Promise<{ status: number; body: unknown }>;
}

const ours = (message: RegExp) => ({
  type: 'error',
  code: 'invalid_option',
  error: 'invalid_option',
  message: expect.stringMatching(message),
});
const openAi = (param: string) => (message: RegExp) => ({
  error: {
    type: 'invalid_request_error',
    code: 'invalid_value',
    param,
    message: expect.stringMatching(message),
  },
});
const elevenLabs = (message: RegExp) => ({
  detail: { status: 'invalid_option', message: expect.stringMatching(message) },
});
const cartesia = (message: RegExp) => ({
  error_code: 'invalid_option',
  title: 'invalid option',
  message: expect.stringMatching(message),
});
const deepgram = (message: RegExp) => ({
  err_code: 'INVALID_OPTION',
  err_msg: expect.stringMatching(message),
});

const speech = { model: 'tts-1', input: 'Hi.', voice: 'af_heart', response_format: 'wav' };
const bytes = { model_id: 'sonic-3', transcript: 'Hi.', voice: 'af_heart', output_format: CARTESIA_WAV };

const HTTP_CASES: Record<string, HttpCase> = {
  'POST /invocations voice': {
    send: (bad) => post('/invocations', { text: 'Hi.', voice: `${bad}af_heart` }),
    shape: ours,
    param: 'voice',
    good: () => post('/invocations', { text: 'Hi.', voice: 'af_heart' }),
  },
  'POST /v1/audio/speech voice': {
    send: (bad) => post('/v1/audio/speech', { ...speech, voice: `${bad}af_heart` }),
    shape: openAi('voice'),
    param: 'voice',
    good: () => post('/v1/audio/speech', speech),
  },
  'POST /v1/audio/speech voice {id}': {
    send: (bad) => post('/v1/audio/speech', { ...speech, voice: { id: `${bad}af_heart` } }),
    shape: openAi('voice'),
    param: 'voice',
    good: () => post('/v1/audio/speech', { ...speech, voice: { id: 'af_heart' } }),
  },
  'POST /v1/audio/speech model': {
    send: (bad) => post('/v1/audio/speech', { ...speech, model: `${bad}tts-1` }),
    shape: openAi('model'),
    param: 'model',
    good: () => post('/v1/audio/speech', speech),
  },
  'POST /v1/text-to-speech/:voice_id/stream voice': {
    send: (bad) => post(`/v1/text-to-speech/${encodeURIComponent(`${bad}af_heart`)}/stream`, { text: 'Hi.' }),
    shape: elevenLabs,
    param: 'voice',
    good: () => post(`/v1/text-to-speech/${RACHEL}/stream`, { text: 'Hi.' }),
  },
  'POST /v1/text-to-speech/:voice_id model_id': {
    send: (bad) => post(`/v1/text-to-speech/${RACHEL}`, { text: 'Hi.', model_id: `${bad}eleven_flash_v2_5` }),
    shape: elevenLabs,
    param: 'model_id',
    good: () => post(`/v1/text-to-speech/${RACHEL}`, { text: 'Hi.', model_id: 'eleven_flash_v2_5' }),
  },
  'POST /tts/bytes voice': {
    send: (bad) => post('/tts/bytes', { ...bytes, voice: { mode: 'id', id: `${bad}af_heart` } }),
    shape: cartesia,
    param: 'voice',
    good: () => post('/tts/bytes', bytes),
  },
  'POST /tts/bytes model_id': {
    send: (bad) => post('/tts/bytes', { ...bytes, model_id: `${bad}sonic-3` }),
    shape: cartesia,
    param: 'model_id',
    good: () => post('/tts/bytes', bytes),
  },
  'POST /v1/speak model': {
    send: (bad) => post(`/v1/speak?model=${encodeURIComponent(`${bad}af_heart`)}`, { text: 'Hi.' }),
    shape: deepgram,
    param: 'model',
    good: () => post('/v1/speak?model=af_heart', { text: 'Hi.' }),
  },
};

describe('HTTP: a 400 invalid_option in the route’s shape, and the server serves on', () => {
  for (const [name, route] of Object.entries(HTTP_CASES)) {
    it(name, async () => {
      for (const [bad, code] of CONTROLS) {
        const answer = await route.send(bad);
        expect([JSON.stringify(bad), answer]).toMatchObject([
          JSON.stringify(bad),
          { status: 400, body: route.shape(refusal(route.param, code)) },
        ]);
      }
      const good = await route.good();
      expect(good.status).toBe(200);
      expect(good.body).toBeGreaterThan(44);
    });
  }
});

describe('Deepgram’s headers: what the parser forgives is sent percent-encoded', () => {
  it('a voice with Unicode white space around it is served, and named in dg-model-name encoded', async () => {
    const response = await fetch(`${server.http}/v1/speak?model=%E2%80%A8af_heart`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{"text":"Hi."}',
    });
    await response.arrayBuffer();
    expect(response.status).toBe(200);
    expect(response.headers.get('dg-model-name')).toBe('%E2%80%A8af_heart');
  });

  it('an unknown model cut inside a surrogate pair is named in dg-warning without its half', async () => {
    const model = `${'x'.repeat(63)}😀`;
    const response = await fetch(`${server.http}/v1/speak?model=${encodeURIComponent(model)}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{"text":"Hi."}',
    });
    await response.arrayBuffer();
    expect(response.status).toBe(200);
    expect(response.headers.get('dg-warning')).toBe(
      `model ${'x'.repeat(63)} is not a Kokoro voice; spoke with af_heart`,
    );
  });
});

describe('WebSocket: an error frame in the dialect’s shape, and the session serves on', () => {
  it('ours: a request whose voice holds a control character', async () => {
    const client = await TestClient.open(server.ws);
    for (const [i, [bad]] of CONTROLS.entries())
      client.send({ text: 'Hi.', voice: `${bad}af_heart`, request_id: `bad-${i}` });
    await client.untilControls('error', CONTROLS.length);
    expect(client.controls('error')).toEqual(
      CONTROLS.map(([, code], i) => ({
        type: 'error',
        code: 'invalid_option',
        request_id: `bad-${i}`,
        message: expect.stringMatching(refusal('voice', code)),
      })),
    );
    client.send({ text: 'Still here.', voice: 'af_heart', request_id: 'good' });
    await client.untilControls('synthesis_complete', 1);
    expect(client.requests().find((r) => r.id === 'good')).toMatchObject({ complete: true });
    expect(client.requests().find((r) => r.id === 'good')!.audio).toBeGreaterThan(0);
    expect(client.closeCode).toBeUndefined();
    client.close();
  });

  it('Cartesia: a generation request whose voice or model_id holds one, each naming its context', async () => {
    const client = await open('/tts/websocket');
    const good = { model_id: 'sonic-3', voice: 'af_heart', output_format: CARTESIA_RAW, transcript: 'Hi.' };
    for (const [i, [bad]] of CONTROLS.entries()) {
      client.send({ ...good, voice: { mode: 'id', id: `${bad}af_heart` }, context_id: `v${i}` }, false);
      client.send({ ...good, model_id: `${bad}sonic-3`, context_id: `m${i}` }, false);
    }
    const errors = () => client.controls('error');
    await client.until(() => errors().length >= 2 * CONTROLS.length, 'the errors');
    expect(errors()).toEqual(
      CONTROLS.flatMap(([, code], i) =>
        ['voice', 'model_id'].map((param) =>
          expect.objectContaining({
            type: 'error',
            status_code: 400,
            error_code: 'invalid_option',
            context_id: `${param[0]}${i}`,
            message: expect.stringMatching(refusal(param, code)),
          }),
        ),
      ),
    );
    client.send({ ...good, context_id: 'ok' }, false);
    await client.until(() => client.controls('done').some((m) => m.context_id === 'ok'), 'done');
    expect(client.closeCode).toBeUndefined();
    client.close();
  });

  it('ElevenLabs: a voice in the path or a model_id in the query is refused at connection time', async () => {
    for (const [bad, code] of CONTROLS) {
      const voice = await open(`/v1/text-to-speech/${encodeURIComponent(`${bad}af_heart`)}/stream-input`);
      expect(await voice.closed()).toBe(1008);
      expect(voice.controls()).toEqual([
        { error: 'invalid_option', code: 1008, message: expect.stringMatching(refusal('voice', code)) },
      ]);
      const model = await open(
        `/v1/text-to-speech/${RACHEL}/stream-input?model_id=${encodeURIComponent(`${bad}eleven_flash_v2_5`)}`,
      );
      expect(await model.closed()).toBe(1008);
      expect(model.controls()).toEqual([
        { error: 'invalid_option', code: 1008, message: expect.stringMatching(refusal('model_id', code)) },
      ]);
    }
    const client = await open(`/v1/text-to-speech/${RACHEL}/stream-input?model_id=eleven_flash_v2_5`);
    client.send({ text: ' ' }, false);
    client.send({ text: 'Still here. ' }, false);
    client.send({ text: '' }, false);
    expect(await client.closed(20_000)).toBe(1000);
    expect(client.controls().at(-1)).toEqual({ isFinal: true });
    expect(client.controls().some((m) => typeof m.audio === 'string' && m.audio.length > 0)).toBe(true);
  });

  it('Deepgram: a model in the query is refused at connection time with a Warning', async () => {
    for (const [bad, code] of CONTROLS) {
      const client = await open(`/v1/speak?model=${encodeURIComponent(`${bad}af_heart`)}`);
      expect(await client.closed()).toBe(1008);
      expect(client.controls()).toEqual([
        {
          type: 'Warning',
          code: 'invalid_option',
          description: expect.stringMatching(refusal('model', code)),
          warn_msg: expect.stringMatching(refusal('model', code)),
        },
      ]);
    }
    const client = await open('/v1/speak?model=af_heart');
    client.send({ type: 'Speak', text: 'Still here.' }, false);
    client.send({ type: 'Flush' }, false);
    await client.untilControls('Flushed', 1);
    expect(client.frames.some((f) => f.kind === 'audio')).toBe(true);
    client.close();
  });
});

describe('the log', () => {
  it('holds no error: every refusal above was a 4xx logged at info', () => {
    const levels = lines.flatMap((l) =>
      l
        .split('\n')
        .filter((x) => x.startsWith('{'))
        .map((x) => JSON.parse(x)),
    );
    expect(levels.filter((l) => l.msg === 'request refused').length).toBeGreaterThan(0);
    expect(levels.filter((l) => l.level >= 50)).toEqual([]);
  });
});
