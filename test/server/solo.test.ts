/**
 * The solo session: a lone sentence runs on worker 0's session with every core, and a busy pool
 * shares as before. The three cases of the mode switch — a lone request, a second arriving
 * mid-run, the load falling back — asserted by which worker and which session took each sentence,
 * and how many workers were busy then; never by timings. On a stand-in slowed to about 0.3 s a
 * sentence, so that runs overlap.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createEngine, type Engine } from '../../dist/model/engine.js';
import { parseConfig } from '../../dist/server/config.js';
import { writeStandinModelDir } from '../../scripts/lib/standin-model.ts';

let dir: string;
beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'kokoro-solo-'));
  await writeStandinModelDir(dir, { repeat: 300, voices: ['af_heart'], log: () => {} });
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

interface Dispatch {
  readonly jobId: number;
  readonly index: number;
  readonly solo: boolean;
  readonly ahead: boolean;
  /** Workers running a sentence once this one started (itself included). */
  readonly busy: number;
}

async function soloEngine(soloThreads = 2, soloMinMs = 0): Promise<{ engine: Engine; log: Dispatch[] }> {
  const log: Dispatch[] = [];
  const holder: { engine?: Engine } = {};
  const engine = await createEngine(
    {
      modelDir: dir,
      dtype: 'fp32',
      device: 'cpu',
      workers: 2,
      intraOpThreads: 1,
      soloThreads,
      soloMinMs,
      maxQueuedJobs: 16,
      defaultVoice: 'af_heart',
      logSeverity: 3,
      firstChunkMinChars: 0,
    },
    { onDispatch: (d) => log.push({ ...d, busy: holder.engine!.load().busy }) },
  );
  holder.engine = engine;
  return { engine, log };
}

async function drain(chunks: AsyncIterable<unknown>): Promise<number> {
  let n = 0;
  for await (const chunk of chunks) if (chunk !== undefined) n++;
  return n;
}

const LONE = 'A lone sentence is spoken with every core of the machine.';
const THREE = 'The first sentence of three. The second one follows it. And the third ends it.';

