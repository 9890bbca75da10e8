/**
 * The voice-agent frameworks' streaming clients, unchanged but for the base URL and a dummy key,
 * against a started server: LiveKit's ElevenLabs, Cartesia and Deepgram TTS plugins (streamed
 * text in, audio frames and aligned transcripts out), Cartesia's and Deepgram's SDKs, and
 * ElevenLabs' stream-input over a plain WebSocket (no client library speaks it). Then a barge-in
 * on each dialect, answered with what the listener received; bad input in each dialect's own
 * error shape, with the socket and its other contexts serving on; and each dialect chosen by
 * SageMaker's invocation path.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { initializeLogger, tokenize, tts as lkTts } from '@livekit/agents';
import * as lkCartesia from '@livekit/agents-plugin-cartesia';
import * as lkDeepgram from '@livekit/agents-plugin-deepgram';
import * as lkElevenLabs from '@livekit/agents-plugin-elevenlabs';
import * as lkOpenAi from '@livekit/agents-plugin-openai';
import { DeepgramClient } from '@deepgram/sdk';
import WebSocket from 'ws';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { writeStandinModelDir } from '../../scripts/lib/standin-model.ts';
import { TestClient, referencePcm, startServer, type TestServer } from './harness.ts';

// Cartesia's ES module build opens its socket with the runtime's WebSocket, which Node 20 lacks;
// its CommonJS build uses `ws`, as a Node application loading it with require() does.
const { Cartesia } = createRequire(import.meta.url)(
  '@cartesia/cartesia-js',
) as typeof import('@cartesia/cartesia-js');

/** Six inferences of about 500 phoneme ids: work in flight while a cut arrives. */
const LONG = `Codes ${Array.from({ length: 30 }, () => '987654321').join(', ')} end.`;
const TWO_SENTENCES = 'Hello there, this is the first sentence. And here is a second one.';
const WORDS = TWO_SENTENCES.split(' ');

/** ElevenLabs' "Rachel" and LiveKit's Cartesia default, both mapped to af_heart. */
const RACHEL = '21m00Tcm4TlvDq8ikWAM';
const CARTESIA_DEFAULT = 'f786b574-daa5-4673-aa0c-cbe3e8534c02';

let server: TestServer;
let dir: string;
beforeAll(async () => {
  initializeLogger({ pretty: false, level: 'silent' });
  dir = mkdtempSync(join(tmpdir(), 'kokoro-vendor-ws-'));
  await writeStandinModelDir(dir, {
    repeat: 30,
    timestamps: true,
    voices: ['af_heart', 'am_adam', 'bf_emma'],
    log: () => {},
  });
  server = await startServer({ KOKORO_MODEL_DIR: dir, WS_IDLE_TIMEOUT_S: '0' });
});
afterAll(async () => {
  await server.close();
  rmSync(dir, { recursive: true, force: true });
});

const wsBase = () => server.http.replace('http://', 'ws://');

/** Our own PCM (24 kHz) for a text, to compare a dialect's audio with. */
const reference = (text: string, voice?: string) => referencePcm(server, text, voice);

async function open(url: string, headers: Record<string, string> = {}): Promise<TestClient> {
  const socket = new WebSocket(url, { headers });
  const client = new TestClient(socket);
  await new Promise((resolve, reject) => socket.once('open', resolve).once('error', reject));
  return client;
}

/** Every JSON message a dialect sent (ElevenLabs' and Cartesia's have no `type` for audio). */
const messages = (client: TestClient) => client.controls();

function decodedAudio(
  client: TestClient,
  field: 'audio' | 'data',
  match: (m: Record<string, unknown>) => boolean,
) {
  return Buffer.concat(
    messages(client)
      .filter((m) => typeof m[field] === 'string' && match(m))
      .map((m) => Buffer.from(m[field] as string, 'base64')),
  );
}

interface LiveKitOutput {
  samples: number;
  sampleRate: number;
  transcript: string[];
  finals: number;
  errors: unknown[];
}

