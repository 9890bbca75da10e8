/**
 * One request's synthesis as the routes see it: encoded audio buffers in order, plus the figures
 * (time to first audio, audio seconds, real-time factor) that go into the completion frame and
 * the log line. Shared by POST /invocations and the WebSocket session.
 */
import type { FastifyBaseLogger } from 'fastify';
import type { Metrics } from './metrics.ts';
import type { Engine } from '../model/engine.ts';
import { SAMPLE_RATE } from '../model/kokoro/constants.ts';
import { EncoderError } from '../model/audio/encoder-pool.ts';
import { JobError } from '../model/inference/worker-pool.ts';
import { TtsError, ttsError } from './errors.ts';
import type { SynthesisOptions } from './request.ts';

/** One request's figures, in milliseconds and seconds of audio. */
export interface RunSummary {
  readonly audioS: number;
  readonly elapsedMs: number;
  readonly ttfaMs: number;
  readonly inferenceMs: number;
  readonly rtf: number;
  readonly chunks: number;
  readonly firstInferenceMs: number;
  readonly firstFrontEndMs: number;
}

export class RunStats {
  /** When the request arrived (performance.now()); time to first audio counts from here. */
  readonly startedAt: number;
  samples = 0;
  chunks = 0;
  /** Milliseconds from the start of synthesis to the first encoded audio. */
  firstAudioMs: number | undefined;
  /** The model's own run time, summed over chunks. */
  inferenceMs = 0;
  /** The model's run time for the first chunk alone. */
  firstInferenceMs: number | undefined;
  /** Text front end (normalize + phonemize) time of the first sentence. */
  firstFrontEndMs: number | undefined;

  constructor(startedAt: number = performance.now()) {
    this.startedAt = startedAt;
  }

  get audioSeconds(): number {
    return this.samples / SAMPLE_RATE;
  }

  get elapsedMs(): number {
    return performance.now() - this.startedAt;
  }

  /** Fields for the log line and the completion frame. */
  summary(): RunSummary {
    const elapsedMs = this.elapsedMs;
    return {
      audioS: round(this.audioSeconds, 3),
      elapsedMs: round(elapsedMs, 1),
      ttfaMs: round(this.firstAudioMs ?? elapsedMs, 1),
      inferenceMs: round(this.inferenceMs, 1),
      rtf: this.audioSeconds > 0 ? round(elapsedMs / 1000 / this.audioSeconds, 3) : 0,
      chunks: this.chunks,
      firstInferenceMs: round(this.firstInferenceMs ?? 0, 2),
      firstFrontEndMs: round(this.firstFrontEndMs ?? 0, 2),
    };
  }
}

function round(x: number, digits: number): number {
  const f = 10 ** digits;
  return Math.round(x * f) / f;
}

/** True for the cancellation of work whose client went away: not an error to report. */
export function isCancelled(err: unknown): boolean {
  return err instanceof JobError && err.kind === 'cancelled';
}

/**
 * Logs a request that got an error: internal failures at `error` with their cause, load shedding
 * (`busy`, `shutting_down`, `not_ready`) and bad input at `info`, without stacks.
 */
export function logRefusal(
  log: FastifyBaseLogger,
  metrics: Metrics,
  err: unknown,
  status: number,
  code: string,
  requestId: string | undefined,
): void {
  metrics.errors.inc({ code });
  if (status >= 500 && status !== 503) log.error({ err, requestId }, 'request failed');
  else log.info({ code, requestId }, 'request refused');
}

/** Maps engine failures to client-facing errors; anything unknown stays internal (logged, hidden). */
export function toTtsError(err: unknown): unknown {
  if (err instanceof TtsError) return err;
  if (err instanceof EncoderError) {
    return ttsError('TTS_ERR_INTERNAL', 'Encoding the audio failed; the error has been logged', err);
  }
  if (err instanceof JobError) {
    switch (err.kind) {
      case 'busy':
        return ttsError('TTS_ERR_BUSY', `The server is at capacity: ${err.message}; retry shortly`, err);
      case 'closed':
        return ttsError(
          'TTS_ERR_SHUTTING_DOWN',
          'The server is shutting down and takes no new requests',
          err,
        );
      case 'inference':
        return ttsError(
          'TTS_ERR_INFERENCE',
          'Synthesis failed inside the model; the error has been logged',
          err,
        );
      case 'cancelled':
        return err;
    }
  }
  return err;
}

/**
 * Streams a request's encoded audio. Every buffer yielded is whole units of the format (samples,
 * codec frames, Ogg pages) and the container header, if any, is in the first one; empty encoder
 * outputs (a codec still filling a frame) are skipped. A text that yields no audio still gets a
 * valid, empty file where the format has a header.
 */
export async function* encodedAudio(
  engine: Engine,
  options: SynthesisOptions,
  stats: RunStats,
  signal: AbortSignal,
): AsyncGenerator<Uint8Array> {
  const encoder = engine.openEncoder(options.format, options.sampleRate);
  let ended = false;
  try {
    for await (const chunk of engine.stream(
      { text: options.text, voice: options.voice, speed: options.speed },
      signal,
    )) {
      stats.samples += chunk.samples.length; // before the samples are handed (transferred) to the encoder
      stats.chunks++;
      stats.inferenceMs += chunk.inferenceMs;
      const first = stats.firstInferenceMs === undefined;
      if (first) {
        stats.firstInferenceMs = chunk.inferenceMs;
        stats.firstFrontEndMs = chunk.frontEndMs;
      }
      const bytes = await encoder.push(chunk.samples);
      if (bytes.length === 0) continue;
      yield bytes;
      // Set after the consumer has taken the bytes (and sent them): "first audio left".
      stats.firstAudioMs ??= performance.now() - stats.startedAt;
    }
    ended = true;
    const tail = await encoder.end();
    if (tail.length > 0) {
      yield tail;
      stats.firstAudioMs ??= performance.now() - stats.startedAt;
    }
  } catch (err) {
    throw toTtsError(err);
  } finally {
    if (!ended) encoder.abort();
  }
}