describe('the solo session', () => {
  it('a lone request: its sentence runs alone on worker 0’s solo session', async () => {
    const { engine, log } = await soloEngine();
    try {
      await drain(engine.stream({ text: LONE, voice: engine.voices.resolve('af_heart'), speed: 1 }));
      expect(log.map(({ index, solo, busy }) => ({ index, solo, busy }))).toEqual([
        { index: 0, solo: true, busy: 1 },
      ]);
    } finally {
      await engine.dispose();
    }
  });

  it('a lone request of three sentences: the first solo; its look-ahead waits for it, then both workers share', async () => {
    const { engine, log } = await soloEngine();
    try {
      expect(
        await drain(engine.stream({ text: THREE, voice: engine.voices.resolve('af_heart'), speed: 1 })),
      ).toBe(3);
      expect(log.map(({ solo, busy }) => ({ solo, busy }))).toEqual([
        { solo: true, busy: 1 }, // alone, every core
        { solo: false, busy: 1 }, // the look-ahead waited until the solo run ended…
        { solo: false, busy: 2 }, // …then the two that were waiting ran side by side
      ]);
      expect(new Set(log.slice(1).map((d) => d.index))).toEqual(new Set([0, 1]));
    } finally {
      await engine.dispose();
    }
  });

  it('a second request arriving mid-run starts at once on the other worker; when the load falls back, a lone request is solo again', async () => {
    const { engine, log } = await soloEngine();
    try {
      const voice = engine.voices.resolve('af_heart');
      const first = drain(engine.stream({ text: LONE, voice, speed: 1 }));
      await expect.poll(() => log.length, { timeout: 10_000 }).toBe(1);
      const second = drain(engine.stream({ text: 'A second request, arriving mid-run.', voice, speed: 1 }));
      await Promise.all([first, second]);
      expect(log.map(({ index, solo, busy }) => ({ index, solo, busy }))).toEqual([
        { index: 0, solo: true, busy: 1 },
        // Not held for the solo run: it started while the first was still running.
        { index: 1, solo: false, busy: 2 },
      ]);

      await drain(engine.stream({ text: LONE, voice, speed: 1 }));
      expect(log.at(-1)).toMatchObject({ index: 0, solo: true, busy: 1 });
    } finally {
      await engine.dispose();
    }
  });

  it('by cost: a lone sentence one pool session would run in less than soloMinMs stays on it; a dearer one goes solo', async () => {
    // The estimate comes from the warm-up run (about 0.3 s for an 82-character sentence here):
    // far below 10⁹ ms, far above 1 ms, so which way each goes does not depend on the machine.
    const lone = async (soloMinMs: number) => {
      const { engine, log } = await soloEngine(2, soloMinMs);
      try {
        await drain(engine.stream({ text: LONE, voice: engine.voices.resolve('af_heart'), speed: 1 }));
        return log.map(({ index, solo, busy }) => ({ index, solo, busy }));
      } finally {
        await engine.dispose();
      }
    };
    expect(await lone(1e9)).toEqual([{ index: 0, solo: false, busy: 1 }]);
    expect(await lone(1)).toEqual([{ index: 0, solo: true, busy: 1 }]);
  });

  it('another request still open (its listener between sentences) keeps a lone sentence off the solo session', async () => {
    const { engine, log } = await soloEngine();
    try {
      const voice = engine.voices.resolve('af_heart');
      // A opens and takes its first chunk, then its listener pauses: its look-ahead runs, then the
      // pool falls idle with A still open.
      const a = engine.stream({ text: THREE, voice, speed: 1 })[Symbol.asyncIterator]();
      await a.next();
      await expect.poll(() => log.length, { timeout: 10_000 }).toBe(3);
      await expect.poll(() => engine.load().busy, { timeout: 10_000 }).toBe(0);
      await drain(engine.stream({ text: LONE, voice, speed: 1 }));
      expect(log.at(-1)).toMatchObject({ solo: false, busy: 1 });
      await a.return(undefined);
      await drain(engine.stream({ text: LONE, voice, speed: 1 }));
      expect(log.at(-1)).toMatchObject({ index: 0, solo: true, busy: 1 });
    } finally {
      await engine.dispose();
    }
  });

  it('without solo threads, a lone request runs on a pool session as before', async () => {
    const { engine, log } = await soloEngine(0);
    try {
      await drain(engine.stream({ text: THREE, voice: engine.voices.resolve('af_heart'), speed: 1 }));
      expect(log.every((d) => !d.solo)).toBe(true);
      expect(log.some((d) => d.busy === 2)).toBe(true); // the look-ahead ran beside the first
    } finally {
      await engine.dispose();
    }
  });
});

describe('KOKORO_SOLO_THREADS', () => {
  it('auto: every core for a pool of several single-thread workers on CPU; none on CUDA or with one worker', () => {
    const cores = availableParallelism();
    expect(parseConfig({ KOKORO_WORKERS: '2', KOKORO_INTRA_OP_THREADS: '1' }).soloThreads).toBe(
      cores > 1 ? cores : 0,
    );
    expect(
      parseConfig({ KOKORO_WORKERS: '2', KOKORO_INTRA_OP_THREADS: '1', KOKORO_DEVICE: 'cuda' }).soloThreads,
    ).toBe(0);
    expect(parseConfig({ KOKORO_WORKERS: '1' }).soloThreads).toBe(0);
    expect(parseConfig({ KOKORO_WORKERS: '2', KOKORO_SOLO_THREADS: '0' }).soloThreads).toBe(0);
    expect(parseConfig({ KOKORO_WORKERS: '2', KOKORO_SOLO_THREADS: '3' }).soloThreads).toBe(3);
    expect(() => parseConfig({ KOKORO_SOLO_THREADS: 'many' })).toThrow(/KOKORO_SOLO_THREADS="many"/);
  });

  it('KOKORO_SOLO_MIN_MS: 50 ms by default, any whole number of milliseconds, 0 for every lone sentence', () => {
    expect(parseConfig({}).soloMinMs).toBe(50);
    expect(parseConfig({ KOKORO_SOLO_MIN_MS: '0' }).soloMinMs).toBe(0);
    expect(parseConfig({ KOKORO_SOLO_MIN_MS: '250' }).soloMinMs).toBe(250);
    expect(() => parseConfig({ KOKORO_SOLO_MIN_MS: '-1' })).toThrow(/KOKORO_SOLO_MIN_MS="-1"/);
  });
});
