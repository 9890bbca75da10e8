/**
 * Deepgram's protocol driven by real clients, unchanged but for the base URL and a dummy key:
 * LiveKit's Deepgram plugin (the WebSocket, and synthesize() over HTTP), Deepgram's SDK (Aura's
 * and Flux's sockets, `speak.v1.audio.generate`, `speak.v2.audio.generate`); a barge-in answered
 * by Cleared with what the listener received; KeepAlive. Audio is checked against the same text
 * through POST /invocations. Every bad HTTP input is tested in-process (test/app/).
 */
import * as lkDeepgram from '@livekit/agents-plugin-deepgram';
import { DeepgramClient, DeepgramError } from '@deepgram/sdk';
import { beforeAll, describe, expect, it } from 'vitest';
import { FFMPEG, decode } from '../audio-tools.ts';
import {
  BlobReader,
  expectWholeText,
  httpServer,
  liveKitStream,
  LONG,
  open,
  overPlainHttp,
  socketServer,
  synthesizedPcm,
  TEXT,
  TWO_SENTENCES,
  wsBase,
  pcmOf,
  reference,
} from './clients.ts';
import { bytesDiff, type TestServer } from '../harness.ts';

let sockets: TestServer;
let server: TestServer;
beforeAll(async () => {
  sockets = await socketServer();
  server = await httpServer();
});

describe('LiveKit agents 1.9 TTS plugins, streamed text in', () => {
  it('Deepgram (/v1/speak): audio frames, one turn', async () => {
    const tts = new lkDeepgram.TTS({ apiKey: 'dummy', baseUrl: sockets.http, model: 'af_heart' });
    const out = await liveKitStream(tts as never, [TWO_SENTENCES]);
    await tts.close();
    await expectWholeText(out, sockets);
  });
});

describe('the vendors’ SDKs', () => {
  it('Deepgram SDK: Speak, Flush → audio then Flushed; the audio is our PCM for the text', async () => {
    const deepgram = new DeepgramClient({ apiKey: 'dummy', baseUrl: sockets.http });
    const conn = await deepgram.speak.v1.connect({
      model: 'af_heart',
      encoding: 'linear16',
      sample_rate: 24000,
      reconnectAttempts: 0,
    } as never);
    const audio = new BlobReader();
    const controls: Record<string, unknown>[] = [];
    let flushed!: () => void;
    const flushedNow = new Promise<void>((resolve) => (flushed = resolve));
    conn.on('message', (m: unknown) => {
      if (m instanceof Blob) audio.add(m);
      else {
        controls.push(m as Record<string, unknown>);
        if ((m as { type?: string }).type === 'Flushed') flushed();
      }
    });
    conn.connect();
    await conn.waitForOpen();
    conn.sendText({ type: 'Speak', text: 'Spoken through the SDK.' });
    conn.sendFlush({ type: 'Flush' });
    await flushedNow;
    conn.sendClose({ type: 'Close' });
    const pcm = await audio.settled(); // every Blob's arrayBuffer() read
    expect(controls.map((c) => c.type)).toEqual(['Metadata', 'Flushed']);
    expect(pcm.equals(await pcmOf('Spoken through the SDK.'))).toBe(true);
  });

  it('Deepgram SDK v2 (Flux): Speak, Flush → SpeechStarted, audio, SpeechMetadata, Flushed; Close → SessionMetadata', async () => {
    const deepgram = new DeepgramClient({ apiKey: 'dummy', baseUrl: sockets.http });
    const conn = await deepgram.speak.v2.connect({
      model: 'flux-alexis-en',
      encoding: 'linear16',
      sample_rate: 24000,
      reconnectAttempts: 0,
    } as never);
    const order: string[] = [];
    const audio = new BlobReader();
    let ended!: () => void;
    const endedNow = new Promise<void>((resolve) => (ended = resolve));
    conn.on('message', (m: unknown) => {
      if (m instanceof Blob || m instanceof ArrayBuffer) {
        order.push('audio');
        audio.add(m);
      } else {
        order.push(String((m as { type?: string }).type));
        if ((m as { type?: string }).type === 'SessionMetadata') ended();
      }
    });
    conn.connect();
    await conn.waitForOpen();
    conn.sendSpeak({ type: 'Speak', text: 'Spoken through ' });
    conn.sendSpeak({ type: 'Speak', text: 'the SDK.' });
    conn.sendFlush({ type: 'Flush' });
    conn.sendClose({ type: 'Close' });
    await endedNow;
    const pcm = await audio.settled(); // every Blob's arrayBuffer() read
    const controls = order.filter((t) => t !== 'audio');
    expect(controls).toEqual(['Connected', 'SpeechStarted', 'SpeechMetadata', 'Flushed', 'SessionMetadata']);
    expect(order.indexOf('audio')).toBeGreaterThan(order.indexOf('SpeechStarted'));
    expect(order.lastIndexOf('audio')).toBeLessThan(order.indexOf('SpeechMetadata'));
    expect(pcm.equals(await pcmOf('Spoken through the SDK.'))).toBe(true);
  });
});

