/**
 * What a client sees of a failure (server/http/errors.ts): any thrown value as the error body
 * (toErrorBody), with `error` on HTTP (toHttpErrorBody), Fastify's own errors as ours
 * (fromFastifyError), the refusal tokens the reference container's clients sort by, and a refused
 * upgrade written as a raw HTTP response.
 */
import { readFileSync } from 'node:fs';
import { errorCodes, type FastifyError } from 'fastify';
import { describe, expect, it } from 'vitest';
import { MESSAGE_TOKENS } from '../../../dist/protocol/errors.js';
import {
  MEDIA_TYPES,
  TtsError,
  errorHeaders,
  fromFastifyError,
  rawHttpRefusal,
  toErrorBody,
  toHttpErrorBody,
  ttsError,
  withRequestId,
} from '../../../dist/server/http/errors.js';

const GENERIC = 'The server failed while handling this request; it has been logged.';

describe('toErrorBody', () => {
  const cases: [string, unknown, string | undefined, number, Record<string, unknown>][] = [
    [
      'a refusal, as raised',
      ttsError('TTS_ERR_INVALID_OPTION', 'speed should be a number', { data: { param: 'speed' } }),
      undefined,
      400,
      { type: 'error', code: 'invalid_option', message: 'speed should be a number' },
    ],
    [
      'with the request id given',
      ttsError('TTS_ERR_VOICE_NOT_FOUND', 'Unknown voice'),
      'r1',
      400,
      { type: 'error', code: 'voice_not_found', message: 'Unknown voice', request_id: 'r1' },
    ],
    [
      'with the request id it carries',
      withRequestId(ttsError('TTS_ERR_EMPTY_TEXT', 'text is empty'), 'r2'),
      undefined,
      400,
      { type: 'error', code: 'empty_text', message: 'text is empty', request_id: 'r2' },
    ],
    [
      'the id given over the one it carries',
      withRequestId(ttsError('TTS_ERR_EMPTY_TEXT', 'text is empty'), 'r2'),
      'r3',
      400,
      { type: 'error', code: 'empty_text', message: 'text is empty', request_id: 'r3' },
    ],
    [
      'a plain Error, hidden',
      new Error('ENOENT /opt/ml/model'),
      'r4',
      500,
      { type: 'error', code: 'internal_error', message: GENERIC, request_id: 'r4' },
    ],
    [
      'a thrown string, hidden',
      'worker exited with code 70',
      undefined,
      500,
      { type: 'error', code: 'internal_error', message: GENERIC },
    ],
    [
      'undefined, hidden',
      undefined,
      undefined,
      500,
      { type: 'error', code: 'internal_error', message: GENERIC },
    ],
    [
      'an internal error’s own message, hidden',
      ttsError('TTS_ERR_INTERNAL', 'pool state: 3 workers at /opt/ml'),
      undefined,
      500,
      { type: 'error', code: 'internal_error', message: GENERIC },
    ],
    [
      'an inference failure, whose message is written for clients',
      ttsError('TTS_ERR_INFERENCE', 'Synthesis failed inside the model; the error has been logged'),
      undefined,
      500,
      {
        type: 'error',
        code: 'inference_failed',
        message: 'Synthesis failed inside the model; the error has been logged',
      },
    ],
    [
      'busy, with its token in front',
      ttsError(
        'TTS_ERR_BUSY',
        'The server is at capacity: the inference queue is full (4 sentences waiting); retry shortly',
      ),
      undefined,
      503,
      {
        type: 'error',
        code: 'busy',
        message:
          'queue_saturated: the server is at capacity: the inference queue is full (4 sentences waiting); retry shortly',
      },
    ],
    [
      'busy, whose message carries a token already',
      ttsError('TTS_ERR_BUSY', 'queue_full: no room'),
      undefined,
      503,
      { type: 'error', code: 'busy', message: 'queue_full: no room' },
    ],
    [
      'stale, with its token; an acronym keeps its capitals',
      ttsError('TTS_ERR_REQUEST_STALE', 'JSON sent 60 s ago'),
      undefined,
      408,
      { type: 'error', code: 'request_stale', message: 'request_stale: JSON sent 60 s ago' },
    ],
    [
      'other codes, no token',
      ttsError('TTS_ERR_SHUTTING_DOWN', 'The server is shutting down'),
      undefined,
      503,
      { type: 'error', code: 'shutting_down', message: 'The server is shutting down' },
    ],
  ];
  it.each(cases)('%s', (_name, err, requestId, status, body) => {
    expect(toErrorBody(err, requestId)).toEqual({ status, body });
  });
});

describe('toHttpErrorBody', () => {
  it('repeats the code as `error`, for the reference container’s clients', () => {
    expect(toHttpErrorBody(ttsError('TTS_ERR_NOT_READY', 'loading'), 'r1')).toEqual({
      status: 503,
      body: { type: 'error', code: 'not_ready', error: 'not_ready', message: 'loading', request_id: 'r1' },
    });
    expect(toHttpErrorBody(new Error('secret')).body).toEqual({
      type: 'error',
      code: 'internal_error',
      error: 'internal_error',
      message: GENERIC,
    });
  });
});

