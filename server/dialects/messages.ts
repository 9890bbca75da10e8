/**
 * Reading a client message, for every dialect: its bytes as UTF-8, its JSON object, its context id.
 */
import { ttsError, withRequestId } from '../http/errors.ts';
import { peekRequestId } from '../http/request.ts';

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

/** The longest context id, in UTF-8 bytes (a binary frame's prefix names it in one byte). */
export const MAX_CONTEXT_ID_BYTES = 255;

/**
 * A message's context id in a session with contexts.
 * @throws TtsError `invalid_option` when it is missing (and `required`) or not a usable id.
 */
export function contextIdOf(fields: Record<string, unknown>, required: boolean): string | undefined {
  const value = fields.context_id;
  if (value === undefined && !required) return undefined;
  if (typeof value !== 'string' || value === '' || Buffer.byteLength(value) > MAX_CONTEXT_ID_BYTES) {
    throw withRequestId(
      ttsError(
        'TTS_ERR_INVALID_OPTION',
        value === undefined
          ? 'This session has contexts: name the context of every message with "context_id"'
          : `context_id should be a non-empty string of at most ${MAX_CONTEXT_ID_BYTES} UTF-8 bytes; got ${describeType(value)}`,
        { data: { param: 'context_id' } },
      ),
      peekRequestId(fields),
    );
  }
  return value;
}

/** A short, safe rendering of a client's `type` value (it may be huge or deeply nested). */
export function describeType(value: unknown): string {
  if (typeof value === 'string') return JSON.stringify(value.length > 40 ? `${value.slice(0, 40)}…` : value);
  if (value === null || typeof value !== 'object') return String(value);
  return Array.isArray(value) ? 'an array' : 'an object';
}
