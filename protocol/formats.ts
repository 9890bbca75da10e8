/**
 * The audio formats a request may ask for: the sample rates each takes, its default rate, and the
 * content type of its bytes. The encoders themselves are the server's (model/audio/).
 */

/** Kokoro's only output rate; other rates are resampled. */
export const NATIVE_SAMPLE_RATE = 24_000;

export const SAMPLE_RATES = [8000, 16000, 22050, 24000, 44100, 48000] as const;

/** Raw PCM's rates: the common ones, and 32 kHz, which ElevenLabs offers (`pcm_32000`). */
export const PCM_SAMPLE_RATES = [8000, 16000, 22050, 24000, 32000, 44100, 48000] as const;

export interface FormatInfo {
  /** Output sample rates accepted for this format. */
  readonly rates: readonly number[];
  readonly defaultRate: number;
  contentType(rate: number): string;
  /** Needs the ffmpeg binary on the server (offered only where it runs). */
  readonly needsFfmpeg?: boolean;
}

export const FORMATS = {
  pcm: {
    rates: PCM_SAMPLE_RATES,
    defaultRate: NATIVE_SAMPLE_RATE,
    contentType: (rate: number) => `audio/pcm;rate=${rate};encoding=s16le;channels=1`,
  },
  wav: { rates: SAMPLE_RATES, defaultRate: NATIVE_SAMPLE_RATE, contentType: () => 'audio/wav' },
  mp3: { rates: SAMPLE_RATES, defaultRate: NATIVE_SAMPLE_RATE, contentType: () => 'audio/mpeg' },
  opus: {
    rates: [8000, 16000, 24000, 48000],
    defaultRate: NATIVE_SAMPLE_RATE,
    contentType: () => 'audio/ogg; codecs=opus',
  },
  aac: {
    rates: SAMPLE_RATES,
    defaultRate: NATIVE_SAMPLE_RATE,
    contentType: () => 'audio/aac',
    needsFfmpeg: true,
  },
  flac: { rates: SAMPLE_RATES, defaultRate: NATIVE_SAMPLE_RATE, contentType: () => 'audio/flac' },
  mulaw: { rates: [8000], defaultRate: 8000, contentType: (rate: number) => `audio/basic;rate=${rate}` },
  alaw: {
    rates: [8000, 16000],
    defaultRate: 8000,
    contentType: (rate: number) => `audio/x-alaw-basic;rate=${rate}`,
  },
} as const satisfies Record<string, FormatInfo>;

export type AudioFormat = keyof typeof FORMATS;

/**
 * Bytes of one sample in a format whose bytes count its samples exactly (PCM, G.711); 0 for a
 * codec, whose bytes do not.
 */
export function bytesPerSample(format: AudioFormat): number {
  return format === 'pcm' ? 2 : format === 'mulaw' || format === 'alaw' ? 1 : 0;
}

export function isAudioFormat(value: string): value is AudioFormat {
  return Object.hasOwn(FORMATS, value);
}
