/**
 * Worker threads that die: an encoder worker is replaced and the requests after it are served; an
 * inference worker that cannot start again (its model file gone) is retried with backoff
 * (restartDelayMs, unit-tested in test/unit/inference/threads.test.ts) until it can, while the engine says it
 * has no worker. The deaths are injected (faultInjection), through the engine as the server runs it.
 */
import { cpSync, mkdtempSync, renameSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createEngine, type Engine, type EngineOptions } from '../../dist/model/engine.js';
import { STANDIN_MODEL_DIR, testEngineOptions } from './harness.ts';

const options = (modelDir: string): EngineOptions => ({
  ...testEngineOptions({
    KOKORO_MODEL_DIR: modelDir,
    MAX_QUEUED_JOBS: '8',
    KOKORO_WARM_LANGUAGES: 'a',
    FIRST_CHUNK_MIN_CHARS: '0',
  }),
  faultInjection: true,
});

async function encoded(engine: Engine, text: string, format: 'mp3' | 'opus'): Promise<number> {
  const run = engine.synthesize(
    { text, voice: engine.voices.resolve('af_heart'), speed: 1 },
    { format, sampleRate: 24_000 },
  );
  let bytes = 0;
  for await (const chunk of run) bytes += chunk.length;
  return bytes;
}

// Two engines, started side by side: one whose encoder worker dies, one whose inference worker
// cannot start again.
let engine: Engine;
const encoderExits: string[] = [];
let dir: string;
let restarting: Engine;
const exits: string[] = [];
beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'kokoro-restart-'));
  cpSync(STANDIN_MODEL_DIR, dir, { recursive: true });
  [engine, restarting] = await Promise.all([
    createEngine(options(STANDIN_MODEL_DIR), { onEncoderWorkerExit: (reason) => encoderExits.push(reason) }),
    createEngine(options(dir), { onWorkerExit: ({ reason }) => exits.push(reason) }),
  ]);
});
afterAll(async () => {
  await Promise.all([engine?.dispose(), restarting?.dispose()]);
  rmSync(dir, { recursive: true, force: true });
});

describe('an encoder worker that dies', () => {
  it('fails the request it was encoding, is replaced, and the next requests are encoded', async () => {
    expect(await encoded(engine, 'Before the crash.', 'mp3')).toBeGreaterThan(0);
    await expect(encoded(engine, 'This one __crash_encoder__ dies.', 'mp3')).rejects.toMatchObject({
      code: 'internal_error',
      message: expect.stringMatching(
        /^Encoding the audio failed: (encoder worker failed|the encoder stream is closed)/,
      ),
    });
    expect(encoderExits).toEqual([expect.stringMatching(/exited with code 70/)]);
    expect(await encoded(engine, 'After the crash.', 'mp3')).toBeGreaterThan(0);
    expect(await encoded(engine, 'And in another format.', 'opus')).toBeGreaterThan(0);
  });
});

describe('an inference worker that cannot start again', () => {
  it('is retried while its model is gone, with no worker meanwhile, and serves once it can start', async () => {
    const model = join(dir, 'onnx', 'model.onnx');
    renameSync(model, `${model}.away`);
    const voice = restarting.voices.resolve('af_heart');
    const crashed = async () => {
      for await (const chunk of restarting.stream({
        text: 'Down __crash_worker__ it goes.',
        voice,
        speed: 1,
      }))
        void chunk;
    };
    await expect(crashed()).rejects.toMatchObject({ code: 'inference_failed' });
    // The death, then at least two failed restarts: at once, and again after a wait.
    await expect
      .poll(() => exits.filter((r) => r.startsWith('restart failed')).length, { timeout: 10_000 })
      .toBeGreaterThanOrEqual(2);
    expect(exits[0]).toMatch(/exited with code 70/);
    expect(restarting.load().workers).toBe(0);
    renameSync(`${model}.away`, model);
    await expect.poll(() => restarting.load().workers, { timeout: 20_000 }).toBe(1);
    let chunks = 0;
    for await (const chunk of restarting.stream({ text: 'Back again.', voice, speed: 1 }))
      chunks += chunk.samples.length > 0 ? 1 : 0;
    expect(chunks).toBe(1);
  });
});
