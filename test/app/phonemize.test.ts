/**
 * POST /v1/phonemize in-process: the language it reads the text in, and every refusal answered
 * clearly with the server serving on. What the front end makes of a text is tested against the
 * real one in test/server/http.test.ts.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { inProcessApp, type InProcessApp } from './in-process.ts';

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
