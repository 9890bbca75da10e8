/** Decoding audio with the real ffmpeg/ffprobe (Debian's), for format tests. */
import { spawn, spawnSync } from 'node:child_process';

/**
 * Whether ffmpeg and ffprobe run here. Tests that decode with them are skipped without them, and
 * say so in their name (`sh scripts/test-deps.sh` installs both).
 */
export const FFMPEG = (() => {
  const available = ['ffmpeg', 'ffprobe'].every((tool) => spawnSync(tool, ['-version']).status === 0);
  return {
    available,
    /** Appended to a test's name: why it was skipped, when it was. */
    note: available ? '' : ' (skipped: ffmpeg/ffprobe not installed; sh scripts/test-deps.sh installs them)',
  };
})();

export { decode, decodeAsync, type Decoded } from '../../scripts/lib/audio-decode.ts';

type Probed = { codec_name?: string; sample_rate?: string; channels?: number };

/** ffprobe's view of the first audio stream. */
export function probe(bytes: Uint8Array): Promise<Probed> {
  return new Promise((resolve, reject) => {
    const child = spawn('ffprobe', [
      '-v',
      'error',
      '-show_entries',
      'stream=codec_name,sample_rate,channels',
      '-of',
      'json',
      'pipe:0',
    ]);
    let stdout = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.on('error', reject);
    child.on('close', () => {
      const parsed = JSON.parse(stdout || '{}') as { streams?: Record<string, unknown>[] };
      resolve((parsed.streams?.[0] ?? {}) as Probed);
    });
    child.stdin.on('error', () => {}); // ffprobe may stop reading once it knows
    child.stdin.end(bytes);
  });
}

/** The codec name ffprobe reports for each of our formats. */
export const CODEC_NAMES: Record<string, string> = {
  wav: 'pcm_s16le',
  mp3: 'mp3',
  opus: 'opus',
  aac: 'aac',
  flac: 'flac',
};

/** Splits an Ogg stream into its pages (checks capture patterns and lengths, not CRCs). */
export function oggPages(bytes: Uint8Array): Uint8Array[] | null {
  const pages: Uint8Array[] = [];
  let at = 0;
  while (at < bytes.length) {
    if (bytes.length - at < 27 || String.fromCharCode(...bytes.subarray(at, at + 4)) !== 'OggS') return null;
    const segments = bytes[at + 26]!;
    let size = 27 + segments;
    for (let i = 0; i < segments; i++) size += bytes[at + 27 + i]!;
    if (at + size > bytes.length) return null;
    pages.push(bytes.subarray(at, at + size));
    at += size;
  }
  return pages;
}

/** Splits MP3 data into frames by their headers (MPEG 1/2/2.5 layer III), or null if it does not tile. */
export function mp3Frames(bytes: Uint8Array): Uint8Array[] | null {
  const BITRATES = {
    1: [0, 32, 40, 48, 56, 64, 80, 96, 112, 128, 160, 192, 224, 256, 320],
    2: [0, 8, 16, 24, 32, 40, 48, 56, 64, 80, 96, 112, 128, 144, 160],
  } as const;
  const RATES = { 3: [44100, 48000, 32000], 2: [22050, 24000, 16000], 0: [11025, 12000, 8000] } as Record<
    number,
    number[]
  >;
  const frames: Uint8Array[] = [];
  let at = 0;
  while (at < bytes.length) {
    if (bytes.length - at < 4 || bytes[at] !== 0xff || (bytes[at + 1]! & 0xe0) !== 0xe0) return null;
    const version = (bytes[at + 1]! >> 3) & 3; // 3 = MPEG-1, 2 = MPEG-2, 0 = MPEG-2.5
    const bitrateIndex = bytes[at + 2]! >> 4;
    const rateIndex = (bytes[at + 2]! >> 2) & 3;
    const padding = (bytes[at + 2]! >> 1) & 1;
    const kbps = (version === 3 ? BITRATES[1] : BITRATES[2])[bitrateIndex];
    const rate = RATES[version]?.[rateIndex];
    if (!kbps || !rate) return null;
    const size = Math.floor(((version === 3 ? 144 : 72) * kbps * 1000) / rate) + padding;
    if (at + size > bytes.length) return null;
    frames.push(bytes.subarray(at, at + size));
    at += size;
  }
  return frames;
}

/** Splits ADTS AAC into frames, or null if it does not tile. */
export function adtsFrames(bytes: Uint8Array): Uint8Array[] | null {
  const frames: Uint8Array[] = [];
  let at = 0;
  while (at < bytes.length) {
    if (bytes.length - at < 7 || bytes[at] !== 0xff || (bytes[at + 1]! & 0xf6) !== 0xf0) return null;
    const size = ((bytes[at + 3]! & 3) << 11) | (bytes[at + 4]! << 3) | (bytes[at + 5]! >> 5);
    if (size < 7 || at + size > bytes.length) return null;
    frames.push(bytes.subarray(at, at + size));
    at += size;
  }
  return frames;
}
