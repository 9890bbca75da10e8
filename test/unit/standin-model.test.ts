import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import * as ort from 'onnxruntime-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { STYLE_DIM, VOICE_FILE_BYTES, VOICE_ROWS } from '../../model/kokoro/constants.ts';
import {
  STANDIN_DEFAULTS,
  STANDIN_ECHO_OUTPUTS,
  STANDIN_MODEL_FILES,
  STANDIN_SAMPLES_PER_FRAME,
  type StandinModelOptions,
  buildStandinModel,
  buildVoice,
  standinDurations,
  writeStandinModelDir,
} from '../../scripts/lib/standin-model.ts';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const FIXTURE = path.join(ROOT, 'test/fixtures/standin-model');
const TIMESTAMPED_FIXTURE = path.join(ROOT, 'test/fixtures/standin-model-timestamped');
const SPT = STANDIN_DEFAULTS.samplesPerToken;

/** The documented length, with speed rounded to float32 as the tensor stores it. */
function expectedLength(tokens: number, speed: number, samplesPerToken = SPT): number {
  return Math.floor((tokens * samplesPerToken) / Math.fround(speed));
}

/** Row `row` of a voice file as a style vector (voice files are little-endian). */
function styleRow(voice: Uint8Array, row: number): Float32Array {
  const view = new DataView(voice.buffer, voice.byteOffset, voice.byteLength);
  const out = new Float32Array(STYLE_DIM);
  for (let i = 0; i < STYLE_DIM; i++) out[i] = view.getFloat32((row * STYLE_DIM + i) * 4, true);
  return out;
}

/** Kokoro-like ids: pads at both ends, phoneme ids inside 1..177. */
function tokenIds(count: number, salt = 0): number[] {
  const ids = [0];
  for (let i = 0; i < count - 2; i++) ids.push(1 + ((i * 37 + salt * 11) % 177));
  if (count > 1) ids.push(0);
  return ids.slice(0, count);
}

interface Names {
  ids: string;
  speed: string;
  audio: string;
}
const COMMUNITY: Names = { ids: 'input_ids', speed: 'speed', audio: 'waveform' };
const KOKORO_ONNX: Names = { ids: 'tokens', speed: 'speed', audio: 'audio' };

async function run(
  session: ort.InferenceSession,
  names: Names,
  ids: number[],
  style: Float32Array,
  speed: number,
  speedType: 'float32' | 'int32' = 'float32',
): Promise<ort.InferenceSession.OnnxValueMapType> {
  const speedTensor =
    speedType === 'int32'
      ? new ort.Tensor('int32', Int32Array.of(speed), [1])
      : new ort.Tensor('float32', Float32Array.of(speed), [1]);
  return session.run({
    [names.ids]: new ort.Tensor('int64', BigInt64Array.from(ids, BigInt), [1, ids.length]),
    style: new ort.Tensor('float32', style, [1, STYLE_DIM]),
    [names.speed]: speedTensor,
  });
}

function output(out: ort.InferenceSession.OnnxValueMapType, name: string): ort.Tensor {
  const tensor = out[name];
  if (!(tensor instanceof ort.Tensor)) throw new Error(`no ${name} output`);
  return tensor;
}

async function synth(
  session: ort.InferenceSession,
  names: Names,
  ids: number[],
  style: Float32Array,
  speed: number,
  speedType: 'float32' | 'int32' = 'float32',
): Promise<ort.Tensor> {
  return output(await run(session, names, ids, style, speed, speedType), names.audio);
}

/** Audio and durations (flattened, as consumers read them) from a timestamped model. */
async function synthTimed(
  session: ort.InferenceSession,
  names: Names,
  ids: number[],
  style: Float32Array,
  speed: number,
  speedType: 'float32' | 'int32' = 'float32',
): Promise<{ audio: ort.Tensor; durations: ort.Tensor; frames: number[] }> {
  const out = await run(session, names, ids, style, speed, speedType);
  const durations = output(out, 'durations');
  expect(durations.type).toBe('float32');
  return { audio: output(out, names.audio), durations, frames: Array.from(durations.data as Float32Array) };
}

const sum = (values: readonly number[]) => values.reduce((a, b) => a + b, 0);

function samples(tensor: ort.Tensor): Float32Array {
  expect(tensor.type).toBe('float32');
  return tensor.data as Float32Array;
}

function metadata(list: readonly ort.InferenceSession.ValueMetadata[]) {
  return list.map((m) => (m.isTensor ? { name: m.name, type: m.type, shape: m.shape } : { name: m.name }));
}

const heart = buildVoice('af_heart');
const style = styleRow(heart, 10);

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

