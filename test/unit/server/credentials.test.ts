/**
 * redactUrl and redactUrlsIn (server/http/credentials.ts): the value of every query parameter that
 * carries a key is replaced, however its name is spelled; the path and the other parameters stay
 * as they were sent. And the process logger (server/observability/logger.ts), whoever calls it,
 * writes no key (test/server/secrets.test.ts sends keys to a listening server).
 */
import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { redactUrl, redactUrlsIn } from '../../../dist/server/http/credentials.js';
import { createLogger } from '../../../dist/server/observability/logger.js';

const URLS = new Map<string, string>([
  ['/ping', '/ping'],
  ['/v1/models?', '/v1/models?'],
  [
    '/tts/websocket?api_key=K&cartesia_version=2024-06-10',
    '/tts/websocket?api_key=[redacted]&cartesia_version=2024-06-10',
  ],
  [
    '/v1/text-to-speech/x/stream-input?model_id=m&xi_api_key=K',
    '/v1/text-to-speech/x/stream-input?model_id=m&xi_api_key=[redacted]',
  ],
  [
    '/v1/text-to-speech/x/stream-input?authorization=Bearer%20K',
    '/v1/text-to-speech/x/stream-input?authorization=[redacted]',
  ],
  ['/v1/speak?model=af_heart&token=K', '/v1/speak?model=af_heart&token=[redacted]'],
  ['/x?access_token=K&key=L&apikey=M', '/x?access_token=[redacted]&key=[redacted]&apikey=[redacted]'],
  ['/x?xi-api-key=K&x-api-key=L', '/x?xi-api-key=[redacted]&x-api-key=[redacted]'],
  // Names as URLSearchParams reads them: any case, percent-encoded, repeated.
  ['/x?API_KEY=K', '/x?API_KEY=[redacted]'],
  ['/x?api%5Fkey=K', '/x?api%5Fkey=[redacted]'],
  ['/x?api_key=K&api_key=L', '/x?api_key=[redacted]&api_key=[redacted]'],
  ['/x?%zz=1&token=K', '/x?%zz=1&token=[redacted]'],
  // Not a key: a bare word, names that only look like one. An empty value is redacted all the same.
  ['/x?api_key', '/x?api_key'],
  ['/x?monkey=K&tokens=L', '/x?monkey=K&tokens=L'],
  ['/x?token=', '/x?token=[redacted]'],
]);

describe('redactUrl', () => {
  for (const [url, expected] of URLS) {
    it(url, () => expect(redactUrl(url)).toBe(expected));
  }
});

describe('redactUrlsIn', () => {
  it('redacts the URLs quoted in an error message, and leaves other question marks alone', () => {
    expect(redactUrlsIn("'/v1/models%zz?api_key=K' is not a valid url component")).toBe(
      "'/v1/models%zz?api_key=[redacted]' is not a valid url component",
    );
    expect(redactUrlsIn('Why? Because GET /a?token=K&b=1 failed')).toBe(
      'Why? Because GET /a?token=[redacted]&b=1 failed',
    );
  });
});

describe('createLogger', () => {
  it('censors secret headers, URLs and the URLs in errors, wherever they are logged', () => {
    const lines: string[] = [];
    const log = createLogger(
      'info',
      new Writable({
        write(chunk: Buffer, _encoding, done) {
          lines.push(chunk.toString('utf8'));
          done();
        },
      }),
    );
    const headers = {
      authorization: 'Bearer K1',
      'xi-api-key': 'K2',
      'x-api-key': 'K3',
      'sec-websocket-protocol': 'kokoro-tts, bearer.K4',
      cookie: 'session=K5',
      'user-agent': 'agent',
    };
    log.info({ headers, url: '/tts/websocket?api_key=K6' }, 'a request');
    log.info({ req: { method: 'GET', url: '/v1/speak?token=K7', headers } }, 'a request');
    log.info({ upgrade: { headers } }, 'an upgrade');
    log.error({ err: new Error("'/v1/models%zz?api_key=K8' is not a valid url component") }, 'failed');
    log.warn({ err: 'GET /x?xi_api_key=K9 failed' }, 'failed');
    const text = lines.join('');
    for (let i = 1; i <= 9; i++) expect(text).not.toContain(`K${i}`);
    type Line = { headers?: object; url?: string; req?: object; upgrade?: { headers: object } };
    const [first, second, third] = lines.map((l) => JSON.parse(l) as Line);
    expect(first).toMatchObject({
      headers: { authorization: '[redacted]', 'sec-websocket-protocol': '[redacted]', 'user-agent': 'agent' },
      url: '/tts/websocket?api_key=[redacted]',
    });
    // A request is its method and URL (redacted), never its headers.
    expect(second!.req).toEqual({ method: 'GET', url: '/v1/speak?token=[redacted]' });
    expect(third!.upgrade!.headers).toMatchObject({ 'xi-api-key': '[redacted]', cookie: '[redacted]' });
  });
});