describe('barge-in on every dialect: the answer says what the listener received', () => {
  it('Deepgram: Clear is answered by Cleared with heard', async () => {
    const client = await open(
      `${wsBase(sockets)}/v1/speak?model=af_heart&encoding=linear16&sample_rate=24000`,
    );
    client.send({ type: 'Speak', text: `First sentence. ${LONG}` }, false);
    client.send({ type: 'Flush' }, false);
    await client.until((c) => c.frames.some((f) => f.kind === 'audio'), 'audio');
    client.send({ type: 'Clear' }, false);
    await client.untilControls('Cleared', 1);
    const sent = client.frames.reduce((n, f) => n + (f.kind === 'audio' ? f.bytes.length : 0), 0);
    expect(client.controls('Cleared')[0]).toMatchObject({
      type: 'Cleared',
      sequence_id: 0,
      heard: { samples: sent / 2, sample_rate: 24000 },
    });
    client.close();
  });
});

describe('idle and keep-alive, as each vendor documents, within the server’s own limit', () => {
  it('Deepgram: KeepAlive is taken, answered by nothing, and the session serves on', async () => {
    const client = await open(`${wsBase(sockets)}/v1/speak?model=af_heart`);
    client.send({ type: 'KeepAlive' }, false);
    client.send({ type: 'Speak', text: 'Still here.' }, false);
    client.send({ type: 'Flush' }, false);
    await client.untilControls('Flushed', 1);
    expect(client.controls().map((c) => c.type)).toEqual(['Metadata', 'Flushed']);
    client.close();
  });
});

