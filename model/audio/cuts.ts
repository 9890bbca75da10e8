/**
 * Where one encoder output may be cut so that every piece still holds whole units (docs/protocol.md,
 * Audio formats): between samples for PCM and μ-law, between MP3 frames, between Ogg pages. A
 * dialect that must send audio in pieces smaller than the encoder's (ElevenLabs', whose messages
 * stay under 64 KB) cuts there.
 */
import { bytesPerSample, type AudioFormat } from '../../protocol/formats.ts';
import { parseMp3FrameHeader } from './mp3.ts';

/** The offsets of one encoder output where a piece may begin or end. */
export interface AudioCuts {
  /** The largest cut at or before `offset` (0 at least). */
  floor(offset: number): number;
  /** The smallest cut after `offset` (the output's length at most). */
  after(offset: number): number;
}

/** Cuts every `unit` bytes: whole samples. */
function everyUnit(unit: number, length: number): AudioCuts {
  return {
    floor: (offset) => Math.max(0, Math.min(length, offset - (offset % unit))),
    after: (offset) => Math.min(length, offset - (offset % unit) + unit),
  };
}

/** Cuts at the given offsets (ascending, 0 first), and at the end. */
function atOffsets(starts: readonly number[], length: number): AudioCuts {
  const cuts = [...starts.filter((s) => s > 0 && s < length), length];
  return {
    floor: (offset) => {
      let best = 0;
      for (const cut of cuts) {
        if (cut > offset) break;
        best = cut;
      }
      return best;
    },
    after: (offset) => cuts.find((cut) => cut > offset) ?? length,
  };
}

/** Where each MP3 frame starts; what does not parse as frames is kept as one last unit. */
function mp3Frames(bytes: Uint8Array): number[] {
  const starts: number[] = [];
  let at = 0;
  for (;;) {
    const header = parseMp3FrameHeader(bytes, at);
    if (!header || header.frameLength <= 0) break;
    starts.push(at);
    at += header.frameLength;
  }
  return starts;
}

/** Where each Ogg page starts (RFC 3533: a 27-byte header, its lacing values, then the body). */
function oggPages(bytes: Uint8Array): number[] {
  const starts: number[] = [];
  let at = 0;
  while (at + 27 <= bytes.length) {
    if (bytes[at] !== 0x4f || bytes[at + 1] !== 0x67 || bytes[at + 2] !== 0x67 || bytes[at + 3] !== 0x53)
      break;
    const segments = bytes[at + 26]!;
    if (at + 27 + segments > bytes.length) break;
    let body = 0;
    for (let i = 0; i < segments; i++) body += bytes[at + 27 + i]!;
    starts.push(at);
    at += 27 + segments + body;
  }
  return starts;
}

/**
 * The cuts of one encoder output (`bytes`, whole units as every encoder gives them) in `format`.
 * Formats whose units are not parsed here (AAC, FLAC) are one unit.
 */
export function audioCuts(format: AudioFormat, bytes: Uint8Array): AudioCuts {
  switch (format) {
    case 'wav': // PCM16 behind a 44-byte header: even offsets are between samples
      return everyUnit(2, bytes.length);
    case 'mp3':
      return atOffsets(mp3Frames(bytes), bytes.length);
    case 'opus':
      return atOffsets(oggPages(bytes), bytes.length);
    default: {
      // Formats whose bytes count their samples (PCM, G.711) are cut between any two.
      const unit = bytesPerSample(format);
      return unit > 0 ? everyUnit(unit, bytes.length) : atOffsets([], bytes.length);
    }
  }
}
