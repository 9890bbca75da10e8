/**
 * A day of traffic against a plan, simulated (scripts/lib/fleet-sim.ts): sessions arrive on a
 * daily cycle between the plan's trough (04:00) and peak (16:00), the plan's scaling policies add
 * and remove instances, and the same arrivals are replayed against fixed fleets of the plan's
 * maximum and minimum size for comparison. Prints the share of sessions whose first audio is late
 * (their instance was already at q_max), instance-hours, peak instances, and an hourly table;
 * `--readme` prints the same as a markdown block. Seeded: the same inputs give the same output.
 *
 * Usage: node dist/scripts/simulate-fleet.js --plan plan.json [--t-total-s N] [--hours 24] [--seed 1]
 *          [--session-s 180] [--readme] [--out result.json]
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { UsageError, intFlag, parseFlags, runMain } from './lib/cli.ts';
import { simulateDay, type DayResult, type FleetResult } from './lib/fleet-sim.ts';
import { DEFAULT_SESSION_S, parseSimPlan, type SimPlan } from './lib/plan.ts';
import { markdownTable, round } from './lib/stats.ts';

const USAGE = `Usage: node dist/scripts/simulate-fleet.js --plan FILE [options]

Options:
  --plan FILE       the plan that plan.js wrote (required)
  --t-total-s N     seconds from a scale-out request to the instance serving (default: the plan's)
  --hours N         hours to simulate, from 00:00 (default 24)
  --seed N          seed of the arrivals (default 1)
  --session-s N     mean session length in seconds (default: the plan's session_s, else ${DEFAULT_SESSION_S})
  --readme          print the result as a markdown block
  --out FILE        also write the figures as JSON
  -h, --help        show this help
`;

export interface CliIo {
  stdout: NodeJS.WritableStream;
  stderr: NodeJS.WritableStream;
}

interface Run {
  plan: SimPlan;
  tTotalS: number;
  hours: number;
  seed: number;
  sessionS: number;
  result: DayResult;
}

const percent = (share: number) => `${round(share * 100, 3)}%`;
const hh = (hour: number) => String(hour % 24).padStart(2, '0');

function summaryRows(run: Run): (string | number)[][] {
  const { policy } = run.plan;
  const row = (name: string, r: FleetResult) => [
    name,
    round(r.instanceHours, 1),
    r.arrivals,
    `${percent(r.missShare)} (${r.misses})`,
    r.peakInstances,
  ];
  return [
    row('autoscaled (plan)', run.result.autoscaled),
    row(`fixed at max_instances (${policy.maxInstances})`, run.result.fixedMax),
    row(`fixed at min_instances (${policy.minInstances})`, run.result.fixedMin),
  ];
}

function hourlyRows(run: Run): (string | number)[][] {
  return run.result.autoscaled.buckets.map((b) => [
    `${hh(b.index)}:00`,
    b.arrivals,
    round(b.meanConcurrency, 1),
    `${round(b.meanInstances, 1)} (≤ ${b.maxInstances})`,
    b.misses,
  ]);
}

const SUMMARY_HEADER = ['fleet', 'instance-hours', 'sessions', 'first audio late', 'peak instances'];
const HOURLY_HEADER = ['hour', 'arrivals', 'mean concurrency', 'instances, mean (max)', 'late'];

function describe(run: Run): string {
  const { plan, result } = run;
  const p = plan.policy;
  return (
    `${run.hours} h of a daily cycle between ${plan.trough} (04:00) and ${plan.peak} (16:00) concurrent sessions, ` +
    `mean session ${run.sessionS} s, seed ${run.seed}: ${result.autoscaled.arrivals} sessions ` +
    `(${result.sessions.initialDurationS.length} more in progress at 00:00). Plan: q_max ${plan.qMax}, target ` +
    `${p.targetPerInstance} per instance, one instance removed below ${p.scaleInThreshold} after ` +
    `${p.scaleInEvaluationPeriods} × ${p.scaleInPeriodS} s (cooldown ${p.scaleInCooldownS} s), ` +
    `${p.minInstances} to ${p.maxInstances} instances, T_total ${run.tTotalS} s. A session is late when its ` +
    `instance already had q_max sessions; instances count from the scale-out request to the end of the drain.`
  );
}

/** Columns padded to their widest cell. */
function textTable(header: readonly string[], rows: readonly (readonly (string | number)[])[]): string {
  const cells = [header, ...rows].map((r) => r.map(String));
  const widths = header.map((_, i) => Math.max(...cells.map((r) => r[i]!.length)));
  return cells
    .map((r) =>
      r
        .map((c, i) => c.padEnd(widths[i]!))
        .join('  ')
        .trimEnd(),
    )
    .join('\n');
}

