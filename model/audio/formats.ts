/**
 * The factory that builds a request's encoder (resampler + codec) for a format of the wire
 * contract (protocol/formats.ts says which rates each format takes and its content type).
 */
import { concatBytes } from '../../protocol/bytes.ts';
import type { AudioFormat } from '../../protocol/formats.ts';
import { SAMPLE_RATE } from '../kokoro/constants.ts';
import { AacEncoder, type FfmpegPool } from './aac.ts';
import { AlawEncoder } from './alaw.ts';
import { FlacEncoder } from './flac.ts';
import { Mp3Encoder } from './mp3.ts';
import { MulawEncoder } from './mulaw.ts';
import { OpusEncoder } from './opus.ts';
import { Resampler } from './resample.ts';
import type { StreamEncoder } from './encoder.ts';
import { PcmEncoder, WavEncoder } from './wav.ts';

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
    return concatBytes([tail, last]);
  }

  abort(): void {
    this.inner.abort();
  }
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
    case 'alaw':
      codec = new AlawEncoder();
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