describe('stand-in model with timestamps (onnx-community layout)', () => {
  let session: ort.InferenceSession;
  beforeAll(async () => {
    session = await ort.InferenceSession.create(buildStandinModel({ timestamps: true }));
  });
  afterAll(async () => {
    await session?.release();
  });

  it('declares the inputs of the plain model and the outputs waveform [1, N] and durations [1, T]', () => {
    expect(session.inputNames).toEqual(['input_ids', 'style', 'speed']);
    expect(session.outputNames).toEqual(['waveform', 'durations']);
    expect(metadata(session.inputMetadata)).toEqual([
      { name: 'input_ids', type: 'int64', shape: [1, 'sequence_length'] },
      { name: 'style', type: 'float32', shape: [1, STYLE_DIM] },
      { name: 'speed', type: 'float32', shape: [1] },
    ]);
    expect(metadata(session.outputMetadata)).toEqual([
      { name: 'waveform', type: 'float32', shape: [1, 'num_samples'] },
      { name: 'durations', type: 'float32', shape: [1, 'sequence_length'] },
    ]);
  });

  // max(1, round((1 + id mod 3) / speed)), halves to even: [ids, speed] -> frames.
  const cases = new Map<[number[], number], number[]>([
    [
      [[0, 1, 2, 3, 4, 5, 0], 1],
      [1, 2, 3, 1, 2, 3, 1],
    ],
    [
      [[0, 1, 2, 0], 0.5],
      [2, 4, 6, 2],
    ],
    [
      [[0, 1, 2, 0], 1.3],
      [1, 2, 2, 1],
    ], // 0.77, 1.54, 2.31
    [
      [[0, 1, 2, 0], 2],
      [1, 1, 2, 1],
    ], // 0.5 rounds to 0, then the minimum 1; 1.5 rounds to 2
    [
      [[0, 1, 2, 0], 0.8],
      [1, 2, 4, 1],
    ], // 1.25, 2.5 (to even: 2), 3.75
    [
      [[177, 176, 175], 1],
      [1, 3, 2],
    ],
  ]);

  it('outputs the documented durations per token', async () => {
    for (const [[ids, speed], expected] of cases) {
      expect(standinDurations(ids, speed), `standinDurations ${ids.join(',')} at ${speed}`).toEqual(expected);
      const { durations, frames } = await synthTimed(session, COMMUNITY, ids, style, speed);
      expect(durations.dims).toEqual([1, ids.length]);
      expect(frames, `ids ${ids.join(',')} at ${speed}`).toEqual(expected);
    }
  });

  it('gives durations that vary by token', async () => {
    const ids = tokenIds(40);
    const { frames } = await synthTimed(session, COMMUNITY, ids, style, 1);
    expect(new Set(frames)).toEqual(new Set([1, 2, 3]));
    expect(frames).toEqual(standinDurations(ids, 1));
  });

  it('outputs exactly sum(durations) * 600 samples', async () => {
    for (const tokens of [1, 2, 7, 100, 512]) {
      for (const salt of [0, 1]) {
        const ids = tokenIds(tokens, salt);
        for (const speed of [0.5, 1, 1.3, 2, 0.8, 1.1]) {
          const { audio, durations, frames } = await synthTimed(session, COMMUNITY, ids, style, speed);
          const label = `T=${tokens} salt=${salt} speed=${speed}`;
          expect(durations.dims, label).toEqual([1, tokens]);
          expect(frames, label).toEqual(standinDurations(ids, speed));
          expect(audio.dims, label).toEqual([1, sum(frames) * STANDIN_SAMPLES_PER_FRAME]);
        }
      }
    }
  });

  it('shortens every duration as the speed rises', async () => {
    const ids = tokenIds(60);
    const bySpeed: number[][] = [];
    for (const speed of [0.5, 1, 1.3, 2])
      bySpeed.push((await synthTimed(session, COMMUNITY, ids, style, speed)).frames);
    for (let i = 1; i < bySpeed.length; i++) {
      expect(sum(bySpeed[i])).toBeLessThan(sum(bySpeed[i - 1]));
      bySpeed[i].forEach((d, t) => expect(d).toBeLessThanOrEqual(bySpeed[i - 1][t]));
    }
    expect(bySpeed.flat().every((d) => Number.isInteger(d) && d >= 1)).toBe(true);
  });

  it('still produces the faded tone within [-1, 1]', async () => {
    const { audio } = await synthTimed(session, COMMUNITY, tokenIds(30), style, 1.3);
    const wave = samples(audio);
    let peak = 0;
    for (const v of wave) peak = Math.max(peak, Math.abs(v));
    expect(peak).toBeGreaterThan(0.2);
    expect(peak).toBeLessThanOrEqual(0.5);
    expect(Math.abs(wave[0])).toBeLessThan(1e-3);
    expect(Math.abs(wave[wave.length - 1])).toBeLessThan(1e-2);
  });
});