/** Drives a LiveKit TTS plugin's stream(): text pushed as an agent writes it, frames read out. */
async function liveKitStream(
  tts: {
    stream(
      o: object,
    ): AsyncIterable<unknown> & { pushText(t: string): void; flush(): void; endInput(): void };
    on(e: 'error', f: (e: unknown) => void): void;
  },
  pieces: readonly string[],
): Promise<LiveKitOutput> {
  const out: LiveKitOutput = { samples: 0, sampleRate: 0, transcript: [], finals: 0, errors: [] };
  tts.on('error', (e) => out.errors.push(e));
  const stream = tts.stream({ connOptions: { maxRetry: 0, retryIntervalMs: 100, timeoutMs: 20_000 } });
  for (const piece of pieces) stream.pushText(piece);
  stream.flush();
  stream.endInput();
  for await (const event of stream) {
    if (typeof event === 'symbol') break;
    const { frame, final, timedTranscripts } = event as {
      frame: { samplesPerChannel: number; sampleRate: number };
      final: boolean;
      timedTranscripts?: { text: string; startTime: number; endTime: number }[];
    };
    out.samples += frame.samplesPerChannel;
    out.sampleRate = frame.sampleRate;
    if (final) out.finals++;
    for (const t of timedTranscripts ?? []) out.transcript.push(t.text.trim());
  }
  return out;
}

/**
 * The frames hold about as many samples as the whole text said at once: the text arrives in
 * pieces and is spoken sentence by sentence, so the cuts (and their pauses) may differ a little.
 */
async function expectWholeText(out: LiveKitOutput): Promise<void> {
  expect(out.errors).toEqual([]);
  expect(out.sampleRate).toBe(24000);
  const whole = (await reference(TWO_SENTENCES)).length / 2;
  expect(out.samples).toBeGreaterThan(whole * 0.8);
  expect(out.samples).toBeLessThan(whole * 1.2);
}

describe('LiveKit agents 1.9 TTS plugins, streamed text in', () => {
  it('ElevenLabs (multi-stream-input): audio frames and an aligned transcript of every word', async () => {
    const tts = new lkElevenLabs.TTS({
      apiKey: 'dummy',
      baseURL: `${server.http}/v1`,
      voiceId: RACHEL,
      encoding: 'pcm_24000' as never,
    });
    const out = await liveKitStream(tts as never, [TWO_SENTENCES.slice(0, 30), TWO_SENTENCES.slice(30)]);
    await tts.close();
    expect(out.finals).toBe(1);
    await expectWholeText(out);
    expect(out.transcript.join(' ')).toBe(WORDS.join(' '));
  });

  it('Cartesia (/tts/websocket): audio frames and word timestamps', async () => {
    const tts = new lkCartesia.TTS({ apiKey: 'dummy', baseUrl: server.http, voice: CARTESIA_DEFAULT });
    const out = await liveKitStream(tts as never, [TWO_SENTENCES]);
    await tts.close();
    expect(out.finals).toBe(1);
    await expectWholeText(out);
    expect(out.transcript.join(' ')).toBe(WORDS.join(' '));
  });

  it('OpenAI (/v1/audio/speech) through LiveKit’s StreamAdapter, as agents stream to a non-streaming TTS', async () => {
    const openAi = new lkOpenAi.TTS({
      apiKey: 'dummy',
      baseURL: `${server.http}/v1`,
      voice: 'af_heart' as never,
    });
    const adapter = new lkTts.StreamAdapter(openAi, new tokenize.basic.SentenceTokenizer());
    const out = await liveKitStream(adapter as never, [TWO_SENTENCES.slice(0, 30), TWO_SENTENCES.slice(30)]);
    await adapter.close();
    await expectWholeText(out);
  });

  it('Deepgram (/v1/speak): audio frames, one turn', async () => {
    const tts = new lkDeepgram.TTS({ apiKey: 'dummy', baseUrl: server.http, model: 'af_heart' });
    const out = await liveKitStream(tts as never, [TWO_SENTENCES]);
    await tts.close();
    await expectWholeText(out);
  });
});

