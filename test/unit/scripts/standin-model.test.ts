/**
 * The stand-in model (scripts/lib/standin-model.ts) run by ONNX Runtime: its layouts and variants,
 * the audio it makes, its voices, and the committed fixtures it must match byte for byte. Its
 * extra outputs (durations, echoes) are in standin-model-outputs.test.ts.
 */
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import * as ort from 'onnxruntime-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { STYLE_DIM, VOICE_FILE_BYTES, VOICE_ROWS } from '../../../model/kokoro/constants.ts';
import {
  STANDIN_DEFAULTS,
  STANDIN_MODEL_FILES,
  STANDIN_SAMPLES_PER_FRAME,
  buildStandinModel,
  buildVoice,
  standinDurations,
  writeStandinModelDir,
} from '../../../scripts/lib/standin-model.ts';
import {
  ROOT,
  FIXTURE,
  TIMESTAMPED_FIXTURE,
  SPT,
  expectedLength,
  styleRow,
  tokenIds,
  COMMUNITY,
  KOKORO_ONNX,
  synth,
  synthTimed,
  sum,
  samples,
  metadata,
  heart,
  style,
} from './standin-runner.ts';

describe('stand-in model, onnx-community layout (defaults)', () => {
  let session: ort.InferenceSession;
  beforeAll(async () => {
    session = await ort.InferenceSession.create(buildStandinModel());
  });
  afterAll(async () => {
    await session?.release();
  });

  it('declares the onnx-community names, element types and shapes', () => {
    expect(session.inputNames).toEqual(['input_ids', 'style', 'speed']);
    expect(session.outputNames).toEqual(['waveform']);
    expect(metadata(session.inputMetadata)).toEqual([
      { name: 'input_ids', type: 'int64', shape: [1, 'sequence_length'] },
      { name: 'style', type: 'float32', shape: [1, STYLE_DIM] },
      { name: 'speed', type: 'float32', shape: [1] },
    ]);
    expect(metadata(session.outputMetadata)).toEqual([
      { name: 'waveform', type: 'float32', shape: [1, 'num_samples'] },
    ]);
  });

  it('outputs floor(T * samplesPerToken / speed) samples', async () => {
    for (const tokens of [1, 2, 7, 100, 512]) {
      for (const speed of [0.5, 1, 2, 1.1, 0.8]) {
        const audio = await synth(session, COMMUNITY, tokenIds(tokens), style, speed);
        expect(audio.dims, `T=${tokens} speed=${speed}`).toEqual([1, expectedLength(tokens, speed)]);
      }
    }
    expect(expectedLength(100, 1)).toBe(120_000);
  });

  it('is deterministic', async () => {
    const a = samples(await synth(session, COMMUNITY, tokenIds(40), style, 1));
    const b = samples(await synth(session, COMMUNITY, tokenIds(40), style, 1));
    expect(Buffer.from(a.buffer).equals(Buffer.from(b.buffer))).toBe(true);
  });

  it('changes the audio with the token ids, their order and the style', async () => {
    const base = samples(await synth(session, COMMUNITY, tokenIds(40), style, 1));
    const otherIds = samples(await synth(session, COMMUNITY, tokenIds(40, 1), style, 1));
    const reversed = samples(await synth(session, COMMUNITY, [...tokenIds(40)].reverse(), style, 1));
    const otherRow = samples(await synth(session, COMMUNITY, tokenIds(40), styleRow(heart, 400), 1));
    const otherVoice = samples(
      await synth(session, COMMUNITY, tokenIds(40), styleRow(buildVoice('am_adam'), 10), 1),
    );
    const maxDiff = (x: Float32Array) => x.reduce((m, v, i) => Math.max(m, Math.abs(v - base[i])), 0);
    for (const other of [otherIds, reversed, otherRow, otherVoice]) {
      expect(other.length).toBe(base.length);
      expect(maxDiff(other)).toBeGreaterThan(0.01);
    }
  });

  it('produces a quiet, audible tone within [-1, 1] that starts and ends at zero', async () => {
    for (const voice of STANDIN_DEFAULTS.voices) {
      for (const row of [0, 5, 255, 509]) {
        const audio = samples(
          await synth(session, COMMUNITY, tokenIds(30), styleRow(buildVoice(voice), row), 0.7),
        );
        let peak = 0;
        for (const v of audio) peak = Math.max(peak, Math.abs(v));
        expect(peak).toBeGreaterThan(0.2);
        expect(peak).toBeLessThanOrEqual(0.5);
        expect(Math.abs(audio[0])).toBeLessThan(1e-3);
        expect(Math.abs(audio[audio.length - 1])).toBeLessThan(1e-2);
      }
    }
    // Even an out-of-distribution style cannot push samples out of range.
    const loud = samples(
      await synth(session, COMMUNITY, tokenIds(10), new Float32Array(STYLE_DIM).fill(50), 1),
    );
    expect(loud.every((v) => v >= -1 && v <= 1)).toBe(true);
  });
});

