/**
 * A seeded simulation of a fleet of server instances behind a SageMaker endpoint, one second at a
 * time: sessions arrive (Poisson) and last an exponential time, each goes to the least-loaded
 * serving instance, and the two scaling policies of an autoscaling plan add and remove instances.
 * It answers two questions: how often a new session's first audio is late because its instance was
 * already at Q_max, and what the fleet costs in instance-hours. Pure and deterministic: the same
 * seed and inputs give the same numbers, and nothing here reads a clock or Math.random.
 *
 * The model, and where it is a choice rather than a fact:
 *  - Routing: SageMaker routes either at random or to the instance with the fewest outstanding
 *    requests (RoutingConfig LEAST_OUTSTANDING_REQUESTS); we model the latter, which is what an
 *    endpoint for long-lived sessions should use. With it an instance goes above Q_max only when
 *    every serving instance is at Q_max.
 *  - A session counts as one concurrent request for its whole life (an open WebSocket session is
 *    one request to the endpoint) and ends on its own; nothing is refused or retried: a session
 *    that lands on an instance already at Q_max is served, late, and counted as a miss.
 *  - Target tracking (scale-out only): one datapoint every 10 s, the average over that datapoint
 *    of concurrency per serving instance (ConcurrentRequestsPerModel, high resolution); after 3
 *    consecutive datapoints above the target it asks for ceil(total / target) instances, capped
 *    at the maximum, counting those already on their way. A new instance serves T_total seconds
 *    after the request.
 *  - Scale-in (a step policy): one instance is removed when the last `scaleInEvaluationPeriods`
 *    averages of `scaleInPeriodS` were all below the threshold, no sooner than the cooldown after
 *    the previous removal, never below the minimum and not while a scale-out is on its way. The
 *    removed instance takes no new sessions and is paid for until its last session ends (drain).
 *  - Instance-hours count every instance from the scale-out request to the end of its drain:
 *    whether the provisioning minutes are billed is not something we know, so we count them.
 */

/** A source of uniform numbers in [0, 1). */
export type Rng = () => number;

