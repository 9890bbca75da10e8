/**
 * ElevenLabs' dialect as the Python agent frameworks use it, unchanged: Pipecat's ElevenLabs
 * services (WebSocket, its default, and HTTP with timestamps) and LiveKit's Python ElevenLabs
 * plugin (WebSocket multi-stream, and its HTTP `/stream`), each replayed message for message from
 * its source by a script in test/fixtures/python/ with the library it uses (Debian's
 * python3-websockets and python3-aiohttp, so that their limits are real), reading the replies by
 * that client's rules and word-time math. Each turn must be spoken whole, its words placed within
 * the audio and in order, a barge-in must cut and say what was heard, and no message or line may
 * pass 64 KB.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { referencePcm, type TestServer } from './harness.ts';
import { expectPythonModules, replay, slowServer } from './python-replay.ts';

/** ElevenLabs' "Rachel" (af_heart), and LiveKit Python's default voice (af_bella). */
const RACHEL = '21m00Tcm4TlvDq8ikWAM';

let server: TestServer;
let close: () => Promise<void>;
beforeAll(async () => {
  // The Python clients are the subject: without Debian's modules the test fails, naming them.
  expectPythonModules('websockets', 'aiohttp');
  // Timed words, and inference slow enough that a barge-in lands while the answer is being made.
  ({ server, close } = await slowServer({
    repeat: 30,
    timestamps: true,
    voices: ['af_heart', 'af_bella'],
    env: { WS_IDLE_TIMEOUT_S: '0' },
  }));
});
afterAll(() => close?.());

/** Seconds of our own audio for these texts, each synthesized alone, at `rate`. */
async function referenceSeconds(texts: readonly string[], rate: number, voice = 'af_heart'): Promise<number> {
  let bytes = 0;
  for (const text of texts) bytes += (await referencePcm(server, text, voice, rate)).length;
  return bytes / 2 / rate;
}

const words = (texts: readonly string[]) => texts.join(' ').split(/\s+/).filter(Boolean);

/** Word times a client placed: in order, within the audio, the last ending with it. */
function expectPlaced(starts: number[], audioS: number, lastEnd: number): void {
  expect(starts.length).toBeGreaterThan(0);
  expect(starts).toEqual([...starts].sort((a, b) => a - b));
  expect(starts[0]).toBeGreaterThanOrEqual(0);
  expect(starts.at(-1)!).toBeLessThan(audioS);
  expect(Math.abs(lastEnd - audioS)).toBeLessThanOrEqual(0.1);
}

interface Final {
  isFinal: true;
  contextId: string;
  heard?: { samples: number; sample_rate: number; words: { word: string }[] };
}

interface PipecatTurn {
  audio_bytes: number;
  audio_s: number;
  odd_payloads: number;
  words: string[];
  starts: number[];
  clock_end_s: number;
  ignored_alignments: number;
  finals: Final[];
}

/** A barge-in: cut well before the end, answered by one isFinal saying what was heard. */
async function expectCut(
  turn: { audio_bytes: number; audio_s: number; finals: Final[] },
  texts: string[],
  rate: number,
) {
  expect(turn.finals).toHaveLength(1);
  const { heard } = turn.finals[0]!;
  // What the server sent is what it says was heard, in samples at the client's rate.
  expect(heard).toMatchObject({ samples: turn.audio_bytes / 2, sample_rate: rate });
  expect(heard!.words.length).toBeGreaterThan(0);
  expect(turn.audio_s).toBeLessThan((await referenceSeconds(texts, rate)) / 2);
}

describe("Pipecat's ElevenLabsTTSService (WebSocket multi-stream-input)", () => {
  it.each([24000, 32000, 48000])(
    'at %d Hz: turns spoken whole, words placed, barge-ins cut',
    async (rate) => {
      const out = (await replay(
        'pipecat_elevenlabs_ws.py',
        server.http.replace('http://', 'ws://'),
        RACHEL,
        `${rate}`,
      )) as {
        texts: { whole: string[]; long: string[]; tokens: string };
        sentence_mode: Record<string, unknown> & {
          errors: unknown[];
          max_message_bytes: number;
          server_closed_after_s: number | null;
        };
        token_mode: { tokens: PipecatTurn; errors: unknown[]; max_message_bytes: number };
      };
      const { texts, sentence_mode: sentences, token_mode: tokens } = out;
      // Sentences with no space between them, flushed with no text, then closed: spoken whole.
      const whole = sentences.whole as PipecatTurn;
      expect(whole.audio_s).toBeCloseTo(await referenceSeconds(texts.whole, rate), 2);
      expect(whole.finals).toEqual([{ isFinal: true, contextId: expect.any(String) }]);
      expect(whole.words).toEqual(words(texts.whole));
      expect(whole.ignored_alignments).toBe(0);
      expect(whole.odd_payloads).toBe(0);
      // Pipecat's clock (each message's times plus the ends before it) ends with the audio.
      expectPlaced(whole.starts, whole.audio_s, whole.clock_end_s);
      // Barge-ins, before the turn's end and after its own close: cut, with what was heard.
      await expectCut(sentences.interrupted as PipecatTurn, texts.long, rate);
      await expectCut(sentences.interrupted_after_end as PipecatTurn, texts.long, rate);
      // Keep-alives (with no context, and for a closed one) and a close for a context never opened
      // are taken without an error; close_socket closes within Pipecat's 2 s.
      expect(sentences.errors).toEqual([]);
      expect(sentences.server_closed_after_s).not.toBeNull();
      expect(sentences.max_message_bytes).toBeLessThanOrEqual(64_000);
      // Token mode: the last sentence too.
      expect(tokens.errors).toEqual([]);
      expect(tokens.tokens.words).toEqual(words([texts.tokens]));
      expect(tokens.tokens.audio_s).toBeCloseTo(
        await referenceSeconds(texts.tokens.split(/(?<=\.) /), rate),
        2,
      );
      expectPlaced(tokens.tokens.starts, tokens.tokens.audio_s, tokens.tokens.clock_end_s);
      expect(tokens.max_message_bytes).toBeLessThanOrEqual(64_000);
    },
  );
});

