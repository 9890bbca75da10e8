/**
 * Scheduling through a real engine: that the dispatch policy (unit-tested in
 * test/unit/inference/dispatch.test.ts) and the request window (test/unit/synthesis/request-window.test.ts) are wired
 * to the workers as they say. Two workers of one thread each and worker 0's solo session, on a
 * stand-in slowed to about 0.3 s a sentence so that runs overlap; verdicts are which worker and
 * which session took each sentence, counts and orders, never timings.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createEngine, type Engine } from '../../dist/model/engine.js';
import { writeStandinModelDir } from '../../scripts/lib/standin-model.ts';
import { testEngineOptions } from './harness.ts';
import { waitFor } from '../wait.ts';

interface Dispatch {
  readonly index: number;
  readonly solo: boolean;
  /** Workers running a sentence once this one started (itself included). */
  readonly busy: number;
}

let dir: string;
let engine: Engine;
/** One worker, no solo session: look-ahead on one worker. */
let single: Engine;
const log: Dispatch[] = [];

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'kokoro-scheduling-'));
  await writeStandinModelDir(dir, { repeat: 300, voices: ['af_heart'], log: () => {} });
  const starting = createEngine(
    testEngineOptions({
      KOKORO_MODEL_DIR: dir,
      KOKORO_WORKERS: '2',
      KOKORO_SOLO_THREADS: '2',
      KOKORO_SOLO_MIN_MS: '0',
      LOOKAHEAD_SENTENCES: '2',
      MAX_QUEUED_JOBS: '16',
      FIRST_CHUNK_MIN_CHARS: '0',
    }),
    { onDispatch: ({ index, solo }) => log.push({ index, solo, busy: engine.load().busy }) },
  );
  [engine, single] = await Promise.all([
    starting,
    createEngine(
      testEngineOptions({
        KOKORO_MODEL_DIR: dir,
        LOOKAHEAD_SENTENCES: '2',
        MAX_QUEUED_JOBS: '16',
        FIRST_CHUNK_MIN_CHARS: '0',
      }),
    ),
  ]);
});
afterAll(async () => {
  await Promise.all([engine?.dispose(), single?.dispose()]);
  rmSync(dir, { recursive: true, force: true });
});
beforeEach(() => {
  log.length = 0;
});

const LONE = 'A lone sentence is spoken with every core of the machine.';
const THREE = 'The first sentence of three. The second one follows it. And the third ends it.';
const SIX = Array.from({ length: 6 }, (_, i) => `This is sentence number ${i + 1} of the answer.`).join(' ');
const voice = () => engine.voices.resolve('af_heart');

async function drain(chunks: AsyncIterable<unknown>): Promise<number> {
  let n = 0;
  for await (const chunk of chunks) if (chunk !== undefined) n++;
  return n;
}

/** Until every worker is idle and nothing waits. */
async function settle(): Promise<void> {
  await expect
    .poll(() => engine.load().busy + engine.load().queued + engine.load().ahead, { timeout: 20_000 })
    .toBe(0);
}

describe('the solo session', () => {
  it('a lone request of three sentences: the first solo; its look-ahead waits for it, then both workers share', async () => {
    expect(await drain(engine.stream({ text: THREE, voice: voice(), speed: 1 }))).toBe(3);
    expect(log.map(({ solo, busy }) => ({ solo, busy }))).toEqual([
      { solo: true, busy: 1 }, // alone, every core
      { solo: false, busy: 1 }, // the look-ahead waited until the solo run ended…
      { solo: false, busy: 2 }, // …then the two that were waiting ran side by side
    ]);
    expect(log[0]!.index).toBe(0);
    expect(new Set(log.slice(1).map((d) => d.index))).toEqual(new Set([0, 1]));
  });

  it('a second request arriving mid-run starts at once on the other worker; when the load falls back, a lone request is solo again', async () => {
    const first = drain(engine.stream({ text: LONE, voice: voice(), speed: 1 }));
    await expect.poll(() => log.length, { timeout: 10_000 }).toBe(1);
    const second = drain(
      engine.stream({ text: 'A second request, arriving mid-run.', voice: voice(), speed: 1 }),
    );
    await Promise.all([first, second]);
    expect(log).toEqual([
      { index: 0, solo: true, busy: 1 },
      // Not held for the solo run: it started while the first was still running.
      { index: 1, solo: false, busy: 2 },
    ]);
    await drain(engine.stream({ text: LONE, voice: voice(), speed: 1 }));
    expect(log.at(-1)).toEqual({ index: 0, solo: true, busy: 1 });
  });

  it('another request still open (its listener between sentences) keeps a lone sentence off the solo session', async () => {
    // A opens and takes its first chunk, then its listener pauses: its look-ahead runs, then the
    // pool falls idle with A still open.
    const a = engine.stream({ text: THREE, voice: voice(), speed: 1 })[Symbol.asyncIterator]();
    await a.next();
    await expect.poll(() => log.length, { timeout: 10_000 }).toBe(3);
    await settle();
    await drain(engine.stream({ text: LONE, voice: voice(), speed: 1 }));
    expect(log.at(-1)).toMatchObject({ solo: false, busy: 1 });
    await a.return(undefined);
    await drain(engine.stream({ text: LONE, voice: voice(), speed: 1 }));
    expect(log.at(-1)).toEqual({ index: 0, solo: true, busy: 1 });
  });
});

