/**
 * What a client sees when something fails, decided once. Every failure a client can see is a
 * TtsError (protocol/errors.ts) raised where it is known; `toErrorBody` turns any thrown value
 * into the JSON body of an HTTP error, a WebSocket `error` control frame or an SSE `error` event,
 * and the vendor dialects (dialects/openai/speech.ts, dialects/deepgram/socket.ts) translate that
 * body into their own shapes.
 */
import type { FastifyError } from 'fastify';
import {
  MESSAGE_TOKENS,
  TtsError,
  isAbortError,
  ttsError,
  type ErrorBody,
  type ErrorCode,
  type HttpErrorBody,
} from '../../protocol/errors.ts';

export { TtsError, ttsError } from '../../protocol/errors.ts';

/**
 * Tags an error with the request it belongs to and returns it, for `throw`. A failure that is not
 * ours becomes an internal error (its cause kept for the log), so that it carries the id too.
 */
export function withRequestId(err: unknown, requestId: string | undefined): unknown {
  if (requestId === undefined || isAbortError(err)) return err;
  const known = err instanceof TtsError ? err : ttsError('TTS_ERR_INTERNAL', INTERNAL, { cause: err });
  known.requestId ??= requestId;
  return known;
}

/** Seconds a client refused while the server drains is told to wait: another instance can take it. */
export const DRAIN_RETRY_AFTER_S = 1;

/**
 * The headers an error's HTTP answer carries besides its body: `Retry-After` for a refusal that
 * another instance can take (any refusal while draining, or one that says so).
 */
export function errorHeaders(err: unknown): Record<string, string> {
  if (!(err instanceof TtsError)) return {};
  const seconds = err.data.retryAfterS ?? (err.code === 'shutting_down' ? DRAIN_RETRY_AFTER_S : undefined);
  return seconds === undefined ? {} : { 'Retry-After': String(seconds) };
}

const TOKENS: Partial<Record<ErrorCode, readonly string[]>> = MESSAGE_TOKENS;

/**
 * The message with its code's token in front (`queue_saturated: this session …`), unless it
 * carries one already: the reference container's clients sort refusals by that token. Done here,
 * once, so that no refusal of a tokened code can go out without it.
 */
function withToken(code: ErrorCode, message: string): string {
  const tokens = TOKENS[code];
  if (!tokens || tokens.some((token) => message.includes(token))) return message;
  // "The server …" reads on as "queue_saturated: the server …"; "JSON …" keeps its capitals.
  const lead = /^[A-Z][a-z]/.test(message) ? message[0]!.toLowerCase() + message.slice(1) : message;
  return `${tokens[0]}: ${lead}`;
}

/**
 * Turns anything thrown into what the client sees. A 5xx hides internals (no stack, no paths):
 * the caller logs the original at `error`. Load shedding and staleness carry their token in the
 * message (see `MESSAGE_TOKENS`).
 */
export function toErrorBody(err: unknown, requestId?: string): { status: number; body: ErrorBody } {
  const known = err instanceof TtsError ? err : ttsError('TTS_ERR_INTERNAL', INTERNAL);
  const message = known.key === 'TTS_ERR_INTERNAL' ? INTERNAL : known.message;
  const body: ErrorBody = { type: 'error', code: known.code, message: withToken(known.code, message) };
  const id = requestId ?? known.requestId;
  if (id !== undefined) body.request_id = id;
  return { status: known.status, body };
}

const INTERNAL = 'The server failed while handling this request; it has been logged.';

/** The body of a 4xx/5xx answer: the error body with `error`, equal to `code` (see HttpErrorBody). */
export function toHttpErrorBody(err: unknown, requestId?: string): { status: number; body: HttpErrorBody } {
  const { status, body } = toErrorBody(err, requestId);
  return { status, body: { ...body, error: body.code } };
}

/**
 * An error as a complete HTTP/1.1 response, for a connection that Fastify no longer answers: a
 * refused WebSocket upgrade is written on the raw socket, which is then closed. Left to the
 * WebSocket plugin, such a connection would stay open and hold up shutdown.
 */
export function rawHttpRefusal(err: TtsError): string {
  const { status, body } = toHttpErrorBody(err);
  const json = JSON.stringify(body);
  const lines = [
    `HTTP/1.1 ${status} ${STATUS_TEXT[status] ?? 'Error'}`,
    'Content-Type: application/json',
    `Content-Length: ${Buffer.byteLength(json)}`,
    ...Object.entries(errorHeaders(err)).map(([name, value]) => `${name}: ${value}`),
    'Connection: close',
  ];
  return `${lines.join('\r\n')}\r\n\r\n${json}`;
}

const STATUS_TEXT: Readonly<Record<number, string>> = {
  401: 'Unauthorized',
  503: 'Service Unavailable',
};

/** What a refused content type is told. */
export const MEDIA_TYPES =
  'Content-Type should be application/json (synthesis options) or text/plain (text to speak); a body that starts with { is read as JSON whatever its type';

/** Maps Fastify's own errors (body parsing, limits) onto our coded errors. */
export function fromFastifyError(err: FastifyError, maxBodyBytes: number): unknown {
  switch (err.code) {
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return ttsError('TTS_ERR_PAYLOAD_TOO_LARGE', `The request body is over the ${maxBodyBytes}-byte limit`);
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return ttsError('TTS_ERR_UNSUPPORTED_MEDIA_TYPE', MEDIA_TYPES);
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return ttsError('TTS_ERR_BAD_REQUEST', 'The body is empty: send {"text": "…"}');
    case 'FST_ERR_CTP_INVALID_CONTENT_LENGTH':
      return ttsError('TTS_ERR_BAD_REQUEST', 'Content-Length does not match the body');
    default:
      // Fastify's other client errors (a malformed URL, say) keep their status class.
      return err.statusCode !== undefined && err.statusCode >= 400 && err.statusCode < 500
        ? ttsError('TTS_ERR_BAD_REQUEST', `The request is malformed: ${err.message}`)
        : err;
  }
}
