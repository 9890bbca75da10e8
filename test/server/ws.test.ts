import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TestClient, requestsOf, startServer, type TestServer } from './harness.ts';

let server: TestServer;
beforeAll(async () => {
  server = await startServer({ WS_MAX_PENDING: '8', MAX_TEXT_CHARS: '4096' });
});
afterAll(() => server.close());

const BYTES_PER_SECOND = 24_000 * 2;

describe('WS /invocations-bidirectional-stream', () => {
  it('answers several binary-frame requests strictly in order, each with start, audio and completion', async () => {
    const client = await TestClient.open(server.ws);
    const texts = ['Hello there.', 'This is the second message. It has two sentences.', 'Third, and last!'];
    texts.forEach((text, i) =>
      client.send({ text, voice: 'af_heart', request_id: `r${i}`, request_timestamp: Date.now() / 1000 }),
    );
    await client.untilControls('synthesis_complete', 3);
    const requests = requestsOf(client.frames);
    expect(requests.map((r) => r.id)).toEqual(['r0', 'r1', 'r2']);
    for (const r of requests) {
      const bytes = r.audio.reduce((n, b) => n + b.length, 0);
      expect(bytes).toBeGreaterThan(0);
      for (const b of r.audio) expect(b.length % 2).toBe(0);
      expect(r.complete!.total_duration_s).toBeCloseTo(bytes / BYTES_PER_SECOND, 3);
      expect(r.complete!.elapsed_s).toBeGreaterThan(0);
    }
    // Two sentences give two audio frames: audio is sent per sentence, not per request.
    expect(requests[1]!.audio.length).toBeGreaterThanOrEqual(2);
    client.close();
  });

  it('accepts text frames and plain text, including text that starts with a bracket', async () => {
    const client = await TestClient.open(server.ws);
    client.send({ text: 'A text frame.', request_id: 'json-text' }, false);
    client.send('[laughs] Plain text in a binary frame.', true);
    client.send('Plain text in a text frame.', false);
    await client.untilControls('synthesis_complete', 3);
    const requests = requestsOf(client.frames);
    expect(requests[0]!.id).toBe('json-text');
    expect(requests.every((r) => r.audio.length > 0)).toBe(true);
    client.close();
  });

  it('closes with 1000 on {"type":"Close"} only after finishing what came before, ignoring what came after', async () => {
    const client = await TestClient.open(server.ws);
    client.send({ text: 'First before close.', request_id: 'a' });
    client.send({ text: 'Second before close.', request_id: 'b' });
    client.send({ type: 'Close' });
    client.send({ text: 'After close: never spoken.', request_id: 'c' });
    await client.until((c) => c.closeCode !== undefined, 'close');
    expect(client.closeCode).toBe(1000);
    const requests = requestsOf(client.frames);
    expect(requests.map((r) => [r.id, r.complete !== undefined])).toEqual([
      ['a', true],
      ['b', true],
    ]);
  });

  it('keeps the session open when nothing asks it to close', async () => {
    const client = await TestClient.open(server.ws);
    client.send({ text: 'One.' });
    await client.untilControls('synthesis_complete', 1);
    await new Promise((r) => setTimeout(r, 300));
    expect(client.closeCode).toBeUndefined();
    client.send({ text: 'Two.' });
    await client.untilControls('synthesis_complete', 2);
    client.close();
  });

  it('reassembles fragmented messages (continuation frames)', async () => {
    const client = await TestClient.open(server.ws);
    const payload = Buffer.from(JSON.stringify({ text: 'Fragments make a whole.', request_id: 'frag' }));
    const parts = [payload.subarray(0, 5), payload.subarray(5, 20), payload.subarray(20)];
    parts.forEach((part, i) => client.socket.send(part, { binary: true, fin: i === parts.length - 1 }));
    await client.untilControls('synthesis_complete', 1);
    expect(requestsOf(client.frames)[0]!.id).toBe('frag');
    client.close();
  });

  it('answers RFC 6455 pings with pongs', async () => {
    const client = await TestClient.open(server.ws);
    const pong = new Promise<Buffer>((resolve) => client.socket.once('pong', resolve));
    client.socket.ping(Buffer.from('are you there'));
    expect((await pong).toString()).toBe('are you there');
    client.close();
  });
});

