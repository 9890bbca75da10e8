/**
 * How a request ended, recorded in one place: a completed synthesis (its log line and metrics,
 * whatever the route), a refusal or failure (logged at the right level and counted by code), and
 * whether a failure was only the client going away.
 */
import type { FastifyBaseLogger } from 'fastify';
import type { RunFigures } from '../model/engine.ts';
import { isAbortError } from '../protocol/errors.ts';
import type { AudioFormat } from '../protocol/formats.ts';
import type { Metrics } from './metrics.ts';

/** Logs and counts a request synthesized to the end. Never logs the text, only its length. */
export function recordCompletion(
  log: FastifyBaseLogger,
  metrics: Metrics,
  done: {
    route: 'http' | 'ws';
    requestId: string;
    format: AudioFormat;
    chars: number;
    figures: RunFigures;
    transport?: 'sse';
  },
): void {
  const { route, requestId, format, chars, figures, transport } = done;
  log.info({ requestId, chars, ...(transport ? { transport } : {}), ...figures }, 'synthesized');
  metrics.observe(route, format, figures);
}

/**
 * Logs a request that got an error: internal failures at `error` with their cause, load shedding
 * (`busy`, `shutting_down`, `not_ready`) and bad input at `info`, without stacks.
 */
export function recordRefusal(
  log: FastifyBaseLogger,
  metrics: Metrics,
  err: unknown,
  status: number,
  code: string,
  requestId: string | undefined,
): void {
  metrics.errors.inc({ code });
  if (status >= 500 && status !== 503) log.error({ err, requestId }, 'request failed');
  else log.info({ code, requestId }, 'request refused');
}

/**
 * Counts a request whose client went away before its answer was complete: `client_gone`, never an
 * internal error (nothing failed on the server, and an operator should not be paged for it).
 */
export function recordClientGone(
  log: FastifyBaseLogger,
  metrics: Metrics,
  requestId: string,
  route: 'http' | 'ws',
): void {
  metrics.errors.inc({ code: 'client_gone' });
  log.info({ requestId, route }, 'client went away before the answer was complete');
}

/** True for the cancellation of work whose client went away: not an error to report. */
export const isCancelled = isAbortError;
