/**
 * Decoding audio with the real ffmpeg, for the format tests (test/server/audio-tools.ts) and the
 * image test's AAC check.
 */
import { spawn, spawnSync } from 'node:child_process';

/** ffmpeg's input options for headerless formats. */
const RAW_INPUT: Record<string, (rate: number) => string[]> = {
  pcm: (rate) => ['-f', 's16le', '-ar', String(rate), '-ac', '1'],
  mulaw: (rate) => ['-f', 'mulaw', '-ar', String(rate), '-ac', '1'],
  alaw: (rate) => ['-f', 'alaw', '-ar', String(rate), '-ac', '1'],
};

export interface Decoded {
  ok: boolean;
  /** Decoded PCM16 mono at the format's own rate. */
  samples: Int16Array;
  stderr: string;
}

/** ffmpeg's arguments to decode `format` at `rate` from stdin to PCM16 on stdout. */
function decodeArgs(format: string, rate: number): string[] {
  const input = RAW_INPUT[format]?.(rate) ?? [];
  return [
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
  ];
}

function decoded(status: number | null, out: Buffer, stderr: string): Decoded {
  const samples = new Int16Array(out.buffer.slice(out.byteOffset, out.byteOffset + (out.length & ~1)));
  return { ok: status === 0 && !/error|invalid/i.test(stderr), samples, stderr };
}

/** Decodes a whole file (or a fragment that must stand alone) to PCM16 at `rate`. */
export function decode(bytes: Uint8Array, format: string, rate: number): Decoded {
  const res = spawnSync('ffmpeg', decodeArgs(format, rate), { input: bytes, maxBuffer: 64 * 1024 * 1024 });
  return decoded(res.status, res.stdout ?? Buffer.alloc(0), res.stderr?.toString() ?? '');
}

/** The same without blocking: several decodes can run at once. */
export function decodeAsync(bytes: Uint8Array, format: string, rate: number): Promise<Decoded> {
  return new Promise((resolve, reject) => {
    const child = spawn('ffmpeg', decodeArgs(format, rate));
    const out: Buffer[] = [];
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => out.push(d));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('error', reject);
    child.on('close', (status) => resolve(decoded(status, Buffer.concat(out), stderr)));
    child.stdin.on('error', () => {}); // ffmpeg may stop reading at a broken input: its status says so
    child.stdin.end(bytes);
  });
}
