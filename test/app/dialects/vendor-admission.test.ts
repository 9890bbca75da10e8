/**
 * What the vendors' HTTP routes share, in-process, each answer in its vendor's shape: admission
 * (MAX_HTTP_STREAMS), a client that goes away, the drain, the vendors' key headers, and failures
 * before and after the first audio.
 */
import { request as httpRequest } from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import type { Engine } from '../../../dist/model/engine.js';
import { ttsError } from '../../../dist/protocol/errors.js';
import { fakeEngine } from '../fake-engine.ts';
import { inProcessApp, type InProcessApp } from '../in-process.ts';
import { waitFor } from '../../wait.ts';
import {
  CARTESIA_OK,
  EL_PATH,
  cartesia,
  cartesiaError,
  elevenLabs,
  elevenLabsError,
  events,
} from './vendor-requests.ts';

describe('admission, drain and failures, in each vendor’s shape', () => {
  let app: InProcessApp | undefined;
  let release: (() => void) | undefined;
  afterEach(async () => {
    release?.();
    await app?.close();
    app = undefined;
    release = undefined;
  });

  const until = (condition: () => boolean, what: string) => waitFor(condition, { timeoutMs: 5000, what });

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