/** mulberry32: a small, fast 32-bit generator; plenty for arrivals, and the same on every machine. */
export function mulberry32(seed: number): Rng {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/**
 * A seed for one independent stream (one run of many) from a base seed and the run's coordinates,
 * mixed so that neighbouring runs do not get neighbouring mulberry32 states.
 */
export function deriveSeed(...parts: number[]): number {
  let h = 0x811c9dc5;
  for (const part of parts) {
    h = Math.imul(h ^ (part >>> 0), 0x01000193);
    h ^= h >>> 16;
    h = Math.imul(h, 0x85ebca6b);
    h ^= h >>> 13;
    h = Math.imul(h, 0xc2b2ae35);
    h ^= h >>> 16;
  }
  return h >>> 0;
}

/** An exponential variate of the given mean. */
export function exponential(rng: Rng, mean: number): number {
  return -Math.log(1 - rng()) * mean;
}

/** A Poisson variate (Knuth's method, in pieces of at most 30 so that exp(-mean) never underflows). */
export function poisson(rng: Rng, mean: number): number {
  let count = 0;
  for (let left = mean; left > 0; left -= 30) {
    const limit = Math.exp(-Math.min(left, 30));
    let p = rng();
    while (p > limit) {
      count++;
      p *= rng();
    }
  }
  return count;
}

/** The concurrency wanted over time, and how fast it changes (sessions per second). */
export interface LoadProfile {
  wanted(tS: number): number;
  slope(tS: number): number;
}

/**
 * Arrivals per second that make the expected concurrency follow the profile when sessions last an
 * exponential time of mean `sessionS`: dC/dt = λ − C / sessionS, so λ = C' + C / sessionS. The
 * C / sessionS term alone (the steady state) would undercount a fast rise.
 */
export function arrivalRate(profile: LoadProfile, tS: number, sessionS: number): number {
  return Math.max(0, profile.slope(tS) + profile.wanted(tS) / sessionS);
}

const DAY_S = 86_400;
/** Quietest at 04:00, busiest twelve hours later. */
const TROUGH_HOUR = 4;

/** A smooth daily cycle between `trough` and `peak` concurrent sessions (a cosine; the run starts at 00:00). */
export function dailyProfile(trough: number, peak: number): LoadProfile {
  const half = (peak - trough) / 2;
  const w = (2 * Math.PI) / DAY_S;
  const phase = (t: number) => w * (t - TROUGH_HOUR * 3600);
  return {
    wanted: (t) => trough + half * (1 - Math.cos(phase(t))),
    slope: (t) => half * w * Math.sin(phase(t)),
  };
}

/**
 * Concurrency that starts at `start` and grows by the factor `surge` every `periodS` seconds
 * (compound growth) until `growForS`, then holds.
 */
export function growthProfile(start: number, surge: number, periodS: number, growForS: number): LoadProfile {
  const rate = Math.log(surge) / periodS;
  return {
    wanted: (t) => start * Math.exp(rate * Math.min(t, growForS)),
    slope: (t) => (t < growForS ? start * rate * Math.exp(rate * t) : 0),
  };
}

/** Sessions to replay: the same object can be run against several fleets. */
export interface Sessions {
  /** Moment of each arrival in seconds (a uniform moment within its second), in order. */
  readonly arrivalS: Float64Array;
  /** Length of each arrival's session in seconds. */
  readonly durationS: Float64Array;
  /** Sessions already in progress at time 0 (lengths; by memorylessness, fresh exponential draws). */
  readonly initialDurationS: Float64Array;
}

export interface SessionOptions {
  readonly horizonS: number;
  /** Mean session length. */
  readonly sessionS: number;
  readonly seed: number;
  /** Sessions in progress at time 0; by default a Poisson draw around the profile's value at 0. */
  readonly initialSessions?: number;
}

/**
 * Draws the arrivals (a Poisson number each second, at the rate of `arrivalRate` mid-second, each
 * at a uniform moment within it) and their lengths.
 */
export function generateSessions(profile: LoadProfile, options: SessionOptions): Sessions {
  const rng = mulberry32(options.seed);
  const initial = options.initialSessions ?? poisson(rng, profile.wanted(0));
  const initialDurationS = new Float64Array(initial);
  for (let i = 0; i < initial; i++) initialDurationS[i] = exponential(rng, options.sessionS);
  const times: number[] = [];
  const lengths: number[] = [];
  for (let t = 0; t < options.horizonS; t++) {
    const n = poisson(rng, arrivalRate(profile, t + 0.5, options.sessionS));
    const offsets: number[] = [];
    for (let k = 0; k < n; k++) offsets.push(rng());
    offsets.sort((a, b) => a - b);
    for (const offset of offsets) {
      times.push(t + offset);
      lengths.push(exponential(rng, options.sessionS));
    }
  }
  return { arrivalS: Float64Array.from(times), durationS: Float64Array.from(lengths), initialDurationS };
}

/** Target tracking's datapoint: ConcurrentRequestsPerModel at high resolution. */
export const METRIC_PERIOD_S = 10;
/** Consecutive datapoints above the target before target tracking acts (an assumption; see docs/autoscaling.md). */
export const SCALE_OUT_DATAPOINTS = 3;

/** The two scaling policies of a plan, as the simulator runs them. */
export interface ScalingPolicy {
  readonly targetPerInstance: number;
  readonly scaleInThreshold: number;
  readonly minInstances: number;
  readonly maxInstances: number;
  readonly scaleInCooldownS: number;
  readonly scaleInPeriodS: number;
  readonly scaleInEvaluationPeriods: number;
}

export interface FleetOptions {
  readonly qMax: number;
  /** Seconds from a scale-out request to the new instance serving. */
  readonly tTotalS: number;
  /** Instances serving at time 0. */
  readonly startInstances: number;
  /** Absent: a fixed fleet of `startInstances`. */
  readonly policy?: ScalingPolicy;
  readonly horizonS: number;
  /** End the run the moment the first instance added by a scale-out starts serving. */
  readonly stopWhenScaleOutServes?: boolean;
  /** Length of one row of the per-period table (default an hour). */
  readonly bucketS?: number;
}

/** One row of the per-period table. */
export interface Bucket {
  readonly index: number;
  readonly seconds: number;
  readonly arrivals: number;
  readonly misses: number;
  /** Mean sessions in progress, on all instances. */
  readonly meanConcurrency: number;
  /** Mean instances paid for (starting, serving or draining). */
  readonly meanInstances: number;
  readonly maxInstances: number;
}

export interface FleetResult {
  readonly arrivals: number;
  /** Arrivals that landed on an instance already at Q_max: their first audio misses the SLO. */
  readonly misses: number;
  readonly missShare: number;
  readonly instanceHours: number;
  /** Most instances paid for at once. */
  readonly peakInstances: number;
  /** Most instances serving at once. */
  readonly peakServing: number;
  /** Highest concurrency any one instance reached. */
  readonly maxPerInstance: number;
  readonly scaleOuts: number;
  readonly scaleIns: number;
  /** Second at which the first scale-out's capacity began serving; null if none did. */
  readonly firstScaleOutServedS: number | null;
  /** Seconds simulated. */
  readonly endS: number;
  readonly sessionsEnded: number;
  readonly sessionsOpen: number;
  readonly buckets: Bucket[];
}

interface Instance {
  load: number;
  state: 'starting' | 'serving' | 'draining' | 'gone';
  readyAtS: number;
}

/** A binary min-heap of session end times, each with its instance. */
class Departures {
  #end: number[] = [];
  #inst: number[] = [];

  get size(): number {
    return this.#end.length;
  }

  peek(): number {
    return this.#end.length > 0 ? this.#end[0]! : Infinity;
  }

  push(end: number, inst: number): void {
    const e = this.#end;
    const s = this.#inst;
    let i = e.length;
    e.push(end);
    s.push(inst);
    while (i > 0) {
      const p = (i - 1) >> 1;
      if (e[p]! <= end) break;
      e[i] = e[p]!;
      s[i] = s[p]!;
      i = p;
    }
    e[i] = end;
    s[i] = inst;
  }

  /** Removes the earliest end; returns its instance. */
  pop(): number {
    const e = this.#end;
    const s = this.#inst;
    const top = s[0]!;
    const end = e.pop()!;
    const inst = s.pop()!;
    const n = e.length;
    if (n === 0) return top;
    let i = 0;
    for (;;) {
      const l = 2 * i + 1;
      if (l >= n) break;
      const c = l + 1 < n && e[l + 1]! < e[l]! ? l + 1 : l;
      if (e[c]! >= end) break;
      e[i] = e[c]!;
      s[i] = s[c]!;
      i = c;
    }
    e[i] = end;
    s[i] = inst;
    return top;
  }
}

/**
 * Runs `sessions` against a fleet. Each second [t, t + 1): instances whose T_total is up start
 * serving at t; arrivals and session ends are taken in time order, each arrival going to the
 * least-loaded serving instance; the fleet is sampled at t + 1; then, at the end of each 10 s
 * datapoint target tracking may scale out, and at the end of each scale-in period the step policy
 * may remove an instance.
 */
export function simulateFleet(sessions: Sessions, options: FleetOptions): FleetResult {
  const { qMax, tTotalS, policy, horizonS } = options;
  const bucketS = options.bucketS ?? 3600;
  const instances: Instance[] = [];
  const serving: number[] = [];
  const pending: number[] = [];
  const departures = new Departures();
  let servingLoad = 0;
  let totalLoad = 0;
  let billed = 0;
  let maxPerInstance = 0;

  const launch = (readyAtS: number): void => {
    instances.push({ load: 0, state: 'starting', readyAtS });
    pending.push(instances.length - 1);
    billed++;
  };
  const leastLoaded = (): number => {
    let best = serving[0]!;
    for (const id of serving) if (instances[id]!.load < instances[best]!.load) best = id;
    return best;
  };
  const place = (endS: number): number => {
    const id = leastLoaded();
    const inst = instances[id]!;
    const before = inst.load;
    inst.load++;
    servingLoad++;
    totalLoad++;
    departures.push(endS, id);
    if (inst.load > maxPerInstance) maxPerInstance = inst.load;
    return before;
  };

  for (let i = 0; i < Math.max(1, options.startInstances); i++) {
    instances.push({ load: 0, state: 'serving', readyAtS: 0 });
    serving.push(i);
    billed++;
  }
  // Sessions already in progress are placed, not counted: they arrived before the run.
  for (const d of sessions.initialDurationS) place(d);

  let arrivals = 0;
  let misses = 0;
  let sessionsEnded = 0;
  let instanceSeconds = 0;
  let peakInstances = billed;
  let peakServing = serving.length;
  let scaleOuts = 0;
  let scaleIns = 0;
  let firstScaleOutServedS: number | null = null;
  let datapointSum = 0;
  let above = 0;
  let periodSum = 0;
  let below = 0;
  let lastScaleInS = -Infinity;
  let next = 0;
  const buckets: Bucket[] = [];
  let bucket = { arrivals: 0, misses: 0, seconds: 0, concurrency: 0, instances: 0, maxInstances: 0 };
  const closeBucket = () => {
    if (bucket.seconds === 0) return;
    buckets.push({
      index: buckets.length,
      seconds: bucket.seconds,
      arrivals: bucket.arrivals,
      misses: bucket.misses,
      meanConcurrency: bucket.concurrency / bucket.seconds,
      meanInstances: bucket.instances / bucket.seconds,
      maxInstances: bucket.maxInstances,
    });
    bucket = { arrivals: 0, misses: 0, seconds: 0, concurrency: 0, instances: 0, maxInstances: 0 };
  };

  const leave = (): void => {
    const inst = instances[departures.pop()]!;
    inst.load--;
    totalLoad--;
    sessionsEnded++;
    if (inst.state === 'serving') servingLoad--;
    else if (inst.state === 'draining' && inst.load === 0) {
      inst.state = 'gone';
      billed--;
    }
  };

  let t = 0;
  run: for (; t < horizonS; t++) {
    // 1. New capacity.
    for (let i = pending.length - 1; i >= 0; i--) {
      const id = pending[i]!;
      if (instances[id]!.readyAtS > t) continue;
      instances[id]!.state = 'serving';
      serving.push(id);
      pending.splice(i, 1);
      if (firstScaleOutServedS === null) {
        firstScaleOutServedS = t;
        if (options.stopWhenScaleOutServes) break run;
      }
    }
    // 2. Arrivals, each to the least-loaded serving instance, after the sessions that ended before it.
    for (; next < sessions.arrivalS.length && sessions.arrivalS[next]! < t + 1; next++) {
      const at = sessions.arrivalS[next]!;
      while (departures.peek() <= at) leave();
      arrivals++;
      bucket.arrivals++;
      if (place(at + sessions.durationS[next]!) >= qMax) {
        misses++;
        bucket.misses++;
      }
    }
    // 3. The rest of the second's ends: the sample at t + 1 counts sessions alive at that moment.
    while (departures.peek() <= t + 1) leave();
    // 4. The sample at t + 1.
    const perInstance = serving.length > 0 ? servingLoad / serving.length : 0;
    datapointSum += perInstance;
    periodSum += perInstance;
    instanceSeconds += billed;
    peakInstances = Math.max(peakInstances, billed);
    peakServing = Math.max(peakServing, serving.length);
    bucket.seconds++;
    bucket.concurrency += totalLoad;
    bucket.instances += billed;
    bucket.maxInstances = Math.max(bucket.maxInstances, billed);
    const end = t + 1;
    if (end % bucketS === 0) closeBucket();
    if (policy === undefined) continue;

    // 5. Target tracking, once per datapoint.
    if (end % METRIC_PERIOD_S === 0) {
      const datapoint = datapointSum / METRIC_PERIOD_S;
      datapointSum = 0;
      above = datapoint > policy.targetPerInstance ? above + 1 : 0;
      if (above >= SCALE_OUT_DATAPOINTS) {
        const wanted = Math.ceil((datapoint * serving.length) / policy.targetPerInstance - 1e-9);
        const desired = Math.min(policy.maxInstances, wanted);
        const have = serving.length + pending.length;
        if (desired > have) {
          for (let k = have; k < desired; k++) launch(end + tTotalS);
          scaleOuts++;
        }
      }
    }
    // 6. The scale-in step policy, once per period.
    if (end % policy.scaleInPeriodS === 0) {
      const average = periodSum / policy.scaleInPeriodS;
      periodSum = 0;
      below = average < policy.scaleInThreshold ? below + 1 : 0;
      if (
        below >= policy.scaleInEvaluationPeriods &&
        end - lastScaleInS >= policy.scaleInCooldownS &&
        pending.length === 0 &&
        serving.length > policy.minInstances
      ) {
        const id = leastLoaded();
        const inst = instances[id]!;
        serving.splice(serving.indexOf(id), 1);
        servingLoad -= inst.load;
        inst.state = inst.load === 0 ? 'gone' : 'draining';
        if (inst.state === 'gone') billed--;
        lastScaleInS = end;
        scaleIns++;
      }
    }
  }
  closeBucket();
  return {
    arrivals,
    misses,
    missShare: arrivals > 0 ? misses / arrivals : 0,
    instanceHours: instanceSeconds / 3600,
    peakInstances,
    peakServing,
    maxPerInstance,
    scaleOuts,
    scaleIns,
    firstScaleOutServedS,
    endS: t,
    sessionsEnded,
    sessionsOpen: departures.size,
    buckets,
  };
}

/** What a day's simulation needs of a plan. */
export interface DayOptions {
  readonly policy: ScalingPolicy;
  readonly qMax: number;
  readonly tTotalS: number;
  readonly trough: number;
  readonly peak: number;
  readonly hours: number;
  readonly sessionS: number;
  readonly seed: number;
}

/** The same arrivals against the autoscaled fleet and two fixed fleets. */
export interface DayResult {
  readonly sessions: Sessions;
  readonly autoscaled: FleetResult;
  readonly fixedMax: FleetResult;
  readonly fixedMin: FleetResult;
}

/**
 * A daily cycle (from 00:00, trough at 04:00, peak at 16:00) replayed against the plan's autoscaled
 * fleet and against fixed fleets of its maximum and minimum size. The run starts in the steady
 * state of 00:00: the sessions of that moment in progress and the autoscaled fleet at the size
 * target tracking would have chosen for them.
 */
export function simulateDay(options: DayOptions): DayResult {
  const { policy } = options;
  const profile = dailyProfile(options.trough, options.peak);
  const horizonS = Math.round(options.hours * 3600);
  const sessions = generateSessions(profile, { horizonS, sessionS: options.sessionS, seed: options.seed });
  const start = Math.min(
    policy.maxInstances,
    Math.max(policy.minInstances, Math.ceil(profile.wanted(0) / policy.targetPerInstance)),
  );
  const common = { qMax: options.qMax, tTotalS: options.tTotalS, horizonS };
  return {
    sessions,
    autoscaled: simulateFleet(sessions, { ...common, startInstances: start, policy }),
    fixedMax: simulateFleet(sessions, { ...common, startInstances: policy.maxInstances }),
    fixedMin: simulateFleet(sessions, { ...common, startInstances: policy.minInstances }),
  };
}
