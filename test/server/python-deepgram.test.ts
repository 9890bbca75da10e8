/**
 * Pipecat's and LiveKit's Deepgram TTS clients, replayed in Python from their source
 * (test/fixtures/python/pipecat_deepgram.py, livekit_deepgram.py) against a running server:
 * Deepgram's /v1/speak and /v2/speak (Flux) over WebSocket and HTTP, with each client's default
 * model, its turn ends (Flushed on v1, SpeechMetadata on v2), its barge-in and what it reads next.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
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

/** The server's own PCM (or another format's bytes) for `text`, as a replay reports audio. */
async function expected(text: string, voice: string, format = 'pcm', rate = 24_000): Promise<AudioReport> {
  if (format === 'pcm') return audioReport(await referencePcm(server, text, voice, rate));
  const response = await fetch(`${server.http}/invocations`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ text, voice, format, sample_rate: rate }),
  });
  return audioReport(new Uint8Array(await response.arrayBuffer()));
}

const TURN = 'Hello there. This is Kokoro speaking through the Deepgram protocol.';
const LONG = Array.from(
  { length: 16 },
  (_, i) => `Sentence number ${i + 1} of a long answer that the user interrupts.`,
).join(' ');

type Messages = Record<string, unknown>[];
interface Turn extends AudioReport {
  readonly messages: Messages;
}
interface BargeIn {
  readonly audio_before_answer: number;
  readonly messages: Messages;
  readonly late_audio: number;
  readonly late_messages: Messages;
}

describe('Pipecat (pipecat_deepgram.py: websockets and aiohttp, as Debian ships them)', () => {
  let report: {
    aura: {
      opening: Messages;
      turn: Turn;
      barge_in: BargeIn;
      after_cut: Turn;
      types: string[];
      alaw: AudioReport;
    };
    flux: { opening: Messages; turn: Turn; barge_in: BargeIn; idle_interrupt: Messages; after_cut: Turn };
    http: { status: number; content_type: string; audio: AudioReport };
  };
  beforeAll(async () => {
    expectPythonModules('websockets', 'aiohttp');
    report = (await replay('pipecat_deepgram.py', server.http)) as typeof report;
  }, 150_000);

  it('DeepgramTTSService: its default model speaks (af_bella), one Flushed ends each turn after all of its audio', async () => {
    expect(report.aura.opening).toEqual([
      expect.objectContaining({ type: 'Metadata', model_name: 'af_bella' }),
    ]);
    expect(audioOf(report.aura.turn)).toEqual(await expected(TURN, 'af_bella'));
    expect(report.aura.turn.messages).toEqual([{ type: 'Flushed', sequence_id: 0 }]);
    expect(report.aura.types).toEqual(['Flushed', 'Cleared', 'Flushed']);
  });

  it('DeepgramTTSService: Clear cuts the turn; nothing of it follows Cleared; the next turn is only itself', async () => {
    const { audio_before_answer, messages, late_audio, late_messages } = report.aura.barge_in;
    const [cleared] = messages as [{ type: string; heard: { samples: number } }];
    expect(cleared).toMatchObject({ type: 'Cleared', sequence_id: 0 });
    // What arrived before Cleared is what Cleared says was sent, less than the whole reply.
    expect(cleared.heard.samples * 2).toBe(audio_before_answer);
    expect(audio_before_answer).toBeLessThan((await referencePcm(server, LONG, 'af_bella')).length);
    expect([late_audio, late_messages]).toEqual([0, []]);
    expect(audioOf(report.aura.after_cut)).toEqual(await expected('After the cut.', 'af_bella'));
    expect(report.aura.after_cut.messages).toEqual([{ type: 'Flushed', sequence_id: 1 }]);
  });

  it('DeepgramTTSService with encoding=alaw: A-law at 8 kHz, the server’s alaw for the text', async () => {
    expect(report.aura.alaw).toEqual(await expected('Hello there.', 'af_bella', 'alaw', 8000));
  });

  it('DeepgramFluxTTSService: tokens in, SpeechStarted, the audio, then SpeechMetadata ends the turn', async () => {
    expect(report.flux.opening).toEqual([
      expect.objectContaining({ type: 'Connected', model_name: 'af_bella' }),
    ]);
    const { messages, bytes } = report.flux.turn;
    expect(audioOf(report.flux.turn)).toEqual(
      await expected("Unbelievable isn't it? I think so.", 'af_bella'),
    );
    const speechId = messages[0]!.speech_id;
    expect(messages).toEqual([
      { type: 'SpeechStarted', speech_id: expect.stringMatching(/^dg_sp_[0-9a-f]{12}$/) },
      expect.objectContaining({ type: 'SpeechMetadata', speech_id: speechId, input_character_count: 34 }),
    ]);
    expect(messages[1]!.audio_duration_ms).toBe(Math.round(bytes / 48));
  });

  it('DeepgramFluxTTSService: Interrupt cuts the turn (SpeechInterrupted), nothing follows it, an idle Interrupt is a routine Warning', async () => {
    const { audio_before_answer, messages, late_audio, late_messages } = report.flux.barge_in;
    // The previous turn's trailing Flushed, then the cut turn's start and its interruption.
    expect(messages.map((m) => m.type)).toEqual(['Flushed', 'SpeechStarted', 'SpeechInterrupted']);
    const interrupted = messages[2] as { metadata: { speech_id: unknown }; heard: { samples: number } };
    expect(interrupted.metadata.speech_id).toBe(messages[1]!.speech_id);
    expect(interrupted.heard.samples * 2).toBe(audio_before_answer);
    expect(audio_before_answer).toBeLessThan((await referencePcm(server, LONG, 'af_bella')).length);
    expect([late_audio, late_messages]).toEqual([0, []]);
    expect(report.flux.idle_interrupt).toEqual([
      expect.objectContaining({ type: 'Warning', code: 'NO_ACTIVE_SPEECH', warn_msg: expect.any(String) }),
    ]);
    expect(audioOf(report.flux.after_cut)).toEqual(await expected('After the cut.', 'af_bella'));
    expect(report.flux.after_cut.messages.map((m) => m.type)).toEqual(['SpeechStarted', 'SpeechMetadata']);
  });

  it('DeepgramHttpTTSService: 200 and raw PCM with container=none, no WAV header', async () => {
    expect(report.http.status).toBe(200);
    expect(report.http.content_type).toBe('audio/pcm;rate=24000;encoding=s16le;channels=1');
    expect(report.http.audio).toEqual(await expected('Hello there.', 'af_bella'));
  });
});

