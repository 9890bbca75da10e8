/**
 * The autoscaling planner: from the measured capacity of one instance (Q_max streams within the
 * time-to-first-audio SLO), the expected load (trough, peak, surge) and the time new capacity
 * takes to arrive (T_total), the settings of the two scaling policies and of the server's
 * admission limits, each with the formula that produced it. Pure; docs/autoscaling.md gives the
 * reasoning behind every formula and where it departs from the reference rule target = Q_max / surge.
 */
import { UsageError } from './cli.ts';
import type { ScalingPlan } from './deploy-plan.ts';
import {
  METRIC_PERIOD_S,
  SCALE_OUT_DATAPOINTS,
  deriveSeed,
  generateSessions,
  growthProfile,
  simulateFleet,
  type ScalingPolicy,
} from './fleet-sim.ts';

/** Seconds from load crossing the target to target tracking asking for capacity (an assumption). */
export const DETECTION_S = METRIC_PERIOD_S * SCALE_OUT_DATAPOINTS;
export const DEFAULT_PROVISION_S = 240;
export const DEFAULT_SESSION_S = 180;
/** Target tracking's scale-out cooldown: short, since it counts capacity still on its way. */
export const SCALE_OUT_COOLDOWN_S = 60;
/** Period of the scale-in alarm: whole minutes, as for a standard-resolution alarm. */
export const SCALE_IN_PERIOD_S = 60;
/** Fewest scale-in evaluation periods: the 15 minutes target tracking's own scale-in alarm uses. */
export const MIN_SCALE_IN_PERIODS = 15;
/** Session lengths a scale-in decision waits for, so that the metric reflects the smaller fleet. */
export const SETTLE_SESSIONS = 3;
/** Sentences a stream holds in the queue: the one it needs next and two of look-ahead. */
export const QUEUED_PER_STREAM = 3;
/** Share of surge-check runs above which the planner warns. */
export const EXCEEDED_WARN_SHARE = 0.05;

export const TRANSPORTS = ['ws', 'http'] as const;
export type Transport = (typeof TRANSPORTS)[number];

/** What the plan uses of the capacity file that `npm run capacity` writes. */
export interface Capacity {
  readonly transport: Transport;
  readonly sloMs: number;
  readonly percentile: number;
  readonly qMax: number;
  readonly target: string;
  readonly measuredAt: string;
}

const shown = (value: unknown): string => (value === undefined ? 'nothing' : JSON.stringify(value));

/**
 * Checks a parsed capacity file.
 * @throws UsageError naming the field, what it should be and what it is.
 */
export function parseCapacity(value: unknown, source: string): Capacity {
  const fail = (field: string, expected: string, got: unknown) =>
    new UsageError(`capacity file ${source}: "${field}" should be ${expected}; got ${shown(got)}`);
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new UsageError(
      `capacity file ${source} should hold a JSON object, as \`npm run capacity\` writes it`,
    );
  }
  const c = value as Record<string, unknown>;
  if (c.kind !== 'capacity') throw fail('kind', '"capacity"', c.kind);
  if (c.version !== 1) throw fail('version', '1', c.version);
  if (!TRANSPORTS.includes(c.transport as Transport)) throw fail('transport', '"ws" or "http"', c.transport);
  const positive = (field: string) => {
    const got = c[field];
    if (typeof got !== 'number' || !Number.isFinite(got) || got <= 0)
      throw fail(field, 'a number above 0', got);
    return got;
  };
  const sloMs = positive('slo_ms');
  const percentile = positive('percentile');
  if (!Number.isInteger(c.q_max) || (c.q_max as number) < 0) {
    throw fail('q_max', 'a whole number of 0 or more', c.q_max);
  }
  if (c.q_max === 0) {
    throw new UsageError(
      `capacity file ${source}: q_max is 0: not even one stream met p${percentile} ≤ ${sloMs} ms; ` +
        'no fleet size can keep this SLO on this instance type',
    );
  }
  return {
    transport: c.transport as Transport,
    sloMs,
    percentile,
    qMax: c.q_max as number,
    target: typeof c.target === 'string' ? c.target : 'unknown',
    measuredAt: typeof c.measured_at === 'string' ? c.measured_at : 'unknown',
  };
}

