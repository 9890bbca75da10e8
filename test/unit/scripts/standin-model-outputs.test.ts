/**
 * The stand-in model's outputs beyond audio, run by ONNX Runtime: durations per token (timestamps)
 * in both layouts, and echoes of its inputs.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import * as ort from 'onnxruntime-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { STYLE_DIM } from '../../../model/kokoro/constants.ts';
import {
  STANDIN_ECHO_OUTPUTS,
  STANDIN_SAMPLES_PER_FRAME,
  type StandinModelOptions,
  buildStandinModel,
  buildVoice,
  standinDurations,
  writeStandinModelDir,
} from '../../../scripts/lib/standin-model.ts';
import {
  styleRow,
  tokenIds,
  COMMUNITY,
  KOKORO_ONNX,
  run,
  output,
  synthTimed,
  sum,
  samples,
  metadata,
  heart,
  style,
  type Names,
} from './standin-runner.ts';

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