describe('LiveKit (livekit_deepgram.py: aiohttp, as Debian ships it)', () => {
  interface Streamed {
    turn: AudioReport & { types: string[] };
    reused: AudioReport & { types: string[] };
    cut: { audio: number; first_after_close: string | null };
    after_cut: AudioReport & { types: string[] };
  }
  let report: {
    tts: Streamed;
    tts_v2: Streamed;
    http: { status: number; audio: AudioReport };
    http_v2: { status: number; audio: AudioReport };
  };
  let goneBefore = 0;
  let goneAfter = 0;
  beforeAll(async () => {
    expectPythonModules('aiohttp');
    goneBefore = await clientGone(server);
    report = (await replay('livekit_deepgram.py', server.http)) as typeof report;
    goneAfter = await clientGone(server);
  }, 150_000);

  it('TTS (aura-2-andromeda-en, af_heart): words in, Flushed ends each turn, the socket reused', async () => {
    const { tts } = report;
    expect(audioOf(tts.turn)).toEqual(await expected(TURN, 'af_heart'));
    expect(tts.turn.types).toEqual(['Metadata', 'Flushed']);
    expect(audioOf(tts.reused)).toEqual(await expected('A second turn on the same socket.', 'af_heart'));
    expect(tts.reused.types).toEqual(['Flushed']);
  });

  it('TTSv2 (flux-alexis-en, af_heart): SpeechMetadata ends each turn; the trailing Flushed opens the next read', async () => {
    const { tts_v2 } = report;
    expect(audioOf(tts_v2.turn)).toEqual(await expected(TURN, 'af_heart'));
    expect(tts_v2.turn.types).toEqual(['Connected', 'SpeechStarted', 'SpeechMetadata']);
    expect(audioOf(tts_v2.reused)).toEqual(await expected('A second turn on the same socket.', 'af_heart'));
    expect(tts_v2.reused.types).toEqual(['Flushed', 'SpeechStarted', 'SpeechMetadata']);
  });

  it('a cut stream: its socket is flushed, closed and dropped; the server stops it; the next turn is only itself', async () => {
    for (const { cut, after_cut } of [report.tts, report.tts_v2]) {
      expect(cut.audio).toBeGreaterThan(0);
      // The plugin waits up to a second for any message after Flush and Close: the cut turn's audio.
      expect(cut.first_after_close).toBe('audio');
      expect(audioOf(after_cut)).toEqual(await expected('After the cut.', 'af_heart'));
    }
    expect(report.tts.after_cut.types).toEqual(['Metadata', 'Flushed']);
    expect(report.tts_v2.after_cut.types).toEqual(['Connected', 'SpeechStarted', 'SpeechMetadata']);
    // Each closed socket's turn was still being synthesized: the server let it go.
    expect(goneAfter - goneBefore).toBeGreaterThanOrEqual(2);
  });

  it('synthesize() on /v1/speak and /v2/speak: raw PCM of the default model’s voice', async () => {
    for (const http of [report.http, report.http_v2]) {
      expect(http.status).toBe(200);
      expect(http.audio).toEqual(await expected('Hello there.', 'af_heart'));
    }
  });
});
