/**
 * The audio formats this server can produce: which sample rates each takes, its content type,
 * and the factory that builds a request's encoder (resampler + codec).
 */
import { SAMPLE_RATE } from '../kokoro/constants.ts';
import { AacEncoder, type FfmpegPool } from './aac.ts';
import { FlacEncoder } from './flac.ts';
import { Mp3Encoder } from './mp3.ts';
import { MulawEncoder } from './mulaw.ts';
import { OpusEncoder } from './opus.ts';
import { Resampler } from './resample.ts';
import type { StreamEncoder } from './encoder.ts';
import { PcmEncoder, WavEncoder } from './wav.ts';

export const SAMPLE_RATES = [8000, 16000, 22050, 24000, 44100, 48000] as const;

export interface FormatInfo {
  /** Output sample rates accepted for this format. */
  readonly rates: readonly number[];
  readonly defaultRate: number;
  contentType(rate: number): string;
  /** Needs the ffmpeg binary (checked at startup; the format is offered only if it runs). */
  readonly needsFfmpeg?: boolean;
}

export const FORMATS = {
  pcm: {
    rates: SAMPLE_RATES,
    defaultRate: SAMPLE_RATE,
    contentType: (rate: number) => `audio/pcm;rate=${rate};encoding=s16le;channels=1`,
  },
  wav: { rates: SAMPLE_RATES, defaultRate: SAMPLE_RATE, contentType: () => 'audio/wav' },
  mp3: { rates: SAMPLE_RATES, defaultRate: SAMPLE_RATE, contentType: () => 'audio/mpeg' },
  opus: {
    rates: [8000, 16000, 24000, 48000],
    defaultRate: SAMPLE_RATE,
    contentType: () => 'audio/ogg; codecs=opus',
  },
  aac: { rates: SAMPLE_RATES, defaultRate: SAMPLE_RATE, contentType: () => 'audio/aac', needsFfmpeg: true },
  flac: { rates: SAMPLE_RATES, defaultRate: SAMPLE_RATE, contentType: () => 'audio/flac' },
  mulaw: { rates: [8000], defaultRate: 8000, contentType: (rate: number) => `audio/basic;rate=${rate}` },
} as const satisfies Record<string, FormatInfo>;

export type AudioFormat = keyof typeof FORMATS;

export function isAudioFormat(value: string): value is AudioFormat {
  return Object.hasOwn(FORMATS, value);
}

/** Formats that need no encoding work beyond a header: served on the main thread at 24 kHz. */
export function isPassthrough(format: AudioFormat, rate: number): boolean {
  return (format === 'pcm' || format === 'wav') && rate === SAMPLE_RATE;
}

export interface EncoderSettings {
  readonly format: AudioFormat;
  readonly sampleRate: number;
  /** For AAC: pre-spawned ffmpeg processes (their binary is the pool's). */
  readonly aacPool?: FfmpegPool;
}

/** Feeds a codec through a resampler when the output rate differs from the model's. */
class ResamplingEncoder implements StreamEncoder {
  constructor(
    private readonly resampler: Resampler,
    private readonly inner: StreamEncoder,
  ) {}

  push(pcm: Int16Array): Promise<Uint8Array> {
    return this.inner.push(this.resampler.push(pcm));
  }

  async end(): Promise<Uint8Array> {
    const tail = await this.inner.push(this.resampler.end());
    const last = await this.inner.end();
    return concat(tail, last);
  }

  abort(): void {
    this.inner.abort();
  }
}

export function concat(a: Uint8Array, b: Uint8Array): Uint8Array {
  if (a.length === 0) return b;
  if (b.length === 0) return a;
  const out = new Uint8Array(a.length + b.length);
  out.set(a, 0);
  out.set(b, a.length);
  return out;
}

/** Builds a request's encoder. Input is always PCM16 mono at 24 kHz. */
export async function createStreamEncoder(settings: EncoderSettings): Promise<StreamEncoder> {
  const rate = settings.sampleRate;
  let codec: StreamEncoder;
  switch (settings.format) {
    case 'pcm':
      codec = new PcmEncoder();
      break;
    case 'wav':
      codec = new WavEncoder(rate);
      break;
    case 'mulaw':
      codec = new MulawEncoder();
      break;
    case 'flac':
      codec = new FlacEncoder({ sampleRate: rate });
      break;
    case 'opus':
      codec = new OpusEncoder({ sampleRate: rate });
      break;
    case 'mp3':
      codec = await Mp3Encoder.create({ sampleRate: rate });
      break;
    case 'aac':
      codec = await AacEncoder.create({
        sampleRate: rate,
        ...(settings.aacPool ? { pool: settings.aacPool } : {}),
      });
      break;
  }
  return rate === SAMPLE_RATE ? codec : new ResamplingEncoder(new Resampler(SAMPLE_RATE, rate), codec);
}