describe('stand-in model variants', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'standin-'));
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('writes and runs the kokoro-onnx layout', async () => {
    const files = await writeStandinModelDir(dir, {
      layout: 'kokoro-onnx',
      voices: ['bf_emma'],
      layers: 2,
      dim: 32,
      log: () => {},
    });
    expect(files.model).toBe(path.join(dir, 'kokoro-v1.0.onnx'));
    expect(files.config).toBeUndefined();
    expect(files.voices).toEqual([path.join(dir, 'voices', 'bf_emma.bin')]);
    expect((await readFile(files.voices[0])).byteLength).toBe(VOICE_FILE_BYTES);

    const session = await ort.InferenceSession.create(files.model);
    try {
      expect(metadata(session.inputMetadata)).toEqual([
        { name: 'tokens', type: 'int64', shape: [1, 'sequence_length'] },
        { name: 'style', type: 'float32', shape: [1, STYLE_DIM] },
        { name: 'speed', type: 'float32', shape: [1] },
      ]);
      expect(metadata(session.outputMetadata)).toEqual([
        { name: 'audio', type: 'float32', shape: ['num_samples'] },
      ]);
      for (const speed of [0.5, 1, 2]) {
        const audio = await synth(session, KOKORO_ONNX, tokenIds(20), style, speed);
        expect(audio.dims).toEqual([expectedLength(20, speed)]);
      }
    } finally {
      await session.release();
    }
  });

  it('runs with an int32 speed input', async () => {
    const session = await ort.InferenceSession.create(
      buildStandinModel({ speedType: 'int32', samplesPerToken: 600 }),
    );
    try {
      const speed = session.inputMetadata.find((m) => m.name === 'speed');
      expect(speed?.isTensor && speed.type).toBe('int32');
      for (const s of [1, 2, 3]) {
        const audio = await synth(session, COMMUNITY, tokenIds(11), style, s, 'int32');
        expect(audio.dims).toEqual([1, Math.floor((11 * 600) / s)]);
        expect(samples(audio).every((v) => v >= -1 && v <= 1)).toBe(true);
      }
    } finally {
      await session.release();
    }
  });

  it('reuses layer weights with repeat, adding compute but not size', async () => {
    const once = buildStandinModel({ layers: 2, dim: 64 });
    const thrice = buildStandinModel({ layers: 2, dim: 64, repeat: 3 });
    // Only a few more nodes: the weights are shared.
    expect(thrice.byteLength - once.byteLength).toBeLessThan(1000);
    const outputs: Float32Array[] = [];
    for (const bytes of [once, thrice]) {
      const session = await ort.InferenceSession.create(bytes);
      try {
        const audio = await synth(session, COMMUNITY, tokenIds(25), style, 1);
        expect(audio.dims).toEqual([1, expectedLength(25, 1)]);
        outputs.push(samples(audio));
      } finally {
        await session.release();
      }
    }
    // The deeper chain changes the hidden mean, hence (slightly) the amplitude.
    expect(outputs[0].some((v, i) => v !== outputs[1][i])).toBe(true);
  });

  it('builds identical bytes for identical options and different bytes for another seed', () => {
    const options = { layers: 3, dim: 16 };
    const a = buildStandinModel(options);
    expect(Buffer.from(buildStandinModel(options)).equals(Buffer.from(a))).toBe(true);
    expect(Buffer.from(buildStandinModel({ ...options, seed: 2 })).equals(Buffer.from(a))).toBe(false);
    expect(Buffer.from(buildVoice('af_sky')).equals(Buffer.from(buildVoice('af_sky')))).toBe(true);
    expect(Buffer.from(buildVoice('af_sky', 2)).equals(Buffer.from(buildVoice('af_sky')))).toBe(false);
  });

  it('rejects bad options', () => {
    expect(() => buildStandinModel({ dim: 0 })).toThrow(RangeError);
    expect(() => buildStandinModel({ layers: 1.5 })).toThrow(RangeError);
    expect(() => buildStandinModel({ samplesPerToken: -1 })).toThrow(RangeError);
    expect(() => buildStandinModel({ repeat: 0 })).toThrow(RangeError);
    return expect(writeStandinModelDir(dir, { voices: ['../escape'], log: () => {} })).rejects.toThrow(
      RangeError,
    );
  });
});

describe('stand-in voices', () => {
  it('are 510 x 256 float32 of realistic magnitude, varying by row and by voice', () => {
    const voice = buildVoice('af_heart');
    expect(voice.byteLength).toBe(VOICE_FILE_BYTES);
    const values = Array.from({ length: VOICE_ROWS }, (_, row) => Array.from(styleRow(voice, row))).flat();
    const mean = values.reduce((a, b) => a + b, 0) / values.length;
    const std = Math.sqrt(values.reduce((a, b) => a + (b - mean) ** 2, 0) / values.length);
    expect(Math.abs(mean)).toBeLessThan(0.05);
    expect(std).toBeGreaterThan(0.1);
    expect(std).toBeLessThan(0.2);

    const distance = (a: Float32Array, b: Float32Array) => Math.hypot(...a.map((v, i) => v - b[i]));
    expect(distance(styleRow(voice, 0), styleRow(voice, 509))).toBeGreaterThan(0.5);
    expect(distance(styleRow(voice, 100), styleRow(buildVoice('af_bella'), 100))).toBeGreaterThan(1);
  });
});

