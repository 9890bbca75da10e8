/**
 * The stand-in for Kokoro-82M: a small ONNX model with Kokoro's input/output contract that outputs a
 * test tone instead of speech, plus deterministic voice files. Tests and benchmarks use it because
 * the real weights are not available everywhere. `npm run standin-model` writes it to a folder.
 */
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import onnxProto from 'onnx-proto';
import {
  DURATION_FRAME_SAMPLES,
  SAMPLE_RATE,
  STYLE_DIM,
  VOICE_FILE_BYTES,
  VOICE_ROWS,
} from '../../model/kokoro/constants.ts';
import { projectPath } from './paths.ts';

const { onnx } = onnxProto;
type ITensorProto = onnxProto.onnx.ITensorProto;
type INodeProto = onnxProto.onnx.INodeProto;
type IAttributeProto = onnxProto.onnx.IAttributeProto;
type IValueInfoProto = onnxProto.onnx.IValueInfoProto;

const DataType = onnx.TensorProto.DataType;
const AttributeType = onnx.AttributeProto.AttributeType;

export type StandinLayout = 'onnx-community' | 'kokoro-onnx';
export type StandinSpeedType = 'float32' | 'int32';

/** Options for the model graph itself. */
export interface StandinModelOptions {
  /** Input/output names and output rank of the export being imitated. */
  layout?: StandinLayout;
  /** Declared element type of the `speed` input. */
  speedType?: StandinSpeedType;
  /** Number of MatMul + Tanh layers (compute cost and file size scale linearly). */
  layers?: number;
  /**
   * Passes through the layer stack, reusing its weights: compute scales linearly, file size does not. Lets
   * benchmarks approach real Kokoro latency without a huge file.
   */
  repeat?: number;
  /** Width of the token embedding and of each layer (compute cost and file size scale quadratically). */
  dim?: number;
  /** Output samples per input token at speed 1. Not allowed with `timestamps`, whose durations set the length. */
  samplesPerToken?: number;
  /**
   * Imitate the timestamped export (Kokoro-82M-v1.0-ONNX-timestamped): add a `durations` output, frames of
   * {@link STANDIN_SAMPLES_PER_FRAME} samples per token, and make the waveform exactly that long.
   */
  timestamps?: boolean;
  /**
   * Add the outputs {@link STANDIN_ECHO_OUTPUTS}, which return the three inputs unchanged, so a test can read
   * exactly what reached ONNX Runtime. The waveform (and durations) stay as without them.
   */
  echo?: boolean;
  /** Seed for the weights and voices. */
  seed?: number;
}

/** Options for a whole model directory: the model plus voice files. */
export interface StandinDirOptions extends StandinModelOptions {
  /** Voice ids to write as `voices/<id>.bin`. */
  voices?: readonly string[];
  /** Receives one line per file written; pass `() => {}` to silence. */
  log?: (line: string) => void;
}

/** Defaults used by the CLI and by the committed fixture in test/fixtures/standin-model. */
export const STANDIN_DEFAULTS = {
  layout: 'onnx-community',
  speedType: 'float32',
  layers: 8,
  repeat: 1,
  dim: 256,
  samplesPerToken: 1200,
  timestamps: false,
  echo: false,
  seed: 1,
  voices: ['af_heart', 'af_bella', 'af_sky', 'bf_emma', 'am_adam', 'ef_dora'],
} as const satisfies Required<Omit<StandinDirOptions, 'log'>>;

/** Where the model file goes inside a model directory, per layout. */
export const STANDIN_MODEL_FILES = {
  'onnx-community': 'onnx/model.onnx',
  'kokoro-onnx': 'kokoro-v1.0.onnx',
} as const satisfies Record<StandinLayout, string>;

/**
 * Graph input/output names per layout, as the published exports name them. `durations` exists only in a model
 * built with `timestamps`.
 */
export const STANDIN_IO_NAMES = {
  'onnx-community': {
    ids: 'input_ids',
    style: 'style',
    speed: 'speed',
    audio: 'waveform',
    durations: 'durations',
  },
  'kokoro-onnx': { ids: 'tokens', style: 'style', speed: 'speed', audio: 'audio', durations: 'durations' },
} as const satisfies Record<StandinLayout, Record<'ids' | 'style' | 'speed' | 'audio' | 'durations', string>>;

