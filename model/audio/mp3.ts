/**
 * MP3 streaming encoder on LAME (wasm-media-encoders, WebAssembly): CBR, mono, output at the
 * input rate.
 *
 * LAME hands out bytes as its bitstream buffer fills, which need not end on a frame boundary, so
 * every chunk is cut at the last whole frame (walking the frame headers) and the rest waits for
 * the next push. No Xing/LAME info frame is written (the library turns the VBR tag off), so there
 * is nothing to patch or skip: the stream is plain CBR frames, decodable from any frame on.
 */
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { createEncoder, type WasmMediaEncoder } from 'wasm-media-encoders';
import type { EncoderOptions, StreamEncoder } from './encoder.ts';

/** Sample rates MPEG audio layer III defines (MPEG-1, MPEG-2 and MPEG-2.5). */
export const MP3_SAMPLE_RATES = [8000, 11025, 12000, 16000, 22050, 24000, 32000, 44100, 48000] as const;

/**
 * Default bitrate: 48 kbit/s CBR mono. Legal at every rate (MPEG-1, -2 and -2.5 alike), ample for
 * speech, and an eighth of 24 kHz PCM16's 384 kbit/s.
 */
export const MP3_DEFAULT_BITRATE = 48_000;

/** Bitrates (kbit/s) of the header's bitrate index, layer III. */
const MPEG1_KBPS = [0, 32, 40, 48, 56, 64, 80, 96, 112, 128, 160, 192, 224, 256, 320];
const MPEG2_KBPS = [0, 8, 16, 24, 32, 40, 48, 56, 64, 80, 96, 112, 128, 144, 160];
const RATES_BY_VERSION: Record<number, readonly number[]> = {
  3: [44100, 48000, 32000], // MPEG-1
  2: [22050, 24000, 16000], // MPEG-2
  0: [11025, 12000, 8000], // MPEG-2.5
};

/**
 * Constant bitrates (kbit/s) the encoder really produces at `sampleRate`: the header's bitrates
 * for the rate's MPEG version, minus 56 and 144 which wasm-media-encoders does not accept, and
 * at MPEG-2.5 (8–12 kHz) capped at 64, above which LAME silently writes 64.
 */
export function mp3Bitrates(sampleRate: number): readonly number[] {
  if (sampleRate >= 32000) return [32, 40, 48, 64, 80, 96, 112, 128, 160, 192, 224, 256, 320];
  if (sampleRate >= 16000) return [8, 16, 24, 32, 40, 48, 64, 80, 96, 112, 128, 160];
  return [8, 16, 24, 32, 40, 48, 64];
}

/** The legal bitrate (bit/s) nearest to `bitrate` at `sampleRate`; ties go to the lower one. */
export function nearestMp3Bitrate(sampleRate: number, bitrate: number): number {
  const kbps = bitrate / 1000;
  let best = 0;
  for (const b of mp3Bitrates(sampleRate))
    if (best === 0 || Math.abs(b - kbps) < Math.abs(best - kbps)) best = b;
  return best * 1000;
}

/** What a layer III frame header says. */
export interface Mp3FrameHeader {
  /** 1, 2 or 2.5. */
  readonly version: 1 | 2 | 2.5;
  /** Bits per second. */
  readonly bitrate: number;
  readonly sampleRate: number;
  readonly padding: boolean;
  /** Whole frame in bytes, header included. */
  readonly frameLength: number;
  /** PCM samples per channel the frame decodes to: 1152 (MPEG-1) or 576. */
  readonly samplesPerFrame: number;
}

/**
 * Parses the 4-byte MPEG audio layer III frame header at `offset`; undefined if there is none
 * (no 11-bit sync, reserved version/rate, free-format or bad bitrate, other layers, or fewer
 * than 4 bytes left).
 */
