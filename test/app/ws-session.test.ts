/**
 * The WebSocket session's answers to bad input, in-process: every message the contract refuses
 * gets an `error` frame (with the request id when the message carried a usable one), and the same
 * session answers the next request.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { inProcessApp, type InProcessApp } from './in-process.ts';
import { openSession } from './ws-client.ts';

let running: InProcessApp;
beforeAll(async () => {
  running = await inProcessApp();
});
afterAll(() => running.close());

describe('WS bad input: an error frame, and the session lives on', () => {
  const now = () => Date.now() / 1000;
  const cases: {
    name: string;
    send: Buffer | string | Record<string, unknown>;
    binary?: boolean;
    code: string;
    message: RegExp;
    requestId?: string;
    /** The next message, which must be answered (a text request by default). */
    after?: Record<string, unknown>;
  }[] = [
    { name: 'broken JSON', send: '{"text": "unterminated', code: 'invalid_json', message: /not valid JSON/ },
    {
      name: 'JSON that is not an object after {',
      send: '{}}',
      code: 'invalid_json',
      message: /not valid JSON/,
    },
    {
      name: 'unknown type',
      send: { type: 'dance', request_id: 'u1' },
      code: 'unknown_type',
      message: /Unknown message type "dance".*"synthesize".*"close"/,
      requestId: 'u1',
    },
    {
      name: 'non-string type',
      send: { type: 7, text: 'x' },
      code: 'unknown_type',
      message: /Unknown message type 7/,
    },
    {
      name: 'a cancel naming an id no request can have',
      send: { type: 'cancel', request_id: '' },
      code: 'invalid_option',
      message: /request_id on a cancel should be the id of a request of this session/,
    },
    {
      name: 'an append without text',
      send: { type: 'append', request_id: 'ap' },
      code: 'invalid_option',
      message: /An append carries its text as a string.*got no text/,
      requestId: 'ap',
    },
    {
      name: 'invalid UTF-8 in a binary frame',
      send: Buffer.from([0x7b, 0x22, 0xff, 0xfe, 0x22, 0x7d]),
      code: 'invalid_utf8',
      message: /not valid UTF-8/,
    },
    {
      name: 'invalid UTF-8 in a text frame',
      send: Buffer.from([0x48, 0xc3, 0x28]),
      binary: false,
      code: 'invalid_utf8',
      message: /not valid UTF-8/,
    },
    {
      name: 'missing text',
      send: { voice: 'af_heart', request_id: 'm1' },
      code: 'bad_request',
      message: /has no text/,
      requestId: 'm1',
    },
    {
      name: 'text of the wrong type',
      send: { text: 5, request_id: 't1' },
      code: 'invalid_option',
      message: /text should be a string; got number 5/,
      requestId: 't1',
    },
    { name: 'empty text', send: { text: '   ' }, code: 'empty_text', message: /text is empty/ },
    { name: 'whitespace-only plain text', send: '   \n ', code: 'empty_text', message: /text is empty/ },
    {
      name: 'text over the limit',
      send: { text: 'a'.repeat(4097), request_id: 'long' },
      code: 'text_too_long',
      message: /4097 characters, over the limit of 4096/,
      requestId: 'long',
    },
    {
      name: 'a 1 MiB message (an error frame, not a dropped connection)',
      send: { text: 'b'.repeat(1024 * 1024) },
      code: 'text_too_long',
      message: /1048576 characters/,
    },
    {
      name: 'unknown voice',
      send: { text: 'Hi.', voice: 'xx_nobody' },
      code: 'voice_not_found',
      message: /Unknown voice "xx_nobody".*af_heart/,
    },
    {
      name: 'voice in the wrong case',
      send: { text: 'Hi.', voice: 'AF_HEART' },
      code: 'voice_not_found',
      message: /Unknown voice/,
    },
    {
      name: 'path traversal as a voice',
      send: { text: 'Hi.', voice: '../../etc/passwd' },
      code: 'voice_not_found',
      message: /Unknown voice/,
    },
    {
      name: 'a language the server has no front end for',
      send: { text: 'Hallo.', voice: 'af_heart', lang: 'de' },
      code: 'language_unsupported',
      message: /Unknown lang "de"; supported languages: American English.*Spanish/,
    },
    {
      name: 'a blend with a bad weight',
      send: { text: 'Hi.', voice: 'af_bella(0)+af_sky' },
      code: 'invalid_option',
      message: /positive finite number/,
    },
    {
      name: 'a blend of nine voices',
      send: { text: 'Hi.', voice: Array(9).fill('af_sky').join('+') },
      code: 'invalid_option',
      message: /at most 8 voices/,
    },
    {
      name: 'speed too low',
      send: { text: 'Hi.', speed: 0.3 },
      code: 'invalid_option',
      message: /speed should be a number from 0.5 to 2; got number 0.3/,
    },
    {
      name: 'speed as a string',
      send: { text: 'Hi.', speed: 'fast' },
      code: 'invalid_option',
      message: /speed should be a number.*the string "fast"/,
    },
    {
      name: 'unsupported format',
      send: { text: 'Hi.', format: 'ogg' },
      code: 'invalid_option',
      message: /format should be one of: pcm, wav/,
    },
    {
      name: 'unsupported sample rate',
      send: { text: 'Hi.', sample_rate: 11025 },
      code: 'invalid_option',
      message:
        /sample_rate for pcm should be one of: 8000, 16000, 22050, 24000, 32000, 44100, 48000; got number 11025/,
    },
    ...['voice', 'speed', 'format', 'sample_rate'].map((field) => ({
      name: `${field} null, refused instead of defaulted`,
      send: { text: 'Null option.', [field]: null, request_id: `null-${field}` },
      code: 'invalid_option',
      message: new RegExp(`^${field} (for pcm )?should be .*; got null$`),
      requestId: `null-${field}`,
    })),
    {
      name: 'stale request',
      send: { text: 'Hi.', request_timestamp: now() - 120, request_id: 'old' },
      code: 'request_stale',
      message: /^request_stale: the request is [\d.]+ s old \(request_timestamp\), over the 56 s limit/,
      requestId: 'old',
    },
    {
      name: 'stale request in milliseconds',
      send: { text: 'Hi.', request_timestamp: Date.now() - 120_000 },
      code: 'request_stale',
      message: /^request_stale: the request is [\d.]+ s old .*over the 56 s limit/,
    },
    {
      name: 'timestamp of the wrong type',
      send: { text: 'Hi.', request_timestamp: 'yesterday' },
      code: 'invalid_option',
      message: /request_timestamp should be epoch seconds/,
    },
    {
      name: 'phonemes outside the vocabulary',
      send: { phonemes: 'hɛ§lO', request_id: 'bad' },
      binary: false,
      code: 'invalid_option',
      message: /"§" \(U\+00A7\)/,
      requestId: 'bad',
      after: { phonemes: 'həlˈO wˈɜɹld.', request_id: 'after' },
    },
  ];

  it.each(cases)('$name → $code', async (c) => {
    const client = await openSession(running.app);
    client.send(c.send as Record<string, unknown>, c.binary ?? true);
    client.send(c.after ?? { text: 'Still here.', request_id: 'after' });
    await client.untilControls('synthesis_complete', 1);
    const [error, ...more] = client.controls('error');
    expect(more).toEqual([]);
    expect(error).toMatchObject({ type: 'error', code: c.code });
    expect(String(error!.message)).toMatch(c.message);
    expect(error!.request_id).toBe(c.requestId);
    const [after, ...others] = client.requests();
    expect(others).toEqual([]);
    expect(after).toMatchObject({ id: 'after', complete: true });
    expect(after!.audio).toBeGreaterThan(1000);
    expect(client.closeCode).toBeUndefined();
    client.close();
  });

  it('timestamps asked of a model that cannot time: the audio, untimed, and a warning on its completion', async () => {
    const client = await openSession(running.app);
    client.send({ text: 'Hi.', timestamps: true, request_id: 'ts' });
    client.send({ type: 'append', text: 'Streamed ', phoneme_timestamps: true, request_id: 'u' });
    client.send({ type: 'append', text: 'too.' });
    client.send({ type: 'flush' });
    await client.untilControls('synthesis_complete', 2);
    expect(client.controls('error')).toEqual([]);
    expect(client.controls('word_timestamps')).toEqual([]);
    expect(client.controls('phoneme_timestamps')).toEqual([]);
    expect(client.requests()).toEqual([
      { id: 'ts', audio: expect.any(Number), complete: true },
      { id: 'u', audio: expect.any(Number), complete: true },
    ]);
    expect(client.requests().every((r) => r.audio > 1000)).toBe(true);
    expect(client.controls('synthesis_complete').map((f) => f.warnings)).toEqual([
      [expect.stringMatching(/^timestamps: the loaded model export has no durations output/)],
      [expect.stringMatching(/^phoneme_timestamps: the loaded model export has no durations output/)],
    ]);
    client.close();
  });

  it('accepts a timestamp from the future (clock skew) and one in milliseconds', async () => {
    const client = await openSession(running.app);
    client.send({ text: 'From the future.', request_timestamp: now() + 3600 });
    client.send({ text: 'In milliseconds.', request_timestamp: Date.now() });
    await client.untilControls('synthesis_complete', 2);
    expect(client.controls('error')).toEqual([]);
    client.close();
  });
});
