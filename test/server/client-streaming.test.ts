/**
 * The client's barge-in and streamed text (`cancel`, `append`, `flush`) and word timestamps,
 * against real listening servers, through both sessions: the WebSocket session, and the SageMaker
 * session over a bridge that relays its payload parts to the server's WebSocket route as
 * SageMaker's service does. A stand-in slowed so that one piece of a long sentence takes a few
 * hundred milliseconds keeps work in flight while a cancel arrives; the verdicts are event orders
 * and audio bytes, never timings.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import {
  AsyncQueue,
  TtsRequestError,
  TtsSession,
  type SynthesisOptions,
  type TtsCancelledEvent,
  type TtsEvent,
} from 'kokoro-stream-client';
import {
  SageMakerTtsSession,
  type BidiInvokeInput,
  type BidiResponseEvent,
  type BidiStreamClient,
  type TtsResult,
} from 'kokoro-stream-client/sagemaker';
import { writeStandinModelDir } from '../../scripts/lib/standin-model.ts';
import {
  bytesDiff,
  llmTokens,
  TIMESTAMPED_MODEL_DIR,
  sharedServer,
  startServer,
  type TestServer,
} from './harness.ts';

/** One sentence that normalization makes into six inferences of about 500 phoneme ids each. */
const SIX_PIECES = `Codes ${Array.from({ length: 30 }, () => '987654321').join(', ')} end.`;
const SHORT = 'A short sentence.';
const PARAGRAPH =
  'Streaming text arrives in small pieces. The server speaks each sentence once it is complete! ' +
  'Numbers like 3.14 and abbreviations like Dr. Smith stay whole. Does the last one wait for the flush';
const BYTES_PER_SECOND = 24_000 * 2;

function concat(chunks: readonly Uint8Array[]): Uint8Array {
  const out = new Uint8Array(chunks.reduce((n, c) => n + c.byteLength, 0));
  let at = 0;
  for (const chunk of chunks) {
    out.set(chunk, at);
    at += chunk.byteLength;
  }
  return out;
}

const audioOf = (events: readonly TtsEvent[], requestId: string): Uint8Array =>
  concat(events.flatMap((e) => (e.type === 'audio' && e.requestId === requestId ? [e.bytes] : [])));

const requestIdOf = (event: TtsEvent): string | undefined =>
  event.type === 'closed' ? undefined : event.requestId;

const isComplete = (requestId: string) => (e: TtsEvent) => e.type === 'complete' && e.requestId === requestId;

/** Above this size a frame is relayed as PARTIAL parts, as SageMaker may split it. */
const PART_BYTES = 16 * 1024;

/**
 * Stands in for SageMaker's HTTP/2 service in front of the real server: every request payload part
 * goes to the container's WebSocket route as one binary frame, and every frame comes back as
 * payload parts (UTF8 for text frames, BINARY for binary ones; large ones split into PARTIAL parts
 * closed by a COMPLETE one). The response stream ends when the server closes the connection.
 */
class WebSocketBridge implements BidiStreamClient {
  constructor(private readonly url: string) {}

  async send(command: object, options?: { abortSignal?: AbortSignal }): Promise<unknown> {
    const { input } = command as { input: BidiInvokeInput };
    const socket = new WebSocket(this.url);
    const response = new AsyncQueue<BidiResponseEvent>();
    socket.on('message', (data: Buffer, isBinary) => {
      const DataType = isBinary ? 'BINARY' : 'UTF8';
      for (let at = 0; at < data.length || at === 0; at += PART_BYTES) {
        const last = at + PART_BYTES >= data.length;
        response.push({
          PayloadPart: {
            Bytes: new Uint8Array(data.subarray(at, at + PART_BYTES)),
            DataType,
            CompletionState: last ? 'COMPLETE' : 'PARTIAL',
          },
        });
      }
    });
    socket.on('close', () => response.end());
    options?.abortSignal?.addEventListener('abort', () => socket.terminate());
    await new Promise<void>((resolve, reject) => {
      socket.once('open', () => resolve());
      socket.once('error', reject);
    });
    void (async () => {
      for await (const event of input.Body) {
        if (socket.readyState === WebSocket.OPEN) socket.send(event.PayloadPart.Bytes!, { binary: true });
      }
    })();
    return { Body: { [Symbol.asyncIterator]: () => ({ next: () => response.next() }) } };
  }
}

/** What the tests use of a session: the same methods on both. */
interface Session {
  send(text: string, options?: SynthesisOptions): string;
  request(text: string, options?: SynthesisOptions): Promise<TtsResult>;
  append(text: string, options?: SynthesisOptions): string;
  flush(): Promise<TtsResult>;
  cancel(requestId?: string): Promise<TtsCancelledEvent>;
  close(): Promise<unknown>;
}

