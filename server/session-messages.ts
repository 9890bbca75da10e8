/**
 * What a client may send on the WebSocket route, classified on arrival into the session's
 * commands. Plain text (not starting with `{`) is one complete request; a JSON object is a request
 * unless its `type` (any case) says otherwise.
 */
import type { RunFigures, WordTiming } from '../model/engine.ts';
import type { ErrorBody } from '../protocol/errors.ts';
import type { ControlFrame } from '../protocol/frames.ts';
import { ttsError, withRequestId } from './errors.ts';
import { peekRequestId } from './request.ts';

export type Command =
  /** One complete text to speak. */
  | { readonly kind: 'request'; readonly fields: Record<string, unknown> }
  /** Text added to the open utterance (streamed text input). */
  | { readonly kind: 'append'; readonly fields: Record<string, unknown> }
  /** Speaks the rest of the open utterance and ends it. */
  | { readonly kind: 'flush'; readonly fields: Record<string, unknown> }
  /** Stops the request in flight and drops the queued ones (or only the one named). */
  | { readonly kind: 'cancel'; readonly requestId: string | undefined }
  | { readonly kind: 'close' };

const CANCEL_TYPES = new Set(['cancel', 'clear', 'interrupt']);

const utf8 = new TextDecoder('utf-8', { fatal: true });

/** Decodes a frame's bytes as UTF-8 text, or throws the error the client is sent. */
export function decodeText(data: Buffer): string {
  try {
    return utf8.decode(data);
  } catch {
    throw ttsError(
      'TTS_ERR_INVALID_UTF8',
      'The message is not valid UTF-8 text; send UTF-8 encoded JSON or plain text',
    );
  }
}

/** Parses a JSON object message, or throws the error the client is sent. */
export function parseJsonObject(text: string): Record<string, unknown> {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    throw ttsError(
      'TTS_ERR_INVALID_JSON',
      `The message starts with "{" but is not valid JSON (${(err as Error).message}); send a JSON object such as {"text": "Hello"}, or plain text that does not start with "{"`,
    );
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    throw ttsError('TTS_ERR_INVALID_JSON', 'The message should be one JSON object such as {"text": "Hello"}');
  }
  return value as Record<string, unknown>;
}

/** Classifies one client message of the project's own protocol. */
export function parseMessage(data: Buffer): Command {
  const text = decodeText(data);
  const trimmed = text.trimStart();
  if (!trimmed.startsWith('{')) return { kind: 'request', fields: { text } };
  const fields = parseJsonObject(trimmed);
  if (fields.type === undefined) return { kind: 'request', fields };
  const type = typeof fields.type === 'string' ? fields.type.toLowerCase() : undefined;
  if (type === 'synthesize') return { kind: 'request', fields };
  if (type === 'close') return { kind: 'close' };
  if (type === 'append') return { kind: 'append', fields };
  if (type === 'flush') return { kind: 'flush', fields };
  if (type !== undefined && CANCEL_TYPES.has(type)) {
    if (fields.request_id !== undefined && peekRequestId(fields) === undefined) {
      throw ttsError(
        'TTS_ERR_INVALID_OPTION',
        'request_id on a cancel should be the id of a request of this session (a non-empty string of at most 128 characters); leave it out to cancel everything',
      );
    }
    return { kind: 'cancel', requestId: peekRequestId(fields) };
  }
  throw withRequestId(
    ttsError(
      'TTS_ERR_UNKNOWN_TYPE',
      `Unknown message type ${describeType(fields.type)}; should be "synthesize" (or no type) for a text to speak, "append" and "flush" for text as it is written, "cancel" to stop, or "close" to end the session`,
    ),
    peekRequestId(fields),
  );
}

/** A short, safe rendering of a client's `type` value (it may be huge or deeply nested). */
function describeType(value: unknown): string {
  if (typeof value === 'string') return JSON.stringify(value.length > 40 ? `${value.slice(0, 40)}…` : value);
  if (value === null || typeof value !== 'object') return String(value);
  return Array.isArray(value) ? 'an array' : 'an object';
}

/**
 * A session's wire dialect: how client messages become commands, and what frames the session's
 * events become. The project's own protocol is {@link NATIVE_DIALECT}; Deepgram's is in deepgram.ts.
 * A frame builder that returns undefined sends nothing for that event.
 */
export interface SessionDialect {
  parse(data: Buffer): Command;
  /** Frames sent as soon as the session opens. */
  opening(sessionId: string): readonly object[];
  start(requestId: string): object | undefined;
  /**
   * After the last audio of a request; `figures` is undefined for a flush that had nothing to
   * speak. `warnings`: markup that was dropped (its text spoken).
   */
  complete(
    requestId: string,
    figures: RunFigures | undefined,
    warnings?: readonly string[],
  ): object | undefined;
  /** A chunk's words (requests with timestamps), before that chunk's audio. */
  words(requestId: string, words: readonly WordTiming[]): object | undefined;
  /** An SSML `<mark>`, before the audio after it; `timeS` on the request's audio clock. */
  mark(requestId: string, name: string, timeS: number): object | undefined;
  /** After the last audio of what a cancel cut. */
  cancelled(requestId: string | undefined, cancelled: readonly string[]): object | undefined;
  error(body: ErrorBody): object | undefined;
  /** Fields every request and first append of the session starts from (its own fields win). */
  readonly defaults: Readonly<Record<string, unknown>>;
}

export const NATIVE_DIALECT: SessionDialect = {
  parse: parseMessage,
  opening: () => [],
  start: (requestId) => ({ type: 'synthesis_start', request_id: requestId }) satisfies ControlFrame,
  complete: (requestId, figures, warnings) =>
    ({
      type: 'synthesis_complete',
      request_id: requestId,
      total_duration_s: figures?.audioS ?? 0,
      elapsed_s: (figures?.elapsedMs ?? 0) / 1000,
      time_to_first_audio_s: (figures?.ttfaMs ?? 0) / 1000,
      inference_s: (figures?.inferenceMs ?? 0) / 1000,
      first_chunk_inference_s: (figures?.firstInferenceMs ?? 0) / 1000,
      first_chunk_frontend_s: (figures?.firstFrontEndMs ?? 0) / 1000,
      chunks: figures?.chunks ?? 0,
      ...(warnings && warnings.length > 0 ? { warnings: [...warnings] } : {}),
    }) satisfies ControlFrame,
  words: (requestId, words) =>
    ({ type: 'word_timestamps', request_id: requestId, words: [...words] }) satisfies ControlFrame,
  mark: (requestId, name, timeS) =>
    ({ type: 'mark', request_id: requestId, name, time_s: timeS }) satisfies ControlFrame,
  cancelled: (requestId, cancelled) =>
    ({
      type: 'synthesis_cancelled',
      ...(requestId !== undefined ? { request_id: requestId } : {}),
      cancelled: [...cancelled],
    }) satisfies ControlFrame,
  error: (body) => body,
  defaults: {},
};
