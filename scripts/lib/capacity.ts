/**
 * Q_max: the most concurrent streams one instance serves while the p95 time to first audio stays
 * within an SLO. A closed-loop ladder: N virtual users (WebSocket sessions, or POST clients), each
 * sending a sentence and the next as soon as the last one's audio is complete, N = 1, 2, 4, 8, …
 * until a rung misses the SLO (or is refused: an instance at its admission limit is full), then
 * bisection between the last rung within it and the first outside. Drivers for a URL (this
 * server, local or not) and for a SageMaker endpoint through the client toolkit.
 */
import { SageMakerTtsSession, invokeStreaming } from 'kokoro-stream-client/sagemaker';
import { TtsSession } from 'kokoro-stream-client';
import { timePost, timeStream, timeWs, type Timing } from './bench-measures.ts';
import type { Table } from './bench-runner.ts';
import { quantile, round } from './stats.ts';

export type Transport = 'ws' | 'http';

/** One request as a virtual user saw it. */
export interface Sample {
  /** Send → first audio; NaN when none came. */
  readonly ttfaMs: number;
  /** An error code (`busy`, `refused`, `http_503`, …) for a request that did not complete. */
  readonly error?: string;
  /** When it was sent, ms since the rung began. */
  readonly atMs: number;
}

/** What drives the target: opens virtual users, each of which runs one request at a time. */
export interface Driver {
  readonly description: string;
  open(): Promise<VirtualUser>;
  /**
   * Waits until the users of the last rung are gone from the target (its sessions closed), so that
   * they are not counted against the next rung's admission.
   */
  settle(): Promise<void>;
}

export interface VirtualUser {
  request(text: string): Promise<Omit<Sample, 'atMs'>>;
  close(): Promise<void>;
}

export interface LadderOptions {
  readonly transport: Transport;
  readonly sloMs: number;
  /** 95 by default: the percentile held to the SLO. */
  readonly percentile: number;
  /** Seconds each rung runs (after its warm-up). */
  readonly rungS: number;
  /** Seconds at the start of a rung whose requests are not counted (sessions opening, queues filling). */
  readonly warmupS: number;
  /** A rung runs on, up to 3 × rungS, until it has this many counted requests: a p95 needs some. */
  readonly minRequests: number;
  /** The ladder never goes above this many users. */
  readonly maxConcurrency: number;
  readonly texts: readonly string[];
}

export const LADDER_DEFAULTS = {
  sloMs: 3000,
  percentile: 95,
  rungS: 20,
  warmupS: 3,
  minRequests: 40,
  maxConcurrency: 256,
} as const;

export interface Rung {
  readonly concurrency: number;
  /** Counted requests (after the warm-up). */
  readonly requests: number;
  readonly errors: number;
  /** Error codes and how often each came. */
  readonly errorCodes: Readonly<Record<string, number>>;
  readonly ttfa_ms: { readonly p50: number; readonly p95: number; readonly p99: number };
  /** The SLO percentile of this rung (p95 by default). */
  readonly percentile_ms: number;
  readonly within_slo: boolean;
  readonly seconds: number;
}

export interface CapacityReport {
  readonly version: 1;
  readonly kind: 'capacity';
  readonly target: string;
  readonly transport: Transport;
  readonly slo_ms: number;
  readonly percentile: number;
  readonly rungs: readonly Rung[];
  /** The most users of a rung within the SLO; 0 when even one user misses it. */
  readonly q_max: number;
  /** Whether q_max is the ladder's cap, not a limit that was found. */
  readonly capped: boolean;
  readonly measured_at: string;
}

/**
 * A rung is within the SLO when its requests all completed (a refusal means the instance is full)
 * and the chosen percentile of their time to first audio is at most the SLO.
 */
