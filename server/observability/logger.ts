/** The process logger (pino) and the mapping of its level onto ONNX Runtime's severity. */
import pino, { type DestinationStream, type Logger } from 'pino';
import { REDACTED, SECRET_HEADERS, redactUrl, redactUrlsIn } from '../http/credentials.ts';

export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

/** What Fastify passes as `req` (its request) or a raw Node request: the parts worth a log line. */
interface LoggedRequest {
  readonly method?: string;
  readonly url?: string;
  readonly host?: string;
  readonly ip?: string;
  readonly socket?: { readonly remoteAddress?: string; readonly remotePort?: number };
}

/**
 * The serializers that keep credentials out of every line, whoever logs: a request is its method,
 * URL (secret query parameters redacted), host and peer, never its headers; a `url` field is
 * redacted the same way; an error's message and stack too, as they may quote a URL. They replace
 * Fastify's own (a logger's serializers take precedence over those Fastify adds).
 */
const serializers = {
  req: (req: LoggedRequest) => ({
    method: req.method,
    url: typeof req.url === 'string' ? redactUrl(req.url) : undefined,
    host: req.host,
    remoteAddress: req.ip ?? req.socket?.remoteAddress,
    remotePort: req.socket?.remotePort,
  }),
  url: (url: unknown) => (typeof url === 'string' ? redactUrl(url) : url),
  err: (err: unknown) => {
    if (typeof err === 'string') return redactUrlsIn(err);
    if (!(err instanceof Error)) return err;
    const out = pino.stdSerializers.err(err) as { message: string; stack: string };
    out.message = redactUrlsIn(out.message);
    if (typeof out.stack === 'string') out.stack = redactUrlsIn(out.stack);
    return out;
  },
};

/** Headers logged anywhere (`headers`, `req.headers`…): the secret ones are censored. */
const SECRET_HEADER_PATHS = SECRET_HEADERS.flatMap((name) => [`headers["${name}"]`, `*.headers["${name}"]`]);

/** The process's logger; `destination` (stdout when absent) is for tests that read its lines. */
export function createLogger(level: LogLevel, destination?: DestinationStream): Logger {
  const options = {
    level,
    base: { service: 'kokoro-tts' },
    serializers,
    // The text users send is never logged; only lengths. Redact it should it ever slip in.
    redact: {
      paths: ['text', '*.text', 'req.body', ...SECRET_HEADER_PATHS],
      censor: (_value: unknown, path: string[]) =>
        path.at(-1) === 'text' || path.at(-1) === 'body' ? '[text]' : REDACTED,
    },
  };
  return destination ? pino(options, destination) : pino(options);
}

/** ORT is chatty at session creation (0 verbose … 4 fatal): at `info` show only its errors. */
export function ortSeverity(level: LogLevel): 0 | 1 | 2 | 3 | 4 {
  switch (level) {
    case 'trace':
      return 0;
    case 'debug':
      return 2;
    case 'fatal':
    case 'silent':
      return 4;
    default:
      return 3;
  }
}
