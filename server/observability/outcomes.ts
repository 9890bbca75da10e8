/**
 * How a request ended, recorded in one place: a completed synthesis (its log line and metrics,
 * whatever the route), a refusal or failure (logged at the right level and counted by code), and
 * whether a failure was only the client going away.
 */
import type { FastifyBaseLogger } from 'fastify';
import type { RunFigures } from '../../model/engine.ts';
import { isAbortError } from '../../protocol/errors.ts';
import type { AudioFormat } from '../../protocol/formats.ts';
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
  if (isFailure(status)) log.error({ err, requestId }, 'request failed');
  else log.info({ code, requestId }, 'request refused');
}

const isFailure = (status: number) => status >= 500 && status !== 503;

/** Lines of one kind that one WebSocket session logs one by one; the rest are only counted. */
export const LINES_LOGGED = 8;

/**
 * Lines a client can make the server write as fast as it sends (refusals, cancels that cut
 * nothing): a session logs the first {@link LINES_LOGGED} of each kind, counts the rest, and logs
 * the counts once, when it closes. A flood costs a few lines, not one per message.
 */
export class LineQuota {
  #seen = 0;

  /** Counts one more; true while it may still be logged. */
  take(): boolean {
    return ++this.#seen <= LINES_LOGGED;
  }

  get seen(): number {
    return this.#seen;
  }

  get unlogged(): number {
    return Math.max(0, this.#seen - LINES_LOGGED);
  }
}

/**
 * A WebSocket session's refusal, recorded as {@link recordRefusal} records it while `quota`
 * allows, and after that only counted in the metrics. Internal failures are always logged (and
 * not counted against the quota): each comes from work the session's bounds already limit.
 */
export function recordSessionRefusal(
  log: FastifyBaseLogger,
  metrics: Metrics,
  quota: LineQuota,
  err: unknown,
  status: number,
  code: string,
  requestId: string | undefined,
): void {
  if (isFailure(status) || quota.take()) recordRefusal(log, metrics, err, status, code, requestId);
  else metrics.errors.inc({ code });
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
