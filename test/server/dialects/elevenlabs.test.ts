/**
 * ElevenLabs' protocol driven by real clients, unchanged but for the base URL and a dummy key:
 * LiveKit's ElevenLabs plugin (multi-stream-input, and synthesize() over HTTP), stream-input over a
 * plain WebSocket (no client library speaks it), ElevenLabs' SDK (`textToSpeech.stream`,
 * `convert`, `streamWithTimestamps`); a barge-in answered with what the listener received; bad
 * input in ElevenLabs' error shape with the socket and its other contexts serving on; idle and
 * keep-alive; the dialect chosen by SageMaker's invocation path. Audio is checked against the same
 * text through POST /invocations. Every bad HTTP input is tested in-process (test/app/).
 */
import { ElevenLabsClient, ElevenLabsError } from '@elevenlabs/elevenlabs-js';
import { APIStatusError } from '@livekit/agents';
import * as lkElevenLabs from '@livekit/agents-plugin-elevenlabs';
import { beforeAll, describe, expect, it } from 'vitest';
import { ELEVENLABS_VOICES } from '../../../server/dialects/elevenlabs/voices.ts';
import { FFMPEG, decode } from '../audio-tools.ts';
import {
  decodedAudio,
  expectWholeText,
  httpServer,
  liveKitStream,
  LONG,
  messages,
  open,
  RACHEL,
  readAll,
  rejection,
  socketServer,
  SPOKEN_WORDS,
  TEXT,
  TWO_SENTENCES,
  WORDS,
  wsBase,
  pcmOf,
  reference,
} from './clients.ts';
import { bytesDiff, type TestServer } from '../harness.ts';

let sockets: TestServer;
let server: TestServer;
let elevenLabs: ElevenLabsClient;
beforeAll(async () => {
  sockets = await socketServer();
  server = await httpServer();
  elevenLabs = new ElevenLabsClient({ apiKey: 'dummy', baseUrl: server.http, maxRetries: 0 });
});

describe('LiveKit agents 1.9 TTS plugins, streamed text in', () => {
  it('ElevenLabs (multi-stream-input): audio frames and an aligned transcript of every word', async () => {
    const tts = new lkElevenLabs.TTS({
      apiKey: 'dummy',
      baseURL: `${sockets.http}/v1`,
      voiceId: RACHEL,
      encoding: 'pcm_24000' as never,
    });
    const out = await liveKitStream(tts as never, [TWO_SENTENCES.slice(0, 30), TWO_SENTENCES.slice(30)]);
    await tts.close();
    expect(out.finals).toBe(1);
    await expectWholeText(out, sockets);
    expect(out.transcript.join(' ')).toBe(SPOKEN_WORDS.join(' '));
  });
});

describe('the vendors’ SDKs', () => {
  it('ElevenLabs stream-input (a plain WebSocket): text in pieces, audio with alignment, isFinal, then the close', async () => {
    const client = await open(
      `${wsBase(sockets)}/v1/text-to-speech/${RACHEL}/stream-input?output_format=pcm_24000`,
    );
    client.send({ text: ' ', voice_settings: { stability: 0.5 } }, false);
    client.send({ text: 'Said over ' }, false);
    client.send({ text: 'the old socket. ' }, false);
    client.send({ text: '' }, false);
    expect(await client.closed(20_000)).toBe(1000);
    const all = messages(client);
    expect(all.at(-1)).toEqual({ isFinal: true });
    const audio = decodedAudio(client, 'audio', () => true);
    expect(audio.equals(await pcmOf('Said over the old socket.'))).toBe(true);
    const chars = all.flatMap((m) => (m.alignment as { chars?: string[] } | null)?.chars ?? []);
    expect(chars.join('').trim()).toBe('Said over the old socket.');
  });
});