describe('withRequestId', () => {
  it('tags a TtsError once; anything else becomes an internal error that carries the id and its cause', () => {
    const err = ttsError('TTS_ERR_BAD_REQUEST', 'bad');
    expect(withRequestId(err, 'first')).toBe(err);
    withRequestId(err, 'second');
    expect(err.requestId).toBe('first');
    expect(
      (withRequestId(ttsError('TTS_ERR_BAD_REQUEST', 'bad'), undefined) as TtsError).requestId,
    ).toBeUndefined();
    const plain = new Error('plain');
    const tagged = withRequestId(plain, 'r') as TtsError;
    expect(tagged).toBeInstanceOf(TtsError);
    expect(tagged).toMatchObject({ code: 'internal_error', requestId: 'r', cause: plain });
    expect(toErrorBody(tagged).body).toMatchObject({ code: 'internal_error', request_id: 'r' });
    expect(withRequestId(plain, undefined)).toBe(plain);
    // A cancellation stays what it is: nothing to report.
    const abort = new DOMException('cancelled', 'AbortError');
    expect(withRequestId(abort, 'r')).toBe(abort);
  });
});

describe('errorHeaders', () => {
  it.each([
    ['a refusal while draining', ttsError('TTS_ERR_SHUTTING_DOWN', 'draining'), { 'Retry-After': '1' }],
    [
      'a refusal that names its wait',
      ttsError('TTS_ERR_BUSY', 'at capacity', { data: { retryAfterS: 1 } }),
      { 'Retry-After': '1' },
    ],
    ['a full queue that names none', ttsError('TTS_ERR_BUSY', 'queue full'), {}],
    ['a bad request', ttsError('TTS_ERR_BAD_REQUEST', 'bad'), {}],
    ['a failure that is not ours', new Error('boom'), {}],
  ])('%s', (_name, err, headers) => {
    expect(errorHeaders(err)).toEqual(headers);
  });
});

describe('fromFastifyError', () => {
  const cases: [string, FastifyError, string, number, RegExp][] = [
    [
      'a body over the limit',
      new errorCodes.FST_ERR_CTP_BODY_TOO_LARGE(),
      'payload_too_large',
      413,
      /^The request body is over the 65536-byte limit$/,
    ],
    [
      'an unsupported media type',
      new errorCodes.FST_ERR_CTP_INVALID_MEDIA_TYPE('application/xml'),
      'unsupported_media_type',
      415,
      /^Content-Type should be application\/json/,
    ],
    [
      'an empty JSON body',
      new errorCodes.FST_ERR_CTP_EMPTY_JSON_BODY(),
      'bad_request',
      400,
      /^The body is empty: send \{"text": "…"\}$/,
    ],
    [
      'a Content-Length that does not match',
      new errorCodes.FST_ERR_CTP_INVALID_CONTENT_LENGTH(),
      'bad_request',
      400,
      /^Content-Length does not match the body$/,
    ],
    [
      'another client error',
      new errorCodes.FST_ERR_BAD_URL('/%zz'),
      'bad_request',
      400,
      /^The request is malformed: '\/%zz' is not a valid url component$/,
    ],
  ];
  it.each(cases)('%s', (_name, err, code, status, message) => {
    const mapped = fromFastifyError(err, 65536);
    expect(mapped).toBeInstanceOf(TtsError);
    expect(mapped).toMatchObject({ code, status });
    expect((mapped as TtsError).message).toMatch(message);
  });

  it('names every accepted type in the 415 message', () => {
    expect(
      (fromFastifyError(new errorCodes.FST_ERR_CTP_INVALID_MEDIA_TYPE(), 1024) as TtsError).message,
    ).toBe(MEDIA_TYPES);
  });

  it('passes a server error through as it is, to be hidden and logged', () => {
    const err = new errorCodes.FST_ERR_ASYNC_CONSTRAINT();
    expect(fromFastifyError(err, 65536)).toBe(err);
    const bare = Object.assign(new Error('no status'), { code: 'X' }) as FastifyError;
    expect(fromFastifyError(bare, 65536)).toBe(bare);
  });
});

describe('rawHttpRefusal', () => {
  it('is one complete HTTP/1.1 response that closes the connection', () => {
    const body = JSON.stringify({
      type: 'error',
      code: 'unauthorized',
      message: 'Missing credentials: café',
      error: 'unauthorized',
    });
    expect(rawHttpRefusal(ttsError('TTS_ERR_UNAUTHORIZED', 'Missing credentials: café'))).toBe(
      [
        'HTTP/1.1 401 Unauthorized',
        'Content-Type: application/json',
        `Content-Length: ${Buffer.byteLength(body)}`,
        'Connection: close',
        '',
        body,
      ].join('\r\n'),
    );
    const draining = rawHttpRefusal(ttsError('TTS_ERR_SHUTTING_DOWN', 'draining'));
    expect(draining).toMatch(
      /^HTTP\/1\.1 503 Service Unavailable\r\n.*\r\nRetry-After: 1\r\nConnection: close\r\n\r\n\{/s,
    );
    expect(rawHttpRefusal(ttsError('TTS_ERR_BAD_REQUEST', 'x'))).toMatch(/^HTTP\/1\.1 400 Error\r\n/);
  });
});

describe('refusal tokens', () => {
  it('docs/protocol.md lists the tokens of each code', () => {
    const doc = readFileSync(new URL('../../../docs/protocol.md', import.meta.url), 'utf8');
    const lines = doc.slice(doc.search(/^### Message tokens$/m)).split('\n');
    const start = lines.findIndex((l) => l.startsWith('|')) + 2; // past the header and its rule
    const end = lines.findIndex((l, i) => i >= start && !l.startsWith('|'));
    const ticked = (cell: string) => [...cell.matchAll(/`([^`]+)`/g)].map((m) => m[1]!);
    const documented = lines.slice(start, end).map((row) => {
      const [code, tokens] = row.slice(1, -1).split(' | ');
      return [ticked(code!)[0], ticked(tokens!)];
    });
    expect(Object.fromEntries(documented)).toEqual(MESSAGE_TOKENS);
  });
});
