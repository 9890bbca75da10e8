/** Samples → bytes: float32 → s16le PCM with clipping, and PCM16 as bytes. */

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
