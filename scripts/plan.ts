/**
 * The autoscaling planner's command line: reads the capacity file that the capacity ladder wrote
 * (Q_max within the SLO), takes the expected load and T_total, prints the plan as a table and
 * writes it as JSON for `deploy --autoscaling`. T_total is stated (--t-total-s) or taken from a
 * container log's `=== STAGE ready … elapsed_s=… ===` marker plus the provisioning time
 * (--startup-log, --provision-s). The formulas and their reasons: docs/autoscaling.md.
 *
 * Usage: node dist/scripts/plan.js --capacity FILE --surge 1.5 --peak 200 --trough 10
 *          (--t-total-s 420 | --startup-log FILE [--provision-s 240]) [--session-s 180] [--out plan.json]
 *          [--min-instances N] [--runs 500] [--seed 1]
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { UsageError, intFlag, parseFlags, runMain } from './lib/cli.ts';
import {
  DEFAULT_PROVISION_S,
  DEFAULT_SESSION_S,
  EXCEEDED_WARN_SHARE,
  buildPlan,
  formatPlan,
  parseCapacity,
  tTotalFromStartup,
  type PlanInputs,
} from './lib/plan.ts';
import { StartupLogError, parseStartupLog, startupTimes } from './lib/startup-stages.ts';

const USAGE = `Usage: node dist/scripts/plan.js --capacity FILE --surge X --peak N --trough N
         (--t-total-s S | --startup-log FILE [--provision-s S]) [options]

Required:
  --capacity FILE     the capacity file of the ladder ("kind": "capacity", with q_max)
  --surge X           largest growth of concurrent load expected within T_total (1.5 = +50%), ≥ 1
  --peak N            mean concurrent streams at the busiest time of day
  --trough N          mean concurrent streams at the quietest time of day
  and T_total, the seconds from a capacity request to a new instance serving, either
  --t-total-s S       stated, or
  --startup-log FILE  a container log with "=== STAGE ready … elapsed_s=… ===": its elapsed_s plus
  --provision-s S     instance provisioning and image pull before the process starts (default ${DEFAULT_PROVISION_S})

Options:
  --session-s S       mean length of one stream in seconds (default ${DEFAULT_SESSION_S})
  --min-instances N   keep at least N instances (default: enough for the trough at the target)
  --out FILE          where the plan goes (default plan.json)
  --runs N            surge-check runs per fleet size (default 500)
  --seed N            surge-check seed (default 1)
  -h, --help          show this help
`;

export interface CliIo {
  stdout: NodeJS.WritableStream;
  stderr: NodeJS.WritableStream;
}

/** A finite number flag of at least `min`. */
function numberFlag(name: string, raw: string | undefined, min: number): number {
  if (raw === undefined) throw new UsageError(`--${name} is required`);
  const value = Number(raw);
  if (raw.trim() === '' || !Number.isFinite(value) || value < min) {
    throw new UsageError(`--${name} should be a number of ${min} or more; got "${raw}"`);
  }
  return value;
}

function readText(path: string, what: string): string {
  try {
    return readFileSync(path, 'utf8');
  } catch (err) {
    throw new UsageError(
      `cannot read the ${what} ${path}: ${err instanceof Error ? err.message : String(err)}`,
    );
  }
}

function readJson(path: string, what: string): unknown {
  const text = readText(path, what);
  try {
    return JSON.parse(text);
  } catch (err) {
    throw new UsageError(
      `the ${what} ${path} is not JSON: ${err instanceof Error ? err.message : String(err)}`,
    );
  }
}

interface Parsed {
  inputs: PlanInputs;
  out: string;
  runs: number;
  seed: number;
}