describe('committed fixture test/fixtures/standin-model', () => {
  it('has exactly the files the generator writes, plus its README', async () => {
    const entries = await readdir(FIXTURE, { recursive: true, withFileTypes: true });
    const files = entries
      .filter((e) => e.isFile())
      .map((e) => path.relative(FIXTURE, path.join(e.parentPath, e.name)).split(path.sep).join('/'))
      .sort();
    const expected = [
      'README.md',
      'config.json',
      STANDIN_MODEL_FILES['onnx-community'],
      ...STANDIN_DEFAULTS.voices.map((id) => `voices/${id}.bin`),
    ].sort();
    expect(files).toEqual(expected);
  });

  // A mismatch means the fixture is stale: regenerate it with
  // npm run standin-model -- --out test/fixtures/standin-model
  it('matches the generator byte for byte', async () => {
    const model = await readFile(path.join(FIXTURE, STANDIN_MODEL_FILES['onnx-community']));
    expect(model.equals(Buffer.from(buildStandinModel())), 'onnx/model.onnx is stale').toBe(true);
    for (const id of STANDIN_DEFAULTS.voices) {
      const voice = await readFile(path.join(FIXTURE, 'voices', `${id}.bin`));
      expect(voice.equals(Buffer.from(buildVoice(id))), `voices/${id}.bin is stale`).toBe(true);
    }
    const config = await readFile(path.join(FIXTURE, 'config.json'));
    expect(config.equals(await readFile(path.join(ROOT, 'model/kokoro/config.json')))).toBe(true);
  });

  it('loads and runs from disk', async () => {
    const session = await ort.InferenceSession.create(
      path.join(FIXTURE, STANDIN_MODEL_FILES['onnx-community']),
    );
    try {
      const voice = new Uint8Array(await readFile(path.join(FIXTURE, 'voices', 'ef_dora.bin')));
      const audio = await synth(session, COMMUNITY, tokenIds(12), styleRow(voice, 10), 1);
      expect(audio.dims).toEqual([1, 12 * SPT]);
    } finally {
      await session.release();
    }
  });
});

describe('committed fixture test/fixtures/standin-model-timestamped', () => {
  it('has exactly the files the generator writes, plus its README', async () => {
    const entries = await readdir(TIMESTAMPED_FIXTURE, { recursive: true, withFileTypes: true });
    const files = entries
      .filter((e) => e.isFile())
      .map((e) =>
        path.relative(TIMESTAMPED_FIXTURE, path.join(e.parentPath, e.name)).split(path.sep).join('/'),
      )
      .sort();
    const expected = [
      'README.md',
      'config.json',
      STANDIN_MODEL_FILES['onnx-community'],
      ...STANDIN_DEFAULTS.voices.map((id) => `voices/${id}.bin`),
    ].sort();
    expect(files).toEqual(expected);
  });

  // A mismatch means the fixture is stale: regenerate it with
  // npm run standin-model -- --out test/fixtures/standin-model-timestamped --timestamps
  it('matches the generator byte for byte', async () => {
    const model = await readFile(path.join(TIMESTAMPED_FIXTURE, STANDIN_MODEL_FILES['onnx-community']));
    const built = Buffer.from(buildStandinModel({ timestamps: true }));
    expect(model.equals(built), 'onnx/model.onnx is stale').toBe(true);
    for (const id of STANDIN_DEFAULTS.voices) {
      const voice = await readFile(path.join(TIMESTAMPED_FIXTURE, 'voices', `${id}.bin`));
      expect(voice.equals(Buffer.from(buildVoice(id))), `voices/${id}.bin is stale`).toBe(true);
    }
    const config = await readFile(path.join(TIMESTAMPED_FIXTURE, 'config.json'));
    expect(config.equals(await readFile(path.join(ROOT, 'model/kokoro/config.json')))).toBe(true);
  });

  it('loads and runs from disk', async () => {
    const session = await ort.InferenceSession.create(
      path.join(TIMESTAMPED_FIXTURE, STANDIN_MODEL_FILES['onnx-community']),
    );
    try {
      expect(session.outputNames).toEqual(['waveform', 'durations']);
      const voice = new Uint8Array(await readFile(path.join(TIMESTAMPED_FIXTURE, 'voices', 'af_heart.bin')));
      const ids = tokenIds(12);
      const { audio, frames } = await synthTimed(session, COMMUNITY, ids, styleRow(voice, 10), 1);
      expect(frames).toEqual(standinDurations(ids, 1));
      expect(audio.dims).toEqual([1, sum(frames) * STANDIN_SAMPLES_PER_FRAME]);
    } finally {
      await session.release();
    }
  });
});
