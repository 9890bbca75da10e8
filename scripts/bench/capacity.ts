/**
 * Q_max, the per-instance capacity the autoscaling plan is built on (scripts/lib/capacity.ts): the
 * closed-loop ladder of concurrent streams whose p95 time to first audio stays within the SLO.
 * Writes the capacity file `npm run plan` reads (docs/bench/capacity-<transport>.json).
 */
import {
  LADDER_DEFAULTS,
  capacityTable,
  capacityVerdict,
  httpUrlDriver,
  runLadder,
  sageMakerHttpDriver,
  sageMakerWsDriver,
  wsUrlDriver,
  type CapacityReport,
  type Transport,
} from '../lib/capacity.ts';
import type { Case } from '../lib/bench-runner.ts';
import { SENTENCES } from '../lib/bench-texts.ts';
import { UsageError } from '../lib/cli.ts';

const int = (d: number, min: number, help: string, max?: number) =>
  ({ kind: 'int', default: d, min, ...(max ? { max } : {}), help }) as const;

export const capacity: Case = {
  name: 'capacity',
  summary:
    'Q_max: the ladder of concurrent streams within the time-to-first-audio SLO (npm run plan reads it)',
  about:
    'The most concurrent streams one instance serves while the p95 time to first audio stays within the SLO: ' +
    'N virtual users (WebSocket sessions, or streaming POST clients), each sending a sentence and the next as ' +
    'soon as the last one’s audio is complete, N = 1, 2, 4, 8, … until a rung misses the SLO or is refused, then ' +
    'bisection. Against the server it starts (the real-cost stand-in unless --repeat 0 or --model-dir), a ' +
    'running one (--url) or a SageMaker endpoint (--endpoint, through the client package). `npm run capacity` ' +
    'is the same as `npm run bench -- capacity`.',
  servers: [{ name: 'ours' }],
  models: ['real'],
  trials: 1,
  measures: ['capacity', 'ttfa'],
  flags: {
    transport: {
      kind: 'string',
      default: 'ws',
      help: 'ws (WebSocket sessions) or http (streaming POST clients)',
    },
    endpoint: { kind: 'string', help: 'a SageMaker endpoint instead of a server' },
    region: { kind: 'string', help: 'the endpoint’s AWS region' },
    'slo-ms': int(LADDER_DEFAULTS.sloMs, 1, 'the time-to-first-audio SLO'),
    percentile: int(LADDER_DEFAULTS.percentile, 1, 'the percentile held to it', 99),
    'rung-s': int(LADDER_DEFAULTS.rungS, 1, 'seconds per rung after its warm-up'),
    'warmup-s': int(LADDER_DEFAULTS.warmupS, 0, 'seconds at a rung’s start not counted'),
    'min-requests': int(LADDER_DEFAULTS.minRequests, 1, 'counted requests a rung needs'),
    'max-concurrency': int(LADDER_DEFAULTS.maxConcurrency, 1, 'the ladder’s cap'),
  },
  external: (s) => s.flags.endpoint !== undefined,
  block: (s) => `capacity:${s.flags.transport}`,
  file: (s) => `capacity-${s.flags.transport}.json`,
  async run(ctx) {
    const f = ctx.settings.flags as Record<string, string | number | undefined>;
    const transport = f.transport as Transport;
    if (transport !== 'ws' && transport !== 'http')
      throw new UsageError(`--transport should be ws or http; got "${transport}"`);
    const endpoint = f.endpoint as string | undefined;
    const region = f.region as string | undefined;
    const driver = endpoint
      ? (transport === 'ws' ? sageMakerWsDriver : sageMakerHttpDriver)(endpoint, region)
      : transport === 'ws'
        ? wsUrlDriver(ctx.server!.ws)
        : httpUrlDriver(ctx.server!.http);
    ctx.log(
      `capacity ladder: ${transport} against ${ctx.model ?? driver.description}; p${f.percentile} ≤ ${f['slo-ms']} ms`,
    );
    const ladder = await runLadder(
      driver,
      {
        transport,
        sloMs: f['slo-ms'] as number,
        percentile: f.percentile as number,
        rungS: f['rung-s'] as number,
        warmupS: f['warmup-s'] as number,
        minRequests: f['min-requests'] as number,
        maxConcurrency: f['max-concurrency'] as number,
        texts: SENTENCES,
      },
      (line) => ctx.log(`  ${line}`),
    );
    // The model it ran on says more than a server's passing port.
    const report: CapacityReport = { ...ladder, target: ctx.model ?? driver.description };
    ctx.figure({ measure: 'capacity', what: 'Q_max', unit: 'streams', samples: [report.q_max] });
    for (const r of report.rungs)
      ctx.figure({
        measure: 'ttfa',
        what: `${r.concurrency} streams, p${report.percentile}`,
        unit: 'ms',
        samples: [r.percentile_ms],
      });
    return report;
  },
  report(_figures, _settings, returned) {
    // One ladder per run: the last trial's is the capacity file.
    const report = returned.at(-1) as CapacityReport;
    return { tables: [capacityTable(report)], notes: [capacityVerdict(report)], fields: { ...report } };
  },
};