/** Everything a plan is computed from. */
export interface PlanInputs {
  readonly capacity: Capacity;
  /** Largest growth factor of concurrent load expected within T_total. */
  readonly surge: number;
  /** Mean concurrent streams at the busiest time of day. */
  readonly peak: number;
  /** Mean concurrent streams at the quietest time of day. */
  readonly trough: number;
  readonly tTotalS: number;
  /** How T_total was found, for the formulas. */
  readonly tTotalFrom: string;
  /** Mean length of one stream (a session, or a streaming POST), in seconds. */
  readonly sessionS: number;
  /** A floor under min_instances chosen by the operator (--min-instances), e.g. after a surge-check warning. */
  readonly minInstancesFloor?: number;
}

export interface SurgeSize {
  readonly instances: number;
  readonly exceeded_share: number;
  readonly worst_per_instance: number;
}

export interface SurgeCheck {
  readonly runs: number;
  readonly seed: number;
  /** The worst over the fleet sizes tried. */
  readonly exceeded_share: number;
  readonly worst_per_instance: number;
  readonly by_instances: SurgeSize[];
}

/** The plan file: what the deploy tooling reads (ScalingPlan, its one definition), and more. */
export interface Plan extends ScalingPlan {
  readonly surge: number;
  readonly peak: number;
  readonly trough: number;
  readonly admission: { MAX_SESSIONS: string; MAX_QUEUED_JOBS: string; MAX_HTTP_STREAMS: string };
  readonly surge_check: SurgeCheck;
  /** Beyond what deploy reads: the inputs and intermediate figures, for the simulator and for people. */
  readonly session_s: number;
  readonly detection_s: number;
  readonly window_s: number;
  readonly window_surge: number;
  readonly capacity_measured_at: string;
  readonly formulas: Readonly<Record<string, string>>;
}

const round = (x: number, digits: number) => Math.round(x * 10 ** digits) / 10 ** digits;
/** Floors to `digits` decimals, with room for binary fractions (2.4 is 2.3999…). */
const floorTo = (x: number, digits: number) => Math.floor(x * 10 ** digits + 1e-9) / 10 ** digits;

/** T_total from a startup log: the container's own seconds to `ready`, plus provisioning, whole seconds up. */
export function tTotalFromStartup(readyS: number, provisionS: number): number {
  return Math.ceil(readyS + provisionS - 1e-9);
}

/**
 * The surge stretched from T_total to the window in which it must be absorbed, T_total plus the
 * detection delay, assuming the load grows at a constant compound rate: surge ^ (window / T_total).
 */
export function windowSurge(surge: number, tTotalS: number, detectionS = DETECTION_S): number {
  return surge ** ((tTotalS + detectionS) / tTotalS);
}

/**
 * target_per_instance: the most concurrent streams per instance, on average, from which the load
 * can grow by the window's surge and still stay within Q_max: floor(Q_max / window surge), at least
 * 1 and at most Q_max.
 * @throws UsageError "one instance cannot absorb this surge" when that is below 1.
 */
export function targetPerInstance(
  qMax: number,
  surge: number,
  tTotalS: number,
  detectionS = DETECTION_S,
): number {
  const stretched = windowSurge(surge, tTotalS, detectionS);
  const advice =
    'measure a larger instance type (a higher q_max), make T_total shorter, or plan for a smaller surge';
  if (qMax / surge < 1) {
    throw new UsageError(
      `one instance cannot absorb this surge: q_max ${qMax} / surge ${surge} = ${round(qMax / surge, 3)} < 1 ` +
        `stream per instance; ${advice}`,
    );
  }
  const target = Math.min(qMax, Math.floor(qMax / stretched + 1e-9));
  if (target < 1) {
    throw new UsageError(
      `one instance cannot absorb this surge: over the ${tTotalS + detectionS} s window (T_total ${tTotalS} s + ` +
        `${detectionS} s detection) the surge of ${surge} compounds to ${round(stretched, 4)}, and q_max ${qMax} / ` +
        `${round(stretched, 4)} = ${round(qMax / stretched, 3)} < 1 stream per instance; ${advice}`,
    );
  }
  return target;
}

/**
 * The average below which one instance is removed. A removal happens only from n > min_instances
 * instances, and leaves the others at average × n / (n − 1); that must not exceed the target for
 * any such n. The worst case is the smallest n, min_instances + 1, so the threshold is
 * target × min / (min + 1), floored to hundredths (target / 2 when the minimum is 1).
 */
export function scaleInThreshold(target: number, minInstances: number): number {
  return floorTo((target * minInstances) / (minInstances + 1), 2);
}

/** Enough instances for the trough at the target, at least one, and at least the operator's floor. */
export function minInstances(trough: number, target: number, floor = 1): number {
  return Math.max(1, floor, Math.ceil(trough / target - 1e-9));
}

