/**
 * The MP3 stream encoder, checked against Debian's ffmpeg/ffprobe and against a frame walker
 * written here (not the parser in model/): whole frames per chunk, bitrates, headers, durations
 * and waveform similarity.
 */
import { describe, expect, it } from 'vitest';
import { FFMPEG } from '../../server/audio-tools.ts';
import {
  MP3_SAMPLE_RATES,
  Mp3Encoder,
  mp3Bitrates,
  nearestMp3Bitrate,
  parseMp3FrameHeader,
} from '../../../model/audio/mp3.ts';
import { testSignal, pushRandomly, joined, bestCorrelation, probe, decodeEach } from './encoding-harness.ts';

// ---------------------------------------------------------------------------------------------
// Independent MP3 frame walker

const V1_KBPS = [0, 32, 40, 48, 56, 64, 80, 96, 112, 128, 160, 192, 224, 256, 320];
const V2_KBPS = [0, 8, 16, 24, 32, 40, 48, 56, 64, 80, 96, 112, 128, 144, 160];
const RATES: Record<number, number[]> = {
  3: [44100, 48000, 32000],
  2: [22050, 24000, 16000],
  0: [11025, 12000, 8000],
};

interface Frame {
  readonly offset: number;
  readonly length: number;
  readonly sampleRate: number;
  readonly kbps: number;
  readonly mono: boolean;
  readonly samples: number;
}

/** Walks layer III frames; the bytes must be whole frames, exactly. */
function walkFrames(bytes: Uint8Array): Frame[] {
  const frames: Frame[] = [];
  let at = 0;
  while (at < bytes.length) {
    expect(bytes.length - at).toBeGreaterThanOrEqual(4);
    const [b0, b1, b2, b3] = [bytes[at]!, bytes[at + 1]!, bytes[at + 2]!, bytes[at + 3]!];
    expect(b0).toBe(0xff);
    expect(b1 & 0xe0).toBe(0xe0);
    const version = (b1 >> 3) & 3;
    expect(version).not.toBe(1);
    expect((b1 >> 1) & 3).toBe(1); // layer III
    const sampleRate = RATES[version]![(b2 >> 2) & 3]!;
    const kbps = (version === 3 ? V1_KBPS : V2_KBPS)[b2 >> 4]!;
    const slots = version === 3 ? 144 : 72;
    const length = Math.floor((slots * kbps * 1000) / sampleRate) + ((b2 >> 1) & 1);
    expect(at + length).toBeLessThanOrEqual(bytes.length);
    frames.push({
      offset: at,
      length,
      sampleRate,
      kbps,
      mono: b3 >> 6 === 3,
      samples: version === 3 ? 1152 : 576,
    });
    at += length;
  }
  return frames;
}

// LAME's delay in a decoder that does not read a LAME tag: 576 encoder + 529 decoder samples.
const LAME_DELAY = 1105;

// ---------------------------------------------------------------------------------------------