/**
 * Outputs of a model built with `echo`, after the waveform (and durations): Identity copies of the ids (int64
 * [1, T]), the style (float32 [1, 256]) and the speed (float32 or int32 [1], as declared). The names are the
 * same in both layouts, so kokoro-onnx's `tokens` come back as `echo_input_ids`.
 */
export const STANDIN_ECHO_OUTPUTS = {
  ids: 'echo_input_ids',
  style: 'echo_style',
  speed: 'echo_speed',
} as const satisfies Record<'ids' | 'style' | 'speed', string>;

/**
 * Samples per duration frame: Kokoro's decoder turns each predicted frame into 600 samples at 24 kHz (40
 * frames a second), so the real model's waveform is sum(durations) * 600 samples long.
 */
export const STANDIN_SAMPLES_PER_FRAME = DURATION_FRAME_SAMPLES;

/** Frames per token at speed 1 in a timestamped stand-in cycle through 1, 2, 3 with the token id. */
const DURATION_CYCLE = 3;

/** ONNX `Round`: to the nearest integer, halves to even (as torch.round in Kokoro). */
function roundHalfEven(x: number): number {
  const r = Math.round(x);
  return r - x === 0.5 && r % 2 !== 0 ? r - 1 : r;
}

/**
 * The `durations` a timestamped stand-in outputs, computed here the way the graph does (float32):
 * max(1, round((1 + id mod 3) / speed)) frames per token, halves rounded to even. Pads count like any token.
 */
export function standinDurations(ids: readonly number[], speed: number): number[] {
  const s = Math.fround(speed);
  return ids.map((id) => Math.max(1, roundHalfEven(Math.fround((1 + (id % DURATION_CYCLE)) / s))));
}

/** Kokoro's `n_token`: token ids are 0..177, so the embedding table has this many rows. */
const VOCAB_SIZE = 178;
/** Fade in and out over 5 ms so chunk edges do not click. */
const FADE_SAMPLES = Math.round(SAMPLE_RATE * 0.005);

const CONFIG_SOURCE = projectPath('model', 'kokoro', 'config.json');

// ---------------------------------------------------------------------------------------------------------
// Deterministic random numbers. Only integer ops and exact float arithmetic, so the bytes do not depend on
// the platform's Math.log/Math.cos and the committed fixture can be compared byte for byte.

function fnv1a(text: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 0;
}

