/**
 * OpenAI's speech route driven by LiveKit's OpenAI plugin, unchanged but for the base URL and a
 * dummy key: streamed text through LiveKit's StreamAdapter (as agents stream to a non-streaming
 * TTS), and synthesize(). Every bad input is tested in-process (test/app/openai.test.ts).
 */
import { tokenize, tts as lkTts } from '@livekit/agents';
import * as lkOpenAi from '@livekit/agents-plugin-openai';
import { beforeAll, describe, expect, it } from 'vitest';
import { OPENAI_VOICES } from '../../../protocol/openai.ts';
import {
  expectWholeText,
  httpServer,
  liveKitStream,
  socketServer,
  TEXT,
  TWO_SENTENCES,
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
  it('OpenAI (/v1/audio/speech) through LiveKit’s StreamAdapter, as agents stream to a non-streaming TTS', async () => {
    const openAi = new lkOpenAi.TTS({
      apiKey: 'dummy',
      baseURL: `${sockets.http}/v1`,
      voice: 'af_heart' as never,
    });
    const adapter = new lkTts.StreamAdapter(openAi, new tokenize.basic.SentenceTokenizer());
    const out = await liveKitStream(adapter as never, [TWO_SENTENCES.slice(0, 30), TWO_SENTENCES.slice(30)]);
    await adapter.close();
    await expectWholeText(out, sockets);
  });
});

describe('LiveKit’s plugins, synthesize()', () => {
  it('OpenAI: POST /v1/audio/speech with pcm; the frames hold the same samples', async () => {
    const tts = new lkOpenAi.TTS({ apiKey: 'dummy', baseURL: `${server.http}/v1`, voice: 'alloy' });
    const frame = await tts.synthesize(TEXT).collect();
    await tts.close();
    expect(frame.sampleRate).toBe(24_000);
    const pcm = Buffer.from(frame.data.buffer, frame.data.byteOffset, frame.data.byteLength);
    expect(bytesDiff(pcm, await reference(OPENAI_VOICES.alloy!))).toBeUndefined();
  });
});
