/**
 * One request's synthesis as the routes see it: the encoded audio, in order, and the run's figures
 * (time to first audio, seconds of audio, model time) for the completion frame and the log line.
 * Every buffer is whole units of the format (samples, codec frames, Ogg pages), the container
 * header in the first one. Failures are TtsErrors, raised where they happened (the pools); a
 * cancelled run ends with an AbortError.
 */
import { concatBytes } from '../../protocol/bytes.ts';
import { ttsError } from '../../protocol/errors.ts';
import type { AudioFormat } from '../../protocol/formats.ts';
import type { StreamEncoder } from '../audio/encoder.ts';
import { wavFile } from '../audio/wav.ts';
import { SAMPLE_RATE } from '../kokoro/constants.ts';
import type { WordTiming } from '../text/alignment.ts';
import type { PhonemeTiming } from '../text/phoneme-timing.ts';

/** Mono PCM16 at 24 kHz from the model, with what it cost. */
export interface AudioChunk {
  readonly samples: Int16Array;
  /** Index of the sentence this audio belongs to. */
  readonly sentence: number;
  readonly phonemeCount: number;
  /** The model's own run time for this chunk. */
  readonly inferenceMs: number;
  /** Normalization and phonemization time of the sentence, on its first chunk. */
  readonly frontEndMs?: number;
  /** On the sentence's first chunk: how long it waited for an inference worker. */
  readonly queueMs?: number;
  /** With timestamps: the words that end in this chunk, timed from the chunk's start. */
  readonly words?: readonly WordTiming[];
  /** With phoneme timestamps: the chunk's sounds, timed from the chunk's start. */
  readonly phonemes?: readonly PhonemeTiming[];
  /** A named point (SSML `<mark>`): a chunk of no samples, at the audio time where it stands. */
  readonly mark?: string;
}

/** What the audio is encoded as. */
export interface OutputFormat {
  readonly format: AudioFormat;
  readonly sampleRate: number;
  /**
   * One complete file at the end (a WAV with its real sizes) instead of a stream, held until then:
   * past `maxBytes` the run ends with an `audio_too_long` TtsError.
   */
  readonly complete?: { readonly maxBytes: number };
  /**
   * Called with each chunk's words (timestamps requested), on the request's audio clock, before
   * any byte of that chunk's audio is handed over.
   */
  readonly onWords?: (words: readonly WordTiming[]) => void;
  /**
   * Called with each chunk's sounds (phoneme timestamps requested), on the request's audio clock,
   * after its words and before any byte of its audio is handed over.
   */
  readonly onPhonemes?: (phonemes: readonly PhonemeTiming[]) => void;
  /** Called at each mark, with its time on the request's audio clock, before the audio after it. */
  readonly onMark?: (name: string, timeS: number) => void;
}

/** A run's figures, in milliseconds and seconds of audio. */
export interface RunFigures {
  readonly audioS: number;
  readonly elapsedMs: number;
  /** From `startedAt` to the first audio handed over (and taken) by the consumer. */
  readonly ttfaMs: number;
  readonly inferenceMs: number;
  /** Wall time per second of audio. */
  readonly rtf: number;
  readonly chunks: number;
  readonly firstInferenceMs: number;
  readonly firstFrontEndMs: number;
  /** How long the first sentence waited for an inference worker: the queue's share of `ttfaMs`. */
  readonly firstQueueMs: number;
}

/** Encoded audio in order; `figures()` is complete once the iteration has ended. */
export interface SynthesisRun extends AsyncIterable<Uint8Array> {
  figures(): RunFigures;
  /**
   * Samples (24 kHz) encoded so far: once a buffer has been taken, all the audio it holds (for PCM
   * and μ-law exactly; a codec may still hold part of its last frame).
   */
  samplesSoFar(): number;
}

const round = (x: number, digits: number) => Math.round(x * 10 ** digits) / 10 ** digits;

