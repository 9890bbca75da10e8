/**
 * The coded errors of the server, in one place. Every error a client can see is one of these; the
 * wire code (snake_case) is what PROTOCOL.md and clients match on, the HTTP status is used by POST.
 * One mapping (`toErrorBody`) turns any thrown value into the JSON body of a 4xx/5xx answer or of a
 * WebSocket `error` control frame.
 */

export const ERROR_CODES = {
  TTS_ERR_BAD_REQUEST: { code: 'bad_request', status: 400 },
  TTS_ERR_INVALID_JSON: { code: 'invalid_json', status: 400 },
  TTS_ERR_INVALID_UTF8: { code: 'invalid_utf8', status: 400 },
  TTS_ERR_UNKNOWN_TYPE: { code: 'unknown_type', status: 400 },
  TTS_ERR_INVALID_OPTION: { code: 'invalid_option', status: 400 },
  TTS_ERR_EMPTY_TEXT: { code: 'empty_text', status: 400 },
  TTS_ERR_VOICE_NOT_FOUND: { code: 'voice_not_found', status: 400 },
  TTS_ERR_LANGUAGE_UNSUPPORTED: { code: 'language_unsupported', status: 400 },
  TTS_ERR_TEXT_TOO_LONG: { code: 'text_too_long', status: 413 },
  TTS_ERR_PAYLOAD_TOO_LARGE: { code: 'payload_too_large', status: 413 },
  TTS_ERR_UNAUTHORIZED: { code: 'unauthorized', status: 401 },
  TTS_ERR_NOT_FOUND: { code: 'not_found', status: 404 },
  TTS_ERR_UPGRADE_REQUIRED: { code: 'upgrade_required', status: 426 },
  TTS_ERR_UNSUPPORTED_MEDIA_TYPE: { code: 'unsupported_media_type', status: 415 },
  TTS_ERR_REQUEST_STALE: { code: 'request_stale', status: 408 },
  TTS_ERR_BUSY: { code: 'busy', status: 503 },
  TTS_ERR_NOT_READY: { code: 'not_ready', status: 503 },
  TTS_ERR_SHUTTING_DOWN: { code: 'shutting_down', status: 503 },
  TTS_ERR_INFERENCE: { code: 'inference_failed', status: 500 },
  TTS_ERR_INTERNAL: { code: 'internal_error', status: 500 },
} as const;

export type ErrorName = keyof typeof ERROR_CODES;
export type WireCode = (typeof ERROR_CODES)[ErrorName]['code'];

/** An error whose message is safe to show to the client. */
export class TtsError extends Error {
  override readonly name: ErrorName;
  readonly code: WireCode;
  readonly statusCode: number;
  /** The request this error belongs to, echoed to the client when known. */
  requestId: string | undefined;

  constructor(name: ErrorName, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = name;
    this.code = ERROR_CODES[name].code;
    this.statusCode = ERROR_CODES[name].status;
  }
}

/** Tags an error with the request it belongs to (when it is ours) and returns it, for `throw`. */
export function withRequestId(err: unknown, requestId: string | undefined): unknown {
  if (err instanceof TtsError && requestId !== undefined) err.requestId ??= requestId;
  return err;
}

/** Shorthand used at throw sites: `throw ttsError('TTS_ERR_BUSY', '…')`. */
export function ttsError(name: ErrorName, message: string, cause?: unknown): TtsError {
  return new TtsError(name, message, cause === undefined ? undefined : { cause });
}

export interface ErrorBody {
  type: 'error';
  code: WireCode;
  message: string;
  request_id?: string;
}

/**
 * Turns anything thrown into what the client sees. A 5xx hides internals (no stack, no paths):
 * the caller logs the original at `error`.
 */
export function toErrorBody(err: unknown, requestId?: string): { status: number; body: ErrorBody } {
  const known =
    err instanceof TtsError
      ? err
      : ttsError('TTS_ERR_INTERNAL', 'The server failed while handling this request; it has been logged.');
  const message =
    known.statusCode >= 500 && known.name === 'TTS_ERR_INTERNAL'
      ? 'The server failed while handling this request; it has been logged.'
      : known.message;
  const body: ErrorBody = { type: 'error', code: known.code, message };
  const id = requestId ?? known.requestId;
  if (id !== undefined) body.request_id = id;
  return { status: known.statusCode, body };
}

/**
 * An error as a complete HTTP/1.1 response, for a connection that Fastify no longer answers: a
 * refused WebSocket upgrade is written on the raw socket, which is then closed. Left to the
 * WebSocket plugin, such a connection would stay open and hold up shutdown.
 */
export function rawHttpRefusal(err: TtsError, headers: Readonly<Record<string, string>> = {}): string {
  const { status, body } = toErrorBody(err);
  const json = JSON.stringify(body);
  const lines = [
    `HTTP/1.1 ${status} ${STATUS_TEXT[status] ?? 'Error'}`,
    'Content-Type: application/json',
    `Content-Length: ${Buffer.byteLength(json)}`,
    ...Object.entries(headers).map(([name, value]) => `${name}: ${value}`),
    'Connection: close',
  ];
  return `${lines.join('\r\n')}\r\n\r\n${json}`;
}

const STATUS_TEXT: Readonly<Record<number, string>> = {
  401: 'Unauthorized',
  503: 'Service Unavailable',
};
