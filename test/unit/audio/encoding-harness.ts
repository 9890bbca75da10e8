/**
 * What the MP3 and Ogg Opus encoder tests share: a seeded test signal (a tone, then speech-like
 * audio), pushing it through an encoder in random chunks, waveform similarity, and Debian's ffmpeg
 * and ffprobe run on the bytes.
 */
import { spawn } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'vitest';
import type { StreamEncoder } from '../../../model/audio/encoder.ts';

// ---------------------------------------------------------------------------------------------
// Signals and chunking

export function rng(seed: number): () => number {
  // mulberry32
  return () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** A tone, then speech-like audio: a gliding harmonic buzz and noise, syllable-modulated. */
export function testSignal(rate: number, seconds: number, seed = 1): Int16Array {
  const random = rng(seed);
  const n = Math.round(rate * seconds);
  const out = new Int16Array(n);
  let phase = 0;
  for (let i = 0; i < n; i++) {
    const t = i / rate;
    let v: number;
    if (t < 0.4) v = 0.4 * Math.sin(2 * Math.PI * 330 * t);
    else {
      const f0 = 120 + 50 * Math.sin(2 * Math.PI * 0.8 * t);
      phase += (2 * Math.PI * f0) / rate;
      let buzz = 0;
      for (let h = 1; h <= 12 && h * f0 < rate / 2; h++) buzz += Math.sin(h * phase) / h;
      const syllable = Math.max(0, Math.sin(2 * Math.PI * 3.3 * t));
      v = syllable * (0.35 * buzz + 0.08 * (random() - 0.5));
    }
    out[i] = Math.round(Math.max(-1, Math.min(1, v)) * 32767);
  }
  return out;
}

interface Pushed {
  /** Output of each push, then of end(). */
  readonly chunks: Uint8Array[];
  /** Length of each push's input. */
  readonly sizes: number[];
}

/** Pushes `pcm` in random chunk sizes (empty, tiny, up to 300 ms), then ends. */
export async function pushRandomly(
  encoder: StreamEncoder,
  pcm: Int16Array,
  rate: number,
  seed: number,
): Promise<Pushed> {
  const random = rng(seed);
  const chunks: Uint8Array[] = [];
  const sizes: number[] = [];
  for (let at = 0; at < pcm.length; ) {
    const r = random();
    const size = r < 0.1 ? 0 : r < 0.25 ? 1 + Math.floor(random() * 40) : Math.floor(random() * rate * 0.3);
    const chunk = pcm.subarray(at, at + size);
    chunks.push(await encoder.push(chunk));
    sizes.push(chunk.length);
    at += chunk.length;
  }
  chunks.push(await encoder.end());
  return { chunks, sizes };
}

export function joined(parts: readonly Uint8Array[]): Buffer {
  return Buffer.concat(parts);
}

/** Largest normalized cross-correlation of `b` against `a` over lags from..to (b delayed). */
export function bestCorrelation(
  a: Int16Array,
  b: Int16Array,
  from: number,
  to: number,
): { lag: number; r: number } {
  let best = { lag: 0, r: -1 };
  for (let lag = from; lag <= to; lag++) {
    let ab = 0;
    let aa = 0;
    let bb = 0;
    const n = Math.min(a.length, b.length - lag);
    for (let i = 0; i < n; i++) {
      const x = a[i]!;
      const y = b[i + lag]!;
      ab += x * y;
      aa += x * x;
      bb += y * y;
    }
    const r = ab / Math.sqrt(aa * bb || 1);
    if (r > best.r) best = { lag, r };
  }
  return best;
}

// ---------------------------------------------------------------------------------------------
// ffmpeg / ffprobe

interface Run {
  readonly code: number | null;
  readonly stdout: Buffer;
  readonly stderr: string;
}

function run(command: string, args: readonly string[], input: Uint8Array): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { stdio: ['pipe', 'pipe', 'pipe'] });
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    child.stdout.on('data', (d: Buffer) => out.push(d));
    child.stderr.on('data', (d: Buffer) => err.push(d));
    child.stdin.on('error', () => undefined); // the tool may stop reading early; its exit code tells
    child.on('error', reject);
    child.on('close', (code) =>
      resolve({ code, stdout: Buffer.concat(out), stderr: Buffer.concat(err).toString('utf8') }),
    );
    child.stdin.end(input);
  });
}

/** Decodes to s16le mono at `rate`; `format` names the input format instead of probing it. */
export async function decode(
  bytes: Uint8Array,
  rate: number,
  format?: string,
): Promise<{ run: Run; pcm: Int16Array }> {
  const input = format ? ['-f', format, '-i', '-'] : ['-i', '-'];
  const r = await run(
    'ffmpeg',
    ['-hide_banner', '-v', 'warning', ...input, '-f', 's16le', '-ac', '1', '-ar', `${rate}`, '-'],
    bytes,
  );
  const copy = Buffer.from(r.stdout);
  return { run: r, pcm: new Int16Array(copy.buffer, copy.byteOffset, copy.length >> 1) };
}

interface ProbedStream {
  codec_name: string;
  channels: number;
  sample_rate: string;
}

export async function probe(bytes: Uint8Array): Promise<ProbedStream[]> {
  const r = await run('ffprobe', ['-v', 'error', '-show_streams', '-of', 'json', '-i', 'pipe:0'], bytes);
  expect(r.code, r.stderr).toBe(0);
  return (JSON.parse(r.stdout.toString('utf8')) as { streams: ProbedStream[] }).streams;
}

/**
 * Decodes `piped` (read from stdin, format probed, like `ffmpeg -i -`) and each of `files` on its
 * own (its own demuxer and decoder, as if alone; `format` given) in one ffmpeg run, which saves a
 * process start per file. Returns the samples of `piped`, then of each file.
 */
export async function decodeEach(
  piped: Uint8Array,
  files: readonly Uint8Array[],
  format: string,
  rate: number,
): Promise<{ run: Run; pcm: Int16Array[] }> {
  const dir = await mkdtemp(join(tmpdir(), 'encoding-test-'));
  try {
    const args = ['-hide_banner', '-v', 'warning', '-i', '-'];
    await Promise.all(files.map((f, i) => writeFile(join(dir, `${i + 1}.in`), f)));
    files.forEach((_, i) => args.push('-f', format, '-i', join(dir, `${i + 1}.in`)));
    for (let i = 0; i <= files.length; i++) {
      args.push('-map', `${i}:a`, '-f', 's16le', '-ac', '1', '-ar', `${rate}`, join(dir, `${i}.raw`));
    }
    const r = await run('ffmpeg', args, piped);
    const pcm =
      r.code === 0
        ? await Promise.all(
            [piped, ...files].map(async (_, i) => {
              const raw = await readFile(join(dir, `${i}.raw`));
              return new Int16Array(raw.buffer, raw.byteOffset, raw.length >> 1);
            }),
          )
        : [];
    return { run: r, pcm };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