describe.skipIf(!FFMPEG.available)(`Mp3Encoder${FFMPEG.note}`, () => {
  it('picks the nearest bitrate the encoder can write at each rate', () => {
    expect(mp3Bitrates(48000)).not.toContain(16);
    expect(nearestMp3Bitrate(8000, 128_000)).toBe(64_000); // MPEG-2.5: LAME stops at 64
    expect(nearestMp3Bitrate(16000, 320_000)).toBe(160_000); // MPEG-2: 160 at most
    expect(nearestMp3Bitrate(48000, 16_000)).toBe(32_000); // MPEG-1: 32 at least
    expect(nearestMp3Bitrate(24000, 56_000)).toBe(48_000); // 56 is not offered; tie → lower
    expect(nearestMp3Bitrate(44100, 130_000)).toBe(128_000);
    expect(() => new Mp3Encoder({ sampleRate: 96000 })).toThrow(RangeError);
  });

  it('writes the chosen bitrate in the frame headers', async () => {
    for (const [rate, asked, got] of [
      [8000, 128_000, 64],
      [24000, 192_000, 160],
      [48000, 16_000, 32],
    ] as const) {
      const encoder = await Mp3Encoder.create({ sampleRate: rate, bitrate: asked });
      const bytes = joined([await encoder.push(new Int16Array(rate / 2)), await encoder.end()]);
      const frames = walkFrames(bytes);
      expect(new Set(frames.map((f) => f.kbps))).toEqual(new Set([got]));
      expect(encoder.bitrate).toBe(got * 1000);
    }
  });

  for (const rate of MP3_SAMPLE_RATES) {
    it(`${rate} Hz: whole frames per chunk, each chunk decodes alone, the stream decodes cleanly`, async () => {
      const pcm = testSignal(rate, 1.5, rate);
      const encoder = await Mp3Encoder.create({ sampleRate: rate });
      const { chunks } = await pushRandomly(encoder, pcm, rate, rate + 2);
      const nonEmpty = chunks.filter((c) => c.length > 0);
      expect(nonEmpty.length).toBeGreaterThan(2);

      const frames = nonEmpty.map((chunk) => {
        const f = walkFrames(chunk);
        // The model's parser agrees with this one.
        for (const frame of f) {
          const h = parseMp3FrameHeader(chunk, frame.offset)!;
          expect([h.frameLength, h.sampleRate, h.bitrate]).toEqual([
            frame.length,
            frame.sampleRate,
            frame.kbps * 1000,
          ]);
        }
        return f;
      });
      const flat = frames.flat();
      expect(new Set(flat.map((f) => f.sampleRate))).toEqual(new Set([rate]));
      expect(new Set(flat.map((f) => f.kbps))).toEqual(new Set([48])); // CBR at the default
      expect(flat.every((f) => f.mono)).toBe(true);
      // No Xing/Info frame: the first frame is audio.
      const firstFrame = Buffer.from(nonEmpty[0]!.subarray(0, flat[0]!.length));
      expect(firstFrame.includes('Xing') || firstFrame.includes('Info')).toBe(false);

      // The whole stream (format probed), and each chunk on its own as a player joining mid-stream
      // would see it. ffmpeg's MP3 demuxer only locks on after a second frame header, so a
      // one-frame chunk goes in twice.
      const file = joined(chunks);
      const [[stream], decoded] = await Promise.all([
        probe(file),
        decodeEach(
          file,
          nonEmpty.map((chunk, i) => (frames[i]!.length > 1 ? chunk : joined([chunk, chunk]))),
          'mp3',
          rate,
        ),
      ]);
      expect(stream!.codec_name).toBe('mp3');
      expect(stream!.channels).toBe(1);
      expect(stream!.sample_rate).toBe(`${rate}`);
      expect(decoded.run.code, decoded.run.stderr).toBe(0);
      expect(decoded.run.stderr).not.toMatch(/error|invalid/i);
      const [out, ...alone] = decoded.pcm;
      expect(alone.map((p) => p.length)).toEqual(frames.map((f) => Math.max(2, f.length) * flat[0]!.samples));
      // Every frame decodes; the input plus LAME's delay, padded to a whole frame.
      expect(out!.length).toBe(flat.length * flat[0]!.samples);
      expect(out!.length).toBeGreaterThanOrEqual(pcm.length + LAME_DELAY);
      expect(out!.length).toBeLessThan(pcm.length + LAME_DELAY + flat[0]!.samples);
      const { lag, r } = bestCorrelation(pcm, out!, LAME_DELAY - 8, LAME_DELAY + 8);
      expect(Math.abs(lag - LAME_DELAY)).toBeLessThanOrEqual(2);
      expect(r).toBeGreaterThan(0.8);
    });
  }

  it('abort before or after use; push/end afterwards throw', async () => {
    const early = new Mp3Encoder({ sampleRate: 24000 });
    early.abort();
    await expect(early.push(new Int16Array(100))).rejects.toThrow();
    const used = await Mp3Encoder.create({ sampleRate: 24000 });
    await used.push(testSignal(24000, 0.5));
    used.abort();
    used.abort();
    await expect(used.end()).rejects.toThrow();
    // A reused LAME instance starts clean: same bytes as a fresh stream.
    const a = await Mp3Encoder.create({ sampleRate: 24000 });
    const b = await Mp3Encoder.create({ sampleRate: 24000 });
    const pcm = testSignal(24000, 0.5, 3);
    const bytesA = joined([await a.push(pcm), await a.end()]);
    const bytesB = joined([await b.push(pcm), await b.end()]);
    expect(bytesA.equals(bytesB)).toBe(true);
  });
});