describe('stand-in model with timestamps, other variants', () => {
  it('outputs audio [N] and durations [T] in the kokoro-onnx layout', async () => {
    const session = await ort.InferenceSession.create(
      buildStandinModel({ layout: 'kokoro-onnx', timestamps: true, layers: 2, dim: 32 }),
    );
    try {
      expect(session.inputNames).toEqual(['tokens', 'style', 'speed']);
      expect(metadata(session.outputMetadata)).toEqual([
        { name: 'audio', type: 'float32', shape: ['num_samples'] },
        { name: 'durations', type: 'float32', shape: ['sequence_length'] },
      ]);
      for (const speed of [0.5, 1, 1.3, 2]) {
        const ids = tokenIds(20);
        const { audio, durations, frames } = await synthTimed(session, KOKORO_ONNX, ids, style, speed);
        expect(durations.dims).toEqual([20]);
        expect(frames).toEqual(standinDurations(ids, speed));
        expect(audio.dims).toEqual([sum(frames) * STANDIN_SAMPLES_PER_FRAME]);
      }
    } finally {
      await session.release();
    }
  });

  it('runs with an int32 speed input', async () => {
    const session = await ort.InferenceSession.create(
      buildStandinModel({ timestamps: true, speedType: 'int32', layers: 1, dim: 8 }),
    );
    try {
      for (const speed of [1, 2, 3]) {
        const ids = tokenIds(11);
        const { audio, frames } = await synthTimed(session, COMMUNITY, ids, style, speed, 'int32');
        expect(frames).toEqual(standinDurations(ids, speed));
        expect(audio.dims).toEqual([1, sum(frames) * STANDIN_SAMPLES_PER_FRAME]);
      }
    } finally {
      await session.release();
    }
  });

  it('leaves the plain model as it was', async () => {
    const plain = buildStandinModel();
    expect(Buffer.from(buildStandinModel({ timestamps: false })).equals(Buffer.from(plain))).toBe(true);
    expect(Buffer.from(buildStandinModel({ timestamps: true })).equals(Buffer.from(plain))).toBe(false);
    const session = await ort.InferenceSession.create(plain);
    try {
      expect(session.outputNames).toEqual(['waveform']);
    } finally {
      await session.release();
    }
  });

  it('refuses samplesPerToken, which the durations replace', () => {
    expect(() => buildStandinModel({ timestamps: true, samplesPerToken: 1200 })).toThrow(
      /samplesPerToken does not apply with timestamps/,
    );
  });
});