describe('barge-in on every dialect: the answer says what the listener received', () => {
  it('ElevenLabs: close_context on a context not flushed cuts it; isFinal carries heard', async () => {
    const client = await open(
      `${wsBase(sockets)}/v1/text-to-speech/${RACHEL}/multi-stream-input?output_format=pcm_24000`,
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
      `${wsBase(sockets)}/v1/text-to-speech/${RACHEL}/multi-stream-input?output_format=pcm_24000&auto_mode=true`,
    );
    // Pipecat's turn: sentences with no space between them, a flush of no text, the close.
    client.send({ text: ' ', context_id: 'whole' }, false);
    client.send({ text: 'Spoken whole.', context_id: 'whole' }, false);
    client.send({ text: 'Every word.', context_id: 'whole' }, false);
    client.send({ context_id: 'whole', flush: true }, false);
    client.send({ context_id: 'whole', close_context: true }, false);
    await client.until((c) => messages(c).some((m) => m.isFinal === true), 'isFinal');
    const whole = decodedAudio(client, 'audio', (m) => m.contextId === 'whole');
    const spoken = Buffer.concat([await pcmOf('Spoken whole.'), await pcmOf('Every word.')]);
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
    expect(sent).toBeLessThan((await pcmOf(`First sentence. ${LONG}`)).length);
    // Closed once more after its end: answered as over, not refused.
    client.send({ context_id: 'cut', close_context: true }, false);
    await client.until(
      (c) => messages(c).filter((m) => m.isFinal === true && m.contextId === 'cut').length === 2,
      'the second isFinal',
    );
    expect(messages(client).filter((m) => m.error !== undefined)).toEqual([]);
    client.close();
  });
});

