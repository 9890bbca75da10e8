/**
 * What a client is told when something fails, on every route, in-process: unknown routes, a plain
 * GET of a WebSocket route, the model still loading, and failures inside synthesis, whose
 * internals stay in the log (at `error`) while the client gets a generic message; refusals of bad
 * input are logged at `info`, never with the text.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { TtsError, ttsError } from '../../dist/server/http/errors.js';
import { inProcessApp, type InProcessApp } from './in-process.ts';
import { openSession } from './ws-client.ts';

let running: InProcessApp | undefined;
afterEach(async () => {
  await running?.close();
  running = undefined;
});

const ROUTES =
  'routes: GET /ping, POST /invocations, WS /invocations-bidirectional-stream, WS and POST /v1/speak and /v2/speak, POST /v1/audio/speech, GET /v1/models, GET /v1/audio/voices, WS /v1/text-to-speech/{voice_id}/stream-input and /multi-stream-input, POST /v1/text-to-speech/{voice_id}[/stream], WS /tts/websocket, POST /tts/bytes, POST /tts/sse';

describe('routes that do not exist, or not for this method', () => {
  it.each([
    ['GET', '/nothing'],
    ['GET', '/invocations'],
    ['DELETE', '/ping'],
    ['POST', '/metrics?x=1'],
  ] as const)('%s %s: a JSON 404 naming the routes', async (method, url) => {
    running = await inProcessApp();
    const res = await running.app.inject({ method, url });
    expect(res.statusCode).toBe(404);
    expect(res.headers['content-type']).toMatch(/^application\/json/);
    expect(res.json()).toEqual({
      type: 'error',
      code: 'not_found',
      error: 'not_found',
      message: `No route ${method} ${url}; ${ROUTES}`,
    });
  });

  it('under /v1, in OpenAI’s shape naming the OpenAI routes', async () => {
    running = await inProcessApp();
    const res = await running.app.inject({ method: 'POST', url: '/v1/audio/transcriptions' });
    expect(res.statusCode).toBe(404);
    expect(res.json()).toEqual({
      error: {
        message:
          'No route POST /v1/audio/transcriptions; the OpenAI-compatible routes are POST /v1/audio/speech, GET /v1/models, GET /v1/audio/voices',
        type: 'invalid_request_error',
        param: null,
        code: 'not_found',
      },
    });
  });

  it.each(['/invocations-bidirectional-stream', '/v1/speak'])(
    'a plain GET of %s: 426 upgrade_required',
    async (url) => {
      running = await inProcessApp();
      const res = await running.app.inject({ method: 'GET', url });
      expect(res.statusCode).toBe(426);
      expect(res.json()).toEqual({
        type: 'error',
        code: 'upgrade_required',
        error: 'upgrade_required',
        message: `${url} is a WebSocket endpoint: connect with a WebSocket client`,
      });
    },
  );
});

describe('while the model loads', () => {
  it('synthesis is refused with 503 not_ready; parsing and routing still answer in kind', async () => {
    running = await inProcessApp({}, { engine: false });
    const post = await running.app.inject({
      method: 'POST',
      url: '/invocations',
      payload: 'Hi.',
      headers: { 'content-type': 'text/plain' },
    });
    expect(post.statusCode).toBe(503);
    expect(post.json()).toEqual({
      type: 'error',
      code: 'not_ready',
      error: 'not_ready',
      message: 'The model is still loading; retry when GET /ping answers 200',
    });
    const speech = await running.app.inject({
      method: 'POST',
      url: '/v1/audio/speech',
      payload: { model: 'kokoro', input: 'Hi.' },
    });
    expect(speech.statusCode).toBe(503);
    expect(speech.json().error).toMatchObject({ code: 'not_ready', type: 'server_error', param: null });
    const refused = await running.app.inject({
      method: 'POST',
      url: '/invocations',
      payload: 'x',
      headers: { 'content-type': 'application/xml' },
    });
    expect(refused.statusCode).toBe(415);
    expect(refused.json()).toMatchObject({ code: 'unsupported_media_type', error: 'unsupported_media_type' });
    const missing = await running.app.inject({ method: 'GET', url: '/nowhere' });
    expect(missing.statusCode).toBe(404);
    expect(missing.json()).toMatchObject({ code: 'not_found', error: 'not_found' });
  });
});

describe('a URL Fastify cannot decode', () => {
  it('gets the coded 400 body, not Fastify’s own, and is counted', async () => {
    running = await inProcessApp();
    const res = await running.app.inject({ method: 'GET', url: '/%zz' });
    expect(res.statusCode).toBe(400);
    expect(res.json()).toMatchObject({ type: 'error', code: 'bad_request', error: 'bad_request' });
    const metrics = await running.app.inject({ method: 'GET', url: '/metrics' });
    expect(metrics.body).toMatch(/^tts_errors_total\{code="bad_request"\} 1$/m);
  });
});

describe('a failure inside synthesis', () => {
  const SECRET = 'ENOENT: /opt/ml/model/onnx/model.onnx at worker 3';
  const failures = [
    {
      name: 'a plain Error',
      fail: new Error(SECRET),
      code: 'internal_error',
      message: 'The server failed while handling this request; it has been logged.',
    },
    {
      name: 'an inference failure',
      fail: ttsError('TTS_ERR_INFERENCE', 'Synthesis failed inside the model; the error has been logged', {
        cause: new Error(SECRET),
      }),
      code: 'inference_failed',
      message: 'Synthesis failed inside the model; the error has been logged',
    },
  ];

  /** The error lines logged, with the failure they carry. */
  const errorLines = (app: InProcessApp) => app.logs().filter((l) => l.level === 50);

  describe.each(failures)('$name', ({ fail, code, message }) => {
    it(`POST /invocations: 500 ${code}, the generic message; logged at error`, async () => {
      running = await inProcessApp({}, { engine: { fail } });
      const res = await running.app.inject({
        method: 'POST',
        url: '/invocations',
        payload: { text: 'Fail now.', request_id: 'f1' },
      });
      expect(res.statusCode).toBe(500);
      expect(res.headers['x-request-id']).toBe('f1');
      expect(res.json()).toMatchObject({
        type: 'error',
        code,
        error: code,
        message,
        request_id: 'f1',
      });
      expect(res.body).not.toContain('/opt/ml');
      const [line, ...more] = errorLines(running);
      expect(more).toEqual([]);
      expect(line).toMatchObject({ msg: 'request failed', requestId: 'f1' });
      expect(JSON.stringify(line!.err)).toContain(fail instanceof TtsError ? message : SECRET);
    });

    it(`POST /invocations as SSE: an error event with ${code} after the stream began; logged at error`, async () => {
      running = await inProcessApp({}, { engine: { fail } });
      const res = await running.app.inject({
        method: 'POST',
        url: '/invocations',
        payload: { text: 'Fail now.', request_id: 'f2', transport: 'sse' },
      });
      expect(res.statusCode).toBe(200);
      const events = res.body.split('\n\n').filter(Boolean);
      expect(events).toHaveLength(2);
      expect(events[1]).toBe(`event: error\ndata: ${JSON.stringify({ request_id: 'f2', code, message })}`);
      expect(res.body).not.toContain('/opt/ml');
      expect(errorLines(running)).toEqual([
        expect.objectContaining({ msg: 'synthesis failed after the event stream began', requestId: 'f2' }),
      ]);
    });

    it(`POST /v1/audio/speech: 500 in OpenAI’s shape, server_error ${code}; logged at error`, async () => {
      running = await inProcessApp({}, { engine: { fail } });
      const res = await running.app.inject({
        method: 'POST',
        url: '/v1/audio/speech',
        payload: { model: 'kokoro', input: 'Fail now.', response_format: 'pcm' },
      });
      expect(res.statusCode).toBe(500);
      expect(res.json()).toEqual({ error: { message, type: 'server_error', param: null, code } });
      expect(errorLines(running)).toEqual([expect.objectContaining({ msg: 'request failed' })]);
    });

    it(`a WebSocket session: an error frame with ${code}, and the session lives on; logged at error`, async () => {
      running = await inProcessApp({}, { engine: { fail } });
      const session = await openSession(running.app);
      session.send({ text: 'Fail now.', request_id: 'f3' });
      await session.untilControls('error', 1);
      expect(session.controls('error')).toEqual([{ type: 'error', code, message, request_id: 'f3' }]);
      expect(errorLines(running)).toEqual([
        expect.objectContaining({ msg: 'request failed', requestId: 'f3' }),
      ]);
      // The failure is the engine's, every time: the session still answers each message.
      session.send({ text: 'Again.', request_id: 'f4' });
      await session.untilControls('error', 2);
      expect(session.controls('error')[1]).toMatchObject({ code, request_id: 'f4' });
      expect(session.closeCode).toBeUndefined();
      session.close();
    });
  });
});

describe('logging refusals', () => {
  it('logs bad input at info with its code, and never the text sent', async () => {
    running = await inProcessApp();
    const text = 'A secret sentence nobody should log.';
    await running.app.inject({ method: 'POST', url: '/invocations', payload: { text, voice: 'zz_top' } });
    await running.app.inject({ method: 'POST', url: '/invocations', payload: { text } });
    const lines = running.logs();
    expect(lines.filter((l) => l.msg === 'request refused')).toEqual([
      expect.objectContaining({ level: 30, code: 'voice_not_found' }),
    ]);
    expect(lines.filter((l) => (l.level as number) >= 40)).toEqual([]);
    expect(lines.find((l) => l.msg === 'synthesized')).toMatchObject({ chars: text.length });
    expect(JSON.stringify(lines)).not.toContain('secret sentence');
  });
});
