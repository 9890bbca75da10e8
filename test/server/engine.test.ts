/**
 * The engine end to end through onnxruntime-node, on stand-in models of both export layouts,
 * and its startup errors.
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { createEngine, type EngineOptions } from '../../dist/model/engine.js';
import { ModelDirError } from '../../dist/model/kokoro/model-dir.js';
import { parseConfig } from '../../dist/server/config/config.js';
import { parseOptions } from '../../dist/server/http/request.js';
import { writeStandinModelDir } from '../../scripts/lib/standin-model.ts';
import { testEngineOptions } from './harness.ts';

const dirs: string[] = [];
function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'kokoro-engine-'));
  dirs.push(dir);
  return dir;
}
afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));

// Sentences whole, so that each is one chunk.
const base: EngineOptions = testEngineOptions({ MAX_QUEUED_JOBS: '16', FIRST_CHUNK_MIN_CHARS: '0' });

async function collect(engine: Awaited<ReturnType<typeof createEngine>>, text: string, speed = 1) {
  const chunks = [];
  for await (const c of engine.stream({ text, voice: engine.voices.resolve('af_heart'), speed }))
    chunks.push(c);
  return chunks;
}

// Each test builds engines of its own and measures nothing against the clock: side by side.
describe.concurrent('createEngine', () => {
  it('runs the onnx-community layout: one chunk per sentence, in order', async () => {
    const engine = await createEngine(base);
    try {
      expect(engine.info).toMatchObject({ provider: 'cpu', layout: 'onnx-community', workers: 1 });
      expect(engine.info.contract).toMatchObject({
        ids: 'input_ids',
        output: 'waveform',
        speedType: 'float32',
      });
      const chunks = await collect(engine, 'One sentence here. And a second one! A third?');
      expect(chunks.map((c) => c.sentence)).toEqual([0, 1, 2]);
      for (const c of chunks) {
        expect(c.samples.length).toBeGreaterThan(0);
        expect(c.inferenceMs).toBeGreaterThan(0);
      }
      expect(chunks[0]!.frontEndMs).toBeGreaterThan(0);
    } finally {
      await engine.dispose();
    }
  });

  it('runs the warm-up ladder before it is ready: no ladder on CPU by default, the lengths asked for', async () => {
    const plain = await createEngine(base);
    await plain.dispose();
    expect(plain.info.warmupLadder).toEqual([]);
    const engine = await createEngine({ ...base, warmupLengths: [16, 510] });
    try {
      expect(engine.info.warmupLadder.map((s) => s.tokens)).toEqual([16, 510]);
      for (const step of engine.info.warmupLadder) {
        expect(step.firstMs).toBeGreaterThan(0);
        expect(step.repeatMs).toBeGreaterThan(0);
      }
    } finally {
      await engine.dispose();
    }
  });

  it('splits a sentence longer than 510 phoneme ids into several inferences without losing any', async () => {
    const engine = await createEngine(base);
    try {
      // A short sentence that normalization turns into well over 510 phonemes: numbers in words.
      const text = `Codes ${Array.from({ length: 16 }, () => '987654321').join(', ')} end.`;
      const chunks = await collect(engine, text);
      expect(new Set(chunks.map((c) => c.sentence)).size).toBe(1);
      expect(chunks.length).toBeGreaterThanOrEqual(2);
      for (const c of chunks) expect(c.phonemeCount).toBeLessThanOrEqual(510);
      const total = chunks.reduce((n, c) => n + c.phonemeCount, 0);
      expect(total).toBeGreaterThan(510);
    } finally {
      await engine.dispose();
    }
  });

  it('runs the kokoro-onnx single-file export with an int32 speed input', async () => {
    const dir = tempDir();
    await writeStandinModelDir(dir, {
      layout: 'kokoro-onnx',
      speedType: 'int32',
      voices: ['af_heart'],
      log: () => {},
    });
    const engine = await createEngine({ ...base, modelDir: dir });
    try {
      expect(engine.info.layout).toBe('single-file');
      expect(engine.info.contract).toEqual({
        ids: 'tokens',
        style: 'style',
        speed: 'speed',
        speedType: 'int32',
        output: 'audio',
      });
      const [one] = await collect(engine, 'Integer speeds only.', 1);
      const [two] = await collect(engine, 'Integer speeds only.', 2);
      expect(two!.samples.length).toBeLessThan(one!.samples.length);
      // Fractional speeds would be truncated by this export: they are refused up front.
      const config = parseConfig({});
      expect(() => parseOptions({ text: 'Hi.', speed: 1.5 }, { route: 'ws', config, engine })).toThrow(
        /whole-number speeds only/,
      );
    } finally {
      await engine.dispose();
    }
  });

  it('says what to do when the model directory does not exist', async () => {
    await expect(createEngine({ ...base, modelDir: '/nonexistent/kokoro' })).rejects.toThrow(ModelDirError);
    await expect(createEngine({ ...base, modelDir: '/nonexistent/kokoro' })).rejects.toThrow(
      /\/nonexistent\/kokoro does not exist.*npm run fetch-model/,
    );
  });

  it('names the missing dtype file and the dtypes that are present', async () => {
    await expect(createEngine({ ...base, dtype: 'q8' })).rejects.toThrow(
      /KOKORO_DTYPE=q8 needs .*model_quantized\.onnx, which is missing.*set KOKORO_DTYPE to one of: fp32/,
    );
  });

  it('fails clearly on a corrupt model file', async () => {
    const dir = tempDir();
    mkdirSync(join(dir, 'onnx'));
    writeFileSync(join(dir, 'onnx', 'model.onnx'), Buffer.alloc(4096, 0x5a));
    await expect(createEngine({ ...base, modelDir: dir })).rejects.toThrow(
      /Could not load the model .*model\.onnx/,
    );
  });

  it('fails clearly when KOKORO_DEVICE=cuda and CUDA is not installed', async () => {
    await expect(createEngine({ ...base, device: 'cuda' })).rejects.toThrow(
      /KOKORO_DEVICE=cuda but .*ONNXRUNTIME_NODE_INSTALL=1 node node_modules\/onnxruntime-node\/script\/install\.js/,
    );
  });

  it('falls back to CPU under auto and says why', async () => {
    const engine = await createEngine({ ...base, device: 'auto' });
    try {
      expect(engine.info.provider).toBe('cpu');
      expect(engine.info.fallbackReason).toMatch(/libonnxruntime_providers_cuda\.so/);
    } finally {
      await engine.dispose();
    }
  });
});

describe('engine.dispose', () => {
  it('waits for a sentence inside ONNX Runtime instead of ending its thread mid-call (which aborts the process)', async () => {
    // A slow stand-in keeps the sentence in one native call for about a second; the disposal
    // comes 300 ms into it. The child's exit code is the verdict: SIGABRT before the fix.
    const dir = tempDir();
    await writeStandinModelDir(dir, { repeat: 500, voices: ['af_heart'], log: () => {} });
    const script = fileURLToPath(new URL('../fixtures/dispose-mid-call.mjs', import.meta.url));
    const result = spawnSync(process.execPath, [script, dir, '300'], { encoding: 'utf8', timeout: 60_000 });
    expect({ status: result.status, signal: result.signal, stderr: result.stderr }).toEqual({
      status: 0,
      signal: null,
      stderr: '',
    });
    expect(result.stdout).toBe('disposed\n');
  });
});
