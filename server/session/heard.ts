/**
 * What a WebSocket run in flight has sent, counted as it goes, and what a cut of it reports as
 * heard: the samples that left the server and the words they cover whole.
 */
import type { WordTiming } from '../../model/engine.ts';
import { NATIVE_SAMPLE_RATE } from '../../protocol/formats.ts';
import type { Heard } from '../../protocol/frames.ts';
import type { Utterance } from './utterance.ts';

/** What a run in flight has sent, for a cancel's answer. */
export interface RunInFlight {
  readonly controller: AbortController;
  readonly requestId: string;
  readonly utterance?: Utterance;
  readonly sampleRate: number;
  /** Bytes of one sample, for formats whose bytes count samples exactly (PCM, μ-law, A-law); else 0. */
  readonly sampleBytes: number;
  /** Samples at 24 kHz whose audio has been handed to the socket. */
  sentSamples: number;
  /** Output samples handed to the socket, counted from the bytes (PCM, μ-law, A-law). */
  sentOutput: number;
  /** Every word timed so far, on the request's clock. */
  readonly words: WordTiming[] | undefined;
}

/**
 * What a cut run had sent: its samples at the output rate (counted from the bytes where they
 * count samples, else from the model's samples encoded), and the words they cover whole.
 */
export function heardOf(run: RunInFlight): Heard {
  const { sentSamples, sampleRate } = run;
  const samples =
    run.sampleBytes > 0 ? run.sentOutput : Math.round((sentSamples * sampleRate) / NATIVE_SAMPLE_RATE);
  const seconds = samples / sampleRate;
  const words = run.words?.filter((w) => w.end_s <= seconds + 1e-6);
  return {
    request_id: run.requestId,
    samples,
    sample_rate: sampleRate,
    ms: Math.round(seconds * 1e4) / 10,
    ...(words ? { words } : {}),
  };
}
