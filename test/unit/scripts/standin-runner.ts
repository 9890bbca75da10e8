/**
 * What the stand-in model tests share: the committed fixtures, token ids and style rows like
 * Kokoro's, the two input and output layouts, and runs of a session that return its tensors.
 */
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import * as ort from 'onnxruntime-node';
import { expect } from 'vitest';
import { STYLE_DIM } from '../../../model/kokoro/constants.ts';
import { STANDIN_DEFAULTS, buildVoice } from '../../../scripts/lib/standin-model.ts';

export const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
export const FIXTURE = path.join(ROOT, 'test/fixtures/standin-model');
export const TIMESTAMPED_FIXTURE = path.join(ROOT, 'test/fixtures/standin-model-timestamped');
export const SPT = STANDIN_DEFAULTS.samplesPerToken;

/** The documented length, with speed rounded to float32 as the tensor stores it. */
export function expectedLength(tokens: number, speed: number, samplesPerToken = SPT): number {
  return Math.floor((tokens * samplesPerToken) / Math.fround(speed));
}

/** Row `row` of a voice file as a style vector (voice files are little-endian). */
export function styleRow(voice: Uint8Array, row: number): Float32Array {
  const view = new DataView(voice.buffer, voice.byteOffset, voice.byteLength);
  const out = new Float32Array(STYLE_DIM);
  for (let i = 0; i < STYLE_DIM; i++) out[i] = view.getFloat32((row * STYLE_DIM + i) * 4, true);
  return out;
}

/** Kokoro-like ids: pads at both ends, phoneme ids inside 1..177. */
export function tokenIds(count: number, salt = 0): number[] {
  const ids = [0];
  for (let i = 0; i < count - 2; i++) ids.push(1 + ((i * 37 + salt * 11) % 177));
  if (count > 1) ids.push(0);
  return ids.slice(0, count);
}

export interface Names {
  ids: string;
  speed: string;
  audio: string;
}
export const COMMUNITY: Names = { ids: 'input_ids', speed: 'speed', audio: 'waveform' };
export const KOKORO_ONNX: Names = { ids: 'tokens', speed: 'speed', audio: 'audio' };

export async function run(
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

export function output(out: ort.InferenceSession.OnnxValueMapType, name: string): ort.Tensor {
  const tensor = out[name];
  if (!(tensor instanceof ort.Tensor)) throw new Error(`no ${name} output`);
  return tensor;
}

export async function synth(
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
export async function synthTimed(
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

export const sum = (values: readonly number[]) => values.reduce((a, b) => a + b, 0);

export function samples(tensor: ort.Tensor): Float32Array {
  expect(tensor.type).toBe('float32');
  return tensor.data as Float32Array;
}

export function metadata(list: readonly ort.InferenceSession.ValueMetadata[]) {
  return list.map((m) => (m.isTensor ? { name: m.name, type: m.type, shape: m.shape } : { name: m.name }));
}

export const heart = buildVoice('af_heart');
export const style = styleRow(heart, 10);
