/**
 * Startup stage markers: one plain line per stage on stdout, besides the JSON log, in the form the
 * reference project's `tts-bench ttotal` parses, so that the time from a capacity request to an
 * instance serving (T_total) can be split into stages from the container's log:
 *
 *   === STAGE weights_ready t=2026-12-01T14:26:09.123Z elapsed_s=1.204 ===
 *
 * `elapsed_s` counts from the start of the process.
 */

/** The stages, in the order the process passes them. */
export const STARTUP_STAGES = ['framework_init', 'weights_ready', 'warmup_done', 'ready'] as const;
export type StartupStage = (typeof STARTUP_STAGES)[number];

export function stageLine(stage: StartupStage, at: Date, elapsedS: number): string {
  return `=== STAGE ${stage} t=${at.toISOString()} elapsed_s=${elapsedS.toFixed(3)} ===`;
}

/** Writes a stage's line, timed now, from the process's start (performance's time origin). */
export function markStage(stage: StartupStage, write: (line: string) => void): void {
  write(`${stageLine(stage, new Date(), performance.now() / 1000)}\n`);
}
