/**
 * POST /invocations in-process: the body parsers (JSON, text/plain, forms, `{` read as JSON
 * whatever the type, 415, charsets, invalid UTF-8, empty bodies, MAX_BODY_BYTES), every bad input
 * answered with a clear 4xx before any audio, the request id on errors and in the header, and what
 * the answer carries around the audio (SSE's voice echo, a complete file's figures as headers).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readSse } from 'kokoro-stream-client';
import { inProcessApp, type InProcessApp } from './in-process.ts';

let running: InProcessApp;
beforeAll(async () => {
  running = await inProcessApp({ MAX_BODY_BYTES: '65536' });
});
afterAll(() => running.close());

const post = (payload: string | Buffer, type: string | undefined, headers: Record<string, string> = {}) =>
  running.app.inject({
    method: 'POST',
    url: '/invocations',
    payload,
    headers: { ...(type ? { 'content-type': type } : {}), ...headers },
  });
const json = (value: unknown) => JSON.stringify(value);
const PCM = 'audio/pcm;rate=24000;encoding=s16le;channels=1';

async function* once(bytes: Uint8Array): AsyncGenerator<Uint8Array> {
  yield bytes;
}

/** What the engine was last asked to speak. */
const lastText = () => running.engine!.requests.at(-1)?.text;

describe('the body parsers', () => {
  const options = json({ text: 'Hi there.', format: 'pcm' });
  const accepted: [string, string | Buffer, string | undefined, string, string][] = [
    [
      'text/plain with a charset',
      'Plain text body.',
      'text/plain; charset=utf-8',
      'audio/wav',
      'Plain text body.',
    ],
    ['text/plain in another case', 'Plain text body.', 'Text/Plain', 'audio/wav', 'Plain text body.'],
    ['us-ascii text', 'Plain text body.', 'text/plain; charset=us-ascii', 'audio/wav', 'Plain text body.'],
    [
      'a form body, as text',
      'Hello there.',
      'application/x-www-form-urlencoded',
      'audio/wav',
      'Hello there.',
    ],
    ['JSON with a quoted UTF-8 charset', options, 'application/json; charset="UTF-8"', PCM, 'Hi there.'],
    [
      'JSON after white space, as a form',
      ` \n${options}`,
      'application/x-www-form-urlencoded',
      PCM,
      'Hi there.',
    ],
    ['JSON after white space, as text/plain', ` \n${options}`, 'text/plain', PCM, 'Hi there.'],
    ['JSON as application/octet-stream', ` \n${options}`, 'application/octet-stream', PCM, 'Hi there.'],
    ['JSON with no content type', ` \n${options}`, undefined, PCM, 'Hi there.'],
    ['JSON as a vendor type', options, 'application/vnd.api+json', PCM, 'Hi there.'],
    ['a JSON string as text/plain is its text', '"Quoted."', 'text/plain', 'audio/wav', '"Quoted."'],
  ];
  it.each(accepted)('%s is read', async (_name, body, type, contentType, text) => {
    const res = await post(body, type);
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toBe(contentType);
    expect(lastText()).toBe(text);
  });
});

