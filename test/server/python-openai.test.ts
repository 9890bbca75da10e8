/**
 * Pipecat's and LiveKit's OpenAI TTS clients, replayed in Python from their source and the openai
 * SDK's (test/fixtures/python/pipecat_openai.py, livekit_openai.py) against a running server's
 * POST /v1/audio/speech: their default model and voice, every voice name Pipecat lets through, raw
 * PCM and OpenAI's speech events as each client reads them, and a reply cut mid-body.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OPENAI_VOICES } from '../../protocol/openai.ts';
import { FFMPEG, decode } from './audio-tools.ts';
import { referencePcm, type TestServer } from './harness.ts';
import {
  audioOf,
  audioReport,
  clientGone,
  expectPythonModules,
  replay,
  slowServer,
  type AudioReport,
} from './python-replay.ts';

let server: TestServer;
let close: () => Promise<void>;
beforeAll(async () => {
  ({ server, close } = await slowServer());
}, 60_000);
afterAll(() => close());

const SENTENCES = ['Hello there.', 'This is Kokoro speaking through the OpenAI protocol.'];
const LONG = Array.from(
  { length: 16 },
  (_, i) => `Sentence number ${i + 1} of a long answer that the user interrupts.`,
).join(' ');

const expected = async (text: string, voice: string) => audioReport(await referencePcm(server, text, voice));

/** The route's own answer for `input` as a file (stream_format audio). */
async function speech(input: string, voice: string, format: string): Promise<Buffer> {
  const response = await fetch(`${server.http}/v1/audio/speech`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'gpt-4o-mini-tts', input, voice, response_format: format }),
  });
  return Buffer.from(await response.arrayBuffer());
}

type Answer = AudioReport & { status: number; content_type?: string };
interface Cut {
  readonly status: number;
  readonly audio_before_cut: number;
}

describe('Pipecat (pipecat_openai.py: the SDK’s request over Debian’s aiohttp)', () => {
  let report: { voices: Record<string, Answer>; turn: Answer[]; cut: Cut; after_cut: Answer };
  let gone = 0;
  beforeAll(async () => {
    expectPythonModules('aiohttp');
    const before = await clientGone(server);
    report = (await replay('pipecat_openai.py', server.http)) as typeof report;
    gone = (await clientGone(server)) - before;
  }, 150_000);

  it('every voice name the service lets through (alloy, its default, among them) speaks as its Kokoro voice, in 24 kHz PCM', async () => {
    expect(Object.keys(report.voices).sort()).toEqual(Object.keys(OPENAI_VOICES).sort());
    for (const [name, answer] of Object.entries(report.voices)) {
      expect([name, answer.status, answer.content_type]).toEqual([
        name,
        200,
        'audio/pcm;rate=24000;encoding=s16le;channels=1',
      ]);
      expect(audioOf(answer), name).toEqual(
        await expected('Hello there.', OPENAI_VOICES[name as keyof typeof OPENAI_VOICES]),
      );
    }
  });

  it('a turn: one request per sentence, each the text’s PCM', async () => {
    for (const [i, answer] of report.turn.entries()) {
      expect(answer.status).toBe(200);
      expect(audioOf(answer)).toEqual(await expected(SENTENCES[i]!, 'af_alloy'));
    }
  });

  it('a barge-in closes the response mid-body: the server lets the request go; the next one is whole', async () => {
    expect(report.cut.status).toBe(200);
    expect(report.cut.audio_before_cut).toBeGreaterThan(0);
    expect(report.cut.audio_before_cut).toBeLessThan((await referencePcm(server, LONG, 'af_alloy')).length);
    expect(gone).toBeGreaterThanOrEqual(1);
    expect(report.after_cut.status).toBe(200);
    expect(audioOf(report.after_cut)).toEqual(await expected('After the cut.', 'af_alloy'));
  });
});

describe('LiveKit (livekit_openai.py: the SDK’s request over Debian’s aiohttp)', () => {
  interface Synthesized extends AudioReport {
    readonly status: number;
    readonly mime: string;
    readonly request_id: string | null;
    readonly events: string[];
    readonly usage: { input_tokens: number; output_tokens: number; total_tokens: number } | null;
  }
  let report: { turn: Synthesized[]; tts1_pcm: Synthesized; cut: Cut; after_cut: Synthesized };
  let gone = 0;
  beforeAll(async () => {
    expectPythonModules('aiohttp');
    const before = await clientGone(server);
    report = (await replay('livekit_openai.py', server.http)) as typeof report;
    gone = (await clientGone(server)) - before;
  }, 150_000);

  it('its defaults (gpt-4o-mini-tts, ash, mp3, stream_format sse): speech events whose deltas are the route’s MP3', async () => {
    for (const [i, answer] of report.turn.entries()) {
      const { status, mime, request_id, events, usage } = answer;
      expect([status, mime, events]).toEqual([200, 'audio/mp3', ['speech.audio.delta', 'speech.audio.done']]);
      expect(request_id).toEqual(expect.any(String));
      expect(usage).toMatchObject({ input_tokens: SENTENCES[i]!.length });
      const mp3 = await speech(SENTENCES[i]!, 'ash', 'mp3');
      expect(audioOf(answer)).toEqual(audioReport(mp3));
      if (FFMPEG.available) expect(decode(mp3, 'mp3', 24_000).ok).toBe(true);
    }
  });

  it('tts-1 with pcm: raw bytes, read as 24 kHz PCM by their Content-Type, of ash’s Kokoro voice', async () => {
    const { status, mime, events, usage } = report.tts1_pcm;
    expect([status, mime, events, usage]).toEqual([200, 'audio/pcm', [], null]);
    expect(audioOf(report.tts1_pcm)).toEqual(await expected('Hello there.', OPENAI_VOICES.ash));
  });

  it('a barge-in closes the response mid-stream: the server lets the request go; the next one is whole', async () => {
    expect(report.cut.status).toBe(200);
    expect(report.cut.audio_before_cut).toBeGreaterThan(0);
    expect(gone).toBeGreaterThanOrEqual(1);
    expect(report.after_cut.status).toBe(200);
    expect(audioOf(report.after_cut)).toEqual(audioReport(await speech('After the cut.', 'ash', 'mp3')));
  });
});
