/**
 * The optional protections, in-process: the bearer token (AUTH_TOKEN) on every route but /ping and
 * the page's files, over HTTP and on WebSocket upgrades (a browser's `bearer.<base64url>`
 * subprotocol included), and CORS for the configured origins only.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { inProcessApp, type InProcessApp } from './in-process.ts';
import { upgrade } from './ws-client.ts';

const REFUSAL =
  'Missing or wrong credentials: send Authorization: Bearer <token> (or the key header of the protocol you speak: xi-api-key, X-API-Key, Authorization: Token)';

const TOKEN = 'tok/en+with=chars';
const carried = (token: string) => `bearer.${Buffer.from(token).toString('base64url')}`;

describe('AUTH_TOKEN', () => {
  let running: InProcessApp;
  beforeAll(async () => {
    running = await inProcessApp({ AUTH_TOKEN: TOKEN });
  });
  afterAll(() => running.close());

  it.each([
    ['GET', '/ping'],
    ['POST', '/ping'],
    ['GET', '/'],
    ['GET', '/web/app.js'],
    ['GET', '/web/style.css'],
  ] as const)('%s %s answers without credentials', async (method, url) => {
    expect((await running.app.inject({ method, url })).statusCode).toBe(200);
  });

  const native = ['POST /invocations', 'GET /metrics', 'POST /v1/phonemize', 'GET /nothing'];
  const openai = ['GET /v1/models', 'GET /v1/audio/voices', 'POST /v1/audio/speech'];
  const refusals = [
    ...native.map((route) => [route, undefined] as const),
    ...native.map((route) => [route, 'Bearer nope'] as const),
    ['GET /metrics', `Basic ${Buffer.from(`user:${TOKEN}`).toString('base64')}`] as const,
    ['GET /metrics', `Bearer ${TOKEN}x`] as const,
  ];
  it.each(refusals)('%s with %s: 401 unauthorized, saying what to send', async (route, authorization) => {
    const [method, url] = route.split(' ') as ['GET' | 'POST', string];
    const res = await running.app.inject({
      method,
      url,
      headers: authorization ? { authorization } : {},
      ...(method === 'POST' ? { payload: { text: 'Hi.' } } : {}),
    });
    expect(res.statusCode).toBe(401);
    expect(res.headers['content-type']).toMatch(/^application\/json/);
    expect(res.json()).toEqual({
      type: 'error',
      code: 'unauthorized',
      error: 'unauthorized',
      message: REFUSAL,
    });
  });

  it.each(openai)('%s without the token: 401 in OpenAI’s shape, invalid_api_key', async (route) => {
    const [method, url] = route.split(' ') as ['GET' | 'POST', string];
    const res = await running.app.inject({ method, url });
    expect(res.statusCode).toBe(401);
    expect(res.json()).toEqual({
      error: {
        message: REFUSAL,
        type: 'invalid_request_error',
        param: null,
        code: 'invalid_api_key',
      },
    });
  });

  it('serves every route with the token, whatever the case of “Bearer”', async () => {
    for (const authorization of [`Bearer ${TOKEN}`, `bearer ${TOKEN}`, `BEARER   ${TOKEN}`]) {
      const speech = await running.app.inject({
        method: 'POST',
        url: '/invocations',
        headers: { authorization },
        payload: { text: 'Authorized.' },
      });
      expect(speech.statusCode).toBe(200);
      expect(speech.headers['content-type']).toBe('audio/wav');
      const metrics = await running.app.inject({
        method: 'GET',
        url: '/metrics',
        headers: { authorization },
      });
      expect(metrics.statusCode).toBe(200);
      const models = await running.app.inject({
        method: 'GET',
        url: '/v1/models',
        headers: { authorization },
      });
      expect(models.statusCode).toBe(200);
    }
  });

  it('takes the token in the vendors’ own places: Token, xi-api-key, X-API-Key, and a key in an upgrade’s query', async () => {
    for (const headers of [
      { authorization: `Token ${TOKEN}` },
      { 'xi-api-key': TOKEN },
      { 'x-api-key': TOKEN },
    ]) {
      const res = await running.app.inject({
        method: 'POST',
        url: '/invocations',
        headers,
        payload: { text: 'Hi.' },
      });
      expect(res.statusCode).toBe(200);
    }
    const wrong = await running.app.inject({
      method: 'POST',
      url: '/invocations',
      headers: { 'xi-api-key': 'nope' },
      payload: { text: 'Hi.' },
    });
    expect(wrong.statusCode).toBe(401);
    // A key in the query counts only on an upgrade (Cartesia's browser clients), never on plain HTTP.
    const query = await running.app.inject({
      method: 'POST',
      url: `/invocations?api_key=${encodeURIComponent(TOKEN)}`,
      payload: { text: 'Hi.' },
    });
    expect(query.statusCode).toBe(401);
    const socket = await upgrade(running.app, `/tts/websocket?api_key=${encodeURIComponent(TOKEN)}`);
    expect(socket.status).toBe(101);
    socket.client?.close();
    // Only on the vendors' sockets: our own route takes no key in its URL.
    const ours = await upgrade(
      running.app,
      `/invocations-bidirectional-stream?api_key=${encodeURIComponent(TOKEN)}`,
    );
    expect(ours.status).toBe(401);
  });

  it('refuses a WebSocket upgrade without the token with 401 and a JSON body, and admits one with it', async () => {
    for (const url of ['/invocations-bidirectional-stream', '/v1/speak']) {
      const refused = await upgrade(running.app, url);
      expect(refused.status).toBe(401);
      expect(refused.headers['connection']).toBe('close');
      expect(refused.body).toEqual({
        type: 'error',
        code: 'unauthorized',
        error: 'unauthorized',
        message: REFUSAL,
      });
      const wrong = await upgrade(running.app, url, { authorization: 'Bearer nope' });
      expect(wrong.status).toBe(401);
    }
    const admitted = await upgrade(running.app, '/invocations-bidirectional-stream', {
      authorization: `Bearer ${TOKEN}`,
    });
    expect(admitted.status).toBe(101);
    const session = admitted.client!;
    session.send({ text: 'Authorized.', request_id: 'a' });
    await session.untilControls('synthesis_complete', 1);
    expect(session.requests()).toEqual([{ id: 'a', audio: expect.any(Number), complete: true }]);
    session.close();
  });

  it('takes a browser’s token as an offered bearer.<base64url> subprotocol on upgrades only, never echoing it', async () => {
    const offered = (protocols: string[]) =>
      upgrade(running.app, '/invocations-bidirectional-stream', {
        'sec-websocket-protocol': protocols.join(', '),
      });

    const right = await offered(['kokoro-tts', carried(TOKEN)]);
    expect(right.status).toBe(101);
    expect(right.headers['sec-websocket-protocol']).toBe('kokoro-tts');
    right.client!.send({ text: 'Hello.', request_id: 'sub' });
    await right.client!.untilControls('synthesis_complete', 1);
    right.client!.close();

    expect((await offered(['kokoro-tts', carried('wrong')])).status).toBe(401);

    // Offered alone, it authenticates but is not selected: the handshake names no subprotocol
    // (a browser then fails it), rather than echo the token.
    const alone = await offered([carried(TOKEN)]);
    expect(alone.status).toBe(101);
    expect(alone.headers['sec-websocket-protocol']).toBeUndefined();
    expect(Object.values(alone.headers).join('\n')).not.toMatch(/bearer\./i);
    alone.client!.close();

    // A plain request with the header is refused: only upgrades read it.
    const plain = await running.app.inject({
      method: 'GET',
      url: '/metrics',
      headers: { 'sec-websocket-protocol': carried(TOKEN) },
    });
    expect(plain.statusCode).toBe(401);
  });
});

describe('CORS', () => {
  const ORIGIN = 'https://app.example';
  const preflight = (running: InProcessApp, origin: string) =>
    running.app.inject({
      method: 'OPTIONS',
      url: '/invocations',
      headers: { origin, 'access-control-request-method': 'POST' },
    });

  it('sends no CORS headers when no origin is configured', async () => {
    const running = await inProcessApp();
    try {
      const ping = await running.app.inject({ method: 'GET', url: '/ping', headers: { origin: ORIGIN } });
      expect(ping.statusCode).toBe(200);
      expect(ping.headers['access-control-allow-origin']).toBeUndefined();
      expect((await preflight(running, ORIGIN)).headers['access-control-allow-origin']).toBeUndefined();
    } finally {
      await running.close();
    }
  });

  describe('with CORS_ORIGINS and AUTH_TOKEN', () => {
    let running: InProcessApp;
    beforeAll(async () => {
      running = await inProcessApp({ CORS_ORIGINS: `${ORIGIN},https://other.example`, AUTH_TOKEN: TOKEN });
    });
    afterAll(() => running.close());

    it('answers a preflight from a configured origin with 204, without credentials', async () => {
      const res = await preflight(running, ORIGIN);
      expect(res.statusCode).toBe(204);
      expect(res.headers).toMatchObject({
        'access-control-allow-origin': ORIGIN,
        'access-control-allow-methods': 'GET, POST, OPTIONS',
        'access-control-allow-headers': 'authorization, content-type, accept',
        'access-control-max-age': '600',
        vary: 'Origin',
      });
      expect(res.body).toBe('');
    });

    it('names a configured origin on answers, refusals included, and exposes x-request-id', async () => {
      const ok = await running.app.inject({
        method: 'POST',
        url: '/invocations',
        headers: { origin: 'https://other.example', authorization: `Bearer ${TOKEN}` },
        payload: { text: 'Hi.', request_id: 'cors' },
      });
      expect(ok.statusCode).toBe(200);
      expect(ok.headers).toMatchObject({
        'access-control-allow-origin': 'https://other.example',
        'access-control-expose-headers': 'x-request-id',
        'x-request-id': 'cors',
      });
      // A browser reads the 401 only if it carries the origin.
      const refused = await running.app.inject({
        method: 'GET',
        url: '/metrics',
        headers: { origin: ORIGIN },
      });
      expect(refused.statusCode).toBe(401);
      expect(refused.headers['access-control-allow-origin']).toBe(ORIGIN);
    });

    it('sends nothing to another origin', async () => {
      const other = await running.app.inject({
        method: 'GET',
        url: '/ping',
        headers: { origin: 'https://evil.example' },
      });
      expect(other.statusCode).toBe(200);
      expect(other.headers['access-control-allow-origin']).toBeUndefined();
      const pre = await preflight(running, 'https://evil.example');
      expect(pre.statusCode).not.toBe(204);
      expect(pre.headers['access-control-allow-origin']).toBeUndefined();
    });
  });

  it('CORS_ORIGINS=* allows any origin with *', async () => {
    const running = await inProcessApp({ CORS_ORIGINS: '*' });
    try {
      const res = await running.app.inject({
        method: 'GET',
        url: '/ping',
        headers: { origin: 'https://anywhere.example' },
      });
      expect(res.headers['access-control-allow-origin']).toBe('*');
      expect((await preflight(running, 'https://anywhere.example')).statusCode).toBe(204);
    } finally {
      await running.close();
    }
  });
});