export function judgeRung(
  concurrency: number,
  samples: readonly Sample[],
  options: Pick<LadderOptions, 'sloMs' | 'percentile' | 'warmupS'>,
  seconds: number,
): Rung {
  const counted = samples.filter((s) => s.atMs >= options.warmupS * 1000);
  const errors = counted.filter((s) => s.error !== undefined);
  const codes: Record<string, number> = {};
  for (const e of errors) codes[e.error!] = (codes[e.error!] ?? 0) + 1;
  const ttfa = counted.filter((s) => s.error === undefined).map((s) => s.ttfaMs);
  const q = (p: number) => round(quantile(ttfa, p / 100), 1);
  const percentileMs = q(options.percentile);
  return {
    concurrency,
    requests: counted.length,
    errors: errors.length,
    errorCodes: codes,
    ttfa_ms: { p50: q(50), p95: q(95), p99: q(99) },
    percentile_ms: percentileMs,
    within_slo: counted.length > 0 && errors.length === 0 && percentileMs <= options.sloMs,
    seconds: round(seconds, 1),
  };
}

/** Runs one rung: `concurrency` users in a closed loop for the rung's time. */
export async function runRung(
  driver: Driver,
  concurrency: number,
  options: LadderOptions,
  progress: (line: string) => void = () => {},
): Promise<Rung> {
  const started = performance.now();
  const runFor = (options.warmupS + options.rungS) * 1000;
  const hardStop = (options.warmupS + 3 * options.rungS) * 1000;
  const samples: Sample[] = [];
  const counted = () => samples.filter((s) => s.atMs >= options.warmupS * 1000).length;
  const done = () => {
    const elapsed = performance.now() - started;
    return elapsed >= hardStop || (elapsed >= runFor && counted() >= options.minRequests);
  };
  const users = await Promise.allSettled(Array.from({ length: concurrency }, () => driver.open()));
  const open = users.flatMap((u) => (u.status === 'fulfilled' ? [u.value] : []));
  // A user the target refused to open counts as one refused request: the instance was full.
  for (const u of users) {
    if (u.status === 'rejected')
      samples.push({ ttfaMs: NaN, error: 'refused', atMs: options.warmupS * 1000 });
  }
  await Promise.all(
    open.map(async (user, i) => {
      for (let k = 0; !done(); k++) {
        const atMs = performance.now() - started;
        const text = options.texts[(i + k) % options.texts.length]!;
        let sample: Omit<Sample, 'atMs'>;
        try {
          sample = await user.request(text);
        } catch (err) {
          sample = { ttfaMs: NaN, error: (err as { code?: string }).code ?? 'failed' };
        }
        samples.push({ ...sample, atMs });
        // A user whose session is gone stops; its refusal has been counted.
        if (sample.error === 'closed') break;
      }
    }),
  );
  await Promise.allSettled(open.map((u) => u.close()));
  await driver.settle();
  const rung = judgeRung(concurrency, samples, options, (performance.now() - started) / 1000);
  progress(
    `N=${String(concurrency).padStart(3)}: ${rung.requests} requests, p${options.percentile} ${rung.percentile_ms} ms, ${rung.errors} errors → ${rung.within_slo ? 'within' : 'OUTSIDE'} the ${options.sloMs} ms SLO`,
  );
  return rung;
}

/**
 * The ladder: doubles N while rungs are within the SLO, then bisects between the last within and the
 * first outside until they are adjacent. Stops by itself: at most log2(maxConcurrency) doublings
 * and as many bisection steps.
 */
export async function runLadder(
  driver: Driver,
  options: LadderOptions,
  progress: (line: string) => void = () => {},
): Promise<CapacityReport> {
  const rungs: Rung[] = [];
  const run = async (n: number) => {
    const rung = await runRung(driver, n, options, progress);
    rungs.push(rung);
    return rung.within_slo;
  };
  let good = 0;
  let bad: number | undefined;
  for (let n = 1; ; n = Math.min(n * 2, options.maxConcurrency)) {
    if (!(await run(n))) {
      bad = n;
      break;
    }
    good = n;
    if (n >= options.maxConcurrency) break;
  }
  while (bad !== undefined && bad - good > 1) {
    const mid = Math.floor((good + bad) / 2);
    if (await run(mid)) good = mid;
    else bad = mid;
  }
  return {
    version: 1,
    kind: 'capacity',
    target: driver.description,
    transport: options.transport,
    slo_ms: options.sloMs,
    percentile: options.percentile,
    rungs: [...rungs].sort((a, b) => a.concurrency - b.concurrency),
    q_max: good,
    capped: bad === undefined,
    measured_at: new Date().toISOString(),
  };
}