/**
 * Enough instances for the peak at the target, never below the minimum. No headroom is added: at the
 * cap each instance still has the surge margin (target × window surge ≤ q_max) for load above the
 * stated peak, and headroom would only let the noise between the scale-in threshold and the target
 * ratchet the fleet up at the peak (the simulator shows it).
 */
export function maxInstances(peak: number, target: number, min: number): number {
  return Math.max(min, Math.ceil(peak / target - 1e-9));
}

/**
 * Seconds between two removals: long enough for the remaining instances' load to settle (the
 * drained instance's sessions are not moved; the others fill up as new sessions arrive, 95% after
 * three session lengths) and no faster than a wrongly removed instance can come back (T_total).
 */
export function scaleInCooldown(sessionS: number, tTotalS: number): number {
  return 60 * Math.ceil(Math.max(SETTLE_SESSIONS * sessionS, tTotalS) / 60);
}

/** Consecutive low minutes before a removal: 15, or three session lengths when sessions are longer. */
export function scaleInEvaluationPeriods(sessionS: number): number {
  return Math.max(MIN_SCALE_IN_PERIODS, Math.ceil((SETTLE_SESSIONS * sessionS) / SCALE_IN_PERIOD_S));
}

/** The server's admission limits, as container environment variables (strings). */
export function admission(qMax: number): Plan['admission'] {
  return {
    MAX_SESSIONS: String(qMax),
    MAX_QUEUED_JOBS: String(qMax * QUEUED_PER_STREAM),
    MAX_HTTP_STREAMS: String(qMax),
  };
}

/** The plan's scaling policies in the simulator's terms. */
export function policyOf(
  plan: Pick<
    Plan,
    | 'target_per_instance'
    | 'scale_in_threshold'
    | 'min_instances'
    | 'max_instances'
    | 'scale_in_cooldown_s'
    | 'scale_in_period_s'
    | 'scale_in_evaluation_periods'
  >,
): ScalingPolicy {
  return {
    targetPerInstance: plan.target_per_instance,
    scaleInThreshold: plan.scale_in_threshold,
    minInstances: plan.min_instances,
    maxInstances: plan.max_instances,
    scaleInCooldownS: plan.scale_in_cooldown_s,
    scaleInPeriodS: plan.scale_in_period_s,
    scaleInEvaluationPeriods: plan.scale_in_evaluation_periods,
  };
}

/** Fleet sizes the surge check tries: the minimum, and halfway to the maximum. */
export function surgeSizes(min: number, max: number): number[] {
  return [...new Set([min, Math.round((min + max) / 2)])];
}

export interface SurgeCheckOptions {
  readonly policy: ScalingPolicy;
  readonly qMax: number;
  readonly tTotalS: number;
  readonly surge: number;
  readonly sessionS: number;
  readonly runs: number;
  readonly seed: number;
}

/**
 * The worst case the target is sized for, simulated: n instances at exactly the target each; the
 * load grows by `surge` per T_total (compound) for the whole window, then holds; target tracking
 * runs as it would and its first new instance serves T_total after its request. A run counts when
 * any instance went above Q_max before that first new instance served.
 */
export function surgeCheck(options: SurgeCheckOptions): SurgeCheck {
  const { policy, qMax, tTotalS, runs, seed } = options;
  const windowS = tTotalS + DETECTION_S;
  // The check ends when relief arrives; scale-in has nothing to do in it.
  const scaleOutOnly = { ...policy, scaleInThreshold: 0 };
  const bySize = surgeSizes(policy.minInstances, policy.maxInstances).map((instances): SurgeSize => {
    const start = instances * policy.targetPerInstance;
    const profile = growthProfile(start, options.surge, tTotalS, windowS);
    let exceeded = 0;
    let worst = 0;
    for (let run = 0; run < runs; run++) {
      const sessions = generateSessions(profile, {
        horizonS: windowS + tTotalS,
        sessionS: options.sessionS,
        seed: deriveSeed(seed, instances, run),
        initialSessions: start,
      });
      const result = simulateFleet(sessions, {
        qMax,
        tTotalS,
        startInstances: instances,
        policy: scaleOutOnly,
        horizonS: windowS + tTotalS,
        stopWhenScaleOutServes: true,
      });
      if (result.maxPerInstance > qMax) exceeded++;
      worst = Math.max(worst, result.maxPerInstance);
    }
    return { instances, exceeded_share: round(exceeded / runs, 4), worst_per_instance: worst };
  });
  return {
    runs,
    seed,
    exceeded_share: Math.max(...bySize.map((s) => s.exceeded_share)),
    worst_per_instance: Math.max(...bySize.map((s) => s.worst_per_instance)),
    by_instances: bySize,
  };
}

