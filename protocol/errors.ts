/**
 * Every error code a client can receive, with the HTTP status POST answers with. The WebSocket
 * route sends the same code in an `error` control frame. docs/protocol.md lists them (a test keeps
 * the two equal).
 */
export const ERROR_CODES = {
  TTS_ERR_BAD_REQUEST: { code: 'bad_request', status: 400 },
  TTS_ERR_INVALID_JSON: { code: 'invalid_json', status: 400 },
  TTS_ERR_INVALID_UTF8: { code: 'invalid_utf8', status: 400 },
  TTS_ERR_UNKNOWN_TYPE: { code: 'unknown_type', status: 400 },
  TTS_ERR_INVALID_OPTION: { code: 'invalid_option', status: 400 },
  TTS_ERR_EMPTY_TEXT: { code: 'empty_text', status: 400 },
  TTS_ERR_INVALID_MARKUP: { code: 'invalid_markup', status: 400 },
  TTS_ERR_VOICE_NOT_FOUND: { code: 'voice_not_found', status: 400 },
  TTS_ERR_LANGUAGE_UNSUPPORTED: { code: 'language_unsupported', status: 400 },
  TTS_ERR_TEXT_TOO_LONG: { code: 'text_too_long', status: 413 },
  TTS_ERR_AUDIO_TOO_LONG: { code: 'audio_too_long', status: 413 },
  TTS_ERR_PAYLOAD_TOO_LARGE: { code: 'payload_too_large', status: 413 },
  TTS_ERR_MESSAGE_TOO_FRAGMENTED: { code: 'message_too_fragmented', status: 400 },
  TTS_ERR_UNAUTHORIZED: { code: 'unauthorized', status: 401 },
  TTS_ERR_NOT_FOUND: { code: 'not_found', status: 404 },
  TTS_ERR_UPGRADE_REQUIRED: { code: 'upgrade_required', status: 426 },
  TTS_ERR_UNSUPPORTED_MEDIA_TYPE: { code: 'unsupported_media_type', status: 415 },
  TTS_ERR_REQUEST_STALE: { code: 'request_stale', status: 408 },
  TTS_ERR_CONTEXT_CLOSED: { code: 'context_closed', status: 409 },
  TTS_ERR_TOO_MANY_CONTEXTS: { code: 'too_many_contexts', status: 429 },
  TTS_ERR_TOO_MANY_REQUESTS: { code: 'too_many_requests', status: 429 },
  TTS_ERR_BUSY: { code: 'busy', status: 503 },
  TTS_ERR_NOT_READY: { code: 'not_ready', status: 503 },
  TTS_ERR_SHUTTING_DOWN: { code: 'shutting_down', status: 503 },
  TTS_ERR_INFERENCE: { code: 'inference_failed', status: 500 },
  TTS_ERR_INTERNAL: { code: 'internal_error', status: 500 },
} as const;

export type ErrorName = keyof typeof ERROR_CODES;
export type ErrorCode = (typeof ERROR_CODES)[ErrorName]['code'];

const STATUSES: ReadonlyMap<string, number> = new Map(
  Object.values(ERROR_CODES).map((entry) => [entry.code, entry.status]),
);

/** The HTTP status a wire code stands for (the vendors' error frames carry it); 500 if unknown. */
export function statusOfCode(code: string): number {
  return STATUSES.get(code) ?? 500;
}

/** The body of a 4xx/5xx answer, and the `error` control frame. */
export interface ErrorBody {
  type: 'error';
  code: ErrorCode;
  message: string;
  request_id?: string;
}

/**
 * An HTTP error body: the same, with `error` repeating `code` for clients of the reference
 * container, which read `error` from its 503 answers. WebSocket `error` frames do not carry it.
 */
export interface HttpErrorBody extends ErrorBody {
  error: ErrorCode;
}

/**
 * The reference container's clients sort error frames by a token in `message`: `queue_saturated`
 * or `queue_full` for load shedding, `request_stale` for staleness, `too_many_requests` for
 * throttling (one client over its share: POST /v1/phonemize's per-client bound). The message of an
 * error with a code below contains one of its tokens, the first put in front (`queue_saturated:
 * this session …`); its `code` stays as it is, and other codes carry no token.
 */
export const MESSAGE_TOKENS = {
  busy: ['queue_saturated', 'queue_full'],
  request_stale: ['request_stale'],
  too_many_requests: ['too_many_requests'],
} as const satisfies Partial<Record<ErrorCode, readonly [string, ...string[]]>>;

/** What a failure carries besides its code and message, for the edges that translate it. */
export interface TtsErrorData {
  /** The request field it is about (`voice`, `speed`, …), as OpenAI's `param` names it. */
  readonly param?: string;
  /** Seconds the client may retry after, elsewhere (HTTP's `Retry-After`). */
  readonly retryAfterS?: number;
  readonly [key: string]: unknown;
}

/**
 * The one error a request can fail with: a code of {@link ERROR_CODES} (stable, on the wire), a
 * message safe to show the client, and data for the edges. It is raised where the failure is
 * known — the request parser, the voice catalog, the inference pool — and turned into an HTTP body,
 * a WebSocket error frame or a vendor's error once, where it leaves the server. A cancelled request
 * is not an error: it rejects with an `AbortError` (see {@link isAbortError}).
 */
export class TtsError extends Error {
  override readonly name = 'TtsError';
  readonly key: ErrorName;
  readonly code: ErrorCode;
  readonly status: number;
  readonly data: TtsErrorData;
  /** The request it belongs to, echoed to the client when known. */
  requestId: string | undefined;

  constructor(key: ErrorName, message: string, options: { cause?: unknown; data?: TtsErrorData } = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.key = key;
    this.code = ERROR_CODES[key].code;
    this.status = ERROR_CODES[key].status;
    this.data = options.data ?? {};
  }
}

/** Shorthand used at throw sites: `throw ttsError('TTS_ERR_BUSY', '…')`. */
export function ttsError(
  key: ErrorName,
  message: string,
  options?: { cause?: unknown; data?: TtsErrorData },
): TtsError {
  return new TtsError(key, message, options);
}

/** A value as an error message names it: `the string "…"`, `number 5`, `an array`. */
export function describeValue(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  if (typeof value === 'string')
    return `the string ${JSON.stringify(value.length > 40 ? `${value.slice(0, 40)}…` : value)}`;
  if (typeof value === 'object') return 'an object';
  return `${typeof value} ${String(value)}`;
}

/** The rejection of work whose caller gave up on it (a client that left, a cancel). */
export function abortError(message = 'cancelled'): Error {
  return new DOMException(message, 'AbortError');
}

/** True for the cancellation of work whose caller gave up on it: nothing to report. */
export function isAbortError(err: unknown): boolean {
  return err instanceof Error && err.name === 'AbortError';
}
