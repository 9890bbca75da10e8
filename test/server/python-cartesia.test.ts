/**
 * Cartesia's protocol as the Python agent frameworks speak it: Pipecat's CartesiaTTSService and
 * CartesiaHttpTTSService, and LiveKit's Cartesia plugin (its WebSocket stream and its
 * `/tts/bytes` ChunkedStream), each replayed message for message from its source
 * (test/fixtures/python/, the lines cited there) with the library it uses: Debian's websockets
 * (its 1 MiB message limit) and aiohttp. Each replay reads the answers by its client's rules and
 * prints what the client would have made of them; this checks that against reference syntheses.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { TIMESTAMPED_MODEL_DIR, referencePcm, sharedServer, type TestServer } from './harness.ts';
import { audioReport, expectPythonModules, replay } from './python-replay.ts';

const BYTES_PER_SECOND = 24_000 * 2;
/** The most a Cartesia message may weigh here: Cartesia's chunks of 16384 bytes are about 22 KB. */
const MAX_MESSAGE_BYTES = 64 * 1024;

let server: TestServer;
beforeAll(async () => {
  // A missing module fails the file, naming its package: the replays are the point of it.
  expectPythonModules('websockets', 'aiohttp');
  server = await sharedServer({ KOKORO_MODEL_DIR: TIMESTAMPED_MODEL_DIR });
});

const reference = (text: string) => referencePcm(server, text);
const nonDecreasing = (xs: readonly number[]) => xs.every((x, i) => i === 0 || x >= xs[i - 1]!);

interface Turn {
  audio_bytes: number;
  words: string[];
  starts: number[];
}

/** What the replays print (test/fixtures/python/). */
interface PipecatTurn extends Turn {
  done: boolean;
  done_before_end: boolean;
  timed_out: boolean;
  errors: object[];
}
interface PipecatWsReport {
  texts: Record<'reply' | 'long' | 'barge_in' | 'after', string[]>;
  reply: PipecatTurn;
  long: PipecatTurn;
  after: PipecatTurn;
  barge_in: { heard_bytes: number; skipped_after_cancel: Record<string, number> };
  failure?: string;
  receive_failure?: string;
  key_errors: number;
  unknown_types: string[];
  close_code: number | null;
  max_message_bytes: number;
}
interface PipecatHttpReport {
  texts: string[];
  sentences: object[];
  no_voice: { error?: string };
}
interface LiveKitStream extends Turn {
  ends: number[];
  segments: number;
  outcome: string;
  errors: object[];
  wire_errors: Record<string, unknown>[];
  warnings: string[];
  max_message_bytes: number;
}
interface LiveKitReport {
  texts: Record<'reply' | 'long' | 'barge_in' | 'after', string[]> & { http: string };
  reply: LiveKitStream;
  long: LiveKitStream;
  embedding: LiveKitStream;
  reply_after_refusal: LiveKitStream;
  barge_in: LiveKitStream;
  after: LiveKitStream;
  sockets_opened: number;
  http: object;
}

/** A turn's words are timed in order from its context's start (not each message's), within its audio. */
function expectTimed(turn: Turn): void {
  expect(nonDecreasing(turn.starts)).toBe(true);
  expect(turn.starts[0]).toBeLessThan(0.5);
  expect(turn.starts.at(-1)!).toBeLessThan(turn.audio_bytes / BYTES_PER_SECOND);
  // Cumulative: the last word starts in the last second of the turn's audio, not near 0.
  expect(turn.starts.at(-1)!).toBeGreaterThan(turn.audio_bytes / BYTES_PER_SECOND - 1);
}

/** Pipecat's words are the text's words, each a word alone ("there." and "How", never "there.How"). */
function expectTimedWords(turn: Turn, text: string): void {
  expect(turn.words).toEqual(text.split(' '));
  expectTimed(turn);
}

async function errorsCounted(code: string): Promise<number> {
  const { values } = await server.lifecycle.metrics.errors.get();
  return values.find((v) => v.labels.code === code)?.value ?? 0;
}

describe('Pipecat’s CartesiaTTSService (WebSocket), replayed', () => {
  let report: PipecatWsReport;
  beforeAll(async () => {
    report = await replay<PipecatWsReport>('pipecat_cartesia_ws.py', server.http, 'af_heart');
  });

  it('keeps one socket through every turn: no reconnect, no unknown message, no message without context_id', () => {
    expect(report.failure).toBeUndefined();
    expect(report.receive_failure).toBeUndefined();
    expect(report.key_errors).toBe(0);
    expect(report.unknown_types).toEqual([]);
    expect(report.close_code).toBe(1000);
  });

  it('speaks a reply sent as sentences with no space between them, whole, and says done after its end only', async () => {
    const text = report.texts.reply.join(' ');
    const turn = report.reply;
    expect(turn).toMatchObject({ done: true, done_before_end: false, timed_out: false, errors: [] });
    expect(turn.audio_bytes).toBe((await reference(text)).length);
    expectTimedWords(turn, text);
  });

  it('sends a sentence of 20 s and more in messages under 64 KB (websockets refuses one over 1 MiB)', async () => {
    const text = report.texts.long[0]!;
    const pcm = await reference(text);
    expect(pcm.length / BYTES_PER_SECOND).toBeGreaterThan(20);
    expect(report.long).toMatchObject({ done: true, timed_out: false, audio_bytes: pcm.length });
    expectTimedWords(report.long, text);
    expect(report.max_message_bytes).toBeLessThan(MAX_MESSAGE_BYTES);
  });

  it('cancel cuts the reply: what follows it is the done that answers it, and the next reply is whole', async () => {
    const full = (await reference(report.texts.barge_in.join(' '))).length;
    const { heard_bytes: heard, skipped_after_cancel: skipped } = report.barge_in;
    expect(heard).toBeGreaterThan(0);
    // Pipecat skips what comes for a context it dropped: at most the chunks already on their way.
    expect(skipped.done).toBe(1);
    expect(heard + (skipped.chunk ?? 0) * 16_384).toBeLessThan(full / 2);
    const text = report.texts.after.join(' ');
    expect(report.after).toMatchObject({ done: true, timed_out: false, errors: [] });
    expect(report.after.audio_bytes).toBe((await reference(text)).length);
  });
});

