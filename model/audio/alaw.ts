/** G.711 A-law: 8-bit companded telephony audio (raw bytes, no header), Europe's μ-law. */
import type { EncoderOptions } from './encoder.ts';
import { G711Encoder, decodeByTable, encodeByTable } from './g711.ts';

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
export const encodeAlaw = (pcm: Int16Array): Uint8Array => encodeByTable(ENCODE_TABLE, pcm);

/** Decodes G.711 A-law bytes to PCM16. */
export const decodeAlaw = (bytes: Uint8Array): Int16Array => decodeByTable(DECODE_TABLE, bytes);

/** A-law as a StreamEncoder: raw bytes, no header, any sample rate. */
export class AlawEncoder extends G711Encoder {
  /** The options are accepted for symmetry with the other encoders; A-law needs none. */
  constructor(_options?: EncoderOptions) {
    super(encodeAlaw);
  }
}
