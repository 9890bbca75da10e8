/**
 * Work-conserving scheduling: a request's later sentences computed ahead by idle workers, within a
 * bounded window, below every request's next-needed sentence, and dropped with their request. On a
 * stand-in slowed to about 0.3 s a sentence; the verdicts are counts and orders, never timings.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createEngine, type Engine, type EngineOptions } from '../../dist/model/engine.js';
import { writeStandinModelDir } from '../../scripts/lib/standin-model.ts';

const SIX = Array.from({ length: 6 }, (_, i) => `This is sentence number ${i + 1} of the answer.`).join(' ');

let dir: string;
beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'kokoro-lookahead-'));
  await writeStandinModelDir(dir, { repeat: 300, voices: ['af_heart'], log: () => {} });
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

async function engineWith(workers: number, extra: Partial<EngineOptions> = {}): Promise<Engine> {
  return createEngine({
    modelDir: dir,
    dtype: 'fp32',
    device: 'cpu',
    workers,
    intraOpThreads: 1,
    maxQueuedJobs: 16,
    defaultVoice: 'af_heart',
    logSeverity: 3,
    firstChunkMinChars: 0,
    ...extra,
  });
}

const settle = async (engine: Engine) => {
  await expect
    .poll(() => engine.load().busy + engine.load().queued + engine.load().ahead, { timeout: 20_000 })
    .toBe(0);
};

describe('look-ahead', () => {
  it('one request keeps every worker busy, and a listener that stops reading stops the work after the window', async () => {
    const engine = await engineWith(2);
    try {
      const voice = engine.voices.resolve('af_heart');
      const chunks = engine.stream({ text: SIX, voice, speed: 1 });
      const before = engine.load().completed;
      let sawBothBusy = false;
      const watch = setInterval(() => (sawBothBusy ||= engine.load().busy === 2), 5);
      const first = await chunks.next(); // then stop reading
      expect(first.done).toBe(false);
      await settle(engine);
      clearInterval(watch);
      expect(sawBothBusy).toBe(true);
      // The sentence handed over and two ahead: nothing more until the listener reads on.
      expect(engine.load().completed - before).toBe(3);
      await new Promise((r) => setTimeout(r, 500));
      expect(engine.load().completed - before).toBe(3);
      let rest = 0;
      for await (const chunk of chunks) rest += chunk.samples.length > 0 ? 1 : 0;
      expect(rest).toBe(5);
      expect(engine.load().completed - before).toBe(6);
    } finally {
      await engine.dispose();
    }
  });

  it('is bounded by LOOKAHEAD_SENTENCES, and off with 0', async () => {
    for (const lookahead of [0, 1]) {
      const engine = await engineWith(2, { lookahead });
      try {
        const chunks = engine.stream({ text: SIX, voice: engine.voices.resolve('af_heart'), speed: 1 });
        await chunks.next();
        await settle(engine);
        expect(engine.load().completed, `lookahead ${lookahead}`).toBe(1 + lookahead);
        await chunks.return(undefined);
      } finally {
        await engine.dispose();
      }
    }
  });

  it('runs below every next-needed sentence: a request that arrives later is served before the look-ahead queued earlier', async () => {
    const engine = await engineWith(1);
    try {
      const voice = engine.voices.resolve('af_heart');
      const order: string[] = [];
      let b: Promise<void> | undefined;
      const consume = async () => {
        for await (const chunk of engine.stream({ text: 'Just one short sentence.', voice, speed: 1 }))
          order.push(`b${chunk.sentence}`);
      };
      const a = (async () => {
        for await (const chunk of engine.stream({ text: SIX, voice, speed: 1 })) {
          order.push(`a${chunk.sentence}`);
          if (chunk.sentence === 0) b = consume(); // B arrives while A's look-ahead waits
        }
      })();
      await a;
      await b;
      // a1 was already running when B came; B's sentence comes before a2, which waited as look-ahead.
      expect(order.indexOf('b0')).toBeLessThan(order.indexOf('a2'));
      expect(order.filter((o) => o.startsWith('a'))).toEqual(['a0', 'a1', 'a2', 'a3', 'a4', 'a5']);
    } finally {
      await engine.dispose();
    }
  });

  it('a cancelled request drops its look-ahead at once', async () => {
    const engine = await engineWith(1);
    try {
      const controller = new AbortController();
      const before = engine.load().inferences;
      const chunks = engine.stream(
        { text: SIX, voice: engine.voices.resolve('af_heart'), speed: 1 },
        controller.signal,
      );
      await chunks.next();
      expect(engine.load().ahead).toBeGreaterThan(0);
      controller.abort();
      expect(engine.load().ahead).toBe(0);
      expect(engine.load().queued).toBe(0);
      await settle(engine);
      // The first sentence, and at most the one running when the cancel came.
      expect(engine.load().inferences - before).toBeLessThanOrEqual(2);
    } finally {
      await engine.dispose();
    }
  });

  it('a listener that stops iterating (a closed request) drops its look-ahead too', async () => {
    const engine = await engineWith(1);
    try {
      const chunks = engine.stream({ text: SIX, voice: engine.voices.resolve('af_heart'), speed: 1 });
      await chunks.next();
      await chunks.return(undefined);
      expect(engine.load().ahead).toBe(0);
      await settle(engine);
      expect(engine.load().completed).toBeLessThanOrEqual(2);
    } finally {
      await engine.dispose();
    }
  });
});
