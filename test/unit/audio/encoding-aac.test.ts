import { spawn, spawnSync } from 'node:child_process';
import { chmodSync, mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { AAC_SAMPLE_RATES, AacEncoder, FfmpegPool, ffmpegAvailable } from '../../../model/audio/aac.ts';
import { mulberry32 } from '../../../scripts/lib/fleet-sim.ts';

const haveFfmpeg = ffmpegAvailable() && spawnSync('ffprobe', ['-version']).status === 0;

/** Deterministic PRNG so failures reproduce (the fleet simulator's mulberry32). */
const prng = mulberry32;

/** Tones that change every half second, so the encoder has real content to code. */
function tones(seconds: number, rate: number): Int16Array {
  const n = Math.round(seconds * rate);
  const out = new Int16Array(n);
  for (let i = 0; i < n; i++) {
    const f = 220 * (1 + (Math.floor((2 * i) / rate) % 4));
    const t = i / rate;
    out[i] = Math.round(9000 * Math.sin(2 * Math.PI * f * t) + 3000 * Math.sin(2 * Math.PI * 3 * f * t));
  }
  return out;
}

/** Splits into random chunks of 1..maxChunk samples (plus an occasional empty one). */
function randomChunks(pcm: Int16Array, rnd: () => number, maxChunk: number): Int16Array[] {
  const chunks: Int16Array[] = [];
  for (let off = 0; off < pcm.length; ) {
    const n = rnd() < 0.05 ? 0 : 1 + Math.floor(rnd() * maxChunk);
    chunks.push(pcm.subarray(off, off + n));
    off += n;
  }
  return chunks;
}

interface AdtsFrame {
  readonly length: number;
  readonly sampleRateIndex: number;
  readonly channels: number;
  readonly profile: number;
}

/** Walks ADTS headers; throws unless `bytes` is exactly a sequence of whole frames. */
function walkAdts(bytes: Uint8Array): AdtsFrame[] {
  const frames: AdtsFrame[] = [];
  let off = 0;
  while (off < bytes.length) {
    if (bytes.length - off < 7) throw new Error(`stray ${bytes.length - off} bytes at ${off}`);
    if (bytes[off] !== 0xff || (bytes[off + 1]! & 0xf0) !== 0xf0) throw new Error(`no ADTS sync at ${off}`);
    const length = ((bytes[off + 3]! & 0x03) << 11) | (bytes[off + 4]! << 3) | (bytes[off + 5]! >> 5);
    if (length < 7 || off + length > bytes.length) throw new Error(`frame at ${off} overruns (${length})`);
    frames.push({
      length,
      profile: bytes[off + 2]! >> 6,
      sampleRateIndex: (bytes[off + 2]! >> 2) & 0x0f,
      channels: ((bytes[off + 2]! & 0x01) << 2) | (bytes[off + 3]! >> 6),
    });
    off += length;
  }
  return frames;
}

const ADTS_RATES = [96000, 88200, 64000, 48000, 44100, 32000, 24000, 22050, 16000, 12000, 11025, 8000];

/** Runs a tool with `input` on stdin; resolves with stdout, stderr and the exit status. */
function run(
  cmd: string,
  args: string[],
  input: Uint8Array,
): Promise<{ out: Buffer; err: string; code: number | null }> {
  return new Promise((resolve, reject) => {
    const p = spawn(cmd, args);
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    p.stdout.on('data', (d: Buffer) => out.push(d));
    p.stderr.on('data', (d: Buffer) => err.push(d));
    p.on('error', reject);
    p.on('close', (code) =>
      resolve({ out: Buffer.concat(out), err: Buffer.concat(err).toString('utf8').trim(), code }),
    );
    p.stdin.on('error', () => undefined);
    p.stdin.end(input);
  });
}

/** Decodes ADTS with ffmpeg; returns the number of decoded samples, failing on any decoder message. */
async function decodedSamples(aac: Uint8Array): Promise<number> {
  const r = await run(
    'ffmpeg',
    ['-v', 'error', '-f', 'aac', '-i', 'pipe:0', '-f', 's16le', '-ac', '1', 'pipe:1'],
    aac,
  );
  expect(r.err).toBe('');
  expect(r.code).toBe(0);
  return r.out.length / 2;
}

/**
 * Decodes several ADTS files with separate decoders in a single ffmpeg run (one start-up instead
 * of one per file); returns each file's decoded sample count.
 */
async function decodeEach(dir: string, files: Uint8Array[]): Promise<number[]> {
  const args = ['-v', 'error', '-y'];
  files.forEach((f, i) => {
    writeFileSync(join(dir, `in${i}.aac`), f);
    args.push('-f', 'aac', '-i', join(dir, `in${i}.aac`));
  });
  files.forEach((_, i) => args.push('-map', `${i}:a`, '-f', 's16le', '-ac', '1', join(dir, `out${i}.raw`)));
  const r = await run('ffmpeg', args, new Uint8Array(0));
  expect(r.err).toBe('');
  expect(r.code).toBe(0);
  return files.map((_, i) => statSync(join(dir, `out${i}.raw`)).size / 2);
}

function concat(parts: Uint8Array[]): Uint8Array {
  return new Uint8Array(Buffer.concat(parts));
}

/** Encodes `pcm` in the given chunks; returns every push/end result in order. */
async function encode(enc: AacEncoder, chunks: Int16Array[]): Promise<Uint8Array[]> {
  const outs: Uint8Array[] = [];
  for (const c of chunks) outs.push(await enc.push(c));
  outs.push(await enc.end());
  return outs;
}

function exited(enc: AacEncoder): Promise<void> {
  const p = enc.process;
  if (p.exitCode !== null || p.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => p.once('exit', () => resolve()));
}

describe.skipIf(!haveFfmpeg)('AacEncoder (ffmpeg)', () => {
  const pool = new FfmpegPool();
  // Every idle ffmpeg costs about 0.25 s of CPU to start: warm only what the tests take.
  const warmed = [24000, 16000];
  pool.warm(warmed.map((sampleRate) => ({ sampleRate })));
  const dir = mkdtempSync(join(tmpdir(), 'aac-test-'));
  afterAll(() => {
    pool.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('streams whole ADTS frames that decode, together and one chunk at a time', async () => {
    const rate = 24000;
    const pcm = tones(3, rate);
    const enc = await AacEncoder.create({ sampleRate: rate, pool });
    const outs = await encode(enc, randomChunks(pcm, prng(7), 6000));
    expect(enc.process.exitCode).toBe(0);

    const nonEmpty = outs.filter((o) => o.length > 0);
    expect(nonEmpty.length).toBeGreaterThan(3); // output really streams, it is not all at the end
    let frames = 0;
    for (const o of nonEmpty) {
      const fs = walkAdts(o);
      expect(fs.reduce((s, f) => s + f.length, 0)).toBe(o.length);
      for (const f of fs) {
        expect(f.profile).toBe(1); // AAC-LC (profile field is object type − 1)
        expect(ADTS_RATES[f.sampleRateIndex]).toBe(rate);
        expect(f.channels).toBe(1);
      }
      frames += fs.length;
    }

    const file = concat(outs);
    // One priming frame plus the input rounded up to whole frames.
    expect(Math.abs(frames - Math.ceil(pcm.length / 1024))).toBeLessThanOrEqual(2);
    const probeArgs = [
      '-v',
      'error',
      '-show_entries',
      'stream=codec_name,channels,sample_rate',
      '-of',
      'json',
    ];
    const [samples, probe, decoded] = await Promise.all([
      decodedSamples(file),
      run('ffprobe', [...probeArgs, '-i', 'pipe:0'], file),
      // ADTS frames are self-contained: each chunk on its own (own decoder) is a playable file.
      decodeEach(dir, nonEmpty),
    ]);
    expect(Math.abs(samples - pcm.length)).toBeLessThanOrEqual(3 * 1024);
    expect(probe.code).toBe(0);
    const streams = (JSON.parse(probe.out.toString('utf8')) as { streams: Record<string, unknown>[] })
      .streams;
    expect(streams).toEqual([{ codec_name: 'aac', channels: 1, sample_rate: String(rate) }]);
    decoded.forEach((n, i) => expect(n).toBe(walkAdts(nonEmpty[i]!).length * 1024));

    await expect(enc.push(pcm)).rejects.toThrow(/after end/);
  });

  it('encodes at every supported rate, also without a pool', async () => {
    const results = await Promise.all(
      AAC_SAMPLE_RATES.map(async (rate) => {
        const pcm = tones(0.6, rate);
        const enc = await AacEncoder.create({ sampleRate: rate });
        const first = await enc.push(pcm.subarray(0, rate / 2));
        const rest = await encode(enc, randomChunks(pcm.subarray(rate / 2), prng(rate), rate / 16));
        return { rate, pcm: pcm.length, first, file: concat([first, ...rest]) };
      }),
    );
    const samples = await decodeEach(
      dir,
      results.map((r) => r.file),
    );
    results.forEach((r, i) => {
      const fs = walkAdts(r.file);
      expect(fs.every((f) => ADTS_RATES[f.sampleRateIndex] === r.rate && f.channels === 1)).toBe(true);
      expect(Math.abs(samples[i]! - r.pcm)).toBeLessThanOrEqual(3 * 1024);
    });
  });

  it('splits a stream into whole frames across pushes and the end, losing none', async () => {
    const rate = 24000;
    const enc = await AacEncoder.create({ sampleRate: rate, pool });
    const pcm = tones(2, rate);
    const parts = [
      await enc.push(pcm.subarray(0, rate)),
      await enc.push(pcm.subarray(rate)),
      await enc.end(),
    ];
    // How many frames each part holds depends on ffmpeg's timing (not asserted: no timing in
    // tests); together they are whole frames covering the input plus the encoder's priming.
    const frames = parts.map((p) => walkAdts(p).length);
    const total = frames.reduce((a, b) => a + b, 0);
    expect(total).toBeGreaterThanOrEqual(Math.floor((2 * rate) / 1024));
    expect(total).toBeLessThanOrEqual(Math.ceil((2 * rate) / 1024) + 3);
  });

  it('hands out the pre-spawned process and refills the pool', async () => {
    const rate = 16000;
    expect(pool.idleCount).toBe(warmed.length);
    const enc = await AacEncoder.create({ sampleRate: rate, pool });
    expect(pool.idleCount).toBe(warmed.length - 1); // taken; the refill is deferred
    await new Promise((r) => setImmediate(r));
    expect(pool.idleCount).toBe(warmed.length);
    expect(walkAdts(concat(await encode(enc, [tones(0.5, rate)]))).length).toBeGreaterThan(5);
  });

  it('abort kills ffmpeg, also during a push, and is idempotent', async () => {
    const enc = await AacEncoder.create({ sampleRate: 24000, pool });
    await enc.push(tones(0.5, 24000));
    const pending = enc.push(tones(1, 24000));
    enc.abort();
    enc.abort();
    await expect(pending).rejects.toThrow(/aborted/);
    await exited(enc);
    expect(enc.process.signalCode).toBe('SIGKILL');
    expect(enc.process.exitCode).toBeNull();
    await expect(enc.push(tones(0.1, 24000))).rejects.toThrow(/aborted/);
    await expect(enc.end()).rejects.toThrow(/aborted/);
  });

  describe('errors', () => {
    it('a missing ffmpeg gives a clear error', async () => {
      const bad = join(dir, 'no-such-ffmpeg');
      expect(ffmpegAvailable(bad)).toBe(false);
      await expect(AacEncoder.create({ sampleRate: 24000, ffmpegPath: bad })).rejects.toThrow(
        /cannot run ffmpeg at ".*no-such-ffmpeg": .*ENOENT/,
      );
      const badPool = new FfmpegPool(bad);
      await expect(AacEncoder.create({ sampleRate: 24000, pool: badPool })).rejects.toThrow(/ENOENT/);
      badPool.close();
    });

    it('an ffmpeg that fails reports its exit code and stderr', async () => {
      const fake = join(dir, 'failing-ffmpeg');
      writeFileSync(fake, '#!/bin/sh\necho "Unknown encoder \'aac\'" >&2\nexit 3\n');
      chmodSync(fake, 0o755);
      expect(ffmpegAvailable(fake)).toBe(false);
      const enc = await AacEncoder.create({ sampleRate: 24000, ffmpegPath: fake });
      const err = await enc.push(tones(0.2, 24000)).then(
        () =>
          enc.end().then(
            () => undefined,
            (e: unknown) => e,
          ),
        (e: unknown) => e,
      );
      expect(err).toBeInstanceOf(Error);
      expect((err as Error).message).toMatch(/exit code 3.*Unknown encoder 'aac'/s);
    });

    it('rejects unsupported rates and bitrates', async () => {
      await expect(AacEncoder.create({ sampleRate: 11025 })).rejects.toThrow(RangeError);
      await expect(AacEncoder.create({ sampleRate: 24000, bitrate: 1000 })).rejects.toThrow(RangeError);
    });
  });
});
