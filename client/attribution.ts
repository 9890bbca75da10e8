/**
 * Which request a frame belongs to. The server answers one request at a time, in order, so audio
 * belongs to the request whose `synthesis_start` came last, or else to the oldest request still
 * open. Shared by the WebSocket and the SageMaker sessions.
 */
import type { TtsAudioEvent, TtsCompleteEvent, TtsErrorEvent, TtsStartEvent } from './events.ts';

export class RequestTracker {
  /** Requests sent and not yet completed or failed, oldest first. */
  readonly #open: string[] = [];
  #current: string | undefined;

  /** A request was sent. */
  sent(requestId: string): void {
    this.#open.push(requestId);
  }

  /** An audio frame: attributed to the current request. */
  audio(bytes: Uint8Array): TtsAudioEvent {
    return { type: 'audio', requestId: this.#current ?? this.#open[0] ?? '', bytes };
  }

  /** A control frame: its event, or undefined for types a client ignores (the contract says so). */
  control(message: Record<string, unknown>): TtsStartEvent | TtsCompleteEvent | TtsErrorEvent | undefined {
    const requestId = typeof message.request_id === 'string' ? message.request_id : undefined;
    switch (message.type) {
      case 'synthesis_start':
        this.#current = requestId ?? this.#open[0];
        return { type: 'start', requestId: this.#current ?? '' };
      case 'synthesis_complete': {
        const id = requestId ?? this.#current ?? this.#open[0] ?? '';
        this.#settle(id);
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
      case 'error':
        if (requestId !== undefined) this.#settle(requestId);
        return {
          type: 'error',
          ...(requestId !== undefined ? { requestId } : {}),
          code: typeof message.code === 'string' ? message.code : 'unknown',
          message: typeof message.message === 'string' ? message.message : JSON.stringify(message),
        };
      default:
        return undefined;
    }
  }

  /** Forgets every open request (the connection ended). */
  clear(): void {
    this.#open.length = 0;
    this.#current = undefined;
  }

  /** A request is over (completed or failed): later audio is not its own. */
  #settle(requestId: string): void {
    const at = this.#open.indexOf(requestId);
    if (at >= 0) this.#open.splice(at, 1);
    if (this.#current === requestId) this.#current = undefined;
  }
}
