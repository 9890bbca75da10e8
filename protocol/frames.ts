/**
 * What the server sends on the WebSocket route besides audio, and the rule that tells the two
 * apart: a payload that parses, as a whole, as one JSON object is control; anything else is audio.
 * Raw PCM may begin with the byte `{`, so a look at the first byte is not enough.
 */
import type { ErrorCode } from './errors.ts';

/** Before a request's first audio frame (not a timing signal for first audio). */
export interface SynthesisStartFrame {
  readonly type: 'synthesis_start';
  readonly request_id: string;
}

/** After a request's last audio frame, with its figures (more may be added). */
export interface SynthesisCompleteFrame {
  readonly type: 'synthesis_complete';
  readonly request_id: string;
  /** Seconds of audio synthesized. */
  readonly total_duration_s: number;
  /** Server time from the message's arrival to completion. */
  readonly elapsed_s: number;
  /** Server time from the message's arrival to its first audio frame leaving. */
  readonly time_to_first_audio_s: number;
  /** The model's own run time. */
  readonly inference_s: number;
  readonly first_chunk_inference_s: number;
  /** Normalization and phonemization of the first sentence. */
  readonly first_chunk_frontend_s: number;
  /** Inferences run. */
  readonly chunks: number;
  /** Markup that was dropped (its text spoken), one sentence per kind; absent when none. */
  readonly warnings?: readonly string[];
}

/** A request that failed, or a message that could not be used; the session stays open. */
export interface ErrorFrame {
  readonly type: 'error';
  readonly code: ErrorCode;
  readonly message: string;
  /** Absent when the message could not be parsed far enough to know it. */
  readonly request_id?: string;
}

/**
 * The answer to a cancel, after the last audio byte of what it cut: no audio of a request named
 * in `cancelled` follows it.
 */
export interface SynthesisCancelledFrame {
  readonly type: 'synthesis_cancelled';
  /** The cancel's own `request_id`, else the request in flight that it cut; absent when neither. */
  readonly request_id?: string;
  /** Requests cut or dropped: the one in flight first, then the queued ones in order. */
  readonly cancelled: readonly string[];
  /** What the listener received of the request in flight that it cut; absent when none was. */
  readonly heard?: Heard;
  /** In a session with contexts: the context it was for; absent when it named none (all). */
  readonly context_id?: string;
}

/** A word of a request's text and when it is spoken, on the request's audio clock. */
export interface TimedWord {
  readonly word: string;
  readonly start_s: number;
  readonly end_s: number;
  /** Where the word is in the request's text: UTF-16 offsets, end exclusive. */
  readonly char_start?: number;
  readonly char_end?: number;
}

/**
 * What the listener received of a request a cancel cut: the audio that left the server, and the
 * words of its text that this audio fully covers, so an agent can cut its transcript to what was
 * heard. For PCM and μ-law the samples are exact; a codec's last frame may still hold a few ms.
 */
export interface Heard {
  readonly request_id: string;
  /** Samples at the request's output rate. */
  readonly samples: number;
  readonly sample_rate: number;
  readonly ms: number;
  /** Words whose audio was sent whole, in text order; absent when the model cannot time words. */
  readonly words?: readonly TimedWord[];
}

/** A session with contexts: a context has ended (`close_context`), after its last audio. */
export interface ContextClosedFrame {
  readonly type: 'context_closed';
  readonly context_id: string;
  /** When it was dropped: the requests cut or dropped, as a cancel's. */
  readonly cancelled?: readonly string[];
  readonly heard?: Heard;
}

/**
 * The 15 visemes of Oculus Lipsync and OpenXR's `XrFaceTrackingVisemeMETA`, in the order of their
 * ids (0 to 14); docs/protocol.md maps Kokoro's phoneme symbols to them.
 */
export const VISEMES = [
  'sil',
  'PP',
  'FF',
  'TH',
  'DD',
  'kk',
  'CH',
  'SS',
  'nn',
  'RR',
  'aa',
  'E',
  'ih',
  'oh',
  'ou',
] as const;

export type Viseme = (typeof VISEMES)[number];

