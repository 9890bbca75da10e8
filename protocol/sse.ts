/** The Server-Sent Events of POST /invocations with `transport: "sse"`. */
import type { ErrorCode } from './errors.ts';
import type { AudioFormat } from './formats.ts';
import type { MarkFrame, PhonemeTimestampsFrame, WordTimestampsFrame } from './frames.ts';

export interface SseEventData {
  /** Sent before inference begins. */
  readonly audio_stream_start: {
    readonly request_id: string;
    readonly format: AudioFormat;
    readonly voice: string;
    readonly sample_rate: number;
  };
  /** A chunk's words (requests with `timestamps`), before that chunk's audio; as the WebSocket frame. */
  readonly word_timestamps: Omit<WordTimestampsFrame, 'type'>;
  /** A chunk's sounds (requests with `phoneme_timestamps`), after its words; as the WebSocket frame. */
  readonly phoneme_timestamps: Omit<PhonemeTimestampsFrame, 'type'>;
  /** An SSML `<mark>`, before the audio after it; as the WebSocket frame. */
  readonly mark: Omit<MarkFrame, 'type'>;
  /** One piece of encoded audio (whole frames), base64. */
  readonly audio_chunk: { readonly request_id: string; readonly seq: number; readonly data: string };
  readonly audio_stream_end: {
    readonly request_id: string;
    readonly total_chunks: number;
    /** Seconds of audio. */
    readonly duration_s: number;
    /** Markup that was dropped (its text spoken), one sentence per kind; absent when none. */
    readonly warnings?: readonly string[];
  };
  /** A failure after the stream began. */
  readonly error: { readonly request_id: string; readonly code: ErrorCode; readonly message: string };
}

export type SseEventName = keyof SseEventData;

/** One event on the wire: `event: NAME`, one `data:` line of JSON, a blank line. */
export function sseEvent(name: string, data: unknown): string {
  return `event: ${name}\ndata: ${JSON.stringify(data)}\n\n`;
}

/** An event of POST /invocations's stream. */
export function formatSseEvent<N extends SseEventName>(name: N, data: SseEventData[N]): string {
  return sseEvent(name, data);
}