export function parseMp3FrameHeader(bytes: Uint8Array, offset = 0): Mp3FrameHeader | undefined {
  if (offset + 4 > bytes.length) return undefined;
  const b1 = bytes[offset + 1]!;
  const b2 = bytes[offset + 2]!;
  if (bytes[offset] !== 0xff || (b1 & 0xe0) !== 0xe0) return undefined;
  const versionBits = (b1 >> 3) & 3;
  const layerBits = (b1 >> 1) & 3;
  const bitrateIndex = b2 >> 4;
  const rateIndex = (b2 >> 2) & 3;
  if (versionBits === 1 || layerBits !== 1 || bitrateIndex === 0 || bitrateIndex === 15 || rateIndex === 3) {
    return undefined;
  }
  const mpeg1 = versionBits === 3;
  const kbps = (mpeg1 ? MPEG1_KBPS : MPEG2_KBPS)[bitrateIndex]!;
  const sampleRate = RATES_BY_VERSION[versionBits]![rateIndex]!;
  const padding = (b2 & 0x02) !== 0;
  const samplesPerFrame = mpeg1 ? 1152 : 576;
  // samples/8 bytes per bit/s: 144 (MPEG-1) or 72 (MPEG-2/2.5) × bitrate / rate, plus one padding byte.
  const frameLength = Math.floor(((samplesPerFrame / 8) * kbps * 1000) / sampleRate) + (padding ? 1 : 0);
  return {
    version: mpeg1 ? 1 : versionBits === 2 ? 2 : 2.5,
    bitrate: kbps * 1000,
    sampleRate,
    padding,
    frameLength,
    samplesPerFrame,
  };
}

type LameEncoder = WasmMediaEncoder<'audio/mpeg'>;
type LameConfig = Parameters<LameEncoder['configure']>[0];

/** A compiled module, as `createEncoder` takes it. */
type LameModule = Parameters<typeof createEncoder>[1];
// Node has WebAssembly at run time; the project's libs (ES2023 + node, no DOM) do not declare it.
const wasm = (globalThis as unknown as { WebAssembly: { compile(bytes: Uint8Array): Promise<LameModule> } })
  .WebAssembly;

let compiled: Promise<LameModule> | undefined;

/**
 * The LAME wasm module, compiled once per thread: `createMp3Encoder()` would decode its base64 copy
 * and compile it for every encoder, on each stream's way to its first byte.
 */
function lameModule(): Promise<LameModule> {
  if (!compiled) {
    compiled = (async () => {
      const path = createRequire(import.meta.url).resolve('wasm-media-encoders/wasm/mp3');
      return wasm.compile(await readFile(path));
    })();
    // Let a failed load be retried by the next encoder.
    compiled.catch(() => {
      compiled = undefined;
    });
  }
  return compiled;
}

/**
 * Instances (16 MiB of wasm memory each) of finished streams, kept for the next ones: `configure`
 * resets LAME faster than a new instance starts (docs/experiments.md). Kept few, since each holds
 * its memory.
 */
const idle: LameEncoder[] = [];
const MAX_IDLE = 2;

async function acquireLame(): Promise<LameEncoder> {
  return idle.pop() ?? createEncoder('audio/mpeg', await lameModule());
}

function releaseLame(lame: LameEncoder): void {
  if (idle.length < MAX_IDLE) idle.push(lame);
}

/**
 * Streaming MP3 encoder for mono PCM16. Every non-empty chunk it returns is a run of whole
 * frames. Prefer {@link Mp3Encoder.create}, which reports setup errors at once; with `new`,
 * they surface on the first push.
 */
export class Mp3Encoder implements StreamEncoder {
  /** Input and output rate in Hz. */
  readonly sampleRate: number;
  /** The bitrate in use (bit/s): the requested one moved to the nearest legal value. */
  readonly bitrate: number;

  private readonly ready: Promise<LameEncoder>;
  private lame: LameEncoder | undefined;
  /** Encoded bytes after the last whole frame handed out. */
  private held: Uint8Array = new Uint8Array(0);
  private closed = false;

