/**
 * One request's window of sentences in flight, over a pool that only records what it is asked:
 * order, the bound of the look-ahead, which sentence is next-needed, when each is due, and how the
 * request leaves the pool (handed over whole, stopped by its listener, aborted, failed).
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import type {
  JobHandle,
  PieceResult,
  PoolRequest,
  SentenceRequest,
  SubmitOptions,
} from '../../../model/inference/worker-pool.ts';
import type { SpeechSegment } from '../../../model/synthesis/request.ts';
import type { AudioChunk } from '../../../model/synthesis/run.ts';
import type { Segment } from '../../../model/synthesis/script.ts';
import { RequestWindow } from '../../../model/synthesis/window.ts';
import { isAbortError } from '../../../protocol/errors.ts';

interface Job {
  readonly text: string;
  readonly needed: boolean;
  /** When the window says its listener needs it. */
  readonly due: () => number;
  promoted: boolean;
  /** Hands over `n` pieces of audio (`samples` each), then ends the sentence. */
  finish(n?: number, samples?: number): void;
  fail(err: Error): void;
}

/** Audio the pool expects of a sentence: 100 ms a character at speed 1. */
const AUDIO_MS_PER_CHAR = 100;

class RecordingPool implements PoolRequest {
  readonly jobs: Job[] = [];
  closed = 0;

  audioMs(chars: number, speed: number): number {
    return (chars * AUDIO_MS_PER_CHAR) / speed;
  }

  submit(
    sentence: SentenceRequest,
    onPiece: (piece: PieceResult) => void,
    { needed, due }: SubmitOptions,
  ): JobHandle {
    let resolve!: () => void;
    let reject!: (err: Error) => void;
    const done = new Promise<{ frontEndMs: number; pieces: number }>((res, rej) => {
      resolve = () => res({ frontEndMs: 0, pieces: 1 });
      reject = rej;
    });
    const job: Job = {
      text: sentence.text,
      needed,
      due,
      promoted: false,
      finish: (n = 1, samples = 4) => {
        for (let i = 0; i < n; i++)
          onPiece({ samples: new Int16Array(samples), phonemeCount: 1, inferenceMs: 1 });
        resolve();
      },
      fail: reject,
    };
    this.jobs.push(job);
    return { done, promote: () => (job.promoted = true) };
  }

  close(): void {
    this.closed++;
  }
}

const tick = () => new Promise((resolve) => setImmediate(resolve));

const VOICE = { key: 'af_heart', lang: 'a', parts: [] } as const;

const speech = (text: string): Segment => ({ kind: 'speech', parts: [{ text }], voice: VOICE, speed: 1 });

async function* sentences(texts: readonly (string | Segment)[]): AsyncGenerator<Segment> {
  for (const t of texts) yield typeof t === 'string' ? speech(t) : t;
}

const job = (segment: SpeechSegment) => ({
  text: segment.parts.map((p) => p.text).join(''),
  lang: 'a' as const,
  voice: VOICE,
  speed: 1,
});

function windowOver(
  texts: readonly (string | Segment)[] | AsyncGenerator<Segment>,
  lookahead: number,
  signal = new AbortController().signal,
  maxSamples?: number,
) {
  const pool = new RecordingPool();
  const source = Array.isArray(texts) ? sentences(texts) : (texts as AsyncGenerator<Segment>);
  const window = new RequestWindow(pool, source, job, lookahead, signal, maxSamples);
  return { pool, audio: window.audio() };
}

const SIX = ['s0', 's1', 's2', 's3', 's4', 's5'];