/** mulberry32: a small 32-bit PRNG, good enough for weights and voices. */
function makeRng(label: string, seed: number): () => number {
  let state = fnv1a(`${seed}:${label}`);
  return () => {
    state = (state + 0x6d2b79f5) | 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Approximately standard normal: the Irwin-Hall sum of 12 uniforms has mean 6 and variance 1. */
function normal(rng: () => number): number {
  let sum = 0;
  for (let i = 0; i < 12; i++) sum += rng();
  return sum - 6;
}

function randomFloats(count: number, std: number, rng: () => number): Float32Array {
  const out = new Float32Array(count);
  for (let i = 0; i < count; i++) out[i] = normal(rng) * std;
  return out;
}

// ---------------------------------------------------------------------------------------------------------
// Graph-building helpers. Tensors are stored as little-endian raw_data regardless of host byte order.

function floatTensor(name: string, dims: number[], values: ArrayLike<number>): ITensorProto {
  const bytes = new Uint8Array(values.length * 4);
  const view = new DataView(bytes.buffer);
  for (let i = 0; i < values.length; i++) view.setFloat32(i * 4, values[i], true);
  return { name, dims, dataType: DataType.FLOAT, rawData: bytes };
}

function doubleTensor(name: string, dims: number[], values: ArrayLike<number>): ITensorProto {
  const bytes = new Uint8Array(values.length * 8);
  const view = new DataView(bytes.buffer);
  for (let i = 0; i < values.length; i++) view.setFloat64(i * 8, values[i], true);
  return { name, dims, dataType: DataType.DOUBLE, rawData: bytes };
}

function int64Tensor(name: string, dims: number[], values: ArrayLike<number>): ITensorProto {
  const bytes = new Uint8Array(values.length * 8);
  const view = new DataView(bytes.buffer);
  for (let i = 0; i < values.length; i++) view.setBigInt64(i * 8, BigInt(values[i]), true);
  return { name, dims, dataType: DataType.INT64, rawData: bytes };
}

function intAttr(name: string, value: number): IAttributeProto {
  return { name, type: AttributeType.INT, i: value };
}

function valueInfo(name: string, elemType: number, dims: (number | string)[]): IValueInfoProto {
  return {
    name,
    type: {
      tensorType: {
        elemType,
        shape: { dim: dims.map((d) => (typeof d === 'number' ? { dimValue: d } : { dimParam: d })) },
      },
    },
  };
}

class GraphBuilder {
  readonly nodes: INodeProto[] = [];
  readonly initializers: ITensorProto[] = [];

  constant(tensor: ITensorProto): string {
    this.initializers.push(tensor);
    return tensor.name as string;
  }

  /** Adds a node whose single output is named after the node, and returns that name. */
  op(opType: string, name: string, inputs: string[], attribute: IAttributeProto[] = []): string {
    this.nodes.push({ opType, name, input: inputs, output: [name], attribute });
    return name;
  }
}

function checkInt(label: string, value: number, min: number, max: number): number {
  if (!Number.isInteger(value) || value < min || value > max) {
    throw new RangeError(`${label} must be an integer in [${min}, ${max}], got ${value}`);
  }
  return value;
}

/**
 * Builds the stand-in model and returns the serialized ONNX ModelProto (ir_version 8, opset 17).
 *
 * Inputs are token ids int64 [1, T], `style` float32 [1, 256] and `speed` float32 or int32 [1]. The output
 * has N = floor(T * samplesPerToken / speed) samples ([1, N] for onnx-community, [N] for kokoro-onnx): a
 * faded sine of amplitude about 0.3 whose pitch follows the token ids (their mean and position-weighted
 * mean) and the style vector, and whose loudness follows the style vector. A chain of `layers` MatMul + Tanh
 * layers over the token embeddings, run `repeat` times, feeds a small amplitude term, so the runtime cannot
 * fold the compute away. The same options always give the same bytes.
 *
 * With `timestamps` a second output `durations` (float32, [1, T] for onnx-community, [T] for kokoro-onnx,
 * like the waveform's rank) gives each token max(1, round((1 + id mod 3) / speed)) frames (see
 * {@link standinDurations}), and N = sum(durations) * 600 instead.
 *
 * With `echo` three more outputs return the inputs unchanged (see {@link STANDIN_ECHO_OUTPUTS}).
 */
export function buildStandinModel(options: StandinModelOptions = {}): Uint8Array {
  const layout = options.layout ?? STANDIN_DEFAULTS.layout;
  const speedType = options.speedType ?? STANDIN_DEFAULTS.speedType;
  const layers = checkInt('layers', options.layers ?? STANDIN_DEFAULTS.layers, 0, 1024);
  const repeat = checkInt('repeat', options.repeat ?? STANDIN_DEFAULTS.repeat, 1, 10_000);
  const dim = checkInt('dim', options.dim ?? STANDIN_DEFAULTS.dim, 1, 4096);
  const samplesPerToken = checkInt(
    'samplesPerToken',
    options.samplesPerToken ?? STANDIN_DEFAULTS.samplesPerToken,
    1,
    1_000_000,
  );
  const seed = checkInt('seed', options.seed ?? STANDIN_DEFAULTS.seed, 0, 0xffffffff);
  const timestamps = options.timestamps ?? STANDIN_DEFAULTS.timestamps;
  const echo = options.echo ?? STANDIN_DEFAULTS.echo;
  if (timestamps && options.samplesPerToken !== undefined) {
    throw new RangeError(
      `samplesPerToken does not apply with timestamps: the waveform is sum(durations) * ${STANDIN_SAMPLES_PER_FRAME} samples long`,
    );
  }
  if (!(layout in STANDIN_MODEL_FILES)) throw new RangeError(`unknown layout: ${String(layout)}`);
  if (speedType !== 'float32' && speedType !== 'int32') {
    throw new RangeError(`unknown speed type: ${String(speedType)}`);
  }
  const io = STANDIN_IO_NAMES[layout];
  const g = new GraphBuilder();

  const axis0 = g.constant(int64Tensor('axis_0', [1], [0]));
  const tShape = g.op('Shape', 'seq_len', [io.ids], [intAttr('start', 1), intAttr('end', 2)]);
  let n: string; // int64 scalar
  let nD: string; // the same as double
  if (timestamps) {
    // Durations in float32 as the real export has them: (1 + id mod 3) / speed, rounded (halves to even, as
    // torch.round), at least 1. N = sum(durations) * 600, summed in int64 so it is exact.
    const cycle = g.constant(int64Tensor('duration_cycle', [], [DURATION_CYCLE]));
    const minFrames = g.constant(floatTensor('min_frames', [], [1]));
    const framesAt1 = g.op('Add', 'frames_at_speed_1', [
      g.op('Cast', 'id_cycle_f', [g.op('Mod', 'id_cycle', [io.ids, cycle])], [intAttr('to', DataType.FLOAT)]),
      minFrames,
    ]);
    const speedF = g.op('Cast', 'speed_f', [io.speed], [intAttr('to', DataType.FLOAT)]);
    const rounded = g.op('Round', 'frames_rounded', [g.op('Div', 'frames_scaled', [framesAt1, speedF])]);
    // [1, T] like the waveform's [1, N] for onnx-community; [T] like kokoro-onnx's [N].
    const durations =
      layout === 'onnx-community'
        ? g.op('Max', io.durations, [rounded, minFrames])
        : g.op('Squeeze', io.durations, [g.op('Max', 'durations_2d', [rounded, minFrames]), axis0]);
    const frames = g.op(
      'ReduceSum',
      'total_frames',
      [g.op('Cast', 'frames_i64', [durations], [intAttr('to', DataType.INT64)])],
      [intAttr('keepdims', 0)],
    );
    const spf = g.constant(int64Tensor('samples_per_frame', [], [STANDIN_SAMPLES_PER_FRAME]));
    n = g.op('Mul', 'num_samples', [frames, spf]);
    nD = g.op('Cast', 'num_samples_d', [n], [intAttr('to', DataType.DOUBLE)]);
  } else {
    // Output length N = floor(T * spt / speed). Computed in double: T * spt is exact there and the division
    // rounds once, so callers can predict N exactly with Math.floor(T * spt / Math.fround(speed)).
    const tD = g.op('Cast', 'seq_len_d', [tShape], [intAttr('to', DataType.DOUBLE)]);
    const speedD = g.op('Cast', 'speed_d', [io.speed], [intAttr('to', DataType.DOUBLE)]);
    const spt = g.constant(doubleTensor('samples_per_token', [1], [samplesPerToken]));
    const total = g.op('Mul', 'samples_at_speed_1', [tD, spt]);
    nD = g.op('Floor', 'num_samples_d', [g.op('Div', 'samples_raw', [total, speedD])]);
    const n1 = g.op('Cast', 'num_samples_1', [nD], [intAttr('to', DataType.INT64)]);
    n = g.op('Squeeze', 'num_samples', [n1, axis0]);
  }
  const zero = g.constant(int64Tensor('zero_i64', [], [0]));
  const one = g.constant(int64Tensor('one_i64', [], [1]));
  const index = g.op(
    'Cast',
    'sample_index_d',
    [g.op('Range', 'sample_index', [zero, n, one])],
    [intAttr('to', DataType.DOUBLE)],
  );

  // The tunable compute: embeddings -> K x (MatMul -> Tanh) -> mean. Weight std 1/sqrt(dim) keeps each
  // layer's pre-activation variance close to its input's, so tanh stays out of saturation.
  const rng = makeRng('weights', seed);
  let h = g.op('Gather', 'embedded', [
    g.constant(floatTensor('embedding', [VOCAB_SIZE, dim], randomFloats(VOCAB_SIZE * dim, 0.5, rng))),
    io.ids,
  ]);
  const weights: string[] = [];
  for (let k = 0; k < layers; k++) {
    weights.push(
      g.constant(
        floatTensor(`layer${k}.weight`, [dim, dim], randomFloats(dim * dim, 1 / Math.sqrt(dim), rng)),
      ),
    );
  }
  for (let r = 0; r < repeat; r++) {
    weights.forEach((w, k) => {
      const name = r === 0 ? `layer${k}` : `pass${r}.layer${k}`;
      h = g.op('Tanh', `${name}.out`, [g.op('MatMul', `${name}.matmul`, [h, w])]);
    });
  }
  const hidden = g.op('ReduceMean', 'hidden_mean', [h], [intAttr('keepdims', 0)]);

  // Style: two fixed projections with weights of std 1/16; for voice values of std ~0.13 the tanh arguments
  // land around +-0.6, so different voices get clearly different pitch and loudness.
  const projStd = 1 / Math.sqrt(STYLE_DIM);
  const pitchProj = g.constant(
    floatTensor('style_pitch', [STYLE_DIM], randomFloats(STYLE_DIM, projStd, rng)),
  );
  const ampProj = g.constant(floatTensor('style_amp', [STYLE_DIM], randomFloats(STYLE_DIM, projStd, rng)));
  const styleGain = g.constant(floatTensor('style_gain', [], [5]));
  const stylePitch = g.op('Tanh', 'style_pitch_t', [
    g.op('Mul', 'style_pitch_s', [g.op('MatMul', 'style_pitch_p', [io.style, pitchProj]), styleGain]),
  ]);
  const styleAmp = g.op('Tanh', 'style_amp_t', [
    g.op('Mul', 'style_amp_s', [g.op('MatMul', 'style_amp_p', [io.style, ampProj]), styleGain]),
  ]);

  // Pitch: 200 Hz + 1 Hz per unit of the mean token id + 1 Hz per unit of the position-weighted mean (ids
  // are 0..177). The weighted term makes reordered tokens sound different too. The style scales it +-20%.
  const idsF = g.op('Cast', 'ids_f', [io.ids], [intAttr('to', DataType.FLOAT)]);
  const meanId = g.op('ReduceMean', 'mean_id', [idsF], [intAttr('keepdims', 0)]);
  const tF = g.op(
    'Cast',
    'seq_len_f',
    [g.op('Squeeze', 'seq_len_scalar', [tShape, axis0])],
    [intAttr('to', DataType.FLOAT)],
  );
  const oneF = g.constant(floatTensor('one_f', [], [1]));
  const positions = g.op('Range', 'positions', [oneF, g.op('Add', 'positions_end', [tF, oneF]), oneF]);
  const weightedMeanId = g.op('Div', 'weighted_mean_id', [
    g.op(
      'ReduceSum',
      'weighted_id_sum',
      [g.op('Mul', 'weighted_ids', [idsF, positions])],
      [intAttr('keepdims', 0)],
    ),
    g.op('ReduceSum', 'position_sum', [positions], [intAttr('keepdims', 0)]),
  ]);
  const baseHz = g.op('Add', 'base_hz', [
    g.op('Add', 'id_hz', [meanId, weightedMeanId]),
    g.constant(floatTensor('min_hz', [], [200])),
  ]);
  const pitchFactor = g.op('Add', 'pitch_factor', [
    g.op('Mul', 'pitch_dev', [stylePitch, g.constant(floatTensor('pitch_depth', [], [0.2]))]),
    oneF,
  ]);
  const hz = g.op('Mul', 'hz', [baseHz, pitchFactor]);

  // Amplitude: 0.3 +- 0.05 from the style + 0.01 * hidden mean; at most 0.36, so the tone stays quiet.
  const amp = g.op('Add', 'amp', [
    g.op('Add', 'amp_style', [
      g.constant(floatTensor('base_amp', [], [0.3])),
      g.op('Mul', 'amp_dev', [styleAmp, g.constant(floatTensor('amp_depth', [], [0.05]))]),
    ]),
    g.op('Mul', 'amp_hidden', [hidden, g.constant(floatTensor('hidden_depth', [], [0.01]))]),
  ]);

  // The waveform is computed in double: a float32 phase loses precision after a few seconds of audio.
  const radPerSample = g.op('Mul', 'rad_per_sample', [
    g.op('Cast', 'hz_d', [hz], [intAttr('to', DataType.DOUBLE)]),
    g.constant(doubleTensor('two_pi_over_rate', [], [(2 * Math.PI) / SAMPLE_RATE])),
  ]);
  const sine = g.op('Sin', 'sine', [g.op('Mul', 'phase', [index, radPerSample])]);
  const invFade = g.constant(doubleTensor('inv_fade', [], [1 / FADE_SAMPLES]));
  const fadeIn = g.op('Mul', 'fade_in', [index, invFade]);
  const lastIndex = g.op('Sub', 'last_index', [nD, g.constant(doubleTensor('one_d', [], [1]))]);
  const fadeOut = g.op('Mul', 'fade_out', [g.op('Sub', 'samples_left', [lastIndex, index]), invFade]);
  const envelope = g.op('Clip', 'envelope', [
    g.op('Min', 'fade', [fadeIn, fadeOut]),
    g.constant(doubleTensor('zero_d', [], [0])),
    g.constant(doubleTensor('one_d_max', [], [1])),
  ]);
  const ampD = g.op('Cast', 'amp_d', [amp], [intAttr('to', DataType.DOUBLE)]);
  const wave = g.op('Mul', 'wave_d', [g.op('Mul', 'shaped', [sine, envelope]), ampD]);
  const waveF = g.op('Cast', 'wave_f', [wave], [intAttr('to', DataType.FLOAT)]);
  const bounds = [
    g.constant(floatTensor('min_sample', [], [-1])),
    g.constant(floatTensor('max_sample', [], [1])),
  ];
  if (layout === 'onnx-community') {
    const clipped = g.op('Clip', 'wave_clipped', [waveF, ...bounds]);
    g.nodes.push({ opType: 'Unsqueeze', name: 'to_batch', input: [clipped, axis0], output: [io.audio] });
  } else {
    g.nodes.push({ opType: 'Clip', name: 'wave_clipped', input: [waveF, ...bounds], output: [io.audio] });
  }

  const audioShape = layout === 'onnx-community' ? [1, 'num_samples'] : ['num_samples'];
  const outputs = [valueInfo(io.audio, DataType.FLOAT, audioShape)];
  if (timestamps) {
    const shape = layout === 'onnx-community' ? [1, 'sequence_length'] : ['sequence_length'];
    outputs.push(valueInfo(io.durations, DataType.FLOAT, shape));
  }
  const speedElem = speedType === 'int32' ? DataType.INT32 : DataType.FLOAT;
  if (echo) {
    g.op('Identity', STANDIN_ECHO_OUTPUTS.ids, [io.ids]);
    g.op('Identity', STANDIN_ECHO_OUTPUTS.style, [io.style]);
    g.op('Identity', STANDIN_ECHO_OUTPUTS.speed, [io.speed]);
    outputs.push(
      valueInfo(STANDIN_ECHO_OUTPUTS.ids, DataType.INT64, [1, 'sequence_length']),
      valueInfo(STANDIN_ECHO_OUTPUTS.style, DataType.FLOAT, [1, STYLE_DIM]),
      valueInfo(STANDIN_ECHO_OUTPUTS.speed, speedElem, [1]),
    );
  }
  const docString =
    (timestamps
      ? 'Stand-in for Kokoro-82M (timestamped export) with the same inputs and outputs. It outputs a test ' +
        'tone, not speech, and durations of max(1, round((1 + id mod 3) / speed)) frames of 600 samples.'
      : 'Stand-in for Kokoro-82M with the same inputs and outputs. It outputs a test tone, not speech.') +
    (echo ? ' Its echo_* outputs return the inputs unchanged.' : '');
  const model = onnx.ModelProto.create({
    irVersion: 8,
    opsetImport: [{ domain: '', version: 17 }],
    producerName: 'kokoro-stream-server/make-standin-model',
    producerVersion: '1',
    docString,
    metadataProps: [
      { key: 'standin', value: 'true' },
      timestamps
        ? { key: 'samples_per_frame', value: String(STANDIN_SAMPLES_PER_FRAME) }
        : { key: 'samples_per_token', value: String(samplesPerToken) },
    ],
    graph: {
      name: 'kokoro_standin',
      node: g.nodes,
      initializer: g.initializers,
      input: [
        valueInfo(io.ids, DataType.INT64, [1, 'sequence_length']),
        valueInfo(io.style, DataType.FLOAT, [1, STYLE_DIM]),
        valueInfo(io.speed, speedElem, [1]),
      ],
      output: outputs,
    },
  });
  return onnx.ModelProto.encode(model).finish();
}

/**
 * Builds one voice file: VOICE_ROWS x STYLE_DIM little-endian float32 (VOICE_FILE_BYTES bytes). Each value
 * is a per-column base plus a drift that grows with the row index plus a little noise (std about 0.15
 * overall), so both the voice id and the chosen row change the style vector. Deterministic in id and seed.
 */
export function buildVoice(id: string, seed: number = STANDIN_DEFAULTS.seed): Uint8Array {
  const rng = makeRng(`voice:${id}`, seed);
  const base = randomFloats(STYLE_DIM, 0.12, rng);
  const drift = randomFloats(STYLE_DIM, 0.08, rng);
  const bytes = new Uint8Array(VOICE_FILE_BYTES);
  const view = new DataView(bytes.buffer);
  for (let row = 0; row < VOICE_ROWS; row++) {
    const t = row / (VOICE_ROWS - 1);
    for (let col = 0; col < STYLE_DIM; col++) {
      const value = base[col] + t * drift[col] + 0.02 * normal(rng);
      view.setFloat32((row * STYLE_DIM + col) * 4, value, true);
    }
  }
  return bytes;
}

/** Paths written by {@link writeStandinModelDir}, all absolute. */
export interface StandinDirFiles {
  model: string;
  voices: string[];
  /** Only for the onnx-community layout. */
  config?: string;
}

/**
 * Writes a complete stand-in model directory laid out like the export named by `options.layout`:
 * `onnx/model.onnx` + `config.json` (onnx-community) or `kokoro-v1.0.onnx` (kokoro-onnx), and
 * `voices/<id>.bin` for each voice. Existing files are overwritten; other files are left alone.
 */
export async function writeStandinModelDir(
  dir: string,
  options: StandinDirOptions = {},
): Promise<StandinDirFiles> {
  const layout = options.layout ?? STANDIN_DEFAULTS.layout;
  const voices = options.voices ?? STANDIN_DEFAULTS.voices;
  const seed = options.seed ?? STANDIN_DEFAULTS.seed;
  const log = options.log ?? ((line: string) => console.log(line));
  for (const id of voices) {
    // Voice ids become file names.
    if (!/^[A-Za-z0-9_-]+$/.test(id)) throw new RangeError(`invalid voice id: ${JSON.stringify(id)}`);
  }
  const root = path.resolve(dir);
  const write = async (file: string, bytes: Uint8Array): Promise<string> => {
    await mkdir(path.dirname(file), { recursive: true });
    await writeFile(file, bytes);
    log(`wrote ${file} (${bytes.byteLength.toLocaleString('en-US')} bytes)`);
    return file;
  };

  const model = await write(path.join(root, STANDIN_MODEL_FILES[layout]), buildStandinModel(options));
  let config: string | undefined;
  if (layout === 'onnx-community') {
    // Read and write rather than copyFile: copyFile keeps the source's read-only mode, which would make the
    // next regeneration fail.
    config = await write(path.join(root, 'config.json'), await readFile(CONFIG_SOURCE));
  }
  const voicePaths: string[] = [];
  for (const id of voices)
    voicePaths.push(await write(path.join(root, 'voices', `${id}.bin`), buildVoice(id, seed)));
  return config === undefined ? { model, voices: voicePaths } : { model, voices: voicePaths, config };
}

// ---------------------------------------------------------------------------------------------------------
// Command line
