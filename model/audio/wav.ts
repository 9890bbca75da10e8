/**
 * WAV: the one RIFF/WAVE header of this project (streaming, with placeholder sizes, or exact), whole
 * files, and raw PCM16 and streaming WAV as StreamEncoders (the header goes out once, first).
 */
import { SAMPLE_RATE } from '../kokoro/constants.ts';
import type { StreamEncoder } from './encoder.ts';
import { pcmBytes } from './pcm.ts';

export const WAV_HEADER_BYTES = 44;

/**
 * A 44-byte RIFF/WAVE header for mono PCM16. With `dataBytes` undefined the sizes are the
 * 0xFFFFFFFF placeholders that streaming players accept for a file of unknown length.
 *
 * @throws RangeError when `dataBytes` is not a whole number of samples or does not fit RIFF.
 */
export function wavHeader(dataBytes?: number, sampleRate: number = SAMPLE_RATE): Buffer {
  const unknown = dataBytes === undefined;
  if (!unknown && (!Number.isInteger(dataBytes) || dataBytes < 0 || dataBytes % 2 !== 0)) {
    throw new RangeError(`WAV data length must be a whole number of 2-byte samples, got ${dataBytes}`);
  }
  if (!unknown && dataBytes > 0xffff_ffff - 36) {
    throw new RangeError(`WAV data too large for RIFF: ${dataBytes} bytes`);
  }
  const h = Buffer.alloc(WAV_HEADER_BYTES);
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

/** A whole WAV file with its real sizes around s16le mono PCM; a trailing odd byte (half a sample) is dropped. */
export function wavFile(pcm: Uint8Array, sampleRate: number = SAMPLE_RATE): Buffer {
  const data = pcm.length % 2 === 0 ? pcm : pcm.subarray(0, pcm.length - 1);
  return Buffer.concat([wavHeader(data.length, sampleRate), data]);
}

export class PcmEncoder implements StreamEncoder {
  push(pcm: Int16Array): Promise<Uint8Array> {
    return Promise.resolve(pcmBytes(pcm));
  }
  end(): Promise<Uint8Array> {
    return Promise.resolve(new Uint8Array(0));
  }
  abort(): void {}
}

export class WavEncoder implements StreamEncoder {
  #started = false;
  constructor(private readonly sampleRate: number) {}

  push(pcm: Int16Array): Promise<Uint8Array> {
    return Promise.resolve(this.#next(pcmBytes(pcm)));
  }

  /** A WAV with no samples is still a valid file: the header alone. */
  end(): Promise<Uint8Array> {
    return Promise.resolve(this.#next(Buffer.alloc(0)));
  }

  abort(): void {}

  #next(data: Buffer): Uint8Array {
    if (this.#started) return data;
    this.#started = true;
    return Buffer.concat([wavHeader(undefined, this.sampleRate), data]);
  }
}
