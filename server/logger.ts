/** The process logger (pino) and the mapping of its level onto ONNX Runtime's severity. */
import pino, { type Logger } from 'pino';

export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

export function createLogger(level: LogLevel): Logger {
  return pino({
    level,
    base: { service: 'kokoro-tts' },
    // The text users send is never logged; only lengths. Redact it should it ever slip in.
    redact: { paths: ['text', '*.text', 'req.body'], censor: '[text]' },
  });
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
