/** The seeded fleet simulator (scripts/lib/fleet-sim.ts): its random numbers, its bookkeeping, its policies. */
import { describe, expect, it } from 'vitest';
import {
  arrivalRate,
  dailyProfile,
  deriveSeed,
  exponential,
  generateSessions,
  growthProfile,
  mulberry32,
  poisson,
  simulateDay,
  simulateFleet,
  type LoadProfile,
  type ScalingPolicy,
} from '../../../scripts/lib/fleet-sim.ts';

const constant = (concurrency: number): LoadProfile => ({ wanted: () => concurrency, slope: () => 0 });

/** Load at `low`, then `high` from `atS` on (a step, with the arrival burst that fills it). */
const step = (low: number, high: number, atS: number): LoadProfile => ({
  wanted: (t) => (t < atS ? low : high),
  slope: () => 0,
});

const POLICY: ScalingPolicy = {
  targetPerInstance: 3,
  scaleInThreshold: 2.4,
  minInstances: 2,
  maxInstances: 30,
  scaleInCooldownS: 540,
  scaleInPeriodS: 60,
  scaleInEvaluationPeriods: 15,
};

const mean = (xs: readonly number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;

describe('random numbers', () => {
  it('mulberry32 repeats for a seed, differs between seeds, and stays in [0, 1)', () => {
    const draw = (seed: number) => Array.from({ length: 1000 }, mulberry32(seed));
    expect(draw(42)).toEqual(draw(42));
    expect(draw(42)).not.toEqual(draw(43));
    expect(draw(7).every((u) => u >= 0 && u < 1)).toBe(true);
    expect(mean(draw(7))).toBeCloseTo(0.5, 1);
  });

  it('deriveSeed gives distinct seeds to neighbouring runs, the same each time', () => {
    const seeds = Array.from({ length: 1000 }, (_, run) => deriveSeed(1, 4, run));
    expect(new Set(seeds).size).toBe(1000);
    expect(deriveSeed(1, 4, 17)).toBe(seeds[17]);
  });

  it.each([0.4, 3.7, 29, 80])('poisson(%d) has that mean and variance', (m) => {
    const rng = mulberry32(5);
    const xs = Array.from({ length: 20_000 }, () => poisson(rng, m));
    const avg = mean(xs);
    expect(Math.abs(avg - m)).toBeLessThan(0.05 * m + 0.02);
    expect(Math.abs(mean(xs.map((x) => (x - avg) ** 2)) - m)).toBeLessThan(0.1 * m + 0.05);
    expect(xs.every((x) => Number.isInteger(x) && x >= 0)).toBe(true);
  });

  it('exponential has the mean asked for', () => {
    const rng = mulberry32(9);
    expect(mean(Array.from({ length: 20_000 }, () => exponential(rng, 180))) / 180).toBeCloseTo(1, 1);
  });
});

describe('load profiles', () => {
  it('the daily cycle is at the trough at 04:00 and at the peak at 16:00', () => {
    const day = dailyProfile(10, 200);
    expect(day.wanted(4 * 3600)).toBeCloseTo(10, 9);
    expect(day.wanted(16 * 3600)).toBeCloseTo(200, 9);
    expect(day.wanted(10 * 3600)).toBeCloseTo(105, 9);
    expect(day.slope(10 * 3600)).toBeGreaterThan(0);
    expect(day.slope(22 * 3600)).toBeLessThan(0);
  });

  it('arrivals cover both the steady state and the growth: λ = C′ + C / session', () => {
    const growth = growthProfile(12, 1.5, 420, 450);
    const rate = Math.log(1.5) / 420;
    expect(growth.wanted(420)).toBeCloseTo(18, 9);
    expect(growth.wanted(1000)).toBeCloseTo(12 * 1.5 ** (450 / 420), 9);
    expect(arrivalRate(growth, 0, 180)).toBeCloseTo(12 * rate + 12 / 180, 12);
    expect(arrivalRate(growth, 500, 180)).toBeCloseTo(growth.wanted(500) / 180, 12);
  });
});

describe('generateSessions', () => {
  const make = (seed: number) =>
    generateSessions(dailyProfile(10, 200), { horizonS: 3 * 3600, sessionS: 180, seed });

  it('is the same for a seed and differs for another', () => {
    expect(make(1)).toEqual(make(1));
    expect(make(2).arrivalS).not.toEqual(make(1).arrivalS);
  });

  it('keeps arrivals in order, inside the horizon, one length each', () => {
    const s = make(3);
    expect(s.arrivalS.length).toBe(s.durationS.length);
    expect(s.arrivalS.every((a, i) => a >= 0 && a < 3 * 3600 && (i === 0 || a >= s.arrivalS[i - 1]!))).toBe(
      true,
    );
    expect(s.durationS.every((d) => d > 0)).toBe(true);
  });

  it('starts with the asked-for sessions in progress', () => {
    const s = generateSessions(constant(5), { horizonS: 10, sessionS: 60, seed: 1, initialSessions: 12 });
    expect(s.initialDurationS.length).toBe(12);
  });
});

describe('simulateFleet', () => {
  const sessions = generateSessions(constant(40), { horizonS: 2 * 3600, sessionS: 120, seed: 11 });

  it('a fleet far above need makes nobody wait', () => {
    const r = simulateFleet(sessions, { qMax: 6, tTotalS: 420, startInstances: 30, horizonS: 2 * 3600 });
    expect(r.arrivals).toBeGreaterThan(2000);
    expect(r.misses).toBe(0);
    expect(r.maxPerInstance).toBeLessThanOrEqual(4);
  });

  it('one instance under load far above q_max misses most first audio', () => {
    const r = simulateFleet(sessions, { qMax: 2, tTotalS: 420, startInstances: 1, horizonS: 2 * 3600 });
    expect(r.missShare).toBeGreaterThan(0.9);
    expect(r.maxPerInstance).toBeGreaterThan(20);
  });

  it('counts every arrival once and every session to its end', () => {
    const r = simulateFleet(sessions, { qMax: 6, tTotalS: 420, startInstances: 8, horizonS: 2 * 3600 });
    expect(r.arrivals).toBe(sessions.arrivalS.length);
    expect(r.buckets.reduce((a, b) => a + b.arrivals, 0)).toBe(r.arrivals);
    expect(r.buckets.reduce((a, b) => a + b.misses, 0)).toBe(r.misses);
    expect(r.sessionsEnded + r.sessionsOpen).toBe(r.arrivals + sessions.initialDurationS.length);
    expect(r.buckets.map((b) => b.seconds)).toEqual([3600, 3600]);
  });

  it('a fixed fleet costs instances × hours', () => {
    const r = simulateFleet(sessions, { qMax: 6, tTotalS: 420, startInstances: 7, horizonS: 3 * 3600 });
    expect(r.instanceHours).toBe(21);
    expect(r.peakInstances).toBe(7);
    expect(r.scaleOuts + r.scaleIns).toBe(0);
  });

  it('routes each session to the least-loaded instance', () => {
    const even = generateSessions(constant(0), { horizonS: 1, sessionS: 1e9, seed: 1, initialSessions: 9 });
    const r = simulateFleet(even, { qMax: 6, tTotalS: 1, startInstances: 3, horizonS: 1 });
    expect(r.maxPerInstance).toBe(3);
  });

  it('scales out after the detection delay, and the capacity serves T_total after the request', () => {
    // About one session on 2 instances before the step: far enough below the target that noise
    // does not reach it.
    const load = generateSessions(step(1, 60, 600), { horizonS: 7200, sessionS: 180, seed: 4 });
    const r = simulateFleet(load, {
      qMax: 6,
      tTotalS: 420,
      startInstances: 2,
      policy: POLICY,
      horizonS: 7200,
      bucketS: 600,
    });
    expect(r.scaleOuts).toBeGreaterThan(0);
    // 3 datapoints of 10 s above the target after the step at 600 s, then T_total.
    expect(r.firstScaleOutServedS).toBeGreaterThanOrEqual(600 + 30 + 420);
    expect(r.peakServing).toBeLessThanOrEqual(POLICY.maxInstances);
    // An hour later target tracking holds about the target per instance.
    const last = r.buckets.at(-1)!;
    expect(last.meanConcurrency / last.meanInstances).toBeLessThan(POLICY.targetPerInstance + 0.5);
    expect(last.meanConcurrency / last.meanInstances).toBeGreaterThan(POLICY.scaleInThreshold - 0.5);
  });

  it('stops at the first new capacity when asked', () => {
    const load = generateSessions(step(6, 60, 0), { horizonS: 3600, sessionS: 180, seed: 4 });
    const r = simulateFleet(load, {
      qMax: 6,
      tTotalS: 420,
      startInstances: 2,
      policy: POLICY,
      horizonS: 3600,
      stopWhenScaleOutServes: true,
    });
    expect(r.endS).toBe(r.firstScaleOutServedS);
    expect(r.endS).toBeLessThan(3600);
  });

  it('scales in one instance at a time after the quiet window, never below the minimum', () => {
    // 40 sessions on 20 instances is below the threshold from the start; after 600 s, 1 session.
    const load = generateSessions(step(40, 1, 600), { horizonS: 6 * 3600, sessionS: 180, seed: 5 });
    const r = simulateFleet(load, {
      qMax: 6,
      tTotalS: 420,
      startInstances: 20,
      policy: POLICY,
      horizonS: 6 * 3600,
      bucketS: 60,
    });
    expect(r.scaleOuts).toBe(0);
    expect(r.scaleIns).toBe(20 - POLICY.minInstances);
    expect(r.buckets.at(-1)!.meanInstances).toBe(POLICY.minInstances);
    // The first removal waits for 15 quiet minutes; the next ones are a cooldown apart.
    const firstDropS = r.buckets.findIndex((b) => b.meanInstances < 20) * 60;
    const atMinimumS = r.buckets.findIndex((b) => b.meanInstances === POLICY.minInstances) * 60;
    expect(firstDropS).toBeGreaterThanOrEqual(15 * 60);
    expect(atMinimumS - firstDropS).toBeGreaterThanOrEqual(
      (20 - POLICY.minInstances - 1) * POLICY.scaleInCooldownS,
    );
  });

  it('pays for a removed instance until its last session ends', () => {
    // Long sessions: the removed instances drain for a long time after they stop taking new ones.
    const long = generateSessions(constant(0), { horizonS: 1, sessionS: 1e9, seed: 1, initialSessions: 4 });
    const r = simulateFleet(long, {
      qMax: 6,
      tTotalS: 420,
      startInstances: 4,
      policy: { ...POLICY, minInstances: 1, scaleInCooldownS: 60, scaleInEvaluationPeriods: 1 },
      horizonS: 3600,
    });
    expect(r.scaleIns).toBe(3);
    expect(r.instanceHours).toBe(4);
    expect(r.buckets[0]!.meanInstances).toBe(4);
  });
});

describe('simulateDay', () => {
  const day = (seed: number) =>
    simulateDay({
      policy: POLICY,
      qMax: 6,
      tTotalS: 420,
      trough: 5,
      peak: 60,
      hours: 24,
      sessionS: 180,
      seed,
    });

  it('is the same for a seed and differs for another', () => {
    const a = day(1);
    expect(day(1)).toEqual(a);
    expect(day(2).autoscaled.arrivals).not.toBe(a.autoscaled.arrivals);
  });

  it('replays the same arrivals against all three fleets', () => {
    const { autoscaled, fixedMax, fixedMin } = day(3);
    expect(fixedMax.arrivals).toBe(autoscaled.arrivals);
    expect(fixedMin.arrivals).toBe(autoscaled.arrivals);
    expect(fixedMax.instanceHours).toBe(POLICY.maxInstances * 24);
    expect(fixedMin.instanceHours).toBe(POLICY.minInstances * 24);
    expect(autoscaled.buckets).toHaveLength(24);
  });

  it('the autoscaled fleet costs less than the largest and misses less than the smallest', () => {
    const { autoscaled, fixedMax, fixedMin } = day(4);
    expect(autoscaled.instanceHours).toBeLessThan(fixedMax.instanceHours);
    expect(autoscaled.missShare).toBeLessThan(fixedMin.missShare);
    expect(autoscaled.missShare).toBeLessThan(0.01);
    expect(autoscaled.peakServing).toBeLessThanOrEqual(POLICY.maxInstances);
  });
});