describe('RequestWindow', () => {
  it('hands the audio over in order, whichever sentence finishes first', async () => {
    const { pool, audio } = windowOver(['a', 'b', 'c'], 2);
    const taken: AudioChunk[] = [];
    const reading = (async () => {
      for await (const chunk of audio) taken.push(chunk);
    })();
    await tick();
    expect(pool.jobs.map((j) => j.text)).toEqual(['a', 'b', 'c']);
    pool.jobs[2]!.finish(2);
    pool.jobs[1]!.finish();
    await tick();
    expect(taken).toEqual([]);
    pool.jobs[0]!.finish();
    await reading;
    expect(taken.map((c) => c.sentence)).toEqual([0, 1, 2, 2]);
    expect(pool.closed).toBe(1);
  });

  it('a pause is exact silence in its turn, a mark a chunk of no samples; neither reaches the pool', async () => {
    const { pool, audio } = windowOver(
      ['a', { kind: 'pause', ms: 1500 }, { kind: 'mark', name: 'here' }, 'b', { kind: 'pause', ms: 0.5 }],
      2,
    );
    const taken: AudioChunk[] = [];
    const reading = (async () => {
      for await (const chunk of audio) taken.push(chunk);
    })();
    await tick();
    expect(pool.jobs.map((j) => j.text)).toEqual(['a', 'b']);
    expect(taken).toEqual([]); // the pause waits for the sentence before it
    pool.jobs[1]!.finish();
    pool.jobs[0]!.finish();
    await reading;
    // Silence is made a second at a time as it is handed over.
    expect(taken.map((c) => [c.sentence, c.samples.length, c.mark])).toEqual([
      [0, 4, undefined],
      [1, 24_000, undefined],
      [1, 12_000, undefined],
      [2, 0, 'here'],
      [3, 4, undefined],
      [4, 12, undefined],
    ]);
    expect(taken.slice(1, 3).every((c) => c.samples.every((x) => x === 0))).toBe(true);
  });

  it('takes at most 8 pauses and marks ahead of the audio, so a text of pauses costs no memory while it waits', async () => {
    let pulled = 0;
    async function* pauses(): AsyncGenerator<Segment> {
      for (;;) {
        pulled++;
        yield { kind: 'pause', ms: 10_000 };
      }
    }
    const { audio } = windowOver(pauses(), 2);
    const first = await audio.next();
    await tick();
    expect(first.value?.samples.length).toBe(24_000);
    expect(pulled).toBeLessThanOrEqual(9);
    await audio.return(undefined);
  });

  it('ends with audio_too_long once the audio handed over would pass the bound, pauses included', async () => {
    const { pool, audio } = windowOver(['a', { kind: 'pause', ms: 1000 }, 'b'], 2, undefined, 24_000 + 4);
    const taken: number[] = [];
    const reading = (async () => {
      for await (const chunk of audio) taken.push(chunk.samples.length);
    })();
    await tick();
    for (const j of pool.jobs) j.finish();
    await expect(reading).rejects.toMatchObject({ code: 'audio_too_long' });
    expect(taken).toEqual([4, 24_000]);
    expect(pool.closed).toBe(1);
  });

  it.each([0, 1, 2])(
    'keeps at most 1 + %i sentences in flight, the head next-needed and the rest look-ahead',
    async (lookahead) => {
      const { pool, audio } = windowOver(SIX, lookahead);
      const first = audio.next();
      await tick();
      expect(pool.jobs.map((j) => j.needed)).toEqual([true, ...Array<boolean>(lookahead).fill(false)]);
      pool.jobs[0]!.finish();
      expect((await first).done).toBe(false);
      // The listener stops reading: nothing more is taken from the text.
      await tick();
      expect(pool.jobs).toHaveLength(1 + lookahead);
      // Reading on makes the head's successor next-needed and takes the next sentence.
      const second = audio.next();
      await tick();
      // Next-needed now: promoted from look-ahead, or (without look-ahead) submitted as such.
      expect(pool.jobs[1]!.promoted || pool.jobs[1]!.needed).toBe(true);
      expect(pool.jobs[1]!.promoted).toBe(lookahead > 0);
      expect(pool.jobs).toHaveLength(Math.min(SIX.length, 2 + lookahead));
      pool.jobs[1]!.finish();
      expect((await second).value?.sentence).toBe(1);
      await audio.return(undefined);
    },
  );

  it('a listener that stops iterating takes the request out of the pool', async () => {
    const { pool, audio } = windowOver(SIX, 2);
    const first = audio.next();
    await tick();
    pool.jobs[0]!.finish();
    await first;
    await audio.return(undefined);
    expect(pool.closed).toBe(1);
  });

  it('an abort takes the request out of the pool at once, and the audio ends with an AbortError', async () => {
    const controller = new AbortController();
    const { pool, audio } = windowOver(SIX, 2, controller.signal);
    const waiting = audio.next();
    await tick();
    controller.abort();
    expect(pool.closed).toBeGreaterThanOrEqual(1);
    const err = await waiting.then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(isAbortError(err)).toBe(true);
  });

  it('a failed sentence fails the audio after what came before it', async () => {
    const { pool, audio } = windowOver(['a', 'b', 'c'], 2);
    const taken: number[] = [];
    const reading = (async () => {
      for await (const chunk of audio) taken.push(chunk.sentence);
    })();
    await tick();
    pool.jobs[1]!.fail(new Error('the model failed'));
    pool.jobs[0]!.finish();
    await expect(reading).rejects.toThrow('the model failed');
    expect(taken).toEqual([0]);
    expect(pool.closed).toBe(1);
  });

  it('a text that fails (streamed text cut off) fails the audio after the sentences it gave', async () => {
    const pool = new RecordingPool();
    async function* broken(): AsyncGenerator<Segment> {
      yield speech('a');
      throw new Error('the text stream broke');
    }
    const window = new RequestWindow(pool, broken(), job, 2, new AbortController().signal);
    const taken: number[] = [];
    const reading = (async () => {
      for await (const chunk of window.audio()) taken.push(chunk.sentence);
    })();
    await tick();
    pool.jobs[0]!.finish();
    await expect(reading).rejects.toThrow('the text stream broke');
    expect(taken).toEqual([0]);
  });

  describe('deadlines', () => {
    // The pool's clock (performance.now()) stands still but where a test moves it.
    afterEach(() => vi.useRealTimers());
    /** Moves the fake clock on to `ms`. */
    const at = (ms: number) => vi.advanceTimersByTime(ms - performance.now());
    const SECOND = 24_000; // samples

    it('the first sentence is due when the request began; the next when the audio handed over will have played out', async () => {
      vi.useFakeTimers({ toFake: ['performance'], now: 0 });
      at(1_000);
      const { pool, audio } = windowOver(['abc', 'defgh', 'ij'], 2);
      const first = audio.next();
      await tick();
      expect(pool.jobs[0]!.due()).toBe(1_000);
      at(1_500);
      pool.jobs[0]!.finish(1, 2 * SECOND); // two seconds of audio, taken at 1.5 s
      await first;
      // Playing from 1.5 s, it runs dry at 3.5 s: sentence 1 is due then, and sentence 2 when
      // sentence 1's expected audio (5 characters, 500 ms) has played too.
      expect(pool.jobs[1]!.due()).toBe(3_500);
      expect(pool.jobs[2]!.due()).toBe(4_000);
      // Computed ahead, its own audio (0.25 s) counts instead of the estimate.
      pool.jobs[1]!.finish(1, SECOND / 4);
      await tick();
      expect(pool.jobs[2]!.due()).toBe(3_750);
      // Taken at 2 s, before the listener ran dry: it plays on from 3.5 s.
      at(2_000);
      await audio.next();
      expect(pool.jobs[2]!.due()).toBe(3_750);
      await audio.return(undefined);
    });

    it('a listener that ran dry waits, then plays what comes from when it came: its deadlines follow its pace', async () => {
      vi.useFakeTimers({ toFake: ['performance'], now: 0 });
      const { pool, audio } = windowOver(['a', 'b', 'c', 'd'], 2);
      const first = audio.next();
      await tick();
      pool.jobs[0]!.finish(1, SECOND);
      await first; // taken at 0: dry at 1 s
      expect(pool.jobs[1]!.due()).toBe(1_000);
      pool.jobs[1]!.finish(1, SECOND);
      pool.jobs[2]!.finish(1, SECOND);
      // The consumer stops reading for 10 s: sentence 1's audio waits here, counted as ahead of
      // sentence 2's... then it comes back and takes it at 10 s: dry at 11 s, not at 2 s.
      at(10_000);
      await audio.next();
      await audio.next(); // and sentence 2's, at once: dry at 12 s
      await tick();
      expect(pool.jobs[3]!.due()).toBe(12_000);
      await audio.return(undefined);
    });

    it('a pause is audio the listener hears: the sentence after a leading pause is due when it ends', async () => {
      vi.useFakeTimers({ toFake: ['performance'], now: 0 });
      const { pool, audio } = windowOver([{ kind: 'pause', ms: 2_000 }, { kind: 'mark', name: 'm' }, 'a'], 2);
      await audio.next(); // the first second of silence, taken at 0
      await audio.next(); // the second
      expect(pool.jobs[0]!.due()).toBe(2_000);
      await audio.return(undefined);
    });
  });
});