/**
 * Computes the plan.
 * @throws UsageError when one instance cannot absorb the surge, or the inputs are out of range.
 */
export function buildPlan(inputs: PlanInputs, check: { runs: number; seed: number }): Plan {
  const { capacity, surge, peak, trough, tTotalS, sessionS } = inputs;
  const qMax = capacity.qMax;
  const windowS = tTotalS + DETECTION_S;
  const stretched = windowSurge(surge, tTotalS);
  const target = targetPerInstance(qMax, surge, tTotalS);
  const floor = inputs.minInstancesFloor ?? 1;
  const min = minInstances(trough, target, floor);
  const max = maxInstances(peak, target, min);
  const threshold = scaleInThreshold(target, min);
  const inCooldown = scaleInCooldown(sessionS, tTotalS);
  const periods = scaleInEvaluationPeriods(sessionS);
  const limits = admission(qMax);
  const base = {
    version: 1,
    kind: 'plan',
    transport: capacity.transport,
    slo_ms: capacity.sloMs,
    q_max: qMax,
    t_total_s: tTotalS,
    surge,
    peak,
    trough,
    target_per_instance: target,
    scale_in_threshold: threshold,
    min_instances: min,
    max_instances: max,
    scale_out_cooldown_s: SCALE_OUT_COOLDOWN_S,
    scale_in_cooldown_s: inCooldown,
    scale_in_period_s: SCALE_IN_PERIOD_S,
    scale_in_evaluation_periods: periods,
    admission: limits,
  } as const;
  const surgeResult = surgeCheck({
    policy: policyOf(base),
    qMax,
    tTotalS,
    surge,
    sessionS,
    ...check,
  });
  return {
    ...base,
    surge_check: surgeResult,
    session_s: sessionS,
    detection_s: DETECTION_S,
    window_s: windowS,
    window_surge: round(stretched, 4),
    capacity_measured_at: capacity.measuredAt,
    formulas: {
      t_total_s: inputs.tTotalFrom,
      detection_s: `${SCALE_OUT_DATAPOINTS} datapoints × ${METRIC_PERIOD_S} s of ConcurrentRequestsPerModel (assumed) = ${DETECTION_S}`,
      window_s: `t_total_s + detection_s = ${tTotalS} + ${DETECTION_S} = ${windowS}`,
      window_surge: `surge ^ (window_s / t_total_s) = ${surge} ^ (${windowS} / ${tTotalS}) = ${round(stretched, 4)}`,
      target_per_instance: `min(q_max, floor(q_max / window_surge)) = floor(${qMax} / ${round(stretched, 4)}) = ${target}`,
      scale_in_threshold: `floor to 0.01 of target × min_instances / (min_instances + 1) = ${target} × ${min} / ${min + 1} = ${threshold}`,
      min_instances:
        inputs.minInstancesFloor === undefined
          ? `max(1, ceil(trough / target)) = max(1, ceil(${trough} / ${target})) = ${min}`
          : `max(1, ceil(trough / target), --min-instances) = max(1, ceil(${trough} / ${target}), ${floor}) = ${min}`,
      max_instances: `max(min_instances, ceil(peak / target)) = max(${min}, ceil(${peak} / ${target})) = ${max}`,
      scale_out_cooldown_s: `${SCALE_OUT_COOLDOWN_S} (fixed: further scale-outs count the capacity still starting)`,
      scale_in_cooldown_s: `60 × ceil(max(${SETTLE_SESSIONS} × session_s, t_total_s) / 60) = 60 × ceil(max(${SETTLE_SESSIONS * sessionS}, ${tTotalS}) / 60) = ${inCooldown}`,
      scale_in_period_s: `${SCALE_IN_PERIOD_S} (fixed)`,
      scale_in_evaluation_periods: `max(${MIN_SCALE_IN_PERIODS}, ceil(${SETTLE_SESSIONS} × session_s / ${SCALE_IN_PERIOD_S})) = ${periods}`,
      admission: `MAX_SESSIONS = MAX_HTTP_STREAMS = q_max = ${qMax}; MAX_QUEUED_JOBS = ${QUEUED_PER_STREAM} × q_max = ${qMax * QUEUED_PER_STREAM}`,
      surge_check:
        `${check.runs} seeded runs per fleet size (${surgeResult.by_instances.map((s) => s.instances).join(', ')} instances): ` +
        `each starts at target_per_instance, grows by window_surge over window_s, and ends when the first scale-out serves; ` +
        `exceeded_share = share of runs in which an instance went above q_max`,
    },
  };
}

