/** μ-law and FLAC, encoded here and decoded by ffmpeg. */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { FFMPEG } from '../../server/audio-tools.ts';
import { FlacEncoder } from '../../../model/audio/flac.ts';
import { MulawEncoder, decodeMulaw, encodeMulaw } from '../../../model/audio/mulaw.ts';
import { rng, clip16, tone, randomChunks, expectSame, run, asInt16, FFMPEG_QUIET } from './pcm-signals.ts';

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
