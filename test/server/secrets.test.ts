/**
 * Credentials never reach the log: a server with AUTH_TOKEN, logging at `trace`, is sent its key
 * and a wrong one in every place a client carries one (Authorization, xi-api-key, X-API-Key, a
 * vendor socket's query, a `bearer.` or Deepgram `token` subprotocol, a query parameter on any
 * route), over HTTP and on WebSocket upgrades, accepted and refused. Then the whole log is
 * searched: neither key appears in it, in any encoding, while each route is still logged with
 * `[redacted]` in place of the value.
 */
import { randomBytes } from 'node:crypto';
import { Writable } from 'node:stream';
import WebSocket from 'ws';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServer, type TestServer } from './harness.ts';

const SECRET = `s3cret${randomBytes(12).toString('hex')}`;
const WRONG = `wr0ng${randomBytes(12).toString('hex')}`;
/** ElevenLabs' Rachel: af_heart here. */
const RACHEL = '21m00Tcm4TlvDq8ikWAM';
const base64url = (key: string) => Buffer.from(key).toString('base64url');

const lines: string[] = [];
const sink = new Writable({
  write(chunk: Buffer, _encoding, done) {
    lines.push(chunk.toString('utf8'));
    done();
  },
});

let server: TestServer;
let closed = false;
beforeAll(async () => {
  server = await startServer({ AUTH_TOKEN: SECRET, LOG_LEVEL: 'trace' }, { log: sink });
});
afterAll(async () => {
  if (!closed) await server.close();
});

const json = { 'content-type': 'application/json' };

/** HTTP requests carrying `key`, each where a client of some dialect puts it. */
const httpCases = (key: string): [string, string, RequestInit][] => [
  ['Authorization: Bearer', '/v1/models', { headers: { authorization: `Bearer ${key}` } }],
  [
    'Authorization: Token (Deepgram)',
    '/v1/speak?model=af_heart',
    { method: 'POST', headers: { ...json, authorization: `Token ${key}` }, body: '{"text":"Hi."}' },
  ],
  [
    'xi-api-key',
    `/v1/text-to-speech/${RACHEL}/stream`,
    { method: 'POST', headers: { ...json, 'xi-api-key': key }, body: '{"text":"Hi."}' },
  ],
  [
    'X-API-Key',
    '/tts/bytes',
    {
      method: 'POST',
      headers: { ...json, 'x-api-key': key },
      body: JSON.stringify({
        model_id: 'sonic-3',
        transcript: 'Hi.',
        voice: { mode: 'id', id: 'af_heart' },
        output_format: { container: 'wav', encoding: 'pcm_s16le', sample_rate: 24000 },
      }),
    },
  ],
];

/** Upgrades carrying `key` in the query or a subprotocol: the path, the subprotocols, headers. */
const upgradeCases = (key: string): [string, string[], Record<string, string>][] => [
  [`/tts/websocket?api_key=${key}&cartesia_version=2024-06-10`, [], {}],
  [`/tts/websocket?api%5Fkey=${key}`, [], {}],
  [`/v1/text-to-speech/${RACHEL}/stream-input?xi_api_key=${key}`, [], {}],
  [`/v1/text-to-speech/${RACHEL}/multi-stream-input?authorization=Bearer%20${key}`, [], {}],
  ['/invocations-bidirectional-stream', ['kokoro-tts', `bearer.${base64url(key)}`], {}],
];

/** The status a WebSocket upgrade got: 101 when it opened (then closed at once). */
function upgrade(path: string, protocols: string[], headers: Record<string, string>): Promise<number> {
  return new Promise((resolve, reject) => {
    const socket = new WebSocket(`${server.http.replace('http:', 'ws:')}${path}`, protocols, { headers });
    socket.once('open', () => {
      socket.close();
      resolve(101);
    });
    socket.once('unexpected-response', (_request, response) => {
      response.resume();
      socket.terminate();
      resolve(response.statusCode ?? 0);
    });
    socket.once('error', reject);
  });
}

/** The `req.url` of every log line that has one. */
function loggedUrls(): string[] {
  return lines
    .flatMap((l) => l.split('\n'))
    .filter((l) => l.startsWith('{'))
    .map((l) => (JSON.parse(l) as { req?: { url?: string } }).req?.url)
    .filter((u): u is string => u !== undefined);
}

describe('credentials in the log', () => {
  it('no key, accepted or refused, appears anywhere in the log; the routes are logged redacted', async () => {
    // Each key where it travels: the good one is accepted, the wrong one refused (so each place was read).
    for (const [key, status, upgraded] of [
      [SECRET, 200, 101],
      [WRONG, 401, 401],
    ] as const) {
      for (const [name, path, init] of httpCases(key)) {
        const response = await fetch(`${server.http}${path}`, init);
        await response.arrayBuffer();
        expect([name, response.status]).toEqual([name, status]);
      }
      for (const [path, protocols, headers] of upgradeCases(key))
        expect([path, await upgrade(path, protocols, headers)]).toEqual([path, upgraded]);
      // Deepgram's browser subprotocol (`token`, then the key) and a `token` query parameter, with
      // the key in the header the server reads (the wrong one, refused).
      const deepgram = await upgrade(`/v1/speak?model=af_heart&token=${key}`, ['token', key], {
        authorization: `Token ${key}`,
      });
      expect(deepgram).toBe(upgraded);
      // A query key on an HTTP route, where it is not read: refused without a header, else served.
      const query = await fetch(`${server.http}/invocations?api_key=${key}`, {
        method: 'POST',
        headers: { ...json, ...(key === SECRET ? { authorization: `Bearer ${key}` } : {}) },
        body: '{"text":"Hi.","format":"pcm"}',
      });
      await query.arrayBuffer();
      expect(query.status).toBe(status);
      // A URL Fastify cannot decode is refused before routing, and logged all the same.
      const malformed = await fetch(`${server.http}/v1/models%zz?api_key=${key}`, {
        headers: { authorization: `Bearer ${SECRET}` },
      });
      await malformed.arrayBuffer();
      expect(malformed.status).toBe(400);
    }
    await server.close();
    closed = true;

    const log = lines.join('');
    for (const key of [SECRET, WRONG]) {
      expect(log).not.toContain(key);
      expect(log).not.toContain(base64url(key));
    }
    const urls = loggedUrls();
    for (const path of [
      '/tts/websocket?api_key=[redacted]&cartesia_version=2024-06-10',
      '/tts/websocket?api%5Fkey=[redacted]',
      `/v1/text-to-speech/${RACHEL}/stream-input?xi_api_key=[redacted]`,
      `/v1/text-to-speech/${RACHEL}/multi-stream-input?authorization=[redacted]`,
      '/v1/speak?model=af_heart&token=[redacted]',
      '/invocations?api_key=[redacted]',
      '/v1/models%zz?api_key=[redacted]',
      '/v1/speak?model=af_heart',
      '/invocations-bidirectional-stream',
    ]) {
      // Once with the key that was accepted, once with the one refused.
      expect([path, urls.filter((u) => u === path).length]).toEqual([path, 2]);
    }
    // The refusals were logged (without the key), and so were the sessions opened.
    expect(log).toMatch(/"code":"unauthorized"[^\n]*"msg":"request refused"/);
    expect(log).toContain('"msg":"session opened"');
  });
});