/** Reads the flags and the files they name. @throws UsageError for every mistake. */
function parse(argv: readonly string[]): Parsed | 'help' {
  const values = parseFlags(argv, {
    capacity: { type: 'string' },
    surge: { type: 'string' },
    peak: { type: 'string' },
    trough: { type: 'string' },
    't-total-s': { type: 'string' },
    'startup-log': { type: 'string' },
    'provision-s': { type: 'string' },
    'session-s': { type: 'string' },
    'min-instances': { type: 'string' },
    out: { type: 'string', default: 'plan.json' },
    runs: { type: 'string' },
    seed: { type: 'string' },
    help: { type: 'boolean', short: 'h' },
  });
  if (values.help) return 'help';
  if (values.capacity === undefined) throw new UsageError('--capacity is required');
  const surge = numberFlag('surge', values.surge, 1);
  const peak = numberFlag('peak', values.peak, 0);
  const trough = numberFlag('trough', values.trough, 0);
  if (peak <= 0) throw new UsageError(`--peak should be above 0; got "${values.peak}"`);
  if (trough > peak) throw new UsageError(`--trough (${trough}) should be at most --peak (${peak})`);
  const sessionS = intFlag('session-s', values['session-s'], DEFAULT_SESSION_S, 1);
  const floor = values['min-instances'];
  const minInstancesFloor = floor === undefined ? undefined : intFlag('min-instances', floor, 1, 1);
  const runs = intFlag('runs', values.runs, 500, 1, 100_000);
  const seed = intFlag('seed', values.seed, 1, 0, 2 ** 32 - 1);

  const stated = values['t-total-s'];
  const log = values['startup-log'];
  if ((stated === undefined) === (log === undefined)) {
    throw new UsageError('give T_total one way: --t-total-s S, or --startup-log FILE (with --provision-s S)');
  }
  if (stated !== undefined && values['provision-s'] !== undefined) {
    throw new UsageError('--provision-s goes with --startup-log; --t-total-s already includes provisioning');
  }
  let tTotalS: number;
  let tTotalFrom: string;
  if (stated !== undefined) {
    tTotalS = intFlag('t-total-s', stated, 0, 1);
    tTotalFrom = 'stated with --t-total-s';
  } else {
    const provisionS = intFlag('provision-s', values['provision-s'], DEFAULT_PROVISION_S, 0);
    let readyS: number;
    try {
      readyS = startupTimes(parseStartupLog(readText(log!, 'startup log'))).readyS;
    } catch (err) {
      if (err instanceof StartupLogError) throw new UsageError(`startup log ${log}: ${err.message}`);
      throw err;
    }
    tTotalS = tTotalFromStartup(readyS, provisionS);
    tTotalFrom = `ceil(ready elapsed_s + provision_s) = ceil(${readyS} + ${provisionS}) = ${tTotalS} (from ${log})`;
  }
  const capacity = parseCapacity(readJson(values.capacity, 'capacity file'), values.capacity);
  return {
    inputs: { capacity, surge, peak, trough, tTotalS, tTotalFrom, sessionS, minInstancesFloor },
    out: values.out,
    runs,
    seed,
  };
}

export async function main(argv: readonly string[], io: CliIo): Promise<number> {
  let parsed: Parsed | 'help';
  let plan;
  try {
    parsed = parse(argv);
    if (parsed === 'help') {
      io.stdout.write(USAGE);
      return 0;
    }
    plan = buildPlan(parsed.inputs, { runs: parsed.runs, seed: parsed.seed });
  } catch (err) {
    if (!(err instanceof UsageError)) throw err;
    io.stderr.write(`plan: ${err.message}\nRun with --help for usage.\n`);
    return 2;
  }
  io.stdout.write(`${formatPlan(plan)}\n`);
  writeFileSync(parsed.out, `${JSON.stringify(plan, null, 2)}\n`);
  io.stdout.write(`\nwrote ${parsed.out}\n`);
  const check = plan.surge_check;
  if (check.exceeded_share > EXCEEDED_WARN_SHARE) {
    const sizes = check.by_instances
      .filter((s) => s.exceeded_share > EXCEEDED_WARN_SHARE)
      .map((s) => `${s.instances} instances: ${(s.exceeded_share * 100).toFixed(1)}%`)
      .join(', ');
    io.stderr.write(
      `plan: warning: in the surge check an instance went above q_max ${plan.q_max} before new capacity served ` +
        `in more than ${EXCEEDED_WARN_SHARE * 100}% of runs (${sizes}). What pushes it over is the load's own ` +
        `random fluctuation, which in a small fleet is as large as the margin between target_per_instance × ` +
        `window_surge and q_max, and which also delays detection; more instances at the trough (they share the ` +
        `fluctuation: --min-instances) or a lower target_per_instance reduce it. See docs/autoscaling.md.\n`,
    );
  }
  return 0;
}

runMain(import.meta.url, 'plan', () => main(process.argv.slice(2), process));
