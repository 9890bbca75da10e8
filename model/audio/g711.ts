/**
 * What the two G.711 codecs (μ-law, A-law) share: a byte per sample, looked up in a table, and a
 * stream encoder with no header and no frames, so every push returns all of its input encoded.
 */
import type { StreamEncoder } from './encoder.ts';

/** Encodes PCM16 samples through a table of a byte for every sample (indexed by sample + 32768). */
export function encodeByTable(table: Uint8Array, pcm: Int16Array): Uint8Array {
  const out = new Uint8Array(pcm.length);
  for (let i = 0; i < pcm.length; i++) out[i] = table[pcm[i]! + 32768]!;
  return out;
}

/** Decodes bytes through a table of the linear value of every byte. */
export function decodeByTable(table: Int16Array, bytes: Uint8Array): Int16Array {
  const out = new Int16Array(bytes.length);
  for (let i = 0; i < bytes.length; i++) out[i] = table[bytes[i]!]!;
  return out;
}

/** A G.711 codec as a StreamEncoder: raw bytes, no header, any sample rate. */
export class G711Encoder implements StreamEncoder {
  readonly #encode: (pcm: Int16Array) => Uint8Array;

  constructor(encode: (pcm: Int16Array) => Uint8Array) {
    this.#encode = encode;
  }

  push(pcm: Int16Array): Promise<Uint8Array> {
    return Promise.resolve(this.#encode(pcm));
  }

  end(): Promise<Uint8Array> {
    return Promise.resolve(new Uint8Array(0));
  }

  abort(): void {}
}