describe('stand-in model with echo outputs', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'standin-echo-'));
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  /** Sessions on the echo model and on the same model without echo, written by writeStandinModelDir. */
  async function pair(
    name: string,
    options: StandinModelOptions,
  ): Promise<{ echo: ort.InferenceSession; plain: ort.InferenceSession; release: () => Promise<void> }> {
    const write = (sub: string, echo: boolean) =>
      writeStandinModelDir(path.join(dir, name, sub), {
        ...options,
        echo,
        voices: ['af_heart'],
        log: () => {},
      });
    const echo = await ort.InferenceSession.create((await write('echo', true)).model);
    const plain = await ort.InferenceSession.create((await write('plain', false)).model);
    return { echo, plain, release: async () => void (await Promise.all([echo.release(), plain.release()])) };
  }

  const bytes = (tensor: ort.Tensor) => {
    const data = tensor.data as Float32Array | Int32Array | BigInt64Array;
    return Buffer.from(data.buffer, data.byteOffset, data.byteLength);
  };

  /** Runs both models and checks the echoes byte for byte and the audio against the plain model's. */
  async function expectEcho(
    models: { echo: ort.InferenceSession; plain: ort.InferenceSession },
    names: Names & { durations?: string },
    ids: number[],
    styleVector: Float32Array,
    speed: number,
    speedType: 'float32' | 'int32' = 'float32',
  ): Promise<void> {
    const label = `T=${ids.length} speed=${speed} (${speedType})`;
    const got = await run(models.echo, names, ids, styleVector, speed, speedType);
    const want = await run(models.plain, names, ids, styleVector, speed, speedType);

    const echoIds = output(got, STANDIN_ECHO_OUTPUTS.ids);
    expect(echoIds.type, label).toBe('int64');
    expect(echoIds.dims, label).toEqual([1, ids.length]);
    expect(Array.from(echoIds.data as BigInt64Array, Number), label).toEqual(ids);

    const echoStyle = output(got, STANDIN_ECHO_OUTPUTS.style);
    expect(echoStyle.type, label).toBe('float32');
    expect(echoStyle.dims, label).toEqual([1, STYLE_DIM]);
    expect(bytes(echoStyle).equals(Buffer.from(styleVector.buffer)), label).toBe(true);

    const echoSpeed = output(got, STANDIN_ECHO_OUTPUTS.speed);
    const sent = speedType === 'int32' ? Int32Array.of(speed) : Float32Array.of(speed);
    expect(echoSpeed.type, label).toBe(speedType);
    expect(echoSpeed.dims, label).toEqual([1]);
    expect(bytes(echoSpeed).equals(Buffer.from(sent.buffer)), label).toBe(true);

    for (const name of [names.audio, ...(names.durations ? [names.durations] : [])]) {
      const a = output(got, name);
      const b = output(want, name);
      expect(a.dims, `${name} ${label}`).toEqual(b.dims);
      expect(bytes(a).equals(bytes(b)), `${name} ${label}`).toBe(true);
    }
  }

  // Odd floats must come back bit for bit: -0, the smallest subnormal, huge values (small enough that the
  // waveform stays finite, so comparing it still means something).
  const oddStyle = Float32Array.from(styleRow(heart, 300), (v, i) =>
    i === 0 ? -0 : i === 1 ? 1e-45 : i === 2 ? 1e30 : i === 3 ? -1e30 : v,
  );
  // [ids, style, speed]; 1.3 and 0.8 are not float32 values, so the echo is the rounded value that was sent.
  const cases: [number[], Float32Array, number][] = [
    [tokenIds(1), style, 1],
    [[0, 177, 1, 176, 0], style, 0.8],
    [tokenIds(40, 1), styleRow(buildVoice('am_adam'), 509), 1.3],
    [tokenIds(512), oddStyle, 2],
  ];

  it('declares the echo outputs after the waveform, typed and shaped like the inputs', async () => {
    const models = await pair('declares', { layers: 2, dim: 32 });
    try {
      expect(models.echo.inputNames).toEqual(models.plain.inputNames);
      expect(models.echo.outputNames).toEqual(['waveform', 'echo_input_ids', 'echo_style', 'echo_speed']);
      expect(metadata(models.echo.outputMetadata)).toEqual([
        ...metadata(models.plain.outputMetadata),
        { name: 'echo_input_ids', type: 'int64', shape: [1, 'sequence_length'] },
        { name: 'echo_style', type: 'float32', shape: [1, STYLE_DIM] },
        { name: 'echo_speed', type: 'float32', shape: [1] },
      ]);
    } finally {
      await models.release();
    }
  });

  it('echoes ids, style and speed unchanged and keeps the waveform of the model without echo', async () => {
    const models = await pair('defaults', {});
    try {
      for (const [ids, styleVector, speed] of cases)
        await expectEcho(models, COMMUNITY, ids, styleVector, speed);
    } finally {
      await models.release();
    }
  });

  it('echoes an int32 speed, kokoro-onnx tokens and keeps the durations of a timestamped model', async () => {
    const int32 = await pair('int32', { speedType: 'int32', samplesPerToken: 600, layers: 1, dim: 8 });
    try {
      const speed = int32.echo.outputMetadata.find((m) => m.name === STANDIN_ECHO_OUTPUTS.speed);
      expect(speed?.isTensor && speed.type).toBe('int32');
      for (const s of [1, 2, 3]) await expectEcho(int32, COMMUNITY, tokenIds(11), style, s, 'int32');
    } finally {
      await int32.release();
    }
    const kokoro = await pair('kokoro-onnx', { layout: 'kokoro-onnx', timestamps: true, layers: 2, dim: 32 });
    try {
      expect(kokoro.echo.outputNames).toEqual([
        'audio',
        'durations',
        'echo_input_ids',
        'echo_style',
        'echo_speed',
      ]);
      const names = { ...KOKORO_ONNX, durations: 'durations' };
      for (const [ids, styleVector, speed] of cases) await expectEcho(kokoro, names, ids, styleVector, speed);
    } finally {
      await kokoro.release();
    }
  });

  it('leaves the model without echo byte for byte as it was', () => {
    const plain = buildStandinModel();
    expect(Buffer.from(buildStandinModel({ echo: false })).equals(Buffer.from(plain))).toBe(true);
    expect(Buffer.from(buildStandinModel({ echo: true })).equals(Buffer.from(plain))).toBe(false);
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