describe('POST /invocations bad input: a clear 4xx before any audio, and the server serves on', () => {
  const now = () => Date.now() / 1000;
  const cases: {
    name: string;
    body: string | Buffer;
    type?: string;
    headers?: Record<string, string>;
    status: number;
    code: string;
    message: RegExp;
    engine?: { timestamps: boolean };
  }[] = [
    {
      name: 'an unsupported content type',
      body: 'x',
      type: 'application/xml',
      status: 415,
      code: 'unsupported_media_type',
      message: /application\/json.*text\/plain/,
    },
    {
      name: 'text that is not JSON, as an unsupported type',
      body: 'Hello there.',
      type: 'application/xml',
      status: 415,
      code: 'unsupported_media_type',
      message: /a body that starts with \{ is read as JSON whatever its type/,
    },
    {
      name: 'no content type',
      body: 'x',
      status: 415,
      code: 'unsupported_media_type',
      message: /Content-Type/,
    },
    {
      name: 'bytes that are not UTF-8, as an unsupported type',
      body: Buffer.from([0x7b, 0xff]),
      type: 'application/xml',
      status: 415,
      code: 'unsupported_media_type',
      message: /Content-Type should be/,
    },
    {
      name: 'another charset',
      body: Buffer.from('hi', 'utf16le'),
      type: 'text/plain; charset=utf-16',
      status: 415,
      code: 'unsupported_media_type',
      message: /^charset=utf-16 is not supported; send UTF-8$/,
    },
    {
      name: 'another charset on JSON',
      body: json({ text: 'hi' }),
      type: 'application/json; charset=latin1',
      status: 415,
      code: 'unsupported_media_type',
      message: /charset=latin1/,
    },
    {
      name: 'text/plain bytes that are not UTF-8',
      body: Buffer.from([0x48, 0xc3, 0x28]),
      type: 'text/plain',
      status: 400,
      code: 'invalid_utf8',
      message: /^The body is not valid UTF-8 text$/,
    },
    {
      name: 'JSON bytes that are not UTF-8',
      body: Buffer.from([0x7b, 0x22, 0xff, 0x22, 0x7d]),
      type: 'application/json',
      status: 400,
      code: 'invalid_utf8',
      message: /not valid UTF-8/,
    },
    {
      name: 'broken JSON',
      body: '{"text": ',
      type: 'application/json',
      status: 400,
      code: 'invalid_json',
      message: /not valid JSON/,
    },
    {
      name: 'broken JSON in a form body',
      body: '{"text": ',
      type: 'application/x-www-form-urlencoded',
      status: 400,
      code: 'invalid_json',
      message: /not valid JSON.*send an object such as/,
    },
    {
      name: 'broken JSON as an unsupported type',
      body: '{"text": ',
      type: 'application/xml',
      status: 400,
      code: 'invalid_json',
      message: /not valid JSON/,
    },
    {
      name: 'an empty JSON body',
      body: '',
      type: 'application/json',
      status: 400,
      code: 'invalid_json',
      message: /not valid JSON \(Unexpected end of JSON input\)/,
    },
    {
      name: 'an empty body with no content type',
      body: '',
      status: 400,
      code: 'bad_request',
      message: /should be an object such as \{"text": "Hello"\}; got undefined/,
    },
    {
      name: 'a Content-Length that does not match the body',
      body: 'Hello.',
      type: 'text/plain',
      headers: { 'content-length': '3' },
      status: 400,
      code: 'bad_request',
      message: /^Content-Length does not match the body$/,
    },
    {
      name: 'a JSON array',
      body: '["Hello"]',
      type: 'application/json',
      status: 400,
      code: 'bad_request',
      message: /should be an object.*got an array/,
    },
    {
      name: 'a JSON string',
      body: '"Hello"',
      type: 'application/json',
      status: 400,
      code: 'bad_request',
      message: /should be an object.*got string/,
    },
    {
      name: 'a JSON number',
      body: '5',
      type: 'application/json',
      status: 400,
      code: 'bad_request',
      message: /got number/,
    },
    {
      name: 'JSON null',
      body: 'null',
      type: 'application/json',
      status: 400,
      code: 'bad_request',
      message: /got null/,
    },
    {
      name: 'no text',
      body: json({ voice: 'af_heart' }),
      type: 'application/json',
      status: 400,
      code: 'bad_request',
      message: /has no text/,
    },
    {
      name: 'empty text',
      body: json({ text: '' }),
      type: 'application/json',
      status: 400,
      code: 'empty_text',
      message: /text is empty/,
    },
    {
      name: 'empty plain text',
      body: '  ',
      type: 'text/plain',
      status: 400,
      code: 'empty_text',
      message: /text is empty/,
    },
    {
      name: 'an empty form body',
      body: '',
      type: 'application/x-www-form-urlencoded',
      status: 400,
      code: 'empty_text',
      message: /text is empty/,
    },
    {
      name: 'text over the limit',
      body: json({ text: '😀'.repeat(4097) }),
      type: 'application/json',
      status: 413,
      code: 'text_too_long',
      message: /4097 characters, over the limit of 4096/,
    },
    {
      name: 'a body over the size limit',
      body: json({ text: 'a'.repeat(70_000) }),
      type: 'application/json',
      status: 413,
      code: 'payload_too_large',
      message: /65536-byte limit/,
    },
    {
      name: 'an unknown voice',
      body: json({ text: 'Hi.', voice: 'zz_top' }),
      type: 'application/json',
      status: 400,
      code: 'voice_not_found',
      message: /Unknown voice "zz_top"/,
    },
    {
      name: 'speed out of range',
      body: json({ text: 'Hi.', speed: 2.5 }),
      type: 'application/json',
      status: 400,
      code: 'invalid_option',
      message: /speed should be a number from 0.5 to 2/,
    },
    {
      name: 'stream as a string',
      body: json({ text: 'Hi.', stream: 'no' }),
      type: 'application/json',
      status: 400,
      code: 'invalid_option',
      message: /stream should be true or false/,
    },
    {
      name: 'an unknown transport',
      body: json({ text: 'Hi.', transport: 'carrier-pigeon' }),
      type: 'application/json',
      status: 400,
      code: 'invalid_option',
      message: /transport should be one of: binary/,
    },
    {
      name: 'a null option',
      body: json({ text: 'x', transport: null }),
      type: 'application/json',
      status: 400,
      code: 'invalid_option',
      message: /got null/,
    },
    {
      name: 'a stale request',
      body: json({ text: 'Hi.', request_timestamp: now() - 60 }),
      type: 'application/json',
      status: 408,
      code: 'request_stale',
      message: /^request_stale: the request is [\d.]+ s old.*over the 56 s limit/,
    },
    {
      name: 'timestamps without SSE',
      body: json({ text: 'Hi.', timestamps: true }),
      type: 'application/json',
      engine: { timestamps: true },
      status: 400,
      code: 'invalid_option',
      message: /timestamps on POST need "transport": "sse"/,
    },
    {
      name: 'phonemes outside the vocabulary',
      body: json({ phonemes: 'həlˈO §§ wˈɜɹld ж' }),
      type: 'application/json',
      status: 400,
      code: 'invalid_option',
      message: /outside Kokoro's vocabulary: "§" \(U\+00A7\) ×2, "ж" \(U\+0436\)/,
    },
    {
      name: 'empty phonemes',
      body: json({ phonemes: '' }),
      type: 'application/json',
      status: 400,
      code: 'empty_text',
      message: /phonemes is empty/,
    },
    {
      name: 'both phonemes and text',
      body: json({ phonemes: 'hˈI', text: 'Hi' }),
      type: 'application/json',
      status: 400,
      code: 'invalid_option',
      message: /either text or phonemes, not both/,
    },
    {
      name: 'phonemes that are not a string',
      body: json({ phonemes: ['h'] }),
      type: 'application/json',
      status: 400,
      code: 'invalid_option',
      message: /phonemes should be a string/,
    },
    {
      name: 'timestamps for phonemes, where the model cannot time words',
      body: json({ phonemes: 'hˈI', timestamps: true, transport: 'sse' }),
      type: 'application/json',
      status: 400,
      code: 'invalid_option',
      message: /a phonemes request has no words to time/,
    },
    {
      name: 'timestamps for phonemes, where the model can time words',
      body: json({ phonemes: 'hˈI', timestamps: true, transport: 'sse' }),
      type: 'application/json',
      engine: { timestamps: true },
      status: 400,
      code: 'invalid_option',
      message: /a phonemes request has no words to time/,
    },
  ];

  it.each(cases)('$name → $status $code', async (c) => {
    const app = c.engine ? await inProcessApp({}, { engine: c.engine }) : running;
    try {
      const asked = app.engine!.requests.length;
      const res = await app.app.inject({
        method: 'POST',
        url: '/invocations',
        payload: c.body,
        headers: { ...(c.type ? { 'content-type': c.type } : {}), ...c.headers },
      });
      expect(res.statusCode).toBe(c.status);
      expect(res.headers['content-type']).toMatch(/^application\/json/);
      const body = res.json();
      expect(body).toMatchObject({ type: 'error', code: c.code, error: c.code });
      expect(body.message).toMatch(c.message);
      // Refused before the engine saw it; and the server still works.
      expect(app.engine!.requests.length).toBe(asked);
      const next = await app.app.inject({
        method: 'POST',
        url: '/invocations',
        payload: 'Still fine.',
        headers: { 'content-type': 'text/plain' },
      });
      expect(next.statusCode).toBe(200);
      expect(app.engine!.requests.length).toBe(asked + 1);
    } finally {
      if (app !== running) await app.close();
    }
  });
});

describe('the request id', () => {
  it('is echoed on errors, whatever its characters', async () => {
    const ascii = await post(json({ text: 'Hi.', voice: 'nope_x', request_id: 'abc' }), 'application/json');
    expect(ascii.json()).toMatchObject({ code: 'voice_not_found', request_id: 'abc' });
    const unicode = await post(json({ text: 'x', speed: 9, request_id: '日本' }), 'application/json');
    expect(unicode.json()).toMatchObject({ code: 'invalid_option', request_id: '日本' });
    // One that is not a usable id is not echoed: the refusal names it instead.
    const unusable = await post(json({ text: 'x', request_id: 7 }), 'application/json');
    expect(unusable.json()).toEqual({
      type: 'error',
      code: 'invalid_option',
      error: 'invalid_option',
      message: expect.stringMatching(
        /^request_id should be a non-empty string of at most 128 characters; got number 7$/,
      ),
    });
  });

  it('goes into the x-request-id header only when it is header-safe', async () => {
    const safe = await post(json({ text: 'Ascii id.', request_id: 'p1' }), 'application/json');
    expect(safe.statusCode).toBe(200);
    expect(safe.headers['x-request-id']).toBe('p1');
    const unsafe = await post(json({ text: 'Unicode id.', request_id: '日本\n語' }), 'application/json');
    expect(unsafe.statusCode).toBe(200);
    expect(unsafe.headers['x-request-id']).toBeUndefined();
    // Without one, the id made for the request is sent.
    const made = await post('No id.', 'text/plain');
    expect(made.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
  });
});

describe('around the audio', () => {
  it('audio_stream_start echoes the voice exactly as requested, or the default voice id', async () => {
    const starts: unknown[] = [];
    for (const voice of ['af_bella+af_sky', 'af_bella(2)+af_sky(1)', 'af_heart', undefined]) {
      const res = await post(json({ text: 'Hello.', transport: 'sse', voice }), 'application/json');
      expect(res.headers['content-type']).toBe('text/event-stream; charset=utf-8');
      const events = [];
      for await (const event of readSse(once(res.rawPayload))) events.push(event);
      expect(events.map((e) => e.event)).toEqual(['audio_stream_start', 'audio_chunk', 'audio_stream_end']);
      starts.push(JSON.parse(events[0]!.data).voice);
    }
    expect(starts).toEqual(['af_bella+af_sky', 'af_bella(2)+af_sky(1)', 'af_heart', 'af_heart']);
  });

  it('timestamps asked of a model without durations: the audio, untimed, and the warning at its end', async () => {
    const res = await post(
      json({ text: 'Hello. Again.', transport: 'sse', timestamps: true, phoneme_timestamps: true }),
      'application/json',
    );
    expect(res.statusCode).toBe(200);
    const events = [];
    for await (const event of readSse(once(res.rawPayload))) events.push(event);
    expect(events.map((e) => e.event)).toEqual([
      'audio_stream_start',
      'audio_chunk',
      'audio_chunk',
      'audio_stream_end',
    ]);
    expect(JSON.parse(events.at(-1)!.data).warnings).toEqual([
      expect.stringMatching(
        /^timestamps and phoneme_timestamps: the loaded model export has no durations output/,
      ),
    ]);
  });

  it('Accept: text/event-stream asks for SSE when the body names no transport', async () => {
    const res = await post(json({ text: 'Hello.' }), 'application/json', {
      accept: 'audio/wav, text/event-stream;q=0.9',
    });
    expect(res.headers['content-type']).toBe('text/event-stream; charset=utf-8');
    const binary = await post(json({ text: 'Hello.', transport: 'binary' }), 'application/json', {
      accept: 'text/event-stream',
    });
    expect(binary.headers['content-type']).toBe('audio/wav');
  });

  it('a complete file (stream: false) carries its figures as headers; a stream does not', async () => {
    const text = 'Héllo there. How are you today? 😀';
    const whole = await post(json({ text, stream: false }), 'application/json');
    expect(whole.statusCode).toBe(200);
    expect(whole.headers['content-length']).toBe(String(whole.rawPayload.length));
    const samples = (whole.rawPayload.length - 44) / 2; // a 24 kHz PCM16 WAV
    expect(whole.rawPayload.readUInt32LE(40)).toBe(samples * 2);
    expect(Number(whole.headers['x-audio-duration'])).toBeCloseTo(samples / 24000, 3);
    expect(whole.headers['x-characters-processed']).toBe('33'); // code points, not UTF-16 units
    expect(Number(whole.headers['x-inference-time-ms'])).toBeGreaterThan(0);
    expect(Number(whole.headers['x-rtf'])).toBeGreaterThan(0);
    const streamed = await post(json({ text }), 'application/json');
    expect(streamed.statusCode).toBe(200);
    expect(streamed.headers['transfer-encoding']).toBe('chunked');
    expect(
      Object.keys(streamed.headers).filter((h) => /^x-(audio|inference|rtf|characters)/.test(h)),
    ).toEqual([]);
  });
});
