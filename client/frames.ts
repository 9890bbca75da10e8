/**
 * Telling control frames from audio on the WebSocket route. The contract's rule: a payload that
 * parses, as a whole, as one JSON object is control; anything else is audio. Raw PCM may well begin
 * with 0x7b (`{`), so a look at the first byte is not enough.
 */

// Fatal, so that bytes that are not UTF-8 (most audio) are audio rather than mangled text.
const utf8 = new TextDecoder('utf-8', { fatal: true });

const OPEN_BRACE = 0x7b;
const CLOSE_BRACE = 0x7d;
/** JSON's whitespace: space, tab, line feed, carriage return. */
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
 * Whether a frame is control rather than audio. This server sends control frames as text and
 * audio as binary, so a text frame is always control; a binary frame (or a payload whose frame type
 * is lost, as behind SageMaker's byte stream) is control only when {@link decodeControlFrame}
 * accepts it.
 */
export function isControlFrame(payload: Uint8Array | string, isBinary: boolean): boolean {
  return !isBinary || decodeControlFrame(payload) !== null;
}