describe('Pipecat’s CartesiaHttpTTSService (/tts/bytes), replayed', () => {
  it('answers each sentence with raw PCM, no header, the same bytes as our own synthesis; an error as text', async () => {
    const report = await replay<PipecatHttpReport>('pipecat_cartesia_http.py', server.http, 'af_heart');
    const texts = report.texts;
    expect(report.sentences).toHaveLength(texts.length);
    for (const [i, text] of texts.entries()) {
      const pcm = await reference(text);
      expect(report.sentences[i]).toEqual({
        status: 200,
        content_type: 'audio/pcm;rate=24000;encoding=s16le;channels=1',
        audio_bytes: pcm.length,
        riff: false,
        sha256: audioReport(pcm).sha256,
      });
    }
    // Pipecat's default voice is None: refused, and Pipecat shows the body.
    expect(report.no_voice.error).toMatch(
      /^Cartesia API error \(status 400\): \{"error_code":"invalid_option"/,
    );
  });
});

describe('LiveKit’s Cartesia plugin, replayed', () => {
  let report: LiveKitReport;
  let goneBefore: number;
  beforeAll(async () => {
    goneBefore = await errorsCounted('client_gone');
    report = await replay<LiveKitReport>('livekit_cartesia.py', server.http);
  });

  /** LiveKit aligns the words on the text it sent: put together, they are that text. */
  const expectLiveKitWords = (turn: LiveKitStream, text: string) => {
    expect(turn.words.join('').trim()).toBe(text);
    expect(turn.words.length).toBe(text.split(' ').length);
    expectTimed(turn);
    expect(turn.ends.every((end, i) => end >= turn.starts[i]!)).toBe(true);
  };

  it('speaks a reply whole, with its words timed from the context’s start, in one segment', async () => {
    const text = report.texts.reply.join(' ');
    expect(report.reply).toMatchObject({ outcome: 'ok', segments: 1, errors: [], warnings: [] });
    expect(report.reply.audio_bytes).toBe((await reference(text)).length);
    expectLiveKitWords(report.reply, text);
  });

  it('sends a sentence of 20 s and more in messages under 64 KB', async () => {
    const text = report.texts.long[0]!;
    const pcm = await reference(text);
    expect(pcm.length / BYTES_PER_SECOND).toBeGreaterThan(20);
    expect(report.long).toMatchObject({ outcome: 'ok', audio_bytes: pcm.length });
    expect(report.long.max_message_bytes).toBeLessThan(MAX_MESSAGE_BYTES);
    expectLiveKitWords(report.long, text);
  });

  it('refuses a voice embedding once, in Cartesia’s error shape with the context, and the pooled socket serves the next stream', async () => {
    // Cartesia's errors say done: LiveKit takes this one as the stream's end, with no audio.
    expect(report.embedding.outcome).toBe('no audio frames were pushed');
    expect(report.embedding.wire_errors).toHaveLength(1);
    expect(report.embedding.wire_errors[0]).toMatchObject({
      type: 'error',
      done: true,
      status_code: 400,
      error_code: 'invalid_option',
      context_id: expect.any(String),
      message: expect.stringMatching(/voice embeddings are not supported/),
    });
    const text = report.texts.reply.join(' ');
    expect(report.reply_after_refusal).toMatchObject({ outcome: 'ok', segments: 1, wire_errors: [] });
    expect(report.reply_after_refusal.audio_bytes).toBe((await reference(text)).length);
  });

  it('a barge-in closes the socket: the server stops that synthesis, and the next stream on a new socket is whole', async () => {
    const full = (await reference(report.texts.barge_in.join(' '))).length;
    expect(report.barge_in.outcome).toBe('cancelled');
    expect(report.barge_in.audio_bytes).toBeGreaterThan(0);
    expect(report.barge_in.audio_bytes).toBeLessThan(full / 2);
    expect(await errorsCounted('client_gone')).toBe(goneBefore + 1);
    expect(report.sockets_opened).toBe(2);
    const text = report.texts.after.join(' ');
    expect(report.after).toMatchObject({ outcome: 'ok', segments: 1 });
    expect(report.after.audio_bytes).toBe((await reference(text)).length);
  });

  it('ChunkedStream (/tts/bytes): raw PCM with no header, the same bytes as our own synthesis', async () => {
    const pcm = await reference(report.texts.http);
    expect(report.http).toEqual({
      audio_bytes: pcm.length,
      riff: false,
      sha256: audioReport(pcm).sha256,
      content_type: 'audio/pcm;rate=24000;encoding=s16le;channels=1',
    });
  });
});