function report(run: Run, markdown: boolean): string {
  if (markdown) {
    return [
      '<!-- simulate-fleet -->',
      describe(run),
      '',
      markdownTable(SUMMARY_HEADER, summaryRows(run)),
      '',
      'Autoscaled fleet, hour by hour:',
      '',
      markdownTable(HOURLY_HEADER, hourlyRows(run)),
      '<!-- /simulate-fleet -->',
    ].join('\n');
  }
  return [
    describe(run),
    '',
    textTable(SUMMARY_HEADER, summaryRows(run)),
    '',
    'Autoscaled fleet, hour by hour:',
    textTable(HOURLY_HEADER, hourlyRows(run)),
  ].join('\n');
}

function readPlanFile(path: string): SimPlan {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    throw new UsageError(`cannot read the plan ${path}: ${err instanceof Error ? err.message : String(err)}`);
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    throw new UsageError(`the plan ${path} is not JSON: ${err instanceof Error ? err.message : String(err)}`);
  }
  return parseSimPlan(value, path);
}

export async function main(argv: readonly string[], io: CliIo): Promise<number> {
  let run: Run;
  let values;
  try {
    values = parseFlags(argv, {
      plan: { type: 'string' },
      't-total-s': { type: 'string' },
      hours: { type: 'string' },
      seed: { type: 'string' },
      'session-s': { type: 'string' },
      readme: { type: 'boolean', default: false },
      out: { type: 'string' },
      help: { type: 'boolean', short: 'h' },
    });
    if (values.help) {
      io.stdout.write(USAGE);
      return 0;
    }
    if (values.plan === undefined) throw new UsageError('--plan is required');
    const plan = readPlanFile(values.plan);
    const tTotalS = intFlag('t-total-s', values['t-total-s'], plan.tTotalS, 1);
    const hours = intFlag('hours', values.hours, 24, 1, 24 * 28);
    const seed = intFlag('seed', values.seed, 1, 0, 2 ** 32 - 1);
    const sessionS = intFlag('session-s', values['session-s'], plan.sessionS ?? DEFAULT_SESSION_S, 1);
    const result = simulateDay({ ...plan, tTotalS, hours, seed, sessionS });
    run = { plan, tTotalS, hours, seed, sessionS, result };
  } catch (err) {
    if (!(err instanceof UsageError)) throw err;
    io.stderr.write(`simulate-fleet: ${err.message}\nRun with --help for usage.\n`);
    return 2;
  }
  io.stdout.write(`${report(run, values.readme)}\n`);
  if (values.out !== undefined) {
    // The figures, not the sessions: those are the seed's to regenerate.
    const { autoscaled, fixedMax, fixedMin } = run.result;
    const figures = {
      ...{ t_total_s: run.tTotalS, hours: run.hours, seed: run.seed, session_s: run.sessionS },
      ...{ autoscaled, fixed_max: fixedMax, fixed_min: fixedMin },
    };
    writeFileSync(values.out, `${JSON.stringify(figures, null, 2)}\n`);
  }
  return 0;
}

runMain(import.meta.url, 'simulate-fleet', () => main(process.argv.slice(2), process));
