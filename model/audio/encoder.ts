/**
 * The shape every audio encoder of this server has. An encoder turns one request's PCM16 mono
 * (already at the output sample rate) into its format, chunk by chunk, and only ever returns whole
 * units: whole samples, whole MP3/ADTS/FLAC frames, whole Ogg pages. The container header (WAV
 * header, FLAC stream header, Ogg Opus header pages) is part of the first non-empty output.
 * Concatenating every output gives one valid file.
 */
export interface StreamEncoder {
  /** Encodes more samples; returns the whole units completed so far (possibly empty). */
  push(pcm: Int16Array): Promise<Uint8Array>;
  /** Ends the stream: returns the remaining units and any trailer. Call once. */
  end(): Promise<Uint8Array>;
  /** Releases resources without finishing (client gone). Safe to call more than once. */
  abort(): void;
}

/** Options every encoder factory takes. */
export interface EncoderOptions {
  /** Sample rate of the PCM given to `push`, which is also the output rate. */
  readonly sampleRate: number;
  /** Target bitrate in bits per second, for lossy codecs. */
  readonly bitrate?: number;
}
