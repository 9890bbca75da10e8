/**
 * Which request a frame belongs to. The server answers one request at a time, in order, so audio
 * belongs to the request whose `synthesis_start` came last, or else to the oldest request still
 * open. A request stays open until its `synthesis_complete`, an `error` that ends it, or a
 * `synthesis_cancelled` that names it. Shared by the WebSocket and the SageMaker sessions.
 */
import { ERROR_CODES } from '../../../protocol/errors.ts';
import type { TtsAudioEvent, TtsEvent, TtsHeard, TtsPhoneme, TtsWord } from './events.ts';

/** The events a control frame becomes. */
export type TtsControlEvent = Extract<
  TtsEvent,
  { type: 'start' | 'words' | 'phonemes' | 'mark' | 'complete' | 'error' | 'cancelled' }
>;

/**
 * Codes of a synthesis that failed on the server (HTTP status 500). Only these end an utterance:
 * its other errors refuse one append (or the flush), and the utterance goes on.
 */
const SYNTHESIS_FAILURES: ReadonlySet<string> = new Set(
  Object.values(ERROR_CODES)
    .filter((entry) => entry.status === 500)
    .map((entry) => entry.code),
);

export class RequestTracker {
  /** Requests sent and not yet completed, failed or cancelled, oldest first. */
  readonly #open: string[] = [];
  /** The open requests that are utterances (streamed text, `append` … `flush`). */
  readonly #utterances = new Set<string>();
  #current: string | undefined;

  /** A request was sent, or the first append of an utterance. */
  sent(requestId: string, options: { utterance?: boolean } = {}): void {
    this.#open.push(requestId);
    if (options.utterance) this.#utterances.add(requestId);
  }

  /** Whether a request is still open: sent, and not completed, failed or cancelled. */
  isOpen(requestId: string): boolean {
    return this.#open.includes(requestId);
  }

  /** An audio frame: attributed to the current request. */
  audio(bytes: Uint8Array): TtsAudioEvent {
    return { type: 'audio', requestId: this.#current ?? this.#open[0] ?? '', bytes };
  }

  /** A control frame: its event, or undefined for types a client ignores (the contract says so). */
  control(message: Record<string, unknown>): TtsControlEvent | undefined {
    const requestId = typeof message.request_id === 'string' ? message.request_id : undefined;
    switch (message.type) {
      case 'synthesis_start':
        this.#current = requestId ?? this.#open[0];
        return { type: 'start', requestId: this.#current ?? '' };
      case 'word_timestamps':
        return {
          type: 'words',
          requestId: requestId ?? this.#current ?? this.#open[0] ?? '',
          words: Array.isArray(message.words) ? message.words.flatMap(toWord) : [],
        };
      case 'phoneme_timestamps':
        return {
          type: 'phonemes',
          requestId: requestId ?? this.#current ?? this.#open[0] ?? '',
          phonemes: Array.isArray(message.phonemes) ? message.phonemes.flatMap(toPhoneme) : [],
        };
      case 'mark':
        return {
          type: 'mark',
          requestId: requestId ?? this.#current ?? this.#open[0] ?? '',
          name: String(message.name),
          timeS: Number(message.time_s),
        };
      case 'synthesis_complete': {
        const id = requestId ?? this.#current ?? this.#open[0] ?? '';
        this.settle(id);
        const ttfa = message.time_to_first_audio_s;
        return {
          type: 'complete',
          requestId: id,
          totalDurationS: Number(message.total_duration_s),
          elapsedS: Number(message.elapsed_s),
          ...(typeof ttfa === 'number' ? { timeToFirstAudioS: ttfa } : {}),
          raw: message,
        };
      }
      case 'synthesis_cancelled': {
        const cancelled = Array.isArray(message.cancelled)
          ? message.cancelled.filter((id): id is string => typeof id === 'string')
          : [];
        for (const id of cancelled) this.settle(id);
        const heard = toHeard(message.heard);
        return {
          type: 'cancelled',
          ...(requestId !== undefined ? { requestId } : {}),
          cancelled,
          ...(heard ? { heard } : {}),
        };
      }
      case 'error': {
        const code = typeof message.code === 'string' ? message.code : 'unknown';
        if (requestId !== undefined && (!this.#utterances.has(requestId) || SYNTHESIS_FAILURES.has(code))) {
          this.settle(requestId);
        }
        return {
          type: 'error',
          ...(requestId !== undefined ? { requestId } : {}),
          code,
          message: typeof message.message === 'string' ? message.message : JSON.stringify(message),
        };
      }
      default:
        return undefined;
    }
  }

  /** A request is over (completed, failed or cancelled): later audio is not its own. */
  settle(requestId: string): void {
    const at = this.#open.indexOf(requestId);
    if (at >= 0) this.#open.splice(at, 1);
    this.#utterances.delete(requestId);
    if (this.#current === requestId) this.#current = undefined;
  }

  /** Forgets every open request (the connection ended). */
  clear(): void {
    this.#open.length = 0;
    this.#utterances.clear();
    this.#current = undefined;
  }
}

/** One entry of a `word_timestamps` frame's `words`, or nothing when it is not an object. */
function toWord(entry: unknown): TtsWord[] {
  if (typeof entry !== 'object' || entry === null) return [];
  const {
    word,
    start_s: startS,
    end_s: endS,
    char_start: charStart,
    char_end: charEnd,
  } = entry as Record<string, unknown>;
  return [
    {
      word: String(word),
      startS: Number(startS),
      endS: Number(endS),
      ...(typeof charStart === 'number' && typeof charEnd === 'number' ? { charStart, charEnd } : {}),
    },
  ];
}

/** One entry of a `phoneme_timestamps` frame's `phonemes`, or nothing when it is not an object. */
function toPhoneme(entry: unknown): TtsPhoneme[] {
  if (typeof entry !== 'object' || entry === null) return [];
  const { phoneme, viseme, start_s: startS, duration_s: durationS } = entry as Record<string, unknown>;
  return [
    {
      phoneme: String(phoneme),
      viseme: String(viseme),
      startS: Number(startS),
      durationS: Number(durationS),
    },
  ];
}

/** A cancel's `heard`, or nothing when it is not an object. */
function toHeard(value: unknown): TtsHeard | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  const {
    request_id: requestId,
    samples,
    sample_rate: sampleRate,
    ms,
    words,
  } = value as Record<string, unknown>;
  return {
    requestId: String(requestId),
    samples: Number(samples),
    sampleRate: Number(sampleRate),
    ms: Number(ms),
    ...(Array.isArray(words) ? { words: words.flatMap(toWord) } : {}),
  };
}