/** Reads a session's events, keeping every event seen. */
class Reader {
  readonly seen: TtsEvent[] = [];
  readonly #events: AsyncIterator<TtsEvent>;
  #pending: Promise<IteratorResult<TtsEvent>> | undefined;

  constructor(events: AsyncIterator<TtsEvent>) {
    this.#events = events;
  }

  /** Reads until an event satisfies `predicate` (among those seen so far too); returns all seen. */
  async until(
    predicate: (event: TtsEvent) => boolean,
    what: string,
    timeoutMs = 30_000,
  ): Promise<TtsEvent[]> {
    const deadline = Date.now() + timeoutMs;
    while (!this.seen.some(predicate)) {
      this.#pending ??= this.#events.next();
      let timer: NodeJS.Timeout | undefined;
      const next = await Promise.race([
        this.#pending,
        new Promise<'timeout'>((resolve) => {
          timer = setTimeout(() => resolve('timeout'), Math.max(0, deadline - Date.now()));
        }),
      ]);
      clearTimeout(timer);
      if (next === 'timeout') throw new Error(`timed out waiting for ${what}; seen: ${this.describe()}`);
      this.#pending = undefined;
      if (next.done) throw new Error(`the events ended before ${what}; seen: ${this.describe()}`);
      this.seen.push(next.value);
    }
    return this.seen;
  }

  describe(): string {
    return this.seen
      .map((e) => `${e.type}:${requestIdOf(e) ?? ''}`)
      .filter((s, i, all) => s !== all[i - 1])
      .join(', ')
      .slice(0, 2000);
  }
}

type Kind = 'websocket' | 'sagemaker';

async function open(kind: Kind, server: TestServer): Promise<{ session: Session; reader: Reader }> {
  if (kind === 'websocket') {
    const session = await TtsSession.connect(server.ws);
    return { session, reader: new Reader(session.events()) };
  }
  const session = await SageMakerTtsSession.connect({
    endpointName: 'kokoro',
    client: new WebSocketBridge(server.ws),
    commandFactory: (input) => ({ input }),
  });
  return { session, reader: new Reader(session.events()) };
}

let fast: TestServer;
let slow: TestServer;
let timestamped: TestServer;
let slowDir: string;
beforeAll(async () => {
  slowDir = mkdtempSync(join(tmpdir(), 'kokoro-client-streaming-'));
  await writeStandinModelDir(slowDir, { repeat: 60, voices: ['af_heart'], log: () => {} });
  [fast, slow, timestamped] = await Promise.all([
    sharedServer(),
    startServer({ KOKORO_MODEL_DIR: slowDir, WS_IDLE_TIMEOUT_S: '0' }),
    sharedServer({ KOKORO_MODEL_DIR: TIMESTAMPED_MODEL_DIR }),
  ]);
}, 120_000);
afterAll(async () => {
  await Promise.all([fast?.close(), slow?.close(), timestamped?.close()]);
  rmSync(slowDir, { recursive: true, force: true });
});