interface HttpRequest {
  status: number;
  lines: number;
  max_line_bytes: number;
  audio_bytes: number;
  odd_payloads: number;
  error?: string;
  utterance_duration?: number;
  interrupted?: boolean;
}

describe("Pipecat's ElevenLabsHttpTTSService (stream with timestamps, read by aiohttp's readline)", () => {
  it.each([24000, 44100])(
    'at %d Hz: every line read, the turn whole, words placed, a barge-in',
    async (rate) => {
      const out = (await replay('pipecat_elevenlabs_http.py', server.http, RACHEL, `${rate}`)) as {
        texts: { whole: string[]; long: string; after: string };
        whole: {
          requests: HttpRequest[];
          words: string[];
          starts: number[];
          clock_end_s: number;
          audio_s: number;
        };
        interrupted: HttpRequest;
        after: { request: HttpRequest; words: string[]; clock_end_s: number };
      };
      for (const request of [...out.whole.requests, out.after.request]) {
        expect(request).not.toHaveProperty('error');
        expect(request.status).toBe(200);
        expect(request.max_line_bytes).toBeLessThanOrEqual(64_000);
        expect(request.odd_payloads).toBe(0);
      }
      expect(out.whole.audio_s).toBeCloseTo(await referenceSeconds(out.texts.whole, rate), 2);
      expect(out.whole.words).toEqual(words(out.texts.whole));
      // Each sentence's last character ends with its audio, so the next sentence's words follow on.
      expectPlaced(out.whole.starts, out.whole.audio_s, out.whole.clock_end_s);
      // The barge-in: the answer dropped after its first line; the next turn is served.
      expect(out.interrupted).toMatchObject({ status: 200, lines: 1, interrupted: true });
      expect(out.after.words).toEqual(words([out.texts.after]));
      expect(out.after.clock_end_s).toBeCloseTo(out.after.request.audio_bytes / 2 / rate, 2);
    },
  );
});

interface LiveKitTurn {
  audio_bytes: number;
  audio_s: number;
  words: string[];
  starts: number[];
  ends: number[];
  finals: Final[];
}

describe("LiveKit's Python ElevenLabs plugin (multi-stream-input, and /stream)", () => {
  it.each(['pcm_24000', 'mp3_22050_32'])(
    '%s: its default voice, a reply spoken whole with its words placed, a barge-in cut',
    async (encoding) => {
      const out = (await replay('livekit_elevenlabs.py', `${server.http}/v1`, encoding)) as {
        texts: { whole: string[]; long: string[]; http: string };
        ws: { whole: LiveKitTurn; interrupted: LiveKitTurn; errors: unknown[]; max_message_bytes: number };
        http: { content_type: string; audio_s: number; error?: string };
      };
      const rate = encoding === 'pcm_24000' ? 24000 : 22050;
      const { whole, interrupted } = out.ws;
      expect(out.ws.errors).toEqual([]);
      expect(out.ws.max_message_bytes).toBeLessThanOrEqual(64_000);
      // MP3 frames hold a little more than the samples (the encoder's own delay and its last frame).
      expect(
        Math.abs(whole.audio_s - (await referenceSeconds(out.texts.whole, rate, 'af_bella'))),
      ).toBeLessThan(encoding === 'pcm_24000' ? 0.005 : 0.15);
      expect(whole.finals).toEqual([{ isFinal: true, contextId: expect.any(String) }]);
      expect(whole.words).toEqual(words(out.texts.whole));
      // LiveKit takes the times as they come (sync_alignment: on the context's clock).
      expectPlaced(whole.starts, whole.audio_s, whole.ends.at(-1)!);
      expect(whole.ends.slice(0, -1)).toEqual(whole.starts.slice(1));
      // The barge-in: close_context after sentences flushed one by one, audio still being made.
      expect(interrupted.finals).toHaveLength(1);
      expect(interrupted.finals[0]!.heard!.words.length).toBeGreaterThan(0);
      expect(interrupted.audio_s).toBeLessThan(
        (await referenceSeconds(out.texts.long, rate, 'af_bella')) / 2,
      );
      // ChunkedStream: an audio/* answer, the whole text.
      expect(out.http).not.toHaveProperty('error');
      expect(out.http.content_type).toMatch(/^audio\//);
      expect(
        Math.abs(out.http.audio_s - (await referenceSeconds([out.texts.http], rate, 'af_bella'))),
      ).toBeLessThan(0.15);
    },
  );
});