/** A sound of a request's speech and when it is spoken, on the request's audio clock. */
export interface TimedPhoneme {
  /** Kokoro's symbol, with the stress and length marks that belong to it (`ˈɛ`, `ɑː`); `" "` between words. */
  readonly phoneme: string;
  readonly viseme: Viseme;
  readonly start_s: number;
  readonly duration_s: number;
}

/** A chunk's sounds, before that chunk's audio (requests with `"phoneme_timestamps": true`). */
export interface PhonemeTimestampsFrame {
  readonly type: 'phoneme_timestamps';
  readonly request_id: string;
  /** Every sound and pause of the chunk, in order, from its first phoneme to its last. */
  readonly phonemes: readonly TimedPhoneme[];
}

/** Timed sounds (start and end, in seconds) as the wire carries them: start and duration. */
export function timedPhonemes(
  phonemes: readonly { phoneme: string; viseme: Viseme; start_s: number; end_s: number }[],
): TimedPhoneme[] {
  return phonemes.map(({ phoneme, viseme, start_s, end_s }) => ({
    phoneme,
    viseme,
    start_s,
    duration_s: Math.round((end_s - start_s) * 1000) / 1000,
  }));
}

/** A chunk's words, before that chunk's audio (requests with `"timestamps": true`). */
export interface WordTimestampsFrame {
  readonly type: 'word_timestamps';
  readonly request_id: string;
  /**
   * The original text's words (split at white space) that end in this chunk, in text order, on
   * the request's audio clock: seconds from its first sample, continuing across chunks.
   */
  readonly words: readonly TimedWord[];
}

/** An SSML `<mark>`, before the audio after it: its time on the request's audio clock. */
export interface MarkFrame {
  readonly type: 'mark';
  readonly request_id: string;
  readonly name: string;
  /** Seconds from the request's first sample. */
  readonly time_s: number;
}

export type ControlFrame =
  | WordTimestampsFrame
  | PhonemeTimestampsFrame
  | MarkFrame
  | SynthesisStartFrame
  | SynthesisCompleteFrame
  | SynthesisCancelledFrame
  | ContextClosedFrame
  | ErrorFrame;

// Fatal, so that bytes that are not UTF-8 (most audio) are audio rather than mangled text.
const utf8 = new TextDecoder('utf-8', { fatal: true });

const OPEN_BRACE = 0x7b;
const CLOSE_BRACE = 0x7d;
/** JSON's white space: space, tab, line feed, carriage return. */
const isJsonSpace = (byte: number): boolean =>
  byte === 0x20 || byte === 0x09 || byte === 0x0a || byte === 0x0d;

/**
 * Decodes a control frame: the JSON object when the whole payload (bytes as UTF-8, or text) parses
 * as one JSON object, otherwise `null` (audio). Arrays, numbers, strings, `null`, invalid UTF-8 and
 * a JSON object followed by more bytes are all `null`.
 */
export function decodeControlFrame(payload: Uint8Array | string): Record<string, unknown> | null {
  let text: string;
  if (typeof payload === 'string') {
    text = payload;
  } else {
    // Cheap rejection of almost every audio frame before decoding: first and last non-space bytes.
    let first = 0;
    let last = payload.length - 1;
    while (first <= last && isJsonSpace(payload[first]!)) first++;
    while (last > first && isJsonSpace(payload[last]!)) last--;
    if (payload[first] !== OPEN_BRACE || payload[last] !== CLOSE_BRACE || first === last) return null;
    try {
      text = utf8.decode(payload);
    } catch {
      return null;
    }
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return null;
  }
  return typeof value === 'object' && value !== null && !Array.isArray(value)
    ? (value as Record<string, unknown>)
    : null;
}

/**
 * Whether a frame is control rather than audio. The server sends control frames as text and audio
 * as binary, so a text frame is always control; a binary frame (or a payload whose frame type is
 * lost, as behind SageMaker's byte stream) is control only when {@link decodeControlFrame} accepts it.
 */
export function isControlFrame(payload: Uint8Array | string, isBinary: boolean): boolean {
  return !isBinary || decodeControlFrame(payload) !== null;
}