/** What the fleet simulator needs of a plan file. */
export interface SimPlan {
  readonly policy: ScalingPolicy;
  readonly qMax: number;
  readonly tTotalS: number;
  readonly peak: number;
  readonly trough: number;
  readonly sessionS: number | undefined;
}

/**
 * Checks the fields of a plan file that the simulator uses.
 * @throws UsageError naming the first field that is missing or wrong.
 */
export function parseSimPlan(value: unknown, source: string): SimPlan {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new UsageError(
      `plan ${source} should hold a JSON object, as \`node dist/scripts/plan.js\` writes it`,
    );
  }
  const p = value as Record<string, unknown>;
  const fail = (field: string, expected: string) =>
    new UsageError(`plan ${source}: "${field}" should be ${expected}; got ${shown(p[field])}`);
  if (p.kind !== 'plan') throw fail('kind', '"plan"');
  if (p.version !== 1) throw fail('version', '1');
  const num = (field: string, min: number, whole: boolean): number => {
    const got = p[field];
    if (typeof got !== 'number' || !Number.isFinite(got) || got < min || (whole && !Number.isInteger(got))) {
      throw fail(field, `${whole ? 'a whole number' : 'a number'} of ${min} or more`);
    }
    return got;
  };
  const min = num('min_instances', 1, true);
  const max = num('max_instances', 1, true);
  if (max < min) throw fail('max_instances', `at least min_instances (${min})`);
  const sessionS = p.session_s === undefined ? undefined : num('session_s', 1, false);
  return {
    policy: {
      targetPerInstance: num('target_per_instance', 1, false),
      scaleInThreshold: num('scale_in_threshold', 0, false),
      minInstances: min,
      maxInstances: max,
      scaleInCooldownS: num('scale_in_cooldown_s', 0, true),
      scaleInPeriodS: num('scale_in_period_s', 1, true),
      scaleInEvaluationPeriods: num('scale_in_evaluation_periods', 1, true),
    },
    qMax: num('q_max', 1, true),
    tTotalS: num('t_total_s', 1, true),
    peak: num('peak', 0, false),
    trough: num('trough', 0, false),
    sessionS,
  };
}

/** The plan as a table for people: each setting, its value, and how it was reached. */
export function formatPlan(plan: Plan): string {
  const rows: [string, string | number][] = [
    ['t_total_s', plan.t_total_s],
    ['detection_s', plan.detection_s],
    ['window_s', plan.window_s],
    ['window_surge', plan.window_surge],
    ['target_per_instance', plan.target_per_instance],
    ['scale_in_threshold', plan.scale_in_threshold],
    ['min_instances', plan.min_instances],
    ['max_instances', plan.max_instances],
    ['scale_out_cooldown_s', plan.scale_out_cooldown_s],
    ['scale_in_cooldown_s', plan.scale_in_cooldown_s],
    ['scale_in_period_s', plan.scale_in_period_s],
    ['scale_in_evaluation_periods', plan.scale_in_evaluation_periods],
    ...Object.entries(plan.admission).map(([k, v]): [string, string] => [`admission.${k}`, v]),
  ];
  const formula = (key: string) =>
    key === 'admission.MAX_SESSIONS' ? plan.formulas.admission : plan.formulas[key];
  const width = Math.max(...rows.map(([k]) => k.length));
  const valueWidth = Math.max(...rows.map(([, v]) => String(v).length));
  const lines = rows.map(([k, v]) =>
    `  ${k.padEnd(width)}  ${String(v).padEnd(valueWidth)}  ${formula(k) ?? ''}`.trimEnd(),
  );
  const check = plan.surge_check;
  return [
    `Plan for ${plan.transport} streams: q_max ${plan.q_max} within ${plan.slo_ms} ms (capacity measured ${plan.capacity_measured_at}); ` +
      `surge ${plan.surge} per T_total, load ${plan.trough} to ${plan.peak} streams, mean stream ${plan.session_s} s.`,
    '',
    ...lines,
    '',
    `Surge check (${check.runs} runs per fleet size, seed ${check.seed}): ${plan.target_per_instance} streams per instance growing ×${plan.window_surge} over ${plan.window_s} s.`,
    ...check.by_instances.map(
      (s) =>
        `  ${String(s.instances).padStart(4)} instances: an instance above q_max in ${round(s.exceeded_share * 100, 2)}% of runs; ` +
        `at most ${s.worst_per_instance} streams on one instance`,
    ),
  ].join('\n');
}