  /** Creates an encoder and waits for LAME to be ready. */
  static async create(options: EncoderOptions): Promise<Mp3Encoder> {
    const encoder = new Mp3Encoder(options);
    await encoder.ready;
    return encoder;
  }

  /**
   * @param options.sampleRate one of {@link MP3_SAMPLE_RATES}
   * @param options.bitrate bits per second, default {@link MP3_DEFAULT_BITRATE}; moved to the
   *   nearest bitrate legal at this rate (see {@link mp3Bitrates}): e.g. 128 kbit/s at 8 kHz gives
   *   64, 16 kbit/s at 48 kHz gives 32.
   */
  constructor(options: EncoderOptions) {
    const { sampleRate, bitrate = MP3_DEFAULT_BITRATE } = options;
    if (!(MP3_SAMPLE_RATES as readonly number[]).includes(sampleRate)) {
      throw new RangeError(`MP3 encodes at ${MP3_SAMPLE_RATES.join(', ')} Hz, not ${sampleRate}`);
    }
    if (!Number.isFinite(bitrate) || bitrate <= 0) throw new RangeError(`invalid MP3 bitrate ${bitrate}`);
    this.sampleRate = sampleRate;
    this.bitrate = nearestMp3Bitrate(sampleRate, bitrate);
    this.ready = this.init();
    // Reported by push/end (or create); not an unhandled rejection meanwhile.
    this.ready.catch(() => undefined);
  }

  private async init(): Promise<LameEncoder> {
    const lame = await acquireLame();
    // outputSampleRate must be set: left at 0, LAME resamples to suit the bitrate (48 kbit/s at
    // 44.1 or 48 kHz comes out at 32 kHz).
    lame.configure({
      channels: 1,
      sampleRate: this.sampleRate,
      outputSampleRate: this.sampleRate,
      bitrate: this.bitrate / 1000,
    } as LameConfig);
    if (this.closed) {
      // Aborted while starting.
      releaseLame(lame);
      throw new Error('MP3 encoder aborted');
    }
    this.lame = lame;
    return lame;
  }

  async push(pcm: Int16Array): Promise<Uint8Array> {
    const lame = await this.live();
    if (pcm.length === 0) return new Uint8Array(0);
    const samples = new Float32Array(pcm.length);
    for (let i = 0; i < pcm.length; i++) samples[i] = pcm[i]! / 32768;
    // The returned view is LAME's output buffer, reused by the next call: takeFrames copies.
    return this.takeFrames(lame.encode([samples]));
  }

  async end(): Promise<Uint8Array> {
    const lame = await this.live();
    const out = this.takeFrames(lame.finalize());
    // LAME's flush ends on a frame boundary; anything left would be a partial frame (never seen)
    // and is dropped rather than sent as a broken frame.
    this.abort();
    return out;
  }

  /** Ends use of the LAME instance (kept for a later stream, or garbage-collected). */
  abort(): void {
    this.closed = true;
    if (this.lame) releaseLame(this.lame);
    this.lame = undefined;
    this.held = new Uint8Array(0);
  }

  private async live(): Promise<LameEncoder> {
    const lame = await this.ready;
    if (this.closed || !this.lame) throw new Error('MP3 encoder already ended or aborted');
    return lame;
  }

  /** Appends new output and returns the whole frames at the front (a copy), keeping the rest. */
  private takeFrames(fresh: Uint8Array): Uint8Array {
    let data: Uint8Array;
    if (this.held.length === 0) data = fresh;
    else {
      data = new Uint8Array(this.held.length + fresh.length);
      data.set(this.held);
      data.set(fresh, this.held.length);
    }
    let end = 0;
    for (;;) {
      const header = parseMp3FrameHeader(data, end);
      if (!header) {
        // Either too few bytes left for a header, or lost sync (LAME never does this).
        if (data.length - end >= 4) throw new Error(`MP3 encoder output lost frame sync at byte ${end}`);
        break;
      }
      if (end + header.frameLength > data.length) break;
      end += header.frameLength;
    }
    this.held = data.slice(end);
    return data.slice(0, end);
  }
}