/**
 * Encodes `chunks` with the encoder `open` gives for the output (raw PCM for a complete WAV, whose
 * header needs the final size), counting the figures as it goes. Empty encoder outputs (a codec
 * still filling a frame) are skipped; a text that yields no audio still gets a valid, empty file
 * where the format has a header.
 */
export function runSynthesis(
  chunks: AsyncIterable<AudioChunk>,
  open: (format: AudioFormat, sampleRate: number) => StreamEncoder,
  output: OutputFormat,
  startedAt: number,
): SynthesisRun {
  let samples = 0;
  let count = 0;
  let inferenceMs = 0;
  let firstAudioMs: number | undefined;
  let first: AudioChunk | undefined;
  const wholeWav = output.complete !== undefined && output.format === 'wav';

  async function* encoded(): AsyncGenerator<Uint8Array> {
    const encoder = open(wholeWav ? 'pcm' : output.format, output.sampleRate);
    let ended = false;
    try {
      for await (const chunk of chunks) {
        if (chunk.mark !== undefined) {
          output.onMark?.(chunk.mark, round(samples / SAMPLE_RATE, 3));
          continue;
        }
        // Both on the request's clock: offset by the audio before this chunk.
        const offset = samples / SAMPLE_RATE;
        const onClock = <T extends { start_s: number; end_s: number }>(t: T): T => ({
          ...t,
          start_s: round(Math.max(0, offset + t.start_s), 3),
          end_s: round(Math.max(0, offset + t.end_s), 3),
        });
        if (chunk.words && output.onWords) output.onWords(chunk.words.map(onClock));
        if (chunk.phonemes && output.onPhonemes) output.onPhonemes(chunk.phonemes.map(onClock));
        samples += chunk.samples.length; // before the samples are handed (transferred) to the encoder
        count++;
        inferenceMs += chunk.inferenceMs;
        first ??= chunk;
        const bytes = await encoder.push(chunk.samples);
        if (bytes.length > 0) yield bytes;
      }
      ended = true;
      const tail = await encoder.end();
      if (tail.length > 0) yield tail;
    } finally {
      if (!ended) encoder.abort();
    }
  }

  async function* delivered(): AsyncGenerator<Uint8Array> {
    if (output.complete) {
      const { maxBytes } = output.complete;
      const parts: Uint8Array[] = [];
      let held = 0;
      for await (const bytes of encoded()) {
        held += bytes.length;
        if (held > maxBytes) {
          throw ttsError(
            'TTS_ERR_AUDIO_TOO_LONG',
            `One complete file of this audio would pass ${maxBytes} bytes, the most a reply held until complete may hold; ask for a stream instead`,
          );
        }
        parts.push(bytes);
      }
      const data = concatBytes(parts);
      yield wholeWav ? wavFile(data, output.sampleRate) : data;
      firstAudioMs ??= performance.now() - startedAt;
      return;
    }
    for await (const bytes of encoded()) {
      yield bytes;
      // Set after the consumer has taken the bytes (and sent them): "first audio left".
      firstAudioMs ??= performance.now() - startedAt;
    }
  }

  return {
    [Symbol.asyncIterator]: () => delivered(),
    samplesSoFar: () => samples,
    figures(): RunFigures {
      const elapsedMs = performance.now() - startedAt;
      const audioS = samples / SAMPLE_RATE;
      return {
        audioS: round(audioS, 3),
        elapsedMs: round(elapsedMs, 1),
        ttfaMs: round(firstAudioMs ?? elapsedMs, 1),
        inferenceMs: round(inferenceMs, 1),
        rtf: audioS > 0 ? round(elapsedMs / 1000 / audioS, 3) : 0,
        chunks: count,
        firstInferenceMs: round(first?.inferenceMs ?? 0, 2),
        firstFrontEndMs: round(first?.frontEndMs ?? 0, 2),
        firstQueueMs: round(first?.queueMs ?? 0, 2),
      };
    },
  };
}
