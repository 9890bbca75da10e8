/**
 * Samples → bytes: float32 → s16le PCM with clipping, and WAV headers (streaming and exact).
 */
import { SAMPLE_RATE } from '../kokoro/constants.ts';

/**
 * Converts float samples in [-1, 1] to 16-bit PCM, clipping anything outside and rounding to the
 * nearest step (halves up). NaN becomes silence rather than a full-scale click. Runs in the
 * inference worker.
 */
export function floatToPcm16(samples: Float32Array): Int16Array {
  const n = samples.length;
  const pcm = new Int16Array(n);
  for (let i = 0; i < n; i++) {
    // Offset into 0..65535 so that `| 0` (truncation) rounds to nearest; integer math keeps this
    // loop at a few tenths of a millisecond per sentence.
    let y = samples[i]! * 32767 + 32768.5;
    if (!(y > 0))
      y = y <= 0 ? 0 : 32768; // below range, or NaN → silence
    else if (y > 65535) y = 65535;
    pcm[i] = (y | 0) - 32768;
  }
  return pcm;
}

/** The little-endian bytes of PCM16 samples, without copying. */
export function pcmBytes(pcm: Int16Array): Buffer {
  // Int16Array is little-endian on every platform this server supports (x64, arm64).
  return Buffer.from(pcm.buffer, pcm.byteOffset, pcm.byteLength);
}

export const WAV_HEADER_BYTES = 44;

/**
 * A 44-byte RIFF/WAVE header for mono PCM16. With `dataBytes` undefined the sizes are the
 * 0xFFFFFFFF placeholders that streaming players accept for a file of unknown length.
 */
export function wavHeader(dataBytes?: number, sampleRate: number = SAMPLE_RATE): Buffer {
  const h = Buffer.alloc(WAV_HEADER_BYTES);
  const unknown = dataBytes === undefined;
  h.write('RIFF', 0, 'ascii');
  h.writeUInt32LE(unknown ? 0xffffffff : 36 + dataBytes, 4);
  h.write('WAVE', 8, 'ascii');
  h.write('fmt ', 12, 'ascii');
  h.writeUInt32LE(16, 16); // fmt chunk size
  h.writeUInt16LE(1, 20); // PCM
  h.writeUInt16LE(1, 22); // mono
  h.writeUInt32LE(sampleRate, 24);
  h.writeUInt32LE(sampleRate * 2, 28); // byte rate
  h.writeUInt16LE(2, 32); // block align
  h.writeUInt16LE(16, 34); // bits per sample
  h.write('data', 36, 'ascii');
  h.writeUInt32LE(unknown ? 0xffffffff : dataBytes, 40);
  return h;
}
