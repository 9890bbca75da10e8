/**
 * The container's startup markers, read back from its log. A line of the form
 *
 *   === STAGE <name> t=<ISO-8601 UTC, ending in Z> elapsed_s=<seconds> ===
 *
 * marks the end of one startup stage (framework_init, weights_ready, warmup_done, ready); elapsed_s
 * counts from the process's start. The autoscaling planner takes the `ready` line's elapsed_s as the
 * part of T_total that happens inside the container. Pure: text in, marks out.
 */
import { STARTUP_STAGES, type StartupStage } from '../../server/observability/startup-stages.ts';

/** The stages the server marks, in order (server/observability/startup-stages.ts writes them). */
export const STAGES = STARTUP_STAGES;
export type Stage = StartupStage;

/** One marker line. */
export interface StageMark {
  readonly stage: string;
  /** The t= timestamp as written. */
  readonly at: string;
  /** The same instant, milliseconds since the epoch. */
  readonly atMs: number;
  readonly elapsedS: number;
  /** 1-based line number in the log. */
  readonly line: number;
}

/** A line that announces itself as a marker but does not follow the format. */
export class StartupLogError extends Error {
  override readonly name = 'StartupLogError';
}

// Anywhere in the line: log shippers (CloudWatch, docker) put their own prefix in front of it.
const PREFIX = '=== STAGE ';
const MARK = /=== STAGE (\S+) t=(\S+) elapsed_s=(\S+) ===/;
const ISO_UTC = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d+)?Z$/;
const SECONDS = /^\d+(?:\.\d+)?$/;

/**
 * Parses one line: its mark, or undefined when the line is not a marker at all.
 * @throws StartupLogError for a line that holds "=== STAGE " but not a well-formed marker, so a
 *   typo in the server's output is reported instead of silently moving T_total.
 */
export function parseStageLine(text: string, line = 1): StageMark | undefined {
  if (!text.includes(PREFIX)) return undefined;
  const m = MARK.exec(text);
  if (m === null) {
    throw new StartupLogError(
      `line ${line}: a startup marker should read "=== STAGE <name> t=<ISO-8601 UTC> elapsed_s=<seconds> ==="; got "${text.trim()}"`,
    );
  }
  const [, stage, at, elapsed] = m as unknown as [string, string, string, string];
  const atMs = Date.parse(at);
  if (!ISO_UTC.test(at) || Number.isNaN(atMs)) {
    throw new StartupLogError(
      `line ${line}: t= should be an ISO-8601 UTC time ending in Z (2026-12-01T14:00:00.000Z); got "${at}"`,
    );
  }
  if (!SECONDS.test(elapsed)) {
    throw new StartupLogError(`line ${line}: elapsed_s should be a number of seconds ≥ 0; got "${elapsed}"`);
  }
  return { stage, at, atMs, elapsedS: Number(elapsed), line };
}

/** Every marker in a log, in the order written. Lines that are not markers are skipped. */
export function parseStartupLog(text: string): StageMark[] {
  const marks: StageMark[] = [];
  text.split(/\r?\n/).forEach((line, i) => {
    const mark = parseStageLine(line, i + 1);
    if (mark !== undefined) marks.push(mark);
  });
  return marks;
}

/** The stages of one start, `ready` included. */
export interface StartupTimes {
  /** elapsed_s of each stage of that start that the log holds. */
  readonly stages: Partial<Record<Stage, number>>;
  /** elapsed_s of `ready`: seconds from the process's start to serving. */
  readonly readyS: number;
}

/**
 * The stages of the last start that reached `ready`. A log may hold several starts (a container
 * restarted, or logs of several instances concatenated): the marks of one start are the ones after
 * the previous `ready`, and the newest complete one is what the next scale-out will look like.
 * @throws StartupLogError when no `ready` mark is present, or elapsed_s goes backwards within a start.
 */
export function startupTimes(marks: readonly StageMark[]): StartupTimes {
  let readyAt = -1;
  for (let i = marks.length - 1; i >= 0 && readyAt < 0; i--) if (marks[i]!.stage === 'ready') readyAt = i;
  if (readyAt < 0) {
    const seen =
      marks.length === 0 ? 'no markers at all' : `only ${[...new Set(marks.map((m) => m.stage))].join(', ')}`;
    throw new StartupLogError(
      `the log has no "=== STAGE ready …" marker (${seen}); did the server finish starting?`,
    );
  }
  let first = readyAt;
  while (first > 0 && marks[first - 1]!.stage !== 'ready') first--;
  const stages: Partial<Record<Stage, number>> = {};
  let previous = 0;
  for (const mark of marks.slice(first, readyAt + 1)) {
    if (mark.elapsedS < previous) {
      throw new StartupLogError(
        `line ${mark.line}: elapsed_s ${mark.elapsedS} of ${mark.stage} is before the previous stage's ${previous}`,
      );
    }
    previous = mark.elapsedS;
    if ((STAGES as readonly string[]).includes(mark.stage)) stages[mark.stage as Stage] = mark.elapsedS;
  }
  return { stages, readyS: marks[readyAt]!.elapsedS };
}
