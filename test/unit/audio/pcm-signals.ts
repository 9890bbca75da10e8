/** Signals and comparisons for the PCM codec tests: tones, noise, chunking, ffmpeg runs. */
import { spawnSync } from 'node:child_process';
import { expect } from 'vitest';
import { Resampler } from '../../../model/audio/resample.ts';

export const IN_RATE = 24000;

/** Deterministic PRNG (mulberry32) so failures reproduce. */
export function rng(seed: number): () => number {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export function clip16(v: number): number {
  return Math.max(-32768, Math.min(32767, Math.round(v)));
}

export function tone(freq: number, n: number, amplitude: number, rate = IN_RATE): Int16Array {
  const x = new Int16Array(n);
  for (let i = 0; i < n; i++) x[i] = Math.round(amplitude * Math.sin((2 * Math.PI * freq * i) / rate));
  return x;
}

export function concatInt16(parts: Int16Array[]): Int16Array {
  const out = new Int16Array(parts.reduce((s, p) => s + p.length, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}

/** Splits `n` samples into random chunk sizes in [0, max], including empty and one-sample ones. */
export function randomChunks(n: number, max: number, random: () => number): [number, number][] {
  const out: [number, number][] = [];
  for (let at = 0; at < n; ) {
    const r = random();
    const size = r < 0.1 ? 0 : r < 0.2 ? 1 : Math.floor(random() * max);
    out.push([at, Math.min(n, at + size)]);
    at += size;
  }
  return out;
}

export function resampleWhole(x: Int16Array, rate: number): Int16Array {
  const r = new Resampler(IN_RATE, rate);
  return concatInt16([r.push(x), r.end()]);
}

/** Amplitude of the `freq` component of y[from, to) (Hann-windowed DFT bin). */
export function amplitudeAt(y: Int16Array, freq: number, rate: number, from: number, to: number): number {
  let re = 0;
  let im = 0;
  const n = to - from;
  for (let i = from; i < to; i++) {
    const w = 0.5 - 0.5 * Math.cos((2 * Math.PI * (i - from)) / n);
    const a = (2 * Math.PI * freq * i) / rate;
    re += w * y[i]! * Math.cos(a);
    im += w * y[i]! * Math.sin(a);
  }
  return (2 * Math.hypot(re, im)) / (n / 2);
}

export function rms(y: Int16Array, from: number, to: number): number {
  let e = 0;
  for (let i = from; i < to; i++) e += y[i]! * y[i]!;
  return Math.sqrt(e / (to - from));
}

/**
 * Where two sample arrays first differ (-1: identical) and their lengths: a compact value to assert
 * on, since deep equality over ~10^5 elements is slow and prints unreadable diffs.
 */
export function compare(actual: ArrayLike<number>, expected: ArrayLike<number>) {
  let firstDiff = -1;
  const n = Math.min(actual.length, expected.length);
  for (let i = 0; i < n && firstDiff < 0; i++) if (actual[i] !== expected[i]) firstDiff = i;
  return { length: actual.length, firstDiff };
}

export function expectSame(actual: ArrayLike<number>, expected: ArrayLike<number>, message?: string): void {
  expect(compare(actual, expected), message).toEqual({ length: expected.length, firstDiff: -1 });
}

export const db = (ratio: number) => 20 * Math.log10(ratio);

export function run(command: string, args: string[], input?: Uint8Array): Buffer {
  const r = spawnSync(command, args, { input, maxBuffer: 1 << 28 });
  if (r.error) throw r.error;
  if (r.status !== 0) throw new Error(`${command} failed (${r.status}): ${r.stderr.toString()}`);
  // Errors the decoder only logs must fail the test too.
  expect(r.stderr.toString()).toBe('');
  return r.stdout;
}

export function asInt16(bytes: Uint8Array): Int16Array {
  const copy = new Uint8Array(bytes); // aligned
  return new Int16Array(copy.buffer, 0, copy.length >> 1);
}

// Decoder errors (CRC mismatches, bad headers) are logged at this level without failing the run.
export const FFMPEG_QUIET = ['-hide_banner', '-nostdin', '-loglevel', 'error'];
