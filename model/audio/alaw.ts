/** G.711 A-law: 8-bit companded telephony audio (raw bytes, no header), Europe's μ-law. */
import type { EncoderOptions, StreamEncoder } from './encoder.ts';

/** Upper ends of the eight segments, on the magnitude shifted right by 3 (13 bits). */
const SEGMENT_ENDS = [0x1f, 0x3f, 0x7f, 0xff, 0x1ff, 0x3ff, 0x7ff, 0xfff];

/**
 * G.711's reference encoder for one sample (13-bit magnitude, segment search, even bits
 * inverted with 0x55). Only used to fill the lookup table.
 */
function encodeSample(sample: number): number {
  let magnitude = sample >> 3;
  let mask = 0xd5; // sign bit set: positive
  if (magnitude < 0) {
    mask = 0x55;
    magnitude = -magnitude - 1;
  }
  const segment = SEGMENT_ENDS.findIndex((end) => magnitude <= end);
  if (segment < 0) return 0x7f ^ mask;
  const mantissa = (segment < 2 ? magnitude >> 1 : magnitude >> segment) & 0x0f;
  return ((segment << 4) | mantissa) ^ mask;
}

/** Byte for every 16-bit sample, indexed by sample + 32768: one lookup per sample. */
const ENCODE_TABLE = new Uint8Array(65536);
for (let s = -32768; s < 32768; s++) ENCODE_TABLE[s + 32768] = encodeSample(s);

/** Linear value of every A-law byte (as ffmpeg and SoX expand it). */
const DECODE_TABLE = new Int16Array(256);
for (let b = 0; b < 256; b++) {
  const a = b ^ 0x55;
  const segment = (a & 0x70) >> 4;
  let t = (a & 0x0f) << 4;
  t += segment === 0 ? 8 : 0x108;
  if (segment > 1) t <<= segment - 1;
  DECODE_TABLE[b] = a & 0x80 ? t : -t;
}

/** Encodes PCM16 samples as G.711 A-law bytes (one byte per sample). */
export function encodeAlaw(pcm: Int16Array): Uint8Array {
  const out = new Uint8Array(pcm.length);
  for (let i = 0; i < pcm.length; i++) out[i] = ENCODE_TABLE[pcm[i]! + 32768]!;
  return out;
}

/** Decodes G.711 A-law bytes to PCM16. */
export function decodeAlaw(bytes: Uint8Array): Int16Array {
  const out = new Int16Array(bytes.length);
  for (let i = 0; i < bytes.length; i++) out[i] = DECODE_TABLE[bytes[i]!]!;
  return out;
}

/**
 * A-law as a StreamEncoder: raw bytes, no header, any sample rate. Every sample is its own unit,
 * so each push returns all of its input encoded.
 */
export class AlawEncoder implements StreamEncoder {
  /** The options are accepted for symmetry with the other encoders; A-law needs none. */
  constructor(_options?: EncoderOptions) {}

  push(pcm: Int16Array): Promise<Uint8Array> {
    return Promise.resolve(encodeAlaw(pcm));
  }

  end(): Promise<Uint8Array> {
    return Promise.resolve(new Uint8Array(0));
  }

  abort(): void {}
}
