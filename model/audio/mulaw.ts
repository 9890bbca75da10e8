/** G.711 μ-law: 8-bit companded telephony audio (raw bytes, no header). */
import type { EncoderOptions } from './encoder.ts';
import { G711Encoder, decodeByTable, encodeByTable } from './g711.ts';

const BIAS = 0x84;
const CLIP = 32635;

/**
 * Classic G.711 encoder for one sample (bias 0x84, clip 32635, segment search, bits inverted).
 * Only used to fill the lookup table.
 */
function encodeSample(sample: number): number {
  const sign = sample < 0 ? 0x80 : 0;
  let magnitude = sample < 0 ? -sample : sample;
  if (magnitude > CLIP) magnitude = CLIP;
  magnitude += BIAS;
  // Segment = position of the highest set bit above bit 7 (0…7).
  let exponent = 7;
  for (let mask = 0x4000; (magnitude & mask) === 0 && exponent > 0; mask >>= 1) exponent--;
  const mantissa = (magnitude >> (exponent + 3)) & 0x0f;
  return ~(sign | (exponent << 4) | mantissa) & 0xff;
}

/** Byte for every 16-bit sample, indexed by sample + 32768: one lookup per sample. */
const ENCODE_TABLE = new Uint8Array(65536);
for (let s = -32768; s < 32768; s++) ENCODE_TABLE[s + 32768] = encodeSample(s);

/** Linear value of every μ-law byte. */
const DECODE_TABLE = new Int16Array(256);
for (let b = 0; b < 256; b++) {
  const u = ~b & 0xff;
  const exponent = (u >> 4) & 0x07;
  const magnitude = ((((u & 0x0f) << 3) + BIAS) << exponent) - BIAS;
  DECODE_TABLE[b] = u & 0x80 ? -magnitude : magnitude;
}

/** Encodes PCM16 samples as G.711 μ-law bytes (one byte per sample). */
export const encodeMulaw = (pcm: Int16Array): Uint8Array => encodeByTable(ENCODE_TABLE, pcm);

/** Decodes G.711 μ-law bytes to PCM16 (the standard expansion, as ffmpeg and SoX do it). */
export const decodeMulaw = (bytes: Uint8Array): Int16Array => decodeByTable(DECODE_TABLE, bytes);

/** μ-law as a StreamEncoder: raw bytes, no header, any sample rate (telephony uses 8000 Hz). */
export class MulawEncoder extends G711Encoder {
  /** The options are accepted for symmetry with the other encoders; μ-law needs none. */
  constructor(_options?: EncoderOptions) {
    super(encodeMulaw);
  }
}
