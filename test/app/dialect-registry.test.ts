/**
 * A dialect known only to the registry the app is built with: its socket paths are routed and
 * opened in its own dialect (SageMaker's invocation-path header included), its refusal is worded
 * its way, the security hook takes a key in its query as the entry allows, its HTTP routes are
 * registered, and the not-found answer lists it. Nothing of the app names it.
 */
import type { FastifyPluginAsync } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Dialect } from '../../dist/server/dialects/dialect.js';
import { nativeDialect } from '../../dist/server/dialects/native/messages.js';
import { DIALECTS } from '../../dist/server/dialects/registry.js';
import { ttsError } from '../../dist/server/http/errors.js';
import { inProcessApp, type InProcessApp } from './in-process.ts';
import { upgrade } from './ws-client.ts';

const TOKEN = 'toy-token';

const toyRoutes: FastifyPluginAsync = async (app) => {
  app.post('/speak', async () => ({ spoken: 'by the toy' }));
};

/** Our own protocol with a greeting, on /toy/{voice}/socket; the voice `bad` is refused. */
const toy: Dialect = {
  name: 'toy',
  socket: {
    paths: ['/toy/:voice/socket'],
    accepts: (path) => /^\/?toy\/[^/]+\/socket$/.test(path),
    open: (path) => {
      const voice = path.split('/').at(-2)!;
      if (voice === 'bad') throw ttsError('TTS_ERR_VOICE_NOT_FOUND', `no toy voice ${voice}`);
      return { ...nativeDialect(), opening: () => [{ type: 'toy_hello', voice }] };
    },
    refusal: (body, status) => ({ toy_error: body.code, status }),
    keyInQuery: true,
  },
  routes: [{ plugin: toyRoutes, prefix: '/toy' }],
  listing: 'WS /toy/{voice}/socket, POST /toy/speak',
};

describe('a dialect added through the registry', () => {
  let running: InProcessApp;
  beforeAll(async () => {
    running = await inProcessApp({ AUTH_TOKEN: TOKEN }, { dialects: [...DIALECTS, toy] });
  });
  afterAll(() => running.close());

  it('is served on its socket path, with a key in the query as its entry allows', async () => {
    const { status, client } = await upgrade(running.app, `/toy/af_heart/socket?api_key=${TOKEN}`);
    expect(status).toBe(101);
    await client!.until((c) => c.controls('toy_hello').length === 1, 'the greeting');
    expect(client!.controls('toy_hello')).toEqual([{ type: 'toy_hello', voice: 'af_heart' }]);
    client!.send({ text: 'Hello.', request_id: 'r' });
    await client!.untilControls('synthesis_complete', 1);
    client!.close();
  });

  it('is refused without the token, as every socket', async () => {
    expect((await upgrade(running.app, '/toy/af_heart/socket')).status).toBe(401);
  });

  it('words a refusal of the connection its own way', async () => {
    const { client } = await upgrade(running.app, `/toy/bad/socket?api_key=${TOKEN}`);
    await client!.until((c) => c.controls().length === 1, 'the refusal');
    expect(client!.controls()).toEqual([{ toy_error: 'voice_not_found', status: 400 }]);
    expect(await client!.closed()).toBe(1008);
  });

  it('is reached through SageMaker’s invocation path header on the default path', async () => {
    const { client } = await upgrade(running.app, '/invocations-bidirectional-stream', {
      authorization: `Bearer ${TOKEN}`,
      'x-amzn-sagemaker-model-invocation-path': 'toy/af_sky/socket',
    });
    await client!.until((c) => c.controls('toy_hello').length === 1, 'the greeting');
    expect(client!.controls('toy_hello')).toEqual([{ type: 'toy_hello', voice: 'af_sky' }]);
    client!.close();
  });

  it('has its HTTP routes, behind the same security hook', async () => {
    const headers = { authorization: `Bearer ${TOKEN}` };
    const res = await running.app.inject({ method: 'POST', url: '/toy/speak', headers, payload: {} });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ spoken: 'by the toy' });
    expect((await running.app.inject({ method: 'POST', url: '/toy/speak', payload: {} })).statusCode).toBe(
      401,
    );
  });

  it('is listed by the not-found answer, after the registry’s own', async () => {
    const res = await running.app.inject({
      method: 'GET',
      url: '/nothing',
      headers: { authorization: `Bearer ${TOKEN}` },
    });
    expect(res.statusCode).toBe(404);
    expect(res.json().message).toMatch(/, POST \/tts\/sse, WS \/toy\/\{voice\}\/socket, POST \/toy\/speak$/);
  });

  it('leaves the real registry without it', async () => {
    expect(DIALECTS.map((d) => d.name)).toEqual(['native', 'deepgram', 'openai', 'elevenlabs', 'cartesia']);
  });
});
