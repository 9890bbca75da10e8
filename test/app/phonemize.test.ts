/**
 * POST /v1/phonemize in-process: the language it reads the text in, every refusal answered
 * clearly with the server serving on, and its bounds on requests in flight (per client and in
 * all; the engine held so that requests stay in flight). What the front end makes of a text is
 * tested against the real one in test/server/http.test.ts, a flood of it in
 * test/server/phonemize-flood.test.ts.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { inProcessApp, type InProcessApp } from './in-process.ts';
import { waitFor } from '../wait.ts';

let running: InProcessApp;
beforeAll(async () => {
  running = await inProcessApp({ MAX_TEXT_CHARS: '100' });
});
afterAll(() => running.close());

const phonemize = (payload: unknown) =>
  running.app.inject({
    method: 'POST',
    url: '/v1/phonemize',
    payload: JSON.stringify(payload),
    headers: { 'content-type': 'application/json' },
  });

describe('POST /v1/phonemize', () => {
  it.each([
    [{ text: 'Hello.' }, 'a'],
    [{ text: 'Hello.', lang: 'en-gb' }, 'b'],
    [{ text: 'Hola.', lang: 'es' }, 'e'],
    [{ text: 'Bonjour.', lang: 'fr-FR' }, 'f'],
  ])('%j is read in language %s', async (body, lang) => {
    const res = await phonemize(body);
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({
      phonemes: body.text.toLowerCase(),
      tokens: expect.any(Array),
      front_end: 'fake',
      lang,
    });
  });

  it.each([
    [{ lang: 'a' }, 400, 'bad_request', /^The request has no text: send \{"text": "…"\} to phonemize$/],
    [{ text: '  ' }, 400, 'empty_text', /^text is empty/],
    [{ text: 5 }, 400, 'invalid_option', /^text should be a string; got number 5$/],
    [{ text: 'x'.repeat(101) }, 413, 'text_too_long', /^text has 101 characters, over the limit of 100/],
    [{ text: 'Hi', lang: 'xx' }, 400, 'language_unsupported', /xx/],
    [{ text: 'Hi', lang: 7 }, 400, 'invalid_option', /^lang should be a string/],
    [['Hi'], 400, 'bad_request', /^The JSON body should be an object/],
  ])('refuses %j clearly (%i %s) and keeps serving', async (body, status, code, message) => {
    const res = await phonemize(body);
    expect(res.statusCode).toBe(status);
    const error = res.json() as { code: string; error: string; message: string };
    expect(error).toMatchObject({ type: 'error', code, error: code });
    expect(error.message).toMatch(message);
    expect((await phonemize({ text: 'Still here.' })).statusCode).toBe(200);
  });
});

describe('POST /v1/phonemize’s bounds on requests in flight', () => {
  const from = (app: InProcessApp, remoteAddress: string, payload: unknown = { text: 'Hello.' }) =>
    app.app.inject({ method: 'POST', url: '/v1/phonemize', payload: payload as object, remoteAddress });

  const until = (condition: () => boolean, what: string) => waitFor(condition, { timeoutMs: 5000, what });

  it('past PHONEMIZE_MAX_PER_CLIENT 429 and past PHONEMIZE_MAX_QUEUED 503, with Retry-After, before any work; then serves again', async () => {
    let release!: () => void;
    const hold = new Promise<void>((resolve) => (release = resolve));
    const held = await inProcessApp(
      { PHONEMIZE_MAX_QUEUED: '3', PHONEMIZE_MAX_PER_CLIENT: '2' },
      { engine: { hold } },
    );
    try {
      const first = [from(held, '10.0.0.1'), from(held, '10.0.0.1'), from(held, '10.0.0.2')];
      await until(() => held.engine!.phonemizing === 3, 'three requests in flight');

      const overShare = await from(held, '10.0.0.1');
      expect(overShare.statusCode).toBe(429);
      expect(overShare.headers['retry-after']).toBe('1');
      expect(overShare.json()).toEqual({
        type: 'error',
        code: 'too_many_requests',
        error: 'too_many_requests',
        message:
          'too_many_requests: this client has 2 phonemize requests in flight, the most one address may have (PHONEMIZE_MAX_PER_CLIENT); retry once one is answered',
      });
      const overAll = await from(held, '10.0.0.3');
      expect(overAll.statusCode).toBe(503);
      expect(overAll.headers['retry-after']).toBe('1');
      expect(overAll.json()).toEqual({
        type: 'error',
        code: 'busy',
        error: 'busy',
        message:
          'queue_saturated: the server has 3 phonemize requests in flight, its limit (PHONEMIZE_MAX_QUEUED); retry shortly',
      });
      expect(held.engine!.phonemizing).toBe(3); // the refused never reached the engine

      release();
      expect((await Promise.all(first)).map((r) => r.statusCode)).toEqual([200, 200, 200]);
      // Every place was given back.
      const again = [from(held, '10.0.0.1'), from(held, '10.0.0.1'), from(held, '10.0.0.3')];
      expect((await Promise.all(again)).map((r) => r.statusCode)).toEqual([200, 200, 200]);
    } finally {
      release();
      await held.close();
    }
  });

  it('a request that fails gives its place back', async () => {
    const app = await inProcessApp({ PHONEMIZE_MAX_PER_CLIENT: '1' });
    try {
      for (let i = 0; i < 3; i++) {
        const failed = await from(app, '10.0.0.1', { text: '<speak>Never closed', markup: 'ssml' });
        expect(failed.json()).toMatchObject({ code: 'invalid_markup' });
      }
      expect((await from(app, '10.0.0.1')).statusCode).toBe(200);
    } finally {
      await app.close();
    }
  });
});