describe('WS bad input: an error frame, and the session lives on', () => {
  const now = () => Date.now() / 1000;
  const cases: {
    name: string;
    send: Buffer | string | Record<string, unknown>;
    binary?: boolean;
    code: string;
    message: RegExp;
    requestId?: string;
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
        /sample_rate for pcm should be one of: 8000, 16000, 22050, 24000, 44100, 48000; got number 11025/,
    },
    {
      name: 'stale request',
      send: { text: 'Hi.', request_timestamp: now() - 120, request_id: 'old' },
      code: 'request_stale',
      message: /over the 56 s limit/,
      requestId: 'old',
    },
    {
      name: 'stale request in milliseconds',
      send: { text: 'Hi.', request_timestamp: Date.now() - 120_000 },
      code: 'request_stale',
      message: /over the 56 s limit/,
    },
    {
      name: 'timestamp of the wrong type',
      send: { text: 'Hi.', request_timestamp: 'yesterday' },
      code: 'invalid_option',
      message: /request_timestamp should be epoch seconds/,
    },
  ];

  for (const c of cases) {
    it(`${c.name} → ${c.code}`, async () => {
      const client = await TestClient.open(server.ws);
      client.send(c.send as Record<string, unknown>, c.binary ?? true);
      client.send({ text: 'Still here.', request_id: 'after' });
      await client.untilControls('synthesis_complete', 1);
      const [error] = client.controls('error');
      expect(error).toMatchObject({ type: 'error', code: c.code });
      expect(String(error!.message)).toMatch(c.message);
      expect(error!.request_id).toBe(c.requestId);
      expect(requestsOf(client.frames).map((r) => r.id)).toEqual(['after']);
      expect(client.closeCode).toBeUndefined();
      client.close();
    });
  }

  it('accepts a timestamp from the future (clock skew) and one in milliseconds', async () => {
    const client = await TestClient.open(server.ws);
    client.send({ text: 'From the future.', request_timestamp: now() + 3600 });
    client.send({ text: 'In milliseconds.', request_timestamp: Date.now() });
    await client.untilControls('synthesis_complete', 2);
    expect(client.controls('error')).toEqual([]);
    client.close();
  });

  it('answers a 1 MiB message with an error frame, not a dropped connection', async () => {
    const client = await TestClient.open(server.ws);
    client.send({ text: 'b'.repeat(1024 * 1024) });
    client.send({ text: 'Still here.' });
    await client.untilControls('synthesis_complete', 1);
    expect(client.controls('error')[0]).toMatchObject({ code: 'text_too_long' });
    client.close();
  });

  it('gives busy errors past the pending cap and keeps every accepted message in order', async () => {
    const client = await TestClient.open(server.ws);
    for (let i = 0; i < 14; i++) client.send({ text: `Message number ${i}.`, request_id: `q${i}` });
    await client.until(
      (c) => c.controls('synthesis_complete').length + c.controls('error').length >= 14,
      'all answers',
    );
    const busy = client.controls('error');
    expect(busy.length).toBeGreaterThan(0);
    for (const b of busy) expect(b).toMatchObject({ code: 'busy' });
    const done = requestsOf(client.frames).map((r) => r.id);
    expect(done.length + busy.length).toBe(14);
    expect(done).toEqual([...done].sort((a, b) => Number(a.slice(1)) - Number(b.slice(1))));
    expect(done[0]).toBe('q0');
    client.send({ text: 'After the flood.', request_id: 'after' });
    await client.until((c) => requestsOf(c.frames).some((r) => r.id === 'after' && r.complete), 'after');
    client.close();
  });
});

describe('a WS client that goes away', () => {
  it('stops the work done for it, queued messages included', async () => {
    const client = await TestClient.open(server.ws);
    const before = server.engine!.load().completed;
    const long = Array.from({ length: 30 }, (_, i) => `Sentence ${i + 1} is here to take time.`).join(' ');
    client.send({ text: long });
    client.send({ text: long });
    await client.until((c) => c.frames.some((f) => f.kind === 'audio'), 'first audio');
    client.socket.terminate();
    const deadline = Date.now() + 10_000;
    for (;;) {
      const load = server.engine!.load();
      if (load.busy === 0 && load.queued === 0) break;
      if (Date.now() > deadline) throw new Error(`still busy: ${JSON.stringify(load)}`);
      await new Promise((r) => setTimeout(r, 20));
    }
    // 60 sentences were asked for; only those in flight at the disconnect were finished.
    expect(server.engine!.load().completed - before).toBeLessThan(5);
  });
});

describe('WS close and flood edge cases', () => {
  it('never refuses {"type":"close"} as busy, and ignores everything after it', async () => {
    const client = await TestClient.open(server.ws);
    for (let i = 0; i < 20; i++) client.send({ text: `Flood ${i}.`, request_id: `f${i}` });
    client.send({ type: 'close' });
    for (let i = 0; i < 30; i++) client.send({ text: `After close ${i}.`, request_id: `late${i}` });
    await client.until((c) => c.closeCode !== undefined, 'close');
    expect(client.closeCode).toBe(1000);
    const busy = client.controls('error');
    // Every busy error names a message sent before the close; none answers a later one.
    expect(busy.length).toBeGreaterThan(0);
    for (const b of busy) {
      expect(b).toMatchObject({ code: 'busy' });
      expect(String(b.request_id)).toMatch(/^f\d+$/);
    }
    const done = requestsOf(client.frames).map((r) => r.id);
    expect(done.length + busy.length).toBe(20);
  });

  it('refuses null as an option value instead of using the default', async () => {
    const client = await TestClient.open(server.ws);
    const fields = ['voice', 'speed', 'format', 'sample_rate'];
    for (const field of fields)
      client.send({ text: 'Null option.', [field]: null, request_id: `null-${field}` });
    client.send({ text: 'Fine.', request_id: 'ok' });
    await client.untilControls('synthesis_complete', 1);
    const errors = client.controls('error');
    expect(errors.map((e) => e.request_id)).toEqual(fields.map((f) => `null-${f}`));
    for (const e of errors) {
      expect(e.code).toBe('invalid_option');
      expect(String(e.message)).toMatch(/got null/);
    }
    client.close();
  });
});