describe('the vendors’ SDKs', () => {
  it('Cartesia SDK: a context pushed in pieces; pcm_f32le is the same audio as floats; timestamps name the words', async () => {
    const client = new Cartesia({ apiKey: 'dummy', baseURL: server.http, maxRetries: 0 });
    const ws = await client.tts.websocket({
      createConnection: (o: { host: string; port: number }) => net.connect({ host: o.host, port: o.port }),
    } as never);
    const errors: unknown[] = [];
    ws.on('error', (e: unknown) => errors.push(e));
    const ctx = ws.context({
      model_id: 'sonic-3',
      voice: { mode: 'id', id: 'af_heart' },
      output_format: { container: 'raw', encoding: 'pcm_f32le', sample_rate: 24000 },
      add_timestamps: true,
    } as never);
    await ctx.push({ transcript: 'The SDK writes this ' });
    await ctx.push({ transcript: 'in two parts.' });
    await ctx.no_more_inputs();
    const floats: Buffer[] = [];
    const words: string[] = [];
    const types: string[] = [];
    for await (const event of ctx.receive({ timeout: 20_000 })) {
      const e = event as { type: string; audio?: Uint8Array; word_timestamps?: { words: string[] } };
      types.push(e.type);
      if (e.type === 'chunk') floats.push(Buffer.from(e.audio!));
      if (e.type === 'timestamps') words.push(...e.word_timestamps!.words);
    }
    ws.close();
    expect(errors).toEqual([]);
    expect(types.at(-1)).toBe('done');
    expect(words).toEqual(['The', 'SDK', 'writes', 'this', 'in', 'two', 'parts.']);
    // Chunks of Cartesia's size, 16384 bytes of audio, whatever the sentence's length.
    expect(Math.max(...floats.map((f) => f.length))).toBe(16_384);
    const f32 = Buffer.concat(floats);
    const s16 = await reference('The SDK writes this in two parts.');
    expect(f32.length).toBe(s16.length * 2);
    for (let i = 0; i < s16.length / 2; i += 97) {
      expect(f32.readFloatLE(i * 4)).toBe(s16.readInt16LE(i * 2) / 32768);
    }
  });

  it('Cartesia SDK: flush() speaks what is held and answers flush_done after its audio; chunks carry their flush_id', async () => {
    // Cartesia's own example (docs: WebSocket Flushing): push, flush, push, no_more_inputs.
    const client = new Cartesia({ apiKey: 'dummy', baseURL: server.http, maxRetries: 0 });
    const ws = await client.tts.websocket({
      createConnection: (o: { host: string; port: number }) => net.connect({ host: o.host, port: o.port }),
    } as never);
    const ctx = ws.context({
      model_id: 'sonic-3',
      voice: { mode: 'id', id: 'af_heart' },
      output_format: { container: 'raw', encoding: 'pcm_s16le', sample_rate: 24000 },
    } as never);
    await ctx.push({ transcript: 'Stay hungry, ' });
    await ctx.flush();
    await ctx.push({ transcript: 'stay foolish.' });
    await ctx.no_more_inputs();
    const events: { type: string; flush_id?: number; audio?: Uint8Array }[] = [];
    for await (const event of ctx.receive({ timeout: 20_000 })) events.push(event as never);
    ws.close();
    const flushDone = events.findIndex((e) => e.type === 'flush_done');
    expect(events[flushDone]).toMatchObject({
      type: 'flush_done',
      flush_done: true,
      done: false,
      flush_id: 1,
    });
    const before = events.slice(0, flushDone).filter((e) => e.type === 'chunk');
    const after = events.slice(flushDone + 1).filter((e) => e.type === 'chunk');
    expect(new Set(before.map((e) => e.flush_id))).toEqual(new Set([1]));
    expect(new Set(after.map((e) => e.flush_id))).toEqual(new Set([2]));
    // The flush spoke the unfinished sentence at once; the rest followed it.
    const audio = (chunks: typeof before) => Buffer.concat(chunks.map((e) => Buffer.from(e.audio!)));
    expect(audio(before).equals(await reference('Stay hungry,'))).toBe(true);
    expect(audio(after).equals(await reference('stay foolish.'))).toBe(true);
    expect(events.at(-1)!.type).toBe('done');
  });

  it('Deepgram SDK: Speak, Flush → audio then Flushed; the audio is our PCM for the text', async () => {
    const deepgram = new DeepgramClient({ apiKey: 'dummy', baseUrl: server.http });
    const conn = await deepgram.speak.v1.connect({
      model: 'af_heart',
      encoding: 'linear16',
      sample_rate: 24000,
      reconnectAttempts: 0,
    } as never);
    const audio: Buffer[] = [];
    const controls: Record<string, unknown>[] = [];
    let flushed!: () => void;
    const flushedNow = new Promise<void>((resolve) => (flushed = resolve));
    conn.on('message', async (m: unknown) => {
      if (m instanceof Blob) audio.push(Buffer.from(await m.arrayBuffer()));
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
    await new Promise((r) => setTimeout(r, 50)); // the last Blob's arrayBuffer() settles
    expect(controls.map((c) => c.type)).toEqual(['Metadata', 'Flushed']);
    expect(Buffer.concat(audio).equals(await reference('Spoken through the SDK.'))).toBe(true);
  });

  it('Deepgram SDK v2 (Flux): Speak, Flush → SpeechStarted, audio, SpeechMetadata, Flushed; Close → SessionMetadata', async () => {
    const deepgram = new DeepgramClient({ apiKey: 'dummy', baseUrl: server.http });
    const conn = await deepgram.speak.v2.connect({
      model: 'flux-alexis-en',
      encoding: 'linear16',
      sample_rate: 24000,
      reconnectAttempts: 0,
    } as never);
    const order: string[] = [];
    const audio: Buffer[] = [];
    let ended!: () => void;
    const endedNow = new Promise<void>((resolve) => (ended = resolve));
    conn.on('message', async (m: unknown) => {
      if (m instanceof Blob || m instanceof ArrayBuffer) {
        order.push('audio');
        audio.push(Buffer.from(m instanceof Blob ? await m.arrayBuffer() : m));
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
    await new Promise((r) => setTimeout(r, 50)); // the last Blob's arrayBuffer() settles
    const controls = order.filter((t) => t !== 'audio');
    expect(controls).toEqual(['Connected', 'SpeechStarted', 'SpeechMetadata', 'Flushed', 'SessionMetadata']);
    expect(order.indexOf('audio')).toBeGreaterThan(order.indexOf('SpeechStarted'));
    expect(order.lastIndexOf('audio')).toBeLessThan(order.indexOf('SpeechMetadata'));
    expect(Buffer.concat(audio).equals(await reference('Spoken through the SDK.'))).toBe(true);
  });

  it('ElevenLabs stream-input (a plain WebSocket): text in pieces, audio with alignment, isFinal, then the close', async () => {
    const client = await open(`${wsBase()}/v1/text-to-speech/${RACHEL}/stream-input?output_format=pcm_24000`);
    client.send({ text: ' ', voice_settings: { stability: 0.5 } }, false);
    client.send({ text: 'Said over ' }, false);
    client.send({ text: 'the old socket. ' }, false);
    client.send({ text: '' }, false);
    expect(await client.closed(20_000)).toBe(1000);
    const all = messages(client);
    expect(all.at(-1)).toEqual({ isFinal: true });
    const audio = decodedAudio(client, 'audio', () => true);
    expect(audio.equals(await reference('Said over the old socket.'))).toBe(true);
    const chars = all.flatMap((m) => (m.alignment as { chars?: string[] } | null)?.chars ?? []);
    expect(chars.join('').trim()).toBe('Said over the old socket.');
  });
});

describe('barge-in on every dialect: the answer says what the listener received', () => {
  it('ElevenLabs: close_context on a context not flushed cuts it; isFinal carries heard', async () => {
    const client = await open(
      `${wsBase()}/v1/text-to-speech/${RACHEL}/multi-stream-input?output_format=pcm_24000`,
    );
    client.send({ text: ' ', context_id: 'turn' }, false);
    client.send({ text: `First sentence. ${LONG} `, context_id: 'turn' }, false);
    await client.until((c) => decodedAudio(c, 'audio', () => true).length > 0, 'audio');
    client.send({ context_id: 'turn', close_context: true }, false);
    await client.until((c) => messages(c).some((m) => m.isFinal === true), 'isFinal');
    const final = messages(client).find((m) => m.isFinal === true)!;
    const sent = decodedAudio(client, 'audio', () => true).length;
    expect(final).toMatchObject({
      isFinal: true,
      contextId: 'turn',
      heard: { samples: sent / 2, sample_rate: 24000 },
    });
    const heard = final.heard as { words: { word: string; char_start: number }[]; ms: number };
    expect(heard.words.map((w) => w.word)).toEqual(['First', 'sentence.'].slice(0, heard.words.length));
    expect(heard.words.length).toBeGreaterThan(0);
    // Offsets are in the context's text as sent: the opening " " is its first character.
    expect(heard.words[0]).toMatchObject({ word: 'First', char_start: 1, char_end: 6 });
    client.close();
  });

  it('ElevenLabs: a flush of no text, then close_context, speaks the turn whole; a second close cuts it', async () => {
    const client = await open(
      `${wsBase()}/v1/text-to-speech/${RACHEL}/multi-stream-input?output_format=pcm_24000&auto_mode=true`,
    );
    // Pipecat's turn: sentences with no space between them, a flush of no text, the close.
    client.send({ text: ' ', context_id: 'whole' }, false);
    client.send({ text: 'Spoken whole.', context_id: 'whole' }, false);
    client.send({ text: 'Every word.', context_id: 'whole' }, false);
    client.send({ context_id: 'whole', flush: true }, false);
    client.send({ context_id: 'whole', close_context: true }, false);
    await client.until((c) => messages(c).some((m) => m.isFinal === true), 'isFinal');
    const whole = decodedAudio(client, 'audio', (m) => m.contextId === 'whole');
    const spoken = Buffer.concat([await reference('Spoken whole.'), await reference('Every word.')]);
    expect(whole.length).toBe(spoken.length);
    expect(messages(client).find((m) => m.isFinal === true)).toStrictEqual({
      isFinal: true,
      contextId: 'whole',
    });

    // The same turn interrupted while it still speaks: Pipecat closes the context again.
    client.send({ text: ' ', context_id: 'cut' }, false);
    client.send({ text: `First sentence. ${LONG}`, context_id: 'cut' }, false);
    client.send({ context_id: 'cut', flush: true }, false);
    client.send({ context_id: 'cut', close_context: true }, false);
    await client.until((c) => decodedAudio(c, 'audio', (m) => m.contextId === 'cut').length > 0, 'audio');
    client.send({ context_id: 'cut', close_context: true }, false);
    await client.until(
      (c) => messages(c).some((m) => m.isFinal === true && m.contextId === 'cut'),
      'the cut',
    );
    const final = messages(client).find((m) => m.isFinal === true && m.contextId === 'cut')!;
    const sent = decodedAudio(client, 'audio', (m) => m.contextId === 'cut').length;
    expect(final).toMatchObject({ heard: { samples: sent / 2, sample_rate: 24000 } });
    expect(sent).toBeLessThan((await reference(`First sentence. ${LONG}`)).length);
    // Closed once more after its end: answered as over, not refused.
    client.send({ context_id: 'cut', close_context: true }, false);
    await client.until(
      (c) => messages(c).filter((m) => m.isFinal === true && m.contextId === 'cut').length === 2,
      'the second isFinal',
    );
    expect(messages(client).filter((m) => m.error !== undefined)).toEqual([]);
    client.close();
  });

  it('Cartesia: cancel cuts the context; a done with heard answers it', async () => {
    const client = await open(`${wsBase()}/tts/websocket`);
    const request = {
      model_id: 'sonic-3',
      voice: { mode: 'id', id: 'af_heart' },
      output_format: { container: 'raw', encoding: 'pcm_s16le', sample_rate: 16000 },
      context_id: 'c1',
    };
    client.send({ ...request, transcript: `First sentence. ${LONG}` }, false);
    await client.until((c) => decodedAudio(c, 'data', () => true).length > 0, 'a chunk');
    client.send({ context_id: 'c1', cancel: true }, false);
    await client.until((c) => messages(c).some((m) => m.type === 'done'), 'done');
    const done = messages(client).find((m) => m.type === 'done')!;
    const sent = decodedAudio(client, 'data', () => true).length;
    expect(done).toMatchObject({
      type: 'done',
      context_id: 'c1',
      cancelled: true,
      heard: { samples: sent / 2, sample_rate: 16000 },
    });
    // A cancelled context is closed: its id is refused, in Cartesia's error shape.
    client.send({ ...request, transcript: 'Again?' }, false);
    await client.until((c) => messages(c).some((m) => m.type === 'error'), 'the error');
    expect(messages(client).find((m) => m.type === 'error')).toMatchObject({
      type: 'error',
      done: true,
      status_code: 409,
      error_code: 'context_closed',
      context_id: 'c1',
      error: expect.stringMatching(/cannot be used again/),
    });
    client.close();
  });

  it('Deepgram: Clear is answered by Cleared with heard', async () => {
    const client = await open(`${wsBase()}/v1/speak?model=af_heart&encoding=linear16&sample_rate=24000`);
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

describe('bad input: the dialect’s own error shape, and the socket serves on', () => {
  it('ElevenLabs: an unknown voice or format is refused at connection time with its error and 1008', async () => {
    const voice = await open(`${wsBase()}/v1/text-to-speech/NoSuchVoice123/multi-stream-input`);
    expect(await voice.closed()).toBe(1008);
    expect(messages(voice)[0]).toMatchObject({
      error: 'voice_not_found',
      code: 1008,
      message: expect.stringMatching(/Unknown voice/),
    });
    const format = await open(`${wsBase()}/v1/text-to-speech/${RACHEL}/stream-input?output_format=pcm_12000`);
    expect(await format.closed()).toBe(1008);
    expect(messages(format)[0]).toMatchObject({
      error: 'invalid_option',
      message: expect.stringMatching(/output_format/),
    });
  });

  it('ElevenLabs multi: a closed context, a reused id, too many contexts, bad messages — each an error naming its context', async () => {
    const client = await open(
      `${wsBase()}/v1/text-to-speech/${RACHEL}/multi-stream-input?output_format=pcm_16000`,
    );
    client.send({ text: ' ', context_id: 'done' }, false);
    client.send({ text: 'Short. ', context_id: 'done', flush: true }, false);
    client.send({ context_id: 'done', close_context: true }, false);
    await client.until(
      (c) => messages(c).some((m) => m.isFinal === true && m.contextId === 'done'),
      'isFinal',
    );
    client.send({ text: 'Again. ', context_id: 'done' }, false); // reused after close
    client.send({ context_id: 'x', text: 42 }, false); // not text
    client.send('not json', false);
    for (const id of ['a', 'b', 'c', 'd', 'e']) client.send({ text: ' ', context_id: id }, false);
    client.send({ text: ' ', context_id: 'f' }, false); // the sixth open context
    await client.until((c) => messages(c).filter((m) => m.error !== undefined).length >= 4, 'four errors');
    const errors = messages(client).filter((m) => m.error !== undefined);
    expect(errors.map((e) => [e.error, e.contextId])).toEqual([
      ['context_closed', 'done'],
      ['invalid_option', 'x'],
      ['invalid_option', undefined],
      ['too_many_contexts', 'f'],
    ]);
    // The open contexts still speak.
    client.send({ text: 'Still here. ', context_id: 'a', flush: true }, false);
    client.send({ context_id: 'a', close_context: true }, false);
    await client.until(
      (c) => messages(c).some((m) => m.isFinal === true && m.contextId === 'a'),
      'context a',
    );
    expect(decodedAudio(client, 'audio', (m) => m.contextId === 'a').length).toBeGreaterThan(0);
    expect(client.closeCode).toBeUndefined();
    client.close();
  });

  it('Cartesia: unknown voice, unsupported format, bad messages and too many contexts — errors with context_id; other contexts finish', async () => {
    const client = await open(`${wsBase()}/tts/websocket`);
    const good = {
      model_id: 'sonic-3',
      voice: 'af_heart',
      output_format: { container: 'raw', encoding: 'pcm_s16le', sample_rate: 24000 },
    };
    client.send(
      { ...good, voice: { mode: 'id', id: 'no-such-voice' }, transcript: 'x', context_id: 'v' },
      false,
    );
    client.send(
      {
        ...good,
        output_format: { container: 'raw', encoding: 'pcm_s24le', sample_rate: 8000 },
        transcript: 'x',
        context_id: 'f',
      },
      false,
    );
    client.send(
      { ...good, output_format: { container: 'mp3', sample_rate: 44100 }, transcript: 'x', context_id: 'm' },
      false,
    );
    client.send({ ...good, transcript: 7, context_id: 't' }, false);
    for (const id of ['k1', 'k2', 'k3', 'k4', 'k5'])
      client.send({ ...good, transcript: 'Open ', continue: true, context_id: id }, false);
    client.send({ ...good, transcript: 'One too many.', context_id: 'k6' }, false);
    await client.until((c) => messages(c).filter((m) => m.type === 'error').length >= 5, 'five errors');
    const errors = messages(client).filter((m) => m.type === 'error');
    expect(errors.map((e) => [e.error_code, e.context_id, e.status_code])).toEqual([
      ['voice_not_found', 'v', 400],
      ['invalid_option', 'f', 400],
      ['invalid_option', 'm', 400],
      ['invalid_option', 't', 400],
      ['too_many_contexts', 'k6', 429],
    ]);
    for (const e of errors)
      expect(e).toMatchObject({ done: true, error: e.message, title: expect.any(String) });
    for (const id of ['k1', 'k2', 'k3', 'k4', 'k5'])
      client.send({ ...good, transcript: 'now ends.', context_id: id }, false);
    await client.until((c) => messages(c).filter((m) => m.type === 'done').length >= 5, 'five done');
    // Finished contexts are let go: a new one opens.
    client.send({ ...good, transcript: 'A new turn.', context_id: 'k7' }, false);
    await client.until((c) => messages(c).some((m) => m.type === 'done' && m.context_id === 'k7'), 'k7');
    expect(client.closeCode).toBeUndefined();
    client.close();
  });

  it('Cartesia: a context whose first request fails holds no slot; a request without context_id is complete', async () => {
    const client = await open(`${wsBase()}/tts/websocket`);
    const good = {
      model_id: 'sonic-3',
      voice: 'af_heart',
      output_format: { container: 'raw', encoding: 'pcm_s16le', sample_rate: 24000 },
    };
    // Six turns whose first request is refused (speed out of range), more than WS_MAX_CONTEXTS.
    for (let i = 0; i < 6; i++) {
      client.send(
        { ...good, speed: 3, transcript: 'Too fast. ', continue: true, context_id: `bad${i}` },
        false,
      );
    }
    await client.until((c) => messages(c).filter((m) => m.type === 'error').length >= 6, 'six errors');
    expect(new Set(messages(client).map((m) => m.error_code))).toEqual(new Set(['invalid_option']));
    // A request without an id is complete as it is, though it says continue.
    client.send({ ...good, transcript: 'No id, said at once.', continue: true }, false);
    await client.until((c) => messages(c).some((m) => m.type === 'done'), 'the request without an id');
    // None of the refused ones holds a slot: five contexts open at once.
    for (let i = 0; i < 5; i++) {
      client.send({ ...good, transcript: 'Open ', continue: true, context_id: `ok${i}` }, false);
    }
    for (let i = 0; i < 5; i++) client.send({ ...good, transcript: 'done.', context_id: `ok${i}` }, false);
    await client.until((c) => messages(c).filter((m) => m.type === 'done').length >= 6, 'every turn');
    expect(messages(client).filter((m) => m.type === 'error')).toHaveLength(6);
    client.close();
  });

  it('a flood of text past the unspoken-text bound: errors in the dialect’s shape, and the session goes on', async () => {
    const client = await open(
      `${wsBase()}/v1/text-to-speech/${RACHEL}/multi-stream-input?output_format=pcm_16000`,
    );
    client.send({ text: ' ', context_id: 'flood' }, false);
    const unending = 'word '.repeat(2000); // 10 KB with no sentence end: held until a flush
    for (let i = 0; i < 12; i++) client.send({ text: unending, context_id: 'flood' }, false);
    await client.until((c) => messages(c).some((m) => m.error === 'text_too_long'), 'text_too_long');
    expect(messages(client).find((m) => m.error === 'text_too_long')).toMatchObject({ contextId: 'flood' });
    client.send({ context_id: 'flood', close_context: true }, false);
    client.send({ text: 'After the flood. ', context_id: 'calm', flush: true }, false);
    client.send({ context_id: 'calm', close_context: true }, false);
    await client.until((c) => messages(c).some((m) => m.isFinal === true && m.contextId === 'calm'), 'calm');
    expect(client.closeCode).toBeUndefined();
    client.close();
  });
});

describe('Cartesia’s max_buffer_delay_ms', () => {
  const request = {
    model_id: 'sonic-3',
    voice: 'af_heart',
    output_format: { container: 'raw', encoding: 'pcm_s16le', sample_rate: 24000 },
    continue: true,
  };
  const chunks = (client: TestClient, context: string) =>
    decodedAudio(client, 'data', (m) => m.context_id === context);

  it('0 speaks each piece as it arrives; a delay speaks what ends no sentence once it has passed; by default it waits 3 s', async () => {
    const client = await open(`${wsBase()}/tts/websocket`);
    const unfinished = 'Words that end no sentence';
    client.send({ ...request, context_id: 'held', transcript: unfinished }, false);
    client.send({ ...request, context_id: 'now', transcript: unfinished, max_buffer_delay_ms: 0 }, false);
    client.send({ ...request, context_id: 'soon', transcript: unfinished, max_buffer_delay_ms: 300 }, false);
    await client.until((c) => chunks(c, 'now').length > 0 && chunks(c, 'soon').length > 0, 'now and soon');
    const expected = await reference(unfinished);
    expect(chunks(client, 'now').equals(expected)).toBe(true);
    expect(chunks(client, 'soon').equals(expected)).toBe(true);
    // Cartesia's default, 3 s, has not passed: what "held" has is still held.
    expect(chunks(client, 'held').length).toBe(0);
    for (const context of ['held', 'now', 'soon'])
      client.send({ ...request, context_id: context, transcript: '', continue: false }, false);
    await client.until((c) => messages(c).filter((m) => m.type === 'done').length === 3, 'three done');
    expect(chunks(client, 'held').equals(expected)).toBe(true);
    expect(messages(client).filter((m) => m.type === 'error')).toEqual([]);
    client.close();
  });
});

describe('a flood in Cartesia’s dialect', () => {
  it('text past the unspoken-text bound: an error naming the context; the context and socket go on', async () => {
    const client = await open(`${wsBase()}/tts/websocket`);
    const good = {
      model_id: 'sonic-3',
      voice: 'af_heart',
      output_format: { container: 'raw', encoding: 'pcm_s16le', sample_rate: 16000 },
      context_id: 'flood',
      continue: true,
    };
    const unending = 'word '.repeat(2000);
    for (let i = 0; i < 12; i++) client.send({ ...good, transcript: unending }, false);
    await client.until((c) => messages(c).some((m) => m.type === 'error'), 'the error');
    expect(messages(client).find((m) => m.type === 'error')).toMatchObject({
      error_code: 'text_too_long',
      status_code: 413,
      context_id: 'flood',
    });
    client.send({ ...good, transcript: 'The end.', continue: false }, false);
    await client.until((c) => messages(c).some((m) => m.type === 'done' && m.context_id === 'flood'), 'done');
    expect(client.closeCode).toBeUndefined();
    client.close();
  });
});

describe('idle and keep-alive, as each vendor documents, within the server’s own limit', () => {
  it('ElevenLabs: inactivity_timeout closes a silent socket; keep-alive messages hold it open', async () => {
    const url = `${wsBase()}/v1/text-to-speech/${RACHEL}/multi-stream-input?output_format=pcm_16000&inactivity_timeout=1`;
    const kept = await open(url);
    const silent = await open(url);
    kept.send({ text: ' ', context_id: 'k' }, false);
    for (let i = 0; i < 8; i++) {
      await new Promise((r) => setTimeout(r, 250));
      kept.send({ text: '', context_id: 'k' }, false); // ElevenLabs' keep-alive: resets the clock
    }
    expect(await silent.closed(5000)).toBe(1000);
    expect(silent.closeReason).toBe('idle');
    expect(kept.closeCode).toBeUndefined();
    expect(await kept.closed(5000)).toBe(1000);
  });

  it('ElevenLabs: an inactivity_timeout past 180 s is refused when the socket opens', async () => {
    const client = await open(`${wsBase()}/v1/text-to-speech/${RACHEL}/stream-input?inactivity_timeout=600`);
    expect(await client.closed()).toBe(1008);
    expect(messages(client)[0]).toMatchObject({
      error: 'invalid_option',
      message: expect.stringMatching(/inactivity_timeout/),
    });
  });

  it('Deepgram: KeepAlive is taken, answered by nothing, and the session serves on', async () => {
    const client = await open(`${wsBase()}/v1/speak?model=af_heart`);
    client.send({ type: 'KeepAlive' }, false);
    client.send({ type: 'Speak', text: 'Still here.' }, false);
    client.send({ type: 'Flush' }, false);
    await client.untilControls('Flushed', 1);
    expect(client.controls().map((c) => c.type)).toEqual(['Metadata', 'Flushed']);
    client.close();
  });
});

describe('SageMaker: the invocation path header selects each dialect', () => {
  const sagemaker = (path: string, query?: string) =>
    open(`${wsBase()}/invocations-bidirectional-stream`, {
      'x-amzn-sagemaker-model-invocation-path': path,
      ...(query !== undefined ? { 'x-amzn-sagemaker-model-query-string': query } : {}),
    });

  it('ElevenLabs multi-stream-input', async () => {
    const client = await sagemaker(
      `v1/text-to-speech/${RACHEL}/multi-stream-input`,
      'output_format=pcm_24000',
    );
    client.send({ text: 'Through SageMaker. ', context_id: 's', flush: true }, false);
    client.send({ context_id: 's', close_context: true }, false);
    await client.until((c) => messages(c).some((m) => m.isFinal === true), 'isFinal');
    expect(decodedAudio(client, 'audio', () => true).equals(await reference('Through SageMaker.'))).toBe(
      true,
    );
    client.close();
  });

  it('Cartesia', async () => {
    const client = await sagemaker('tts/websocket');
    client.send(
      {
        model_id: 'sonic-3',
        voice: 'af_heart',
        output_format: { container: 'raw', encoding: 'pcm_s16le', sample_rate: 24000 },
        transcript: 'Through SageMaker.',
        context_id: 's',
      },
      false,
    );
    await client.until((c) => messages(c).some((m) => m.type === 'done'), 'done');
    expect(decodedAudio(client, 'data', () => true).equals(await reference('Through SageMaker.'))).toBe(true);
    client.close();
  });
});
