/**
 * Per-instance metrics for CloudWatch with no agent and no permission: log lines in CloudWatch's
 * Embedded Metric Format (EMF), which CloudWatch Logs turns into metrics as it ingests the
 * container's output (SageMaker ships stdout to the endpoint's log group).
 *
 * Two kinds of line, because the two kinds of figure aggregate differently:
 * - Latencies (time to first audio, queue wait) and the real-time factor: every request's value,
 *   batched per interval into arrays (EMF takes up to 100 values per metric per line; more make
 *   more lines). CloudWatch computes percentiles from the values it receives, so an alarm on p95
 *   first audio needs each request's value: a per-minute mean or p95 computed here could not be
 *   combined across instances or minutes into a true p95.
 * - Counts and gauges (requests, errors by code, open sessions, HTTP streams): one value per
 *   interval. A count's per-minute sum is exact; a per-request line would only add log volume.
 */
import type { RunFigures } from '../../model/engine.ts';

/** EMF's limit on values per metric in one line. */
export const EMF_MAX_VALUES = 100;

export interface EmfSettings {
  readonly namespace: string;
  /** Dimension names and values on every metric (e.g. EndpointName, VariantName). */
  readonly dimensions: Readonly<Record<string, string>>;
}

/** What the reporter reads at each flush. */
export interface EmfSources {
  /** Errors by code since the process started (a monotonic counter). */
  errorCounts(): Promise<ReadonlyMap<string, number>>;
  openSessions(): number;
  httpStreams(): number;
}

interface MetricDef {
  readonly Name: string;
  readonly Unit: 'Milliseconds' | 'None' | 'Count';
}

const LATENCY_METRICS: readonly MetricDef[] = [
  { Name: 'TimeToFirstAudio', Unit: 'Milliseconds' },
  { Name: 'QueueWait', Unit: 'Milliseconds' },
  { Name: 'RealTimeFactor', Unit: 'None' },
];

/** One EMF document: the directive under `_aws`, and the dimension and metric values at the root. */
function emfLine(
  settings: EmfSettings,
  timestamp: number,
  metrics: readonly MetricDef[],
  values: Readonly<Record<string, number | readonly number[]>>,
  extraDimensions: Readonly<Record<string, string>> = {},
): string {
  const dimensions = { ...settings.dimensions, ...extraDimensions };
  return JSON.stringify({
    _aws: {
      Timestamp: timestamp,
      CloudWatchMetrics: [
        {
          Namespace: settings.namespace,
          Dimensions: [Object.keys(dimensions)],
          Metrics: metrics,
        },
      ],
    },
    ...dimensions,
    ...values,
  });
}

/**
 * Collects figures between flushes and writes EMF lines. Pure but for `write` and the clock, both
 * injected; `start` runs a timer that flushes every `intervalMs`.
 */
export class EmfReporter {
  readonly #settings: EmfSettings;
  readonly #sources: EmfSources;
  readonly #write: (line: string) => void;
  readonly #now: () => number;
  #ttfa: number[] = [];
  #queue: number[] = [];
  #rtf: number[] = [];
  #requests = 0;
  #lastErrors = new Map<string, number>();
  #timer: NodeJS.Timeout | undefined;

  constructor(
    settings: EmfSettings,
    sources: EmfSources,
    write: (line: string) => void,
    now: () => number = Date.now,
  ) {
    this.#settings = settings;
    this.#sources = sources;
    this.#write = write;
    this.#now = now;
  }

  /** One request synthesized to the end. */
  record(figures: Pick<RunFigures, 'ttfaMs' | 'firstQueueMs' | 'rtf' | 'audioS'>): void {
    this.#requests++;
    this.#ttfa.push(figures.ttfaMs);
    this.#queue.push(figures.firstQueueMs);
    if (figures.audioS > 0) this.#rtf.push(figures.rtf);
  }

  /** Writes what was collected since the last flush (latency lines only when there were requests). */
  async flush(): Promise<void> {
    const timestamp = this.#now();
    const ttfa = this.#ttfa.splice(0);
    const queue = this.#queue.splice(0);
    const rtf = this.#rtf.splice(0);
    for (let i = 0; i < ttfa.length; i += EMF_MAX_VALUES) {
      const values: Record<string, readonly number[]> = {
        TimeToFirstAudio: ttfa.slice(i, i + EMF_MAX_VALUES),
        QueueWait: queue.slice(i, i + EMF_MAX_VALUES),
      };
      const rtfPart = rtf.slice(i, i + EMF_MAX_VALUES);
      if (rtfPart.length > 0) values.RealTimeFactor = rtfPart;
      const metrics = LATENCY_METRICS.filter((m) => values[m.Name] !== undefined);
      this.#write(emfLine(this.#settings, timestamp, metrics, values));
    }

    const requests = this.#requests;
    this.#requests = 0;
    this.#write(
      emfLine(
        this.#settings,
        timestamp,
        [
          { Name: 'Requests', Unit: 'Count' },
          { Name: 'OpenSessions', Unit: 'Count' },
          { Name: 'HttpStreams', Unit: 'Count' },
        ],
        {
          Requests: requests,
          OpenSessions: this.#sources.openSessions(),
          HttpStreams: this.#sources.httpStreams(),
        },
      ),
    );

    // Errors by code: the counter's growth since the last flush, one line per code that grew.
    const counts = await this.#sources.errorCounts();
    for (const [code, total] of counts) {
      const grown = total - (this.#lastErrors.get(code) ?? 0);
      this.#lastErrors.set(code, total);
      if (grown <= 0) continue;
      this.#write(
        emfLine(
          this.#settings,
          timestamp,
          [{ Name: 'Errors', Unit: 'Count' }],
          { Errors: grown },
          { Code: code },
        ),
      );
    }
  }

  start(intervalMs: number, onError: (err: unknown) => void): void {
    this.#timer = setInterval(() => void this.flush().catch(onError), intervalMs);
    this.#timer.unref();
  }

  /** Stops the timer and writes what is left. */
  async stop(): Promise<void> {
    clearInterval(this.#timer);
    await this.flush();
  }
}

/**
 * Parses `Name=Value,Name=Value` (METRICS_EMF_DIMENSIONS). Names and values are kept as written;
 * EMF takes at most 30 dimensions, and a dimension set of ours adds `Code` to them.
 */
export function parseDimensions(raw: string): Record<string, string> | { problem: string } {
  const dimensions: Record<string, string> = {};
  for (const item of raw
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean)) {
    const eq = item.indexOf('=');
    const name = eq > 0 ? item.slice(0, eq).trim() : '';
    const value = eq > 0 ? item.slice(eq + 1).trim() : '';
    if (!name || !value)
      return { problem: `should be Name=Value pairs separated by commas; got ${JSON.stringify(item)}` };
    if (name === 'Code' || name === '_aws') return { problem: `the dimension name ${name} is reserved` };
    dimensions[name] = value;
  }
  if (Object.keys(dimensions).length > 29)
    return { problem: 'at most 29 dimensions (EMF allows 30; Code is ours)' };
  return dimensions;
}