describe('Deepgram’s SDK', () => {
  it('speak.v1.audio.generate (POST /v1/speak): linear16 without a container, the same samples', async () => {
    const deepgram = new DeepgramClient({ apiKey: 'dummy', baseUrl: server.http });
    const response = await deepgram.speak.v1.audio.generate({
      text: TEXT,
      model: 'af_heart',
      encoding: 'linear16',
      container: 'none',
      sample_rate: 16000,
    } as never);
    const pcm = Buffer.from(await (response as unknown as Response).arrayBuffer());
    expect(bytesDiff(pcm, await reference('af_heart', 16_000))).toBeUndefined();
  });

  it('linear16 with Deepgram’s default container is a WAV file; mulaw is one byte a sample', async () => {
    const wav = await fetch(`${server.http}/v1/speak?model=af_heart&encoding=linear16&sample_rate=24000`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: 'Token dummy' },
      body: JSON.stringify({ text: TEXT }),
    });
    expect(wav.headers.get('content-type')).toBe('audio/wav');
    expect(
      Buffer.from(await wav.arrayBuffer())
        .subarray(0, 4)
        .toString(),
    ).toBe('RIFF');
    const mulaw = await fetch(`${server.http}/v1/speak?model=af_heart&encoding=mulaw`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ text: TEXT }),
    });
    expect((await mulaw.arrayBuffer()).byteLength).toBe((await reference('af_heart', 8000)).length / 2);
  });

  it('the other encodings: mp3, Ogg Opus, FLAC, each with its content type', async () => {
    for (const [query, type] of [
      ['encoding=mp3', 'audio/mpeg'],
      ['encoding=opus&container=ogg', 'audio/ogg; codecs=opus'],
      ['encoding=flac', 'audio/flac'],
    ] as const) {
      const res = await fetch(`${server.http}/v1/speak?model=af_heart&${query}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ text: TEXT }),
      });
      expect(res.status, query).toBe(200);
      expect(res.headers.get('content-type'), query).toBe(type);
      expect((await res.arrayBuffer()).byteLength, query).toBeGreaterThan(100);
    }
  });

  it.skipIf(!FFMPEG.available)(
    `alaw (v1 and v2): raw A-law that ffmpeg decodes to the text's length${FFMPEG.note}`,
    async () => {
      const samples = (await reference('af_heart', 8000)).length / 2;
      for (const [path, rate] of [
        ['/v1/speak', 8000],
        ['/v2/speak', 16000],
      ] as const) {
        const res = await fetch(`${server.http}${path}?model=af_heart&encoding=alaw&sample_rate=${rate}`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ text: TEXT }),
        });
        expect(res.headers.get('content-type'), path).toBe(`audio/x-alaw-basic;rate=${rate}`);
        const bytes = Buffer.from(await res.arrayBuffer());
        const decoded = decode(bytes, 'alaw', rate);
        expect(decoded.ok, decoded.stderr).toBe(true);
        // One byte a sample: the text's samples at the rate asked for.
        expect(decoded.samples.length).toBe(bytes.length);
        expect(Math.abs(bytes.length - (samples * rate) / 8000)).toBeLessThanOrEqual(rate / 1000);
      }
    },
  );

  it('speak.v2.audio.generate (POST /v2/speak): Flux’s default model speaks as af_heart, linear16 without a container', async () => {
    const deepgram = new DeepgramClient({ apiKey: 'dummy', baseUrl: server.http });
    const response = await deepgram.speak.v2.audio.generate({
      text: TEXT,
      model: 'flux-alexis-en',
      encoding: 'linear16',
      container: 'none',
      sample_rate: 24000,
    } as never);
    const pcm = Buffer.from(await (response as unknown as Response).arrayBuffer());
    expect(bytesDiff(pcm, await reference('af_heart'))).toBeUndefined();
  });

  it('a refusal is a DeepgramError carrying our status and Deepgram’s error shape', async () => {
    const deepgram = new DeepgramClient({ apiKey: 'dummy', baseUrl: server.http });
    const refused = await deepgram.speak.v1.audio
      .generate({ text: TEXT, model: 'af_heart', encoding: 'speex' } as never)
      .then(
        () => undefined,
        (err: unknown) => err,
      );
    expect(refused).toBeInstanceOf(DeepgramError);
    expect(refused).toMatchObject({
      statusCode: 400,
      body: {
        err_code: 'INVALID_OPTION',
        err_msg: expect.stringMatching(/^encoding "speex" is not supported/),
      },
    });
  });
});

describe('LiveKit’s plugins, synthesize()', () => {
  it('Deepgram: POST /v1/speak (the plugin always dials port 443: its socket goes to the server)', async () => {
    const pcm = await overPlainHttp(server, () =>
      synthesizedPcm(new lkDeepgram.TTS({ apiKey: 'dummy', baseUrl: server.http, model: 'af_heart' })),
    );
    expect(bytesDiff(pcm, await reference('af_heart'))).toBeUndefined();
  });
});
