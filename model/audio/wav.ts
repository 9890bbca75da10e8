/** Raw PCM16 and streaming WAV as StreamEncoders (the WAV header goes out once, first). */
import { pcmBytes, wavHeader } from './pcm.ts';
import type { StreamEncoder } from './encoder.ts';

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