/** The rungs as the runner renders tables. */
export function capacityTable(report: CapacityReport): Table {
  return {
    title: `Rungs of the ladder against ${report.target}`,
    header: [
      report.transport === 'ws' ? 'sessions' : 'POST clients',
      'requests',
      'errors',
      'TTFA p50 ms',
      'TTFA p95 ms',
      'TTFA p99 ms',
      `p${report.percentile} ≤ ${report.slo_ms} ms`,
    ],
    rows: report.rungs.map((r) => [
      r.concurrency,
      r.requests,
      r.errors === 0
        ? 0
        : `${r.errors} (${Object.entries(r.errorCodes)
            .map(([c, n]) => `${c} ${n}`)
            .join(', ')})`,
      r.ttfa_ms.p50,
      r.ttfa_ms.p95,
      r.ttfa_ms.p99,
      r.within_slo ? 'yes' : 'no',
    ]),
  };
}

/** One line: Q_max and what it was measured against. */
export function capacityVerdict(report: CapacityReport): string {
  const verdict =
    report.q_max === 0
      ? `Q_max = 0: even one ${report.transport === 'ws' ? 'session' : 'client'} misses the SLO`
      : `Q_max = ${report.q_max}${report.capped ? ` (the ladder's cap: raise --max-concurrency)` : ''}`;
  return `${verdict} (${report.transport}, p${report.percentile} time to first audio ≤ ${report.slo_ms} ms, ${report.target})`;
}

// ---------------------------------------------------------------------------------------------
// Drivers: requests through the benchmarks' one time-to-first-audio measure

const sample = (t: Timing): Omit<Sample, 'atMs'> =>
  t.error ? { ttfaMs: NaN, error: t.error } : { ttfaMs: t.ttfaMs };

/** Polls the server's /ping until it reports no open session (at most `timeoutMs`). */
async function sessionsGone(base: string, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    try {
      const ping = (await (await fetch(`${base}/ping`)).json()) as { sessions?: number };
      if (!ping.sessions) return;
    } catch {
      // not answering: nothing to wait for
      return;
    }
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** SageMaker gives no session count: a pause long enough for closed streams to be gone. */
const SAGEMAKER_SETTLE_MS = 3000;

/** WebSocket sessions on a URL, through the client toolkit (no retries: a refusal is the verdict). */
export function wsUrlDriver(url: string): Driver {
  const base = url.replace(/^ws/, 'http').replace(/\/invocations-bidirectional-stream$/, '');
  return {
    description: url,
    settle: () => sessionsGone(base),
    async open() {
      const session = await TtsSession.connect(url, { retries: 0 });
      return {
        request: async (text) => sample(await timeWs(session, text)),
        close: async () => session.abort(),
      };
    },
  };
}

/** Streaming POSTs to `/invocations` on a URL; time to the first body byte. */
export function httpUrlDriver(base: string): Driver {
  return {
    description: `${base}/invocations`,
    settle: async () => {},
    open: async () => ({
      request: async (text) => sample(await timePost(base, text)),
      close: async () => {},
    }),
  };
}

/** Bidirectional streams to a SageMaker endpoint, through the client toolkit. */
export function sageMakerWsDriver(endpointName: string, region: string | undefined): Driver {
  return {
    description: `sagemaker:${endpointName}`,
    settle: () => new Promise((r) => setTimeout(r, SAGEMAKER_SETTLE_MS)),
    async open() {
      const session = await SageMakerTtsSession.connect({ endpointName, ...(region ? { region } : {}) });
      const events = session.events();
      return {
        request: async (text) => sample(await timeWs(session, text, {}, events)),
        close: async () => {
          await session.close().catch(() => {});
        },
      };
    },
  };
}

/** Response streams (InvokeEndpointWithResponseStream) from a SageMaker endpoint. */
export function sageMakerHttpDriver(endpointName: string, region: string | undefined): Driver {
  const options = { format: 'pcm' as const };
  return {
    description: `sagemaker:${endpointName}`,
    settle: async () => {},
    open: async () => ({
      request: async (text) =>
        sample(
          await timeStream(
            invokeStreaming({
              endpointName,
              ...(region ? { region } : {}),
              text,
              transport: 'binary',
              options,
            }),
          ),
        ),
      close: async () => {},
    }),
  };
}
