import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { FFMPEG } from '../server/audio-tools.ts';
import { FlacEncoder } from '../../model/audio/flac.ts';
import { MulawEncoder, decodeMulaw, encodeMulaw } from '../../model/audio/mulaw.ts';
import { Resampler } from '../../model/audio/resample.ts';

const IN_RATE = 24000;

/** Deterministic PRNG (mulberry32) so failures reproduce. */
function rng(seed: number): () => number {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function clip16(v: number): number {
  return Math.max(-32768, Math.min(32767, Math.round(v)));
}

function tone(freq: number, n: number, amplitude: number, rate = IN_RATE): Int16Array {
  const x = new Int16Array(n);
  for (let i = 0; i < n; i++) x[i] = Math.round(amplitude * Math.sin((2 * Math.PI * freq * i) / rate));
  return x;
}

function concatInt16(parts: Int16Array[]): Int16Array {
  const out = new Int16Array(parts.reduce((s, p) => s + p.length, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}

/** Splits `n` samples into random chunk sizes in [0, max], including empty and one-sample ones. */
function randomChunks(n: number, max: number, random: () => number): [number, number][] {
  const out: [number, number][] = [];
  for (let at = 0; at < n; ) {
    const r = random();
    const size = r < 0.1 ? 0 : r < 0.2 ? 1 : Math.floor(random() * max);
    out.push([at, Math.min(n, at + size)]);
    at += size;
  }
  return out;
}

function resampleWhole(x: Int16Array, rate: number): Int16Array {
  const r = new Resampler(IN_RATE, rate);
  return concatInt16([r.push(x), r.end()]);
}

/** Amplitude of the `freq` component of y[from, to) (Hann-windowed DFT bin). */
function amplitudeAt(y: Int16Array, freq: number, rate: number, from: number, to: number): number {
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

function rms(y: Int16Array, from: number, to: number): number {
  let e = 0;
  for (let i = from; i < to; i++) e += y[i]! * y[i]!;
  return Math.sqrt(e / (to - from));
}

/**
 * Where two sample arrays first differ (-1: identical) and their lengths: a compact value to assert
 * on, since deep equality over ~10^5 elements is slow and prints unreadable diffs.
 */
function compare(actual: ArrayLike<number>, expected: ArrayLike<number>) {
  let firstDiff = -1;
  const n = Math.min(actual.length, expected.length);
  for (let i = 0; i < n && firstDiff < 0; i++) if (actual[i] !== expected[i]) firstDiff = i;
  return { length: actual.length, firstDiff };
}

function expectSame(actual: ArrayLike<number>, expected: ArrayLike<number>, message?: string): void {
  expect(compare(actual, expected), message).toEqual({ length: expected.length, firstDiff: -1 });
}

const db = (ratio: number) => 20 * Math.log10(ratio);

function run(command: string, args: string[], input?: Uint8Array): Buffer {
  const r = spawnSync(command, args, { input, maxBuffer: 1 << 28 });
  if (r.error) throw r.error;
  if (r.status !== 0) throw new Error(`${command} failed (${r.status}): ${r.stderr.toString()}`);
  // Errors the decoder only logs must fail the test too.
  expect(r.stderr.toString()).toBe('');
  return r.stdout;
}

function asInt16(bytes: Uint8Array): Int16Array {
  const copy = new Uint8Array(bytes); // aligned
  return new Int16Array(copy.buffer, 0, copy.length >> 1);
}

// Decoder errors (CRC mismatches, bad headers) are logged at this level without failing the run.
const FFMPEG_QUIET = ['-hide_banner', '-nostdin', '-loglevel', 'error'];

describe('Resampler', () => {
  const rates = [8000, 16000, 22050, 44100, 48000];
  // Sweep 20 Hz → 11.5 kHz plus two steady tones and a little noise: every filter phase gets used.
  const n = 36_001;
  const random = rng(7);
  const signal = new Int16Array(n);
  for (let i = 0; i < n; i++) {
    const t = i / IN_RATE;
    const sweep = 2 * Math.PI * (20 * t + ((11500 - 20) / (2 * (n / IN_RATE))) * t * t);
    signal[i] = clip16(
      9000 * Math.sin(sweep) +
        6000 * Math.sin(2 * Math.PI * 440 * t) +
        4000 * Math.sin(2 * Math.PI * 3100 * t) +
        500 * (random() - 0.5),
    );
  }

  for (const rate of [...rates, 22051]) {
    it(`24000 → ${rate}: chunked pushes give exactly the whole-signal output`, () => {
      const whole = resampleWhole(signal, rate);
      expect(Math.abs(whole.length - Math.round((n * rate) / IN_RATE))).toBeLessThanOrEqual(1);
      for (const seed of [1, 2]) {
        const r = new Resampler(IN_RATE, rate);
        const parts = randomChunks(n, 3000, rng(seed)).map(([a, b]) => r.push(signal.subarray(a, b)));
        parts.push(r.end());
        expectSame(concatInt16(parts), whole, `seed ${seed}`);
      }
    });

    it(`24000 → ${rate}: a 1 kHz tone keeps amplitude, frequency and timing`, () => {
      const amplitude = 12000;
      const y = resampleWhole(tone(1000, IN_RATE, amplitude), rate);
      const from = Math.round(rate * 0.1);
      const to = Math.round(rate * 0.9);
      expect(db(amplitudeAt(y, 1000, rate, from, to) / amplitude)).toBeCloseTo(0, 2);
      // Time alignment: output sample m is the input at time m/rate (no filter delay).
      let worst = 0;
      for (let m = from; m < to; m++) {
        worst = Math.max(worst, Math.abs(y[m]! - amplitude * Math.sin((2 * Math.PI * 1000 * m) / rate)));
      }
      expect(worst).toBeLessThan(4);
    });
  }

  it('lengths follow round(n × out / in) for short and odd inputs', () => {
    for (const rate of rates) {
      for (const len of [0, 1, 2, 3, 7, 100, 1151, 4801]) {
        const r = new Resampler(IN_RATE, rate);
        const total = r.push(new Int16Array(len)).length + r.end().length;
        expect(Math.abs(total - Math.round((len * rate) / IN_RATE)), `${rate} ${len}`).toBeLessThanOrEqual(1);
      }
    }
  });

  it('puts an impulse at the same time in the output', () => {
    const x = new Int16Array(4800);
    x[2400] = 30000; // 0.1 s
    for (const rate of rates) {
      const y = resampleWhole(x, rate);
      let peak = 0;
      for (let i = 1; i < y.length; i++) if (y[i]! > y[peak]!) peak = i;
      expect(Math.abs(peak - 0.1 * rate), `${rate}`).toBeLessThanOrEqual(0.5);
    }
  });

  it('24000 → 8000 removes what would alias (10 kHz → 2 kHz, 4.5 kHz → 3.5 kHz) and keeps 3.5 kHz', () => {
    const amplitude = 16000;
    const from = 800;
    const to = 7200;
    for (const [freq, alias] of [
      [10000, 2000],
      [4500, 3500],
    ] as const) {
      const y = resampleWhole(tone(freq, IN_RATE, amplitude), 8000);
      expect(db(amplitudeAt(y, alias, 8000, from, to) / amplitude), `${freq}`).toBeLessThan(-50);
      expect(db(rms(y, from, to) / (amplitude / Math.SQRT2)), `${freq}`).toBeLessThan(-50);
    }
    const pass = resampleWhole(tone(3500, IN_RATE, amplitude), 8000);
    expect(Math.abs(db(amplitudeAt(pass, 3500, 8000, from, to) / amplitude))).toBeLessThan(0.1);
  });

  it('24000 → 48000 keeps a 10.5 kHz tone and leaves no image of it at 13.5 kHz', () => {
    const amplitude = 16000;
    const y = resampleWhole(tone(10500, IN_RATE, amplitude), 48000);
    expect(Math.abs(db(amplitudeAt(y, 10500, 48000, 4800, 43200) / amplitude))).toBeLessThan(0.1);
    expect(db(amplitudeAt(y, 13500, 48000, 4800, 43200) / amplitude)).toBeLessThan(-60);
  });

  it('is the identity at 24000', () => {
    const r = new Resampler(IN_RATE, IN_RATE);
    const x = tone(440, 1000, 1000);
    expect(r.push(x)).toBe(x);
    expect(r.end().length).toBe(0);
  });

  it('rejects bad rates and use after end', () => {
    expect(() => new Resampler(24000, 0)).toThrow(RangeError);
    expect(() => new Resampler(24000.5, 8000)).toThrow(RangeError);
    const r = new Resampler(IN_RATE, 8000);
    r.end();
    expect(() => r.push(new Int16Array(10))).toThrow();
  });
});

describe.skipIf(!FFMPEG.available)(`μ-law${FFMPEG.note}`, () => {
  const everySample = new Int16Array(65536);
  for (let i = 0; i < 65536; i++) everySample[i] = i - 32768;
  const everyCode = Uint8Array.from({ length: 256 }, (_, i) => i);

  it('encodes the reference points of G.711', () => {
    expect([...encodeMulaw(Int16Array.of(0, -1, 32767, -32768, 32635, -32635))]).toEqual([
      0xff, 0x7f, 0x80, 0x00, 0x80, 0x00,
    ]);
    expect([...decodeMulaw(Uint8Array.of(0xff, 0x7f, 0x80, 0x00))]).toEqual([0, 0, 32124, -32124]);
  });

  it('round-trips within half a quantisation step, monotonically', () => {
    const decoded = decodeMulaw(encodeMulaw(everySample));
    const tooFar: number[] = [];
    const notMonotonic: number[] = [];
    for (let i = 0; i < 65536; i++) {
      const x = everySample[i]!;
      const mag = Math.min(Math.abs(x), 32635);
      // Segment steps are 2^(e+3) with (mag + 0x84) in [2^(e+7), 2^(e+8)): half a step ≤ (mag + 132)/32.
      const bound = (mag + 132) / 32 + (Math.abs(x) - mag);
      if (Math.abs(decoded[i]! - x) > bound) tooFar.push(x);
      if (i > 0 && decoded[i]! < decoded[i - 1]!) notMonotonic.push(x);
    }
    expect(tooFar).toEqual([]);
    expect(notMonotonic).toEqual([]);
  });

  it('decodes like ffmpeg, and ffmpeg decodes our bytes to our values', () => {
    const args = [
      ...FFMPEG_QUIET,
      '-f',
      'mulaw',
      '-ar',
      '8000',
      '-ch_layout',
      'mono',
      '-i',
      'pipe:0',
      '-f',
      's16le',
      'pipe:1',
    ];
    expectSame(asInt16(run('ffmpeg', args, everyCode)), decodeMulaw(everyCode));
    const ours = encodeMulaw(everySample);
    expectSame(asInt16(run('ffmpeg', args, ours)), decodeMulaw(ours));
  });

  it("agrees with ffmpeg's pcm_mulaw encoder to within one level", () => {
    // ffmpeg rounds to the nearest level on a 14-bit grid; the G.711 reference encoder truncates
    // within a segment after adding the bias, so a few inputs near decision points differ by one.
    const theirs = run(
      'ffmpeg',
      [
        ...FFMPEG_QUIET,
        '-f',
        's16le',
        '-ar',
        '8000',
        '-ch_layout',
        'mono',
        '-i',
        'pipe:0',
        '-c:a',
        'pcm_mulaw',
        '-f',
        'mulaw',
        'pipe:1',
      ],
      new Uint8Array(everySample.buffer),
    );
    const ours = encodeMulaw(everySample);
    expect(theirs.length).toBe(ours.length);
    let same = 0;
    const apart: number[] = [];
    for (let i = 0; i < ours.length; i++) {
      if (theirs[i] === ours[i]) same++;
      else if (Math.abs(theirs[i]! - ours[i]!) !== 1) apart.push(everySample[i]!);
    }
    expect(apart).toEqual([]);
    expect(same / ours.length).toBeGreaterThan(0.98);
  });

  it('streams one byte per sample with no header', async () => {
    const enc = new MulawEncoder();
    const x = tone(1000, 160, 8000, 8000);
    expect(await enc.push(x)).toEqual(encodeMulaw(x));
    expect((await enc.push(new Int16Array(0))).length).toBe(0);
    expect((await enc.end()).length).toBe(0);
    enc.abort();
  });
});

describe.skipIf(!FFMPEG.available)(`FLAC${FFMPEG.note}`, () => {
  const dir = mkdtempSync(join(tmpdir(), 'flac-test-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  /** Tones, a sweep, white noise, silence, ±full-scale square, clipped sine, DC and random steps. */
  function varied(n: number, rate: number, seed: number): Int16Array {
    const random = rng(seed);
    const x = new Int16Array(n);
    const seg = Math.floor(n / 8);
    for (let i = 0; i < n; i++) {
      const t = i / rate;
      switch (Math.min(7, Math.floor(i / seg))) {
        case 0:
          x[i] = clip16(9000 * Math.sin(2 * Math.PI * 220 * t) + 4000 * Math.sin(2 * Math.PI * 1800 * t));
          break;
        case 1:
          x[i] = clip16(12000 * Math.sin(2 * Math.PI * (100 * t + 2000 * t * t)));
          break;
        case 2:
          x[i] = clip16((random() * 2 - 1) * 32768);
          break;
        case 3:
          x[i] = 0;
          break;
        case 4:
          x[i] = i & 1 ? 32767 : -32768;
          break;
        case 5:
          x[i] = clip16(50000 * Math.sin(2 * Math.PI * 150 * t));
          break;
        case 6:
          x[i] = -32768;
          break;
        default:
          x[i] = random() < 0.01 ? clip16((random() * 2 - 1) * 32768) : i % 3 === 0 ? 32767 : -1;
      }
    }
    return x;
  }

  /** Decodes each FLAC file with one ffmpeg run (with CRC checks) and returns the samples. */
  function decodeAll(files: Uint8Array[]): Int16Array[] {
    const args = [...FFMPEG_QUIET, '-err_detect', 'crccheck+bitstream+buffer'];
    files.forEach((f, k) => {
      writeFileSync(join(dir, `in${k}.flac`), f);
      args.push('-f', 'flac', '-i', join(dir, `in${k}.flac`));
    });
    files.forEach((_, k) => args.push('-map', `${k}:a`, '-f', 's16le', '-y', join(dir, `out${k}.raw`)));
    run('ffmpeg', args);
    return files.map((_, k) => asInt16(readFileSync(join(dir, `out${k}.raw`))));
  }

  function concatBytes(parts: Uint8Array[]): Uint8Array {
    return new Uint8Array(Buffer.concat(parts));
  }

  async function encodeChunked(
    x: Int16Array,
    options: ConstructorParameters<typeof FlacEncoder>[0],
    seed: number,
  ) {
    const enc = new FlacEncoder(options);
    const outputs: { bytes: Uint8Array; samplesBefore: number; samplesAfter: number }[] = [];
    for (const [a, b] of randomChunks(x.length, 7000, rng(seed))) {
      outputs.push({ bytes: await enc.push(x.subarray(a, b)), samplesBefore: a, samplesAfter: b });
    }
    outputs.push({ bytes: await enc.end(), samplesBefore: x.length, samplesAfter: x.length });
    return { enc, outputs };
  }

  it('is lossless through ffmpeg, pushed in random chunks, and every chunk decodes on its own', async () => {
    const rate = 24000;
    const x = varied(rate * 3 + 777, rate, 3);
    const { enc, outputs } = await encodeChunked(x, { sampleRate: rate }, 11);
    expect(enc.blockSize).toBe(1152);

    // Whole frames only: a push returns exactly the blocks completed so far.
    let emitted = 0;
    for (const o of outputs.slice(0, -1)) {
      const blocks = Math.floor(o.samplesAfter / 1152) - Math.floor(o.samplesBefore / 1152);
      expect(o.bytes.length > 0).toBe(blocks > 0);
      emitted += blocks;
    }
    expect(emitted).toBe(Math.floor(x.length / 1152));

    const nonEmpty = outputs.map((o) => o.bytes).filter((b) => b.length > 0);
    const first = nonEmpty[0]!;
    const headerLength = 4 + 4 + 34;
    expect(Buffer.from(first.subarray(0, 4)).toString('latin1')).toBe('fLaC');
    const info = Buffer.from(first.subarray(4, headerLength));
    expect(info[0]).toBe(0x80); // last metadata block, STREAMINFO
    expect(info.readUIntBE(1, 3)).toBe(34);
    expect(info.readUInt16BE(4)).toBe(1152); // min block size
    expect(info.readUInt16BE(6)).toBe(1152); // max block size
    expect(info.readUIntBE(14, 3) >> 4).toBe(rate); // 20-bit sample rate
    expect((info[16]! >> 1) & 0x7).toBe(0); // channels - 1
    expect(((info[16]! & 1) << 4) | (info[17]! >> 4)).toBe(15); // bits per sample - 1
    expect(info[17]! & 0x0f).toBe(0); // total samples unknown…
    expect(info.readUInt32BE(18)).toBe(0);
    const header = first.subarray(0, headerLength);
    const frameChunks = [first.subarray(headerLength), ...nonEmpty.slice(1)];
    for (const c of frameChunks) expect([c[0], c[1]]).toEqual([0xff, 0xf8]);

    const file = concatBytes(nonEmpty);
    const [whole, ...alone] = decodeAll([file, ...frameChunks.map((c) => concatBytes([header, c]))]);
    expectSame(whole, x);
    // Each chunk, behind the stream header, decodes to its own stretch of the input.
    let at = 0;
    for (const samples of alone) {
      expectSame(samples, x.subarray(at, at + samples.length), `at ${at}`);
      at += samples.length;
    }
    expect(at).toBe(x.length);

    const probe = JSON.parse(
      run(
        'ffprobe',
        ['-v', 'error', '-show_streams', '-of', 'json', '-f', 'flac', '-i', 'pipe:0'],
        file,
      ).toString(),
    ) as { streams: { codec_name: string; sample_rate: string; channels: number }[] };
    expect(probe.streams).toHaveLength(1);
    expect(probe.streams[0]).toMatchObject({ codec_name: 'flac', sample_rate: String(rate), channels: 1 });
    // Sanity on compression: the file is well below 16 bits per sample despite the noise section.
    expect(file.length).toBeLessThan(2 * x.length * 0.7);
  });

  it('is lossless at the other rates and block sizes, and for tiny or empty streams', async () => {
    const cases: { rate: number; n: number; blockSize?: number; expectBlock: number }[] = [
      { rate: 8000, n: 8000 + 5, expectBlock: 576 },
      { rate: 16000, n: 9000, expectBlock: 576 },
      { rate: 22050, n: 11025, expectBlock: 1152 },
      { rate: 44100, n: 20000, blockSize: 4096, expectBlock: 4096 },
      { rate: 48000, n: 20000, blockSize: 1000, expectBlock: 1000 },
      { rate: 11025, n: 5000, expectBlock: 576 }, // rate in the header as 16-bit Hz
      { rate: 24000, n: 1, expectBlock: 1152 },
      { rate: 24000, n: 17, expectBlock: 1152 },
      { rate: 24000, n: 1152, expectBlock: 1152 },
    ];
    const inputs: Int16Array[] = [];
    const files: Uint8Array[] = [];
    for (const [k, c] of cases.entries()) {
      const x = varied(c.n, c.rate, 100 + k);
      const { enc, outputs } = await encodeChunked(
        x,
        { sampleRate: c.rate, ...(c.blockSize ? { blockSize: c.blockSize } : {}) },
        200 + k,
      );
      expect(enc.blockSize).toBe(c.expectBlock);
      inputs.push(x);
      files.push(concatBytes(outputs.map((o) => o.bytes)));
    }
    // No samples at all: the stream header alone is still a valid, empty file.
    const empty = new FlacEncoder({ sampleRate: 24000 });
    expect((await empty.push(new Int16Array(0))).length).toBe(0);
    const emptyFile = await empty.end();
    expect(emptyFile.length).toBe(42);
    const decoded = decodeAll(files);
    decoded.forEach((samples, k) => expectSame(samples, inputs[k]!, `${cases[k]!.rate}/${cases[k]!.n}`));
    const probe = run(
      'ffprobe',
      [
        '-v',
        'error',
        '-show_entries',
        'stream=codec_name,sample_rate,channels',
        '-of',
        'csv=p=0',
        '-f',
        'flac',
        '-i',
        'pipe:0',
      ],
      emptyFile,
    );
    expect(probe.toString().trim()).toBe('flac,24000,1');
  });

  it('holds samples until a block is full and refuses use after end', async () => {
    const enc = new FlacEncoder({ sampleRate: 24000 });
    expect((await enc.push(new Int16Array(1151))).length).toBe(0);
    const out = await enc.push(new Int16Array(1));
    expect(Buffer.from(out.subarray(0, 4)).toString('latin1')).toBe('fLaC');
    // Silence: a CONSTANT subframe, so the frame is a handful of bytes.
    expect(out.length).toBeLessThan(42 + 16);
    expect((await enc.end()).length).toBe(0);
    await expect(enc.push(new Int16Array(10))).rejects.toThrow();
    expect(() => new FlacEncoder({ sampleRate: 24000, blockSize: 8 })).toThrow(RangeError);
  });
});
