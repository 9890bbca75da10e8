/**
 * A synthesis request as it travels: the JSON fields of a POST body or of a WebSocket message.
 * Names are the wire's (snake_case); this is the one options shape of the client too.
 */
import { ttsError } from './errors.ts';
import type { AudioFormat } from './formats.ts';

export const SPEED_MIN = 0.5;
export const SPEED_MAX = 2.0;
export const MAX_REQUEST_ID_CHARS = 128;
/** A voice id or a blend of up to 8 (`af_bella(0.25)+…`) fits in this many characters. */
export const MAX_VOICE_SPEC_CHARS = 256;
export const TRANSPORTS = ['binary', 'sse'] as const;
export type Transport = (typeof TRANSPORTS)[number];

/** Options of one request; absent fields take the server's defaults. */
export interface SynthesisOptions {
  /** A Kokoro voice id or a blend such as `af_bella(2)+af_sky(1)`. */
  readonly voice?: string;
  /** 0.5 to 2.0; 1.0 by default. */
  readonly speed?: number;
  /**
   * The language to read the text in: Kokoro's letter (`a b e f h i j p z`), a BCP 47 tag as
   * `/ping` lists (`es`, `fr-FR`, `pt-BR`…) or Kokoro's own names (`en-us`, `fr-fr`). By default the
   * voice's language (its first letter).
   */
  readonly lang?: string;
  /** `pcm` by default on the WebSocket route, `wav` on POST. */
  readonly format?: AudioFormat;
  /** The format's default (24000; 8000 for `mulaw` and `alaw`) when absent. */
  readonly sample_rate?: number;
  /** Echoed on every control frame and SSE event of the request; generated when absent. */
  readonly request_id?: string;
  /** Epoch seconds of sending (above 1e11: milliseconds); a request older than the server's limit is refused as stale. */
  readonly request_timestamp?: number;
  /**
   * `word_timestamps` frames (SSE events) before each chunk's audio. Needs a timestamped model
   * export (`/ping` lists `capabilities.word_timestamps`); without one the audio comes untimed,
   * with a warning on its completion.
   */
  readonly timestamps?: boolean;
  /**
   * `phoneme_timestamps` frames (SSE events) before each chunk's audio: its sounds, their visemes
   * and times. Needs a timestamped model export, as `timestamps` does.
   */
  readonly phoneme_timestamps?: boolean;
}

/** POST only: how the answer travels. */
export interface HttpOptions {
  /** `false`: one complete file instead of a stream. */
  readonly stream?: boolean;
  readonly transport?: Transport;
}

/** The whole request: text and options. */
export interface SynthesisRequestFields extends SynthesisOptions, HttpOptions {
  readonly text: string;
  /** `synthesize` (or absent) on the WebSocket route. */
  readonly type?: 'synthesize';
}

/**
 * The message for one request: the text, the options given, and a `request_id` and
 * `request_timestamp` (epoch seconds, from `now`) when the options have none.
 */
export function requestMessage(
  text: string,
  options: SynthesisOptions & HttpOptions,
  requestId: string,
  now = Date.now(),
): SynthesisRequestFields {
  return { text, request_timestamp: now / 1000, ...options, request_id: options.request_id ?? requestId };
}

/** Text length is counted in Unicode code points, on the text as received. */
export function codePointLength(text: string): number {
  // Without building an array: texts may be up to 1 MiB.
  let n = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c >= 0xd800 && c <= 0xdbff && i + 1 < text.length) {
      const d = text.charCodeAt(i + 1);
      if (d >= 0xdc00 && d <= 0xdfff) i++;
    }
    n++;
  }
  return n;
}

/** The first C0 control (NUL, TAB, LF, CR…), DEL or C1 control in `value`, or -1. */
function controlCharAt(value: string): number {
  for (let i = 0; i < value.length; i++) {
    const c = value.charCodeAt(i);
    if (c < 0x20 || (c >= 0x7f && c <= 0x9f)) return i;
  }
  return -1;
}

/**
 * Refuses a name a client sends (a voice, a model) that holds a control character, before it is
 * trimmed, parsed, echoed in a response header or logged: no name holds one, and a CR LF that
 * parsing forgave would break the header it is echoed in.
 * @throws TtsError `invalid_option` naming `param`, the character and where it is.
 */
export function refuseControlChars(value: string, param: string): void {
  const at = controlCharAt(value);
  if (at < 0) return;
  const code = value.charCodeAt(at).toString(16).toUpperCase().padStart(4, '0');
  throw ttsError(
    'TTS_ERR_INVALID_OPTION',
    `${param} must not hold control characters (CR, LF, TAB, NUL…); found U+${code} at position ${at}`,
    { data: { param } },
  );
}

/** The message that ends a WebSocket session once every request before it is answered. */
export const CLOSE_MESSAGE = '{"type":"close"}';