describe('bad input: the dialect’s own error shape, and the socket serves on', () => {
  it('ElevenLabs: an unknown voice or format is refused at connection time with its error and 1008', async () => {
    const voice = await open(`${wsBase(sockets)}/v1/text-to-speech/NoSuchVoice123/multi-stream-input`);
    expect(await voice.closed()).toBe(1008);
    expect(messages(voice)[0]).toMatchObject({
      error: 'voice_not_found',
      code: 1008,
      message: expect.stringMatching(/Unknown voice/),
    });
    const format = await open(
      `${wsBase(sockets)}/v1/text-to-speech/${RACHEL}/stream-input?output_format=pcm_12000`,
    );
    expect(await format.closed()).toBe(1008);
    expect(messages(format)[0]).toMatchObject({
      error: 'invalid_option',
      message: expect.stringMatching(/output_format/),
    });
  });

  it('ElevenLabs multi: a closed context, a reused id, too many contexts, bad messages — each an error naming its context', async () => {
    const client = await open(
      `${wsBase(sockets)}/v1/text-to-speech/${RACHEL}/multi-stream-input?output_format=pcm_16000`,
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

  it('a flood of text past the unspoken-text bound: errors in the dialect’s shape, and the session goes on', async () => {
    const client = await open(
      `${wsBase(sockets)}/v1/text-to-speech/${RACHEL}/multi-stream-input?output_format=pcm_16000`,
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

describe('idle and keep-alive, as each vendor documents, within the server’s own limit', () => {
  it('ElevenLabs: inactivity_timeout closes a silent socket; keep-alive messages hold it open', async () => {
    const url = `${wsBase(sockets)}/v1/text-to-speech/${RACHEL}/multi-stream-input?output_format=pcm_16000&inactivity_timeout=1`;
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
    const client = await open(
      `${wsBase(sockets)}/v1/text-to-speech/${RACHEL}/stream-input?inactivity_timeout=600`,
    );
    expect(await client.closed()).toBe(1008);
    expect(messages(client)[0]).toMatchObject({
      error: 'invalid_option',
      message: expect.stringMatching(/inactivity_timeout/),
    });
  });
});

describe('SageMaker: the invocation path header selects each dialect', () => {
  const sagemaker = (path: string, query?: string) =>
    open(`${wsBase(sockets)}/invocations-bidirectional-stream`, {
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
    expect(decodedAudio(client, 'audio', () => true).equals(await pcmOf('Through SageMaker.'))).toBe(true);
    client.close();
  });
});

describe('ElevenLabs’ SDK', () => {
  it('textToSpeech.stream: PCM at 24 and 16 kHz, the same samples as POST /invocations', async () => {
    for (const [format, rate] of [
      ['pcm_24000', 24_000],
      ['pcm_16000', 16_000],
    ] as const) {
      const audio = await readAll(
        await elevenLabs.textToSpeech.stream(RACHEL, { text: TEXT, outputFormat: format }),
      );
      expect(audio.length).toBeGreaterThan(rate); // over half a second
      expect(bytesDiff(audio, await reference('af_heart', rate))).toBeUndefined();
    }
  });

  it('μ-law at 8 kHz: one byte for each sample of PCM at 8 kHz', async () => {
    const { data, rawResponse } = await elevenLabs.textToSpeech
      .stream(RACHEL, { text: TEXT, outputFormat: 'ulaw_8000' })
      .withRawResponse();
    expect(rawResponse.headers.get('content-type')).toBe('audio/basic;rate=8000');
    expect((await readAll(data)).length).toBe((await reference('af_heart', 8000)).length / 2);
  });

  it('textToSpeech.convert (the non-streaming route) gives the stream’s audio', async () => {
    const streamed = await readAll(
      await elevenLabs.textToSpeech.stream(RACHEL, { text: TEXT, outputFormat: 'pcm_24000' }),
    );
    const whole = await readAll(
      await elevenLabs.textToSpeech.convert(RACHEL, { text: TEXT, outputFormat: 'pcm_24000' }),
    );
    expect(bytesDiff(whole, streamed)).toBeUndefined();
  });

  it('the fields the SDK sends are taken: speed, language, normalization, the model', async () => {
    const audio = await readAll(
      await elevenLabs.textToSpeech.stream('bm_george', {
        text: TEXT,
        modelId: 'eleven_flash_v2_5',
        languageCode: 'en',
        applyTextNormalization: 'off',
        voiceSettings: { stability: 0.5, similarityBoost: 0.75, speed: 1.2 },
        outputFormat: 'pcm_24000',
        optimizeStreamingLatency: 2,
        enableLogging: false,
      }),
    );
    const res = await fetch(`${server.http}/invocations`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        text: TEXT,
        voice: 'bm_george',
        format: 'pcm',
        speed: 1.2,
        normalization_options: { normalize: false },
      }),
    });
    expect(bytesDiff(audio, Buffer.from(await res.arrayBuffer()))).toBeUndefined();
  });

  it('with no output_format, mp3 (ElevenLabs’ default): MPEG frames', async () => {
    const { data, rawResponse } = await elevenLabs.textToSpeech
      .stream(RACHEL, { text: TEXT })
      .withRawResponse();
    expect(rawResponse.headers.get('content-type')).toBe('audio/mpeg');
    const mp3 = await readAll(data);
    // An MPEG audio frame header: 11 bits of frame sync.
    expect(mp3[0]).toBe(0xff);
    expect(mp3[1]! & 0xe0).toBe(0xe0);
  });

  it.skipIf(!FFMPEG.available)(`mp3 at 44.1 kHz decodes to the text’s length${FFMPEG.note}`, async () => {
    const mp3 = await readAll(
      await elevenLabs.textToSpeech.stream(RACHEL, { text: TEXT, outputFormat: 'mp3_44100_128' }),
    );
    const decoded = decode(mp3, 'mp3', 44_100);
    expect(decoded.ok, decoded.stderr).toBe(true);
    const seconds = (await reference('af_heart')).length / 2 / 24_000;
    expect(Math.abs(decoded.samples.length / 44_100 - seconds)).toBeLessThan(0.12);
  });

  it('streamWithTimestamps: the stream’s audio, and each chunk’s characters timed', async () => {
    const chunks = [];
    for await (const chunk of await elevenLabs.textToSpeech.streamWithTimestamps(RACHEL, {
      text: TEXT,
      outputFormat: 'pcm_24000',
    })) {
      chunks.push(chunk);
    }
    expect(chunks.length).toBeGreaterThan(1);
    const audio = Buffer.concat(chunks.map((c) => Buffer.from(c.audioBase64!, 'base64')));
    expect(bytesDiff(audio, await reference('af_heart'))).toBeUndefined();
    const characters = chunks.flatMap((c) => c.alignment!.characters!);
    expect(characters.join('')).toBe(`${WORDS.join(' ')} `);
    const starts = chunks.flatMap((c) => c.alignment!.characterStartTimesSeconds!);
    const ends = chunks.flatMap((c) => c.alignment!.characterEndTimesSeconds!);
    expect(starts).toEqual([...starts].sort((a, b) => a - b));
    expect(ends.every((end, i) => end >= starts[i]!)).toBe(true);
    // The last character ends with the audio (to the millisecond the alignment keeps).
    expect(Math.abs(ends.at(-1)! - audio.length / 2 / 24_000)).toBeLessThanOrEqual(0.001);
    for (const chunk of chunks) expect(chunk.normalizedAlignment).toEqual(chunk.alignment);
  });

  it('every mapped ElevenLabs voice speaks as its Kokoro voice', async () => {
    for (const [id, kokoro] of Object.entries(ELEVENLABS_VOICES).slice(0, 3)) {
      const audio = await readAll(
        await elevenLabs.textToSpeech.stream(id, { text: 'Mapped.', outputFormat: 'pcm_24000' }),
      );
      expect(bytesDiff(audio, await reference(kokoro, 24_000, 'Mapped.'))).toBeUndefined();
    }
  });

  it('a refusal is an ElevenLabsError carrying our status, code and message', async () => {
    const err = await rejection(
      elevenLabs.textToSpeech.stream('robot', { text: TEXT, outputFormat: 'pcm_24000' }),
    );
    expect(err).toBeInstanceOf(ElevenLabsError);
    const { statusCode, body, message } = err as ElevenLabsError;
    expect(statusCode).toBe(400);
    expect(body).toEqual({
      detail: {
        status: 'voice_not_found',
        message: expect.stringMatching(/^Unknown voice "robot": name a Kokoro voice/),
      },
    });
    expect(message).toMatch(/Unknown voice \\"robot\\"/);
    // Every format ElevenLabs documents is served, A-law too.
    const alaw = await elevenLabs.textToSpeech.convert(RACHEL, { text: TEXT, outputFormat: 'alaw_8000' });
    let alawBytes = 0;
    for await (const chunk of alaw) alawBytes += chunk.length;
    expect(alawBytes).toBeGreaterThan(0);
  });
});

describe('LiveKit’s plugins, synthesize()', () => {
  it('ElevenLabs: POST …/stream with pcm_24000; the frames hold the same samples', async () => {
    const tts = new lkElevenLabs.TTS({
      apiKey: 'dummy',
      baseURL: `${server.http}/v1`,
      voiceId: RACHEL,
      // Any pcm_<rate> works (the plugin reads the rate from the name); its type lists three.
      encoding: 'pcm_24000' as never,
    });
    const frame = await tts.synthesize(TEXT).collect();
    await tts.close();
    expect(frame.sampleRate).toBe(24_000);
    const pcm = Buffer.from(frame.data.buffer, frame.data.byteOffset, frame.data.byteLength);
    expect(bytesDiff(pcm, await reference('af_heart'))).toBeUndefined();
  });

  it('ElevenLabs: a refusal is an APIStatusError carrying our status and body', async () => {
    // The plugin's synthesis task also rejects with it unhandled (its ChunkedStream never catches
    // it): the runner's listeners step aside until that rejection has come, so that it is checked
    // here instead of failing the run.
    const runners = process.listeners('unhandledRejection');
    process.removeAllListeners('unhandledRejection');
    let unhandled!: (err: unknown) => void;
    const escaped = new Promise<unknown>((resolve) => (unhandled = resolve));
    process.on('unhandledRejection', unhandled);
    try {
      const tts = new lkElevenLabs.TTS({
        apiKey: 'dummy',
        baseURL: `${server.http}/v1`,
        voiceId: 'robot',
        encoding: 'pcm_24000' as never,
      });
      const errors: { error: unknown; recoverable: boolean }[] = [];
      tts.on('error', (event) => errors.push(event));
      const frames = [];
      for await (const frame of tts.synthesize(TEXT)) frames.push(frame);
      expect(frames).toEqual([]);
      expect(await escaped).toBe(errors[0]!.error);
      await tts.close();
      expect(errors).toHaveLength(1);
      expect(errors[0]!.recoverable).toBe(false);
      expect(errors[0]!.error).toBeInstanceOf(APIStatusError);
      const error = errors[0]!.error as APIStatusError;
      expect(error.statusCode).toBe(400);
      expect(error.message).toMatch(
        /^ElevenLabs API error: \{"detail":\{"status":"voice_not_found","message":"Unknown voice \\"robot\\": name a Kokoro voice/,
      );
    } finally {
      process.removeAllListeners('unhandledRejection');
      for (const listener of runners) process.on('unhandledRejection', listener);
    }
  });
});
