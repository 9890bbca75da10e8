/**
 * Decoding audio with the real ffmpeg, for the format tests (test/server/audio-tools.ts) and the
 * image test's AAC check.
 */
import { spawnSync } from 'node:child_process';

/** ffmpeg's input options for headerless formats. */
const RAW_INPUT: Record<string, (rate: number) => string[]> = {
  pcm: (rate) => ['-f', 's16le', '-ar', String(rate), '-ac', '1'],
  mulaw: (rate) => ['-f', 'mulaw', '-ar', String(rate), '-ac', '1'],
};

export interface Decoded {
  ok: boolean;
  /** Decoded PCM16 mono at the format's own rate. */
  samples: Int16Array;
  stderr: string;
}

/** Decodes a whole file (or a fragment that must stand alone) to PCM16 at `rate`. */
export function decode(bytes: Uint8Array, format: string, rate: number): Decoded {
  const input = RAW_INPUT[format]?.(rate) ?? [];
  const res = spawnSync(
    'ffmpeg',
    [
      '-hide_banner',
      '-loglevel',
      'error',
      ...input,
      '-i',
      'pipe:0',
      '-f',
      's16le',
      '-ac',
      '1',
      '-ar',
      String(rate),
      'pipe:1',
    ],
    { input: bytes, maxBuffer: 64 * 1024 * 1024 },
  );
  const out = res.stdout ?? Buffer.alloc(0);
  const samples = new Int16Array(out.buffer.slice(out.byteOffset, out.byteOffset + (out.length & ~1)));
  const stderr = res.stderr?.toString() ?? '';
  return { ok: res.status === 0 && !/error|invalid/i.test(stderr), samples, stderr };
}
