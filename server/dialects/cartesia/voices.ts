/** Cartesia's voice ids and output formats, as the server's. */
import { unsupported, vendorRate, type VendorOutput } from '../vendor-voices.ts';

/** Cartesia voice ids that clients send by default or in Cartesia's examples. */
export const CARTESIA_VOICES: Readonly<Record<string, string>> = {
  'f786b574-daa5-4673-aa0c-cbe3e8534c02': 'af_heart', // LiveKit's Cartesia plugin default
  '694f9389-aac1-45b6-b726-9d9369183238': 'af_sarah', // Cartesia's examples: female, American
  '71a7ad14-091c-4e8e-a314-022ece01c121': 'bf_emma', // Pipecat's examples: female, British
  'a0e99841-438c-4a64-b679-ae501e7d6091': 'am_michael', // Cartesia's examples: male, American
};

/** Cartesia's `output_format` object; `containers`: those the route offers (WebSocket and SSE: raw). */
export function cartesiaOutput(value: unknown, containers: readonly string[]): VendorOutput {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    throw unsupported(
      'output_format should be an object such as {"container": "raw", "encoding": "pcm_s16le", "sample_rate": 24000}',
    );
  }
  const { container, encoding, sample_rate: rate } = value as Record<string, unknown>;
  const named = JSON.stringify(value).slice(0, 120);
  if (typeof container !== 'string' || !containers.includes(container)) {
    throw unsupported(`output_format ${named}: container should be ${containers.join(' or ')}`);
  }
  if (typeof rate !== 'number') throw unsupported(`output_format ${named}: sample_rate should be a number`);
  if (container === 'mp3') return { format: 'mp3', sampleRate: vendorRate('mp3', rate, named) };
  const encodings: Record<string, VendorOutput['format']> = {
    pcm_s16le: 'pcm',
    pcm_f32le: 'pcm',
    pcm_mulaw: 'mulaw',
    pcm_alaw: 'alaw',
  };
  if (typeof encoding !== 'string' || !Object.hasOwn(encodings, encoding)) {
    throw unsupported(
      `output_format ${named}: encoding should be pcm_s16le, pcm_f32le, pcm_mulaw or pcm_alaw`,
    );
  }
  if (container === 'wav' && encoding !== 'pcm_s16le') {
    throw unsupported(`output_format ${named}: a wav container holds pcm_s16le here`);
  }
  const format = container === 'wav' ? 'wav' : encodings[encoding]!;
  return {
    format,
    sampleRate: vendorRate(format, rate, named),
    ...(encoding === 'pcm_f32le' ? { float: true } : {}),
  };
}

/** PCM16 little-endian → 32-bit float little-endian, the same samples over 32768. */
export function pcm16ToFloat32(bytes: Uint8Array): Uint8Array {
  const count = bytes.length >> 1;
  const out = new DataView(new ArrayBuffer(count * 4));
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.length);
  for (let i = 0; i < count; i++) out.setFloat32(i * 4, view.getInt16(i * 2, true) / 32768, true);
  return new Uint8Array(out.buffer);
}
