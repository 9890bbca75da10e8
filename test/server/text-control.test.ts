/**
 * How text is spoken, through a running server: pauses (sample-exact with the stand-in), SSML,
 * inline phonemes, pronunciation dictionaries (a request's and the server's file), marks and
 * warnings, over POST (raw and SSE), the native WebSocket (whole, and appended in pieces split at
 * every character) and the OpenAI route; and bad markup refused with a clear error while the
 * session serves on. The parsers themselves are unit-tested (test/unit/text/markup.test.ts,
 * pronunciations.test.ts, say-as.test.ts).
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  TIMESTAMPED_MODEL_DIR,
  TestClient,
  requestsOf,
  sharedServer,
  startServer,
  type TestServer,
} from './harness.ts';

let server: TestServer;
beforeAll(async () => {
  server = await sharedServer();
});
afterAll(() => server.close());

/** Samples of silence per millisecond at 24 kHz. */
const PER_MS = 24;

async function post(body: Record<string, unknown>, path = '/invocations'): Promise<Response> {
  return fetch(`${server.http}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
}

/** The PCM16 samples of a text, by POST. */
async function pcm(text: string, extra: Record<string, unknown> = {}): Promise<Int16Array> {
  const res = await post({ text, format: 'pcm', first_chunk: 'sentence', ...extra });
  expect(res.status, await res.clone().text()).toBe(200);
  const bytes = Buffer.from(await res.arrayBuffer());
  return new Int16Array(bytes.buffer, bytes.byteOffset, bytes.length / 2);
}

const zeros = (samples: Int16Array, from: number, count: number) =>
  samples.subarray(from, from + count).every((x) => x === 0);

describe('pauses', () => {
  it.each([
    ['[pause:1.5s]', 1500],
    ['[pause:250ms]', 250],
    ['[PAUSE: 0.5 s]', 500],
    ['[pause:2]', 2000],
  ])('%s between two sentences is exactly %i ms of silence where it stands', async (mark, ms) => {
    const [a, b, both] = await Promise.all([
      pcm('Hello there.'),
      pcm('How are you?'),
      pcm(`Hello there. ${mark} How are you?`),
    ]);
    expect(both.length).toBe(a.length + b.length + ms * PER_MS);
    expect(both.subarray(0, a.length)).toEqual(a);
    expect(zeros(both, a.length, ms * PER_MS)).toBe(true);
    expect(both.subarray(a.length + ms * PER_MS)).toEqual(b);
  });

  it('inside a sentence splits its inference there', async () => {
    const [a, b, both] = await Promise.all([
      pcm('I think'),
      pcm('that is fine.'),
      pcm('I think [pause:300ms] that is fine.'),
    ]);
    expect(both.length).toBe(a.length + 300 * PER_MS + b.length);
    expect(zeros(both, a.length, 300 * PER_MS)).toBe(true);
  });

  it.each([
    ['<break time="750ms"/>', 750],
    ['<break time="1.2s"/>', 1200],
    ['<break strength="strong"/>', 1000],
    ['<break strength="x-weak"/>', 100],
    ['<break/>', 500],
  ])('SSML %s is exactly %i ms', async (tag, ms) => {
    const [a, b, both] = await Promise.all([
      pcm('Hello there.'),
      pcm('How are you?'),
      pcm(`<speak>Hello there. ${tag} How are you?</speak>`),
    ]);
    expect(both.length).toBe(a.length + ms * PER_MS + b.length);
    expect(zeros(both, a.length, ms * PER_MS)).toBe(true);
  });

  it('counts in the duration and moves the words after it (timestamps over SSE)', async () => {
    // The timestamped stand-in's shared server (timestamps.test.ts and the dialects' files use it too).
    const timed = await sharedServer({ KOKORO_MODEL_DIR: TIMESTAMPED_MODEL_DIR });
    // Words name what was written, with where: an alias's times belong to its original text,
    // markup is never a word, and each word's offsets point into the request's text.
    for (const [text, expected] of [
      ['Hello there, friend. How are you?', ['Hello', 'there,', 'friend.', 'How', 'are', 'you?']],
      [
        '<speak>See <sub alias="World Wide Web">WWW</sub> <break time="100ms"/> and [Kokoro](/kˈOkəɹO/) now.</speak>',
        ['See', 'WWW', 'and', 'Kokoro', 'now.'],
      ],
    ] as const) {
      const events = await sseEvents(timed, {
        text,
        timestamps: true,
        pronunciations: { now: { alias: 'right now' } },
      });
      const said = events.filter((e) => e.event === 'word_timestamps').flatMap((e) => e.data.words as Word[]);
      expect(said.map((w) => w.word)).toEqual(expected);
      for (const w of said) {
        const written = text.slice(w.char_start, w.char_end);
        expect(written.includes(w.word.replace(/[.,?]$/, '')), `${w.word} at ${written}`).toBe(true);
      }
    }
    const events = await sseEvents(timed, { text: 'Hello. [pause:1s] World.', timestamps: true });
    const words = events.filter((e) => e.event === 'word_timestamps').flatMap((e) => e.data.words as Word[]);
    expect(words.map((w) => w.word)).toEqual(['Hello.', 'World.']);
    expect(words[1]!.start_s - words[0]!.end_s).toBeGreaterThanOrEqual(1);
    const end = events.find((e) => e.event === 'audio_stream_end')!.data;
    const alone = (await sseEvents(timed, { text: 'Hello. World.' })).find(
      (e) => e.event === 'audio_stream_end',
    )!;
    expect(end.duration_s as number).toBeCloseTo((alone.data.duration_s as number) + 1, 3);
  });
});

interface Word {
  word: string;
  start_s: number;
  end_s: number;
  char_start: number;
  char_end: number;
}

async function sseEvents(
  target: TestServer,
  body: Record<string, unknown>,
): Promise<{ event: string; data: Record<string, unknown> }[]> {
  const res = await fetch(`${target.http}/invocations`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ format: 'pcm', transport: 'sse', ...body }),
  });
  expect(res.status).toBe(200);
  return (await res.text())
    .split('\n\n')
    .filter((block) => block.startsWith('event: '))
    .map((block) => {
      const [head, data] = block.split('\n');
      return { event: head!.slice('event: '.length), data: JSON.parse(data!.slice('data: '.length)) };
    });
}

describe('SSML and inline readings', () => {
  it('marks arrive over SSE before the audio after them, at the time of the audio before them', async () => {
    const events = await sseEvents(server, {
      text: '<speak>Hello there. <mark name="middle"/> How are you? <mark name="end"/></speak>',
    });
    const names = events.map((e) => (e.event === 'mark' ? `mark:${String(e.data.name)}` : e.event));
    expect(names.filter((n) => n !== 'audio_chunk')).toEqual([
      'audio_stream_start',
      'mark:middle',
      'mark:end',
      'audio_stream_end',
    ]);
    const first = await pcm('Hello there.');
    const middle = events.find((e) => e.data.name === 'middle')!;
    expect(middle.data.time_s).toBeCloseTo(first.length / 24_000, 3);
    // Audio of the first sentence went out before the mark.
    expect(names.indexOf('mark:middle')).toBeGreaterThan(names.indexOf('audio_chunk'));
  });

  it('speaks a sub alias, say-as and phonemes in place of the text, and only the text of unknown tags', async () => {
    const [aliased, spoken] = await Promise.all([
      pcm('<speak><sub alias="World Wide Web">WWW</sub> is big.</speak>'),
      pcm('World Wide Web is big.'),
    ]);
    expect(aliased).toEqual(spoken);
    const [sayAs, written] = await Promise.all([
      pcm('<speak>Call <say-as interpret-as="digits">42</say-as>.</speak>'),
      pcm('Call four two.'),
    ]);
    expect(sayAs).toEqual(written);
    const [inline, ssml, phonemes] = await Promise.all([
      pcm('I love [Kokoro](/kˈOkəɹO/).'),
      pcm('<speak>I love <phoneme alphabet="kokoro" ph="kˈOkəɹO">Kokoro</phoneme>.</speak>'),
      post({ phonemes: 'ˌI lˈʌv kˈOkəɹO.', format: 'pcm' }).then(async (r) =>
        Buffer.from(await r.arrayBuffer()),
      ),
    ]);
    expect(inline).toEqual(ssml);
    expect(Buffer.from(inline.buffer, inline.byteOffset, inline.byteLength)).toEqual(phonemes);
    const res = await post({
      text: '<speak>A <audio src="x">beep</audio> and <foo>bar</foo>.</speak>',
      format: 'pcm',
    });
    expect(res.status).toBe(200);
    expect(JSON.parse(res.headers.get('x-markup-warnings')!)).toEqual([
      expect.stringContaining('<audio>'),
      expect.stringContaining('<foo>'),
    ]);
    expect(new Int16Array((await res.arrayBuffer()).slice(0))).toEqual(await pcm('A beep and bar.'));
  });

  it('switches voice and rate per span, in one stream, in order', async () => {
    const [mixed, a, b, c] = await Promise.all([
      pcm('<speak>One. <voice name="am_adam">Two.</voice> <prosody rate="x-slow">Three.</prosody></speak>'),
      pcm('One.'),
      pcm('Two.', { voice: 'am_adam' }),
      pcm('Three.', { speed: 0.5 }),
    ]);
    expect(mixed).toEqual(Int16Array.from([...a, ...b, ...c]));
    const [bracket] = await Promise.all([pcm('One. [voice:am_adam] Two.')]);
    expect(bracket).toEqual(Int16Array.from([...a, ...b]));
  });

  it('POST /v1/phonemize shows what will be spoken: segments, pauses, marks, dictionary and warnings', async () => {
    const res = await post(
      {
        text: '<speak>Use <sub alias="sequel">SQL</sub>. <break time="1s"/><mark name="m"/>nginx <blink>now</blink></speak>',
        pronunciations: { nginx: 'ˈɛnʤɪnˌɛks' },
      },
      '/v1/phonemize',
    );
    expect(res.status).toBe(200);
    const body = (await res.json()) as Record<string, unknown>;
    expect(body.segments).toEqual([
      expect.objectContaining({ phonemes: expect.stringContaining('sˈikwəl') }),
      { pause_ms: 1000 },
      { mark: 'm' },
      expect.objectContaining({ phonemes: expect.stringContaining('ˈɛnʤɪnˌɛks') }),
    ]);
    expect(body.warnings).toEqual([expect.stringContaining('<blink>')]);
  });
});

describe('pronunciations', () => {
  it("a request's entries replace the words they name, whole words only, any case for lower-case entries", async () => {
    const [withEntry, spokenAs, untouched] = await Promise.all([
      pcm('Nginx and NGINX, not nginxes.', { pronunciations: { nginx: { alias: 'engine x' } } }),
      pcm('engine x and engine x, not nginxes.'),
      pcm('Nginx and NGINX, not nginxes.'),
    ]);
    expect(withEntry).toEqual(spokenAs);
    expect(withEntry).not.toEqual(untouched);
  });

  it("the server's file reads every request, and a request's entry wins over it", async () => {
    const dir = mkdtempSync(join(tmpdir(), 'pronunciations-'));
    const file = join(dir, 'words.json');
    writeFileSync(
      file,
      JSON.stringify({ a: { Kokoro: { alias: 'cocoa row' } }, '*': { GPU: { alias: 'G P U' } } }),
    );
    const own = await startServer({ KOKORO_PRONUNCIATIONS: file });
    try {
      const phonemize = async (body: Record<string, unknown>) =>
        (await (
          await fetch(`${own.http}/v1/phonemize`, {
            method: 'POST',
            headers: { 'content-type': 'application/json' },
            body: JSON.stringify(body),
          })
        ).json()) as { phonemes: string };
      const plain = await phonemize({ text: 'cocoa row' });
      expect((await phonemize({ text: 'Kokoro' })).phonemes).toBe(plain.phonemes);
      const overridden = await phonemize({ text: 'Kokoro', pronunciations: { Kokoro: 'kˈOkəɹO' } });
      expect(overridden.phonemes).toBe('kˈOkəɹO');
    } finally {
      await own.close();
    }
  });

  it('a broken file stops the server with its line', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'pronunciations-'));
    const file = join(dir, 'broken.json');
    writeFileSync(file, '{\n  "a": {\n    "ok": "kˈO",\n    "bad": "§x"\n  }\n}\n');
    await expect(startServer({ KOKORO_PRONUNCIATIONS: file })).rejects.toThrow(/broken\.json line 4/);
  });
});

describe('bad markup: a clear error, and the session serves on', () => {
  const BAD: [string, Record<string, unknown>, RegExp][] = [
    ['a pause over the bound', { text: 'Wait [pause:11s] now.' }, /over the maximum of 10 s/],
    ['a pause in SSML over the bound', { text: '<speak>Wait <break time="20s"/></speak>' }, /10 s/],
    ['unbalanced SSML', { text: '<speak><s>Hello</p></speak>' }, /<\/p>/],
    ['unterminated SSML', { text: '<speak>Hello <break' }, /unterminated|not closed|end of the text/i],
    [
      'nesting too deep',
      { text: `<speak>${'<s>'.repeat(40)}x${'</s>'.repeat(40)}</speak>` },
      /deep|depth|nest/i,
    ],
    ['a huge attribute', { text: `<speak><mark name="${'x'.repeat(3000)}"/></speak>` }, /long|characters/i],
    ['foreign phoneme symbols', { text: 'Say [it](/§x/).' }, /"§" \(U\+00A7\)/],
    ['a voice that does not exist', { text: '[voice:zz_nobody] Hi.' }, /zz_nobody/],
    ['a rate past the speed bounds', { text: '<speak><prosody rate="400%">Hi.</prosody></speak>' }, /speed/],
    ['pronunciations that are not an object', { text: 'Hi.', pronunciations: 'Hi=/h/' }, /pronunciations/],
    ['an entry with foreign symbols', { text: 'Hi.', pronunciations: { Hi: '§' } }, /U\+00A7/],
    [
      'a normalization switch that is not a boolean',
      { text: 'Hi.', normalization_options: { normalize: 'no' } },
      /true or false/,
    ],
    [
      'a normalization switch that does not exist',
      { text: 'Hi.', normalization_options: { units: true } },
      /units/,
    ],
    ['a markup mode that does not exist', { text: 'Hi.', markup: 'html' }, /auto, ssml, none/],
  ];

  it.each(BAD)('%s → 400 on POST', async (_what, body, message) => {
    const res = await post(body);
    const error = (await res.json()) as { code: string; message: string };
    expect(res.status).toBe(400);
    expect(error.message).toMatch(message);
    expect(['invalid_markup', 'voice_not_found', 'invalid_option']).toContain(error.code);
  });

  it('each gets an error frame on the WebSocket, and the next request is served', async () => {
    const client = await TestClient.open(server.ws);
    BAD.forEach(([, body], i) => client.send({ ...body, request_id: `bad-${i}` }));
    client.send({ text: 'Still here. [pause:100ms] Yes.', request_id: 'good', format: 'pcm' });
    await client.untilControls('synthesis_complete', 1);
    const errors = client.controls('error');
    expect(errors.map((e) => e.request_id)).toEqual(BAD.map((_, i) => `bad-${i}`));
    BAD.forEach(([, , message], i) => expect(String(errors[i]!.message)).toMatch(message));
    expect(requestsOf(client.frames).map((r) => r.id)).toEqual(['good']);
    client.close();
  });

  it('the OpenAI route refuses it in its own error shape', async () => {
    const res = await post(
      { model: 'kokoro', input: 'Wait [pause:99s].', voice: 'af_heart' },
      '/v1/audio/speech',
    );
    expect(res.status).toBe(400);
    const body = (await res.json()) as { error: { message: string } };
    expect(body.error.message).toMatch(/over the maximum/);
  });
});

describe('normalization switches', () => {
  it('normalize:false reads the text as written; a switch on reads what it names', async () => {
    const [normalized, asWritten, spelled] = await Promise.all([
      pcm('It is 5 km away.'),
      pcm('It is 5 km away.', { normalization_options: { normalize: false } }),
      pcm('It is five kilometers away.'),
    ]);
    expect(normalized).toEqual(spelled);
    expect(asWritten).not.toEqual(spelled);
    const [plural, plain] = await Promise.all([
      pcm('Open the file(s).', { normalization_options: { optional_pluralization_normalization: true } }),
      pcm('Open the files.'),
    ]);
    expect(plural).toEqual(plain);
  });
});

describe('dictionaries in other languages', () => {
  it('a Spanish entry in Kokoro symbols is read in place of the word', async () => {
    const res = await post(
      { text: 'Hola Kokoro.', lang: 'es', pronunciations: { Kokoro: 'kokˈoɾo' } },
      '/v1/phonemize',
    );
    const body = (await res.json()) as { phonemes: string; lang: string };
    expect(body.lang).toBe('e');
    expect(body.phonemes).toContain('kokˈoɾo');
  });
});

describe('the OpenAI route', () => {
  it('reads pauses, SSML and pronunciations in input', async () => {
    const speech = async (input: string, extra: Record<string, unknown> = {}) => {
      const res = await post(
        { model: 'kokoro', input, voice: 'af_heart', response_format: 'pcm', ...extra },
        '/v1/audio/speech',
      );
      expect(res.status).toBe(200);
      return (await res.arrayBuffer()).byteLength;
    };
    const [a, b, both] = await Promise.all([
      speech('Hello there.'),
      speech('Bye.'),
      speech('Hello there. [pause:1s] Bye.'),
    ]);
    expect(both).toBe(a + b + 2 * 1000 * PER_MS);
    const [aliased, spoken] = await Promise.all([
      speech('SQL rocks.', { pronunciations: { SQL: { alias: 'sequel' } } }),
      speech('sequel rocks.'),
    ]);
    expect(aliased).toBe(spoken);
    const [ssml, plainText] = await Promise.all([
      speech('<speak>Hello there. <break time="1s"/><sub alias="World Wide Web">WWW</sub>.</speak>'),
      speech('Hello there. World Wide Web.'),
    ]);
    expect(ssml).toBe(plainText + 2 * 1000 * PER_MS);
    const [switched, written] = await Promise.all([
      speech('Open the file(s).', { normalization_options: { optional_pluralization_normalization: true } }),
      speech('Open the files.'),
    ]);
    expect(switched).toBe(written);
  });
});

describe('streamed text (append)', () => {
  const TEXTS = [
    '<speak>Hi <break time="200ms"/> there. <sub alias="World Wide Web">WWW</sub> is [Kokoro](/kˈOkəɹO/). <mark name="m"/>Bye &amp; thanks.</speak>',
    'Hello [pause:300ms] world. [voice:am_adam] I am [Kokoro](/kˈOkəɹO/) and [read](+1) this, <b> & [not](#a link). [voice] Done.',
    '<speak><voice name="bf_emma">Call <say-as interpret-as="telephone">555-0123</say-as>.</voice> <prosody rate="slow">Slowly <mark name="m"/>now.</prosody><!-- a comment --><![CDATA[ <raw> ]]></speak>',
  ];

  /** The audio and frames of a text sent as appends of the given pieces on one session, then flushed. */
  async function appended(client: TestClient, pieces: readonly string[], id: string) {
    pieces.forEach((text, i) =>
      client.send(
        i === 0
          ? { type: 'append', text, request_id: id, format: 'pcm', first_chunk: 'sentence' }
          : { type: 'append', text },
      ),
    );
    client.send({ type: 'flush' });
  }

  it.each(TEXTS)(
    'gives the audio and marks of the whole text, whether sent whole, split anywhere in two, or a character at a time: %s',
    async (text) => {
      const client = await TestClient.open(server.ws);
      client.send({ text, request_id: 'whole', format: 'pcm', first_chunk: 'sentence' });
      const chars = [...text];
      await appended(client, chars, 'chars');
      await client.untilControls('synthesis_complete', 2);
      // One utterance at a time: a session holds at most WS_MAX_PENDING messages waiting.
      const cuts = Array.from({ length: chars.length - 1 }, (_, i) => i + 1);
      for (const cut of cuts) {
        await appended(client, [chars.slice(0, cut).join(''), chars.slice(cut).join('')], `cut-${cut}`);
        await client.untilControls('synthesis_complete', 2 + cut);
      }
      expect(client.controls('error')).toEqual([]);
      const requests = requestsOf(client.frames);
      const whole = Buffer.concat(requests[0]!.audio);
      expect(whole.length).toBeGreaterThan(0);
      for (const r of requests) expect(Buffer.concat(r.audio).equals(whole), r.id).toBe(true);
      const marks = client.controls('mark');
      const perRequest = marks.length / requests.length;
      expect(perRequest).toBe(text.includes('<mark') ? 1 : 0);
      for (const m of marks) expect(m).toMatchObject({ name: 'm', time_s: marks[0]!.time_s });
      const warnings = client.controls('synthesis_complete').map((c) => c.warnings);
      for (const w of warnings) expect(w).toEqual(warnings[0]);
      client.close();
    },
  );

  it('an unterminated construct at flush is an error frame after the rest is spoken, then completion', async () => {
    const client = await TestClient.open(server.ws);
    client.send({ type: 'append', text: 'Hello there. Wait [pause:1', request_id: 'open', format: 'pcm' });
    client.send({ type: 'flush' });
    await client.untilControls('synthesis_complete', 1);
    const [error] = client.controls('error');
    expect(error).toMatchObject({ code: 'invalid_markup', request_id: 'open' });
    expect(String(error!.message)).toMatch(/pause/);
    const controls = client.controls().map((c) => c.type);
    expect(controls).toEqual(['synthesis_start', 'error', 'synthesis_complete']);
    const spoken = requestsOf(client.frames)[0]!;
    expect(Buffer.concat(spoken.audio).length).toBe((await pcm('Hello there. Wait')).length * 2);
    client.send({ text: 'Next.', request_id: 'next' });
    await client.untilControls('synthesis_complete', 2);
    expect(client.controls('synthesis_complete').map((c) => c.request_id)).toEqual(['open', 'next']);
    client.close();
  });

  it('a construct that cannot be spoken, split over appends, is an error frame; the rest is spoken and the utterance goes on', async () => {
    const client = await TestClient.open(server.ws);
    client.send({ type: 'append', text: 'Hello there. Wait [pause:', request_id: 'u', format: 'pcm' });
    client.send({ type: 'append', text: '99s] and more. ' });
    client.send({ type: 'append', text: 'Still here.' });
    client.send({ type: 'flush' });
    await client.untilControls('synthesis_complete', 1);
    expect(client.controls().map((c) => c.type)).toEqual(['synthesis_start', 'error', 'synthesis_complete']);
    expect(client.controls('error')[0]).toMatchObject({ code: 'invalid_markup', request_id: 'u' });
    const spoken = Buffer.concat(requestsOf(client.frames)[0]!.audio);
    const expected = await pcm('Hello there. Wait and more. Still here.');
    expect(spoken.length).toBe(expected.length * 2);
    client.close();
  });

  it('holds at most the bound while a construct is incomplete, then refuses it', async () => {
    const client = await TestClient.open(server.ws);
    client.send({ type: 'append', text: `<speak>Hi <mark name="${'x'.repeat(3000)}`, request_id: 'held' });
    client.send({ type: 'append', text: 'y'.repeat(3000) });
    await client.untilControls('error', 1);
    expect(client.controls('error')[0]).toMatchObject({ code: 'invalid_markup' });
    client.close();
  });
});