describe('look-ahead', () => {
  it('keeps every worker busy, and a listener that stops reading stops the work after the window', async () => {
    const chunks = engine.stream({ text: SIX, voice: voice(), speed: 1 });
    const before = engine.load().completed;
    const first = await chunks.next(); // then stop reading
    expect(first.done).toBe(false);
    await settle();
    expect(log.some((d) => d.busy === 2)).toBe(true);
    // The sentence handed over and two ahead: nothing more until the listener reads on.
    expect(engine.load().completed - before).toBe(3);
    // Nothing more while it does not read: the pool dispatches the moment a worker is free, so a
    // sentence let through would be running or done within a sentence's time (tens of ms here).
    await new Promise((r) => setTimeout(r, 200));
    expect(engine.load().completed - before).toBe(3);
    let rest = 0;
    for await (const chunk of chunks) rest += chunk.samples.length > 0 ? 1 : 0;
    expect(rest).toBe(5);
    expect(engine.load().completed - before).toBe(6);
  });
});

describe('look-ahead on one worker', () => {
  const settled = async () => {
    await expect
      .poll(() => single.load().busy + single.load().queued + single.load().ahead, { timeout: 20_000 })
      .toBe(0);
  };

  it('runs below every next-needed sentence: a request that arrives later is served before the look-ahead queued earlier', async () => {
    const order: string[] = [];
    let b: Promise<void> | undefined;
    const consume = async () => {
      for await (const chunk of single.stream({ text: 'Just one short sentence.', voice: voice(), speed: 1 }))
        order.push(`b${chunk.sentence}`);
    };
    for await (const chunk of single.stream({ text: SIX, voice: voice(), speed: 1 })) {
      order.push(`a${chunk.sentence}`);
      if (chunk.sentence === 0) b = consume(); // B arrives while A's look-ahead waits
    }
    await b;
    // a1 was already running when B came; B's sentence comes before a2, which waited as look-ahead.
    expect(order.indexOf('b0')).toBeLessThan(order.indexOf('a2'));
    expect(order.filter((o) => o.startsWith('a'))).toEqual(['a0', 'a1', 'a2', 'a3', 'a4', 'a5']);
  });

  it('a cancelled request drops its look-ahead at once', async () => {
    const controller = new AbortController();
    const before = single.load().inferences;
    const chunks = single.stream({ text: SIX, voice: voice(), speed: 1 }, controller.signal);
    await chunks.next();
    expect(single.load().ahead).toBeGreaterThan(0);
    controller.abort();
    expect(single.load().ahead).toBe(0);
    expect(single.load().queued).toBe(0);
    await settled();
    // The first sentence, and at most the one running when the cancel came.
    expect(single.load().inferences - before).toBeLessThanOrEqual(2);
  });

  it('a listener that stops iterating (a closed request) drops its look-ahead too', async () => {
    const before = single.load().completed;
    const chunks = single.stream({ text: SIX, voice: voice(), speed: 1 });
    await chunks.next();
    await chunks.return(undefined);
    expect(single.load().ahead).toBe(0);
    await settled();
    expect(single.load().completed - before).toBeLessThanOrEqual(2);
  });
});

describe('deadlines on one worker, one sentence at a time', () => {
  type Policy = 'deadline' | 'fifo';
  const engines = new Map<Policy, Engine>();
  /** Sentences each engine has started. */
  const started = new Map<Policy, number>();
  beforeAll(async () => {
    const start = async (policy: Policy) => {
      const engine = await createEngine(
        testEngineOptions({
          KOKORO_MODEL_DIR: dir,
          LOOKAHEAD_SENTENCES: '0',
          MAX_QUEUED_JOBS: '16',
          FIRST_CHUNK_MIN_CHARS: '0',
          DISPATCH_POLICY: policy,
        }),
        { onDispatch: () => started.set(policy, (started.get(policy) ?? 0) + 1) },
      );
      engines.set(policy, engine);
    };
    await Promise.all([start('deadline'), start('fifo')]);
  });
  afterAll(async () => {
    await Promise.all([...engines.values()].map((e) => e.dispose()));
  });

  /**
   * Two listeners A and C read long answers as fast as they come, so each holds seconds of audio
   * (a sentence plays for seconds and takes a fraction of one): while one's sentence runs, the
   * other's next waits. B asks for one sentence once A's fifth is queued behind C's fourth, running.
   * Returns how many sentences of A and C were handed over between B's asking and its first audio.
   */
  async function servedBeforeB(policy: Policy): Promise<number> {
    const engine = engines.get(policy)!;
    const events: string[] = [];
    const v = engine.voices.resolve('af_heart');
    let b: Promise<void> | undefined;
    const askB = async () => {
      // A's fourth sentence is out: wait for C's fourth to start and A's fifth to be queued.
      const before = started.get(policy) ?? 0;
      await waitFor(() => started.get(policy) !== before && engine.load().queued > 0, {
        intervalMs: 2,
        what: "C's fourth sentence running and A's fifth queued",
      });
      events.push('B asks');
      for await (const chunk of engine.stream({ text: 'A short new answer.', voice: v, speed: 1 }))
        events.push(`B${chunk.sentence}`);
    };
    const listen = async (name: string) => {
      for await (const chunk of engine.stream({ text: SIX, voice: v, speed: 1 })) {
        events.push(`${name}${chunk.sentence}`);
        if (name === 'A' && chunk.sentence === 3) b = askB();
      }
    };
    await Promise.all([listen('A'), listen('C')]);
    await b;
    return events.slice(events.indexOf('B asks') + 1, events.indexOf('B0')).length;
  }

  it('deadline: a new request’s first sentence waits only for the sentence running, not for a listener with seconds buffered', async () => {
    expect(await servedBeforeB('deadline')).toBe(1);
  });

  it('fifo (the policy before): it also waits for the other listener’s next sentence, queued before it', async () => {
    expect(await servedBeforeB('fifo')).toBe(2);
  });
});