describe.each<Kind>(['websocket', 'sagemaker'])('%s session', (kind) => {
  describe('cancel()', () => {
    it('answers with the ids of every request whose completion did not come; their request() promises reject with code cancelled', async () => {
      const { session } = await open(kind, slow);
      const texts = [SIX_PIECES, `Second. ${SIX_PIECES}`, SHORT, SHORT];
      const ids = texts.map((_, i) => `queued-${i}`);
      const pending = texts.map((text, i) => session.request(text, { request_id: ids[i] }));
      const answer = await session.cancel();
      const settled = await Promise.allSettled(pending);

      // Whatever the race: a request either completed (resolved) or is named by the answer, in order.
      const notCompleted = ids.filter((_, i) => settled[i]!.status === 'rejected');
      expect(answer).toEqual({
        type: 'cancelled',
        requestId: expect.any(String),
        cancelled: notCompleted,
        // It cut the request in flight: what of it was sent comes with the answer.
        heard: expect.objectContaining({ requestId: answer.requestId, sampleRate: 24000 }),
      });
      // Six slow inferences ahead of it: the last one cannot have been reached.
      expect(answer.cancelled).toContain(ids[3]);
      for (const [i, outcome] of settled.entries()) {
        if (outcome.status === 'fulfilled') {
          expect(outcome.value.complete.requestId).toBe(ids[i]);
          continue;
        }
        expect(outcome.reason).toBeInstanceOf(TtsRequestError);
        expect(outcome.reason).toMatchObject({ code: 'cancelled', requestId: ids[i] });
      }
      // The cut request in flight is the answer's request_id.
      expect(answer.requestId).toBe(answer.cancelled[0]);

      // The session goes on: a request after the cancel is served in full.
      const after = await session.request(SHORT, { request_id: 'after' });
      expect(after.complete.requestId).toBe('after');
      expect(after.audio.length).toBe(Math.round(after.complete.totalDurationS * BYTES_PER_SECOND));
      expect(after.audio.length).toBeGreaterThan(0);
      await session.close();
    });

    it('no event of a cancelled request follows the cancelled event, and later audio belongs to the next request', async () => {
      const { session, reader } = await open(kind, slow);
      const first = session.send(`First sentence. ${SIX_PIECES} Last sentence.`);
      const second = session.send(SHORT);
      await reader.until((e) => e.type === 'audio' && e.requestId === first, 'the first sentence');
      const answer = await session.cancel();
      await reader.until((e) => e.type === 'cancelled', 'the cancelled event');
      const next = session.send(SHORT);
      const events = await reader.until(isComplete(next), 'the next request');

      // The long sentence was in flight: it is cut, the queued one dropped.
      expect(answer).toEqual({
        type: 'cancelled',
        requestId: first,
        cancelled: [first, second],
        heard: expect.objectContaining({ requestId: first, sampleRate: 24000 }),
      });
      const at = events.findIndex((e) => e.type === 'cancelled');
      expect(events[at]).toEqual(answer);
      const before = events.slice(0, at);
      const afterwards = events.slice(at + 1);
      // Before it: the cut request's start and audio so far, no completion.
      expect(before.every((e) => requestIdOf(e) === first)).toBe(true);
      expect(before.some((e) => e.type === 'complete')).toBe(false);
      // After it: nothing of either cancelled request; every event is the next request's.
      expect(afterwards.filter((e) => answer.cancelled.includes(requestIdOf(e) ?? ''))).toEqual([]);
      expect(afterwards.every((e) => requestIdOf(e) === next)).toBe(true);
      expect(afterwards[0]).toEqual({ type: 'start', requestId: next });
      // Attribution is right when the next request's audio equals the same text requested alone.
      expect(bytesDiff(audioOf(events, next), (await session.request(SHORT)).audio)).toBeUndefined();
      await session.close();
    });

    it('with a request id: only that request is dropped, the others complete', async () => {
      const { session } = await open(kind, slow);
      const p = session.request(SIX_PIECES, { request_id: 'p' });
      const q = session.request(SHORT, { request_id: 'q' });
      const r = session.request(SHORT, { request_id: 'r' });
      // q waits behind six slow inferences of p: it is still queued when the cancel arrives.
      expect(await session.cancel('q')).toEqual({ type: 'cancelled', requestId: 'q', cancelled: ['q'] });
      await expect(q).rejects.toMatchObject({ name: 'TtsRequestError', code: 'cancelled', requestId: 'q' });
      expect((await p).complete.requestId).toBe('p');
      expect((await r).complete.requestId).toBe('r');
      // Nothing in flight and an unknown id: answered at once, cutting nothing.
      expect(await session.cancel('ghost')).toEqual({ type: 'cancelled', requestId: 'ghost', cancelled: [] });
      expect(await session.cancel()).toEqual({ type: 'cancelled', cancelled: [] });
      await session.close();
    });

    it('cuts an utterance: its flush() rejects with code cancelled, and the next append opens a new one', async () => {
      const { session, reader } = await open(kind, slow);
      const first = session.append(`${SIX_PIECES} And then`);
      await reader.until((e) => e.type === 'start' && e.requestId === first, 'the utterance to start');
      const flushed = session.flush();
      const answer = await session.cancel();
      expect(answer).toEqual({
        type: 'cancelled',
        requestId: first,
        cancelled: [first],
        heard: expect.objectContaining({ requestId: first, sampleRate: 24000 }),
      });
      await expect(flushed).rejects.toMatchObject({ code: 'cancelled', requestId: first });

      // An utterance still open (not flushed) is dropped by a cancel too.
      const writing = session.append(`${SIX_PIECES} Still being written`);
      await reader.until(
        (e) => e.type === 'start' && e.requestId === writing,
        'the second utterance to start',
      );
      expect((await session.cancel()).cancelled).toEqual([writing]);

      const next = session.append(SHORT);
      expect(next).not.toBe(writing);
      const result = await session.flush();
      expect(result.complete.requestId).toBe(next);
      const events = await reader.until(isComplete(next), 'the new utterance');
      const lastCancel = events.findLastIndex((e) => e.type === 'cancelled');
      expect(events.slice(lastCancel + 1).every((e) => requestIdOf(e) === next)).toBe(true);
      expect(bytesDiff(result.audio, (await session.request(SHORT)).audio)).toBeUndefined();
      await session.close();
    });
  });

  describe('append() and flush()', () => {
    it('many small appends then flush() give the audio of the same text sent whole with request()', async () => {
      const { session, reader } = await open(kind, fast);
      const pieces = llmTokens(PARAGRAPH);
      expect(pieces.length).toBeGreaterThan(40);
      const options = { voice: 'af_bella', speed: 1.2 } as const;
      const id = session.append(pieces[0]!, options);
      for (const piece of pieces.slice(1)) expect(session.append(piece)).toBe(id);
      const streamed = await session.flush();
      const whole = await session.request(PARAGRAPH, options);

      expect(streamed.complete.requestId).toBe(id);
      expect(streamed.audio.length).toBeGreaterThan(0);
      expect(bytesDiff(streamed.audio, whole.audio)).toBeUndefined();
      expect(streamed.complete.raw.chunks).toBe(whole.complete.raw.chunks);
      expect(streamed.words).toEqual([]);
      // Its events went to events() as they came: start, audio sentence by sentence, complete.
      const events = await reader.until(isComplete(id), 'the utterance');
      const shape = events.map((e) => e.type).filter((t, i, all) => t !== all[i - 1]);
      expect(shape).toEqual(['start', 'audio', 'complete']);
      expect(events.every((e) => requestIdOf(e) === id)).toBe(true);
      expect(events.filter((e) => e.type === 'audio').length).toBeGreaterThanOrEqual(4);
      expect(bytesDiff(audioOf(events, id), streamed.audio)).toBeUndefined();
      await session.close();
    });

    it('takes the request id given on the first append and options only there; a flush with nothing open completes empty', async () => {
      const { session } = await open(kind, fast);
      expect(session.append('Mine. ', { request_id: `mine-${kind}` })).toBe(`mine-${kind}`);
      expect(() => session.append('Refused.', { voice: 'af_sky' })).toThrow(/Only the first append/);
      expect(session.append('Still mine.')).toBe(`mine-${kind}`);
      const result = await session.flush();
      expect(result.complete.requestId).toBe(`mine-${kind}`);
      expect(result.complete.raw.chunks).toBe(2);
      expect(bytesDiff(result.audio, (await session.request('Mine. Still mine.')).audio)).toBeUndefined();

      const empty = await session.flush();
      expect(empty.audio.length).toBe(0);
      expect(empty.complete.totalDurationS).toBe(0);
      expect(empty.complete.raw.chunks).toBe(0);
      expect(empty.complete.requestId).not.toBe(`mine-${kind}`);
      await session.close();
    });
  });

  describe('timestamps', () => {
    const TEXT = 'Hello there, my friend. This second sentence has a few more words! And a third one.';

    it('yields words events in text order, each before the audio of its chunk', async () => {
      const { session, reader } = await open(kind, timestamped);
      const id = session.send(TEXT, { timestamps: true });
      const events = await reader.until(
        (e) => (e.type === 'complete' || e.type === 'error') && e.requestId === id,
        'the request',
      );
      expect(events.filter((e) => e.type === 'error')).toEqual([]);
      expect(events.every((e) => requestIdOf(e) === id)).toBe(true);
      // start, then per chunk its words and then its audio, then complete.
      const shape = events
        .map((e) => e.type)
        .filter((t, i, all) => t !== all[i - 1])
        .join(',');
      expect(shape).toMatch(/^start(,words,audio)+,complete$/);

      const words = events.flatMap((e) => (e.type === 'words' ? e.words : []));
      expect(words.map((w) => w.word)).toEqual(TEXT.split(/\s+/));
      // On the request's audio clock: each words event's words end within the chunk that follows it.
      let heard = 0;
      for (const [i, event] of events.entries()) {
        if (event.type === 'audio') heard += event.bytes.length / BYTES_PER_SECOND;
        if (event.type !== 'words') continue;
        let chunkEnd = heard;
        for (const later of events.slice(i + 1)) {
          if (later.type === 'words' || later.type === 'complete') break;
          if (later.type === 'audio') chunkEnd += later.bytes.length / BYTES_PER_SECOND;
        }
        for (const word of event.words) {
          expect(word.startS).toBeLessThanOrEqual(word.endS);
          expect(word.endS).toBeGreaterThan(heard - 0.002);
          expect(word.endS).toBeLessThanOrEqual(chunkEnd + 0.002);
        }
      }
      for (const [i, word] of words.entries()) {
        if (i > 0) expect(word.startS).toBeGreaterThanOrEqual(words[i - 1]!.startS);
      }

      // request() gathers the same words with the audio.
      const result = await session.request(TEXT, { timestamps: true });
      expect(result.words).toEqual(words);
      expect(bytesDiff(result.audio, audioOf(events, id))).toBeUndefined();
      await session.close();
    });
  });
});
