/** The autoscaling planner (scripts/lib/plan.ts) and its command line (scripts/plan.ts). */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { afterAll, describe, expect, it } from 'vitest';
import { UsageError } from '../../../scripts/lib/cli.ts';
import {
  DETECTION_S,
  admission,
  buildPlan,
  maxInstances,
  minInstances,
  parseCapacity,
  parseSimPlan,
  scaleInCooldown,
  scaleInEvaluationPeriods,
  scaleInThreshold,
  surgeSizes,
  tTotalFromStartup,
  targetPerInstance,
  windowSurge,
  type Capacity,
} from '../../../scripts/lib/plan.ts';
import { main } from '../../../scripts/plan.ts';

const CAPACITY_FILE = {
  version: 1,
  kind: 'capacity',
  target: 'http://127.0.0.1:8080',
  transport: 'ws',
  slo_ms: 3000,
  percentile: 95,
  rungs: [
    {
      concurrency: 1,
      requests: 40,
      errors: 0,
      ttfa_ms: { p50: 80, p95: 120, p99: 130 },
      within_slo: true,
    },
  ],
  q_max: 6,
  measured_at: '2026-12-01T14:00:00.000Z',
};

const CAPACITY: Capacity = parseCapacity(CAPACITY_FILE, 'capacity.json');

/** The field names the deploy tooling reads, in the order the plan writes them. */
const DEPLOY_FIELDS = [
  'version',
  'kind',
  'transport',
  'slo_ms',
  'q_max',
  't_total_s',
  'surge',
  'peak',
  'trough',
  'target_per_instance',
  'scale_in_threshold',
  'min_instances',
  'max_instances',
  'scale_out_cooldown_s',
  'scale_in_cooldown_s',
  'scale_in_period_s',
  'scale_in_evaluation_periods',
  'admission',
  'surge_check',
];

describe('the formulas', () => {
  it('assumes 3 datapoints of 10 s to detect a rise', () => {
    expect(DETECTION_S).toBe(30);
  });

  it('stretches the surge from T_total to T_total + detection at a compound rate', () => {
    // 1.5 ^ (450 / 420) = e^(0.405465 × 1.071429) = 1.544078
    expect(windowSurge(1.5, 420)).toBeCloseTo(1.544078, 6);
    expect(windowSurge(1.2, 300)).toBeCloseTo(1.222079, 6);
    expect(windowSurge(1, 420)).toBe(1);
  });

  // [q_max, surge, T_total] → target; the reference rule floor(q_max / surge) in the comment.
  const targets = new Map<[number, number, number], number>([
    [[6, 1.5, 420], 3], // 6 / 1.544078 = 3.89; reference 4
    [[10, 1.2, 300], 8], // 10 / 1.222079 = 8.18; reference 8
    [[8, 1.5, 60], 4], // 8 / 1.5 ^ 1.5 = 8 / 1.837117 = 4.35; reference 5
    [[3, 1, 420], 3], // no surge: q_max itself, never above it
    [[1, 1, 420], 1],
  ]);
  it.each([...targets])('target_per_instance of %j is %d', ([qMax, surge, tTotal], target) => {
    expect(targetPerInstance(qMax, surge, tTotal)).toBe(target);
  });

  it('refuses a surge one instance cannot absorb', () => {
    expect(() => targetPerInstance(1, 1.5, 420)).toThrow(UsageError);
    expect(() => targetPerInstance(1, 1.5, 420)).toThrow(
      /^one instance cannot absorb this surge: q_max 1 \/ surge 1.5 = 0.667 < 1 stream per instance; measure a larger instance type/,
    );
    // 2 / 1.95 ≥ 1, but over the 450 s window the surge compounds to 2.045 and 2 / 2.045 < 1.
    expect(() => targetPerInstance(2, 1.95, 420)).toThrow(
      /^one instance cannot absorb this surge: over the 450 s window \(T_total 420 s \+ 30 s detection\) the surge of 1.95 compounds to 2.0453/,
    );
  });

  it('scale_in_threshold: hand-computed cases', () => {
    expect(scaleInThreshold(3, 4)).toBe(2.4); // 3 × 4 / 5
    expect(scaleInThreshold(4, 1)).toBe(2); // target / 2
    expect(scaleInThreshold(4, 3)).toBe(3); // 4 × 3 / 4
    expect(scaleInThreshold(1, 1)).toBe(0.5);
    expect(scaleInThreshold(5, 2)).toBe(3.33); // 3.333… floored
  });

  it('scale_in_threshold: removing one of n instances never lifts the rest above the target', () => {
    const targets = Array.from({ length: 12 }, (_, i) => i + 1);
    const minimums = Array.from({ length: 10 }, (_, i) => i + 1);
    const ns = Array.from({ length: 49 }, (_, i) => i + 2); // 2..50
    const worst = targets.flatMap((target) =>
      minimums.map((min) => {
        const x = scaleInThreshold(target, min);
        // A removal happens only from n > min_instances.
        const after = ns.filter((n) => n > min).map((n) => (x * n) / (n - 1));
        return { target, min, x, worstAfter: Math.max(...after) };
      }),
    );
    expect(worst.filter((w) => w.worstAfter > w.target + 1e-9)).toEqual([]);
    expect(worst.filter((w) => !(w.x > 0 && w.x < w.target))).toEqual([]);
    // With a minimum of 1 every n from 2 to 50 can be the one shrunk: target / 2 is the bound.
    const x = scaleInThreshold(4, 1);
    expect(ns.map((n) => (x * n) / (n - 1)).every((after) => after <= 4)).toBe(true);
  });

  it('min and max instances', () => {
    expect(minInstances(10, 3)).toBe(4);
    expect(minInstances(9, 3)).toBe(3);
    expect(minInstances(0, 3)).toBe(1);
    expect(minInstances(10, 3, 12)).toBe(12);
    expect(maxInstances(200, 3, 4)).toBe(67);
    expect(maxInstances(200, 4, 3)).toBe(50);
    expect(maxInstances(5, 3, 4)).toBe(4);
  });

  it('cooldowns and the scale-in window', () => {
    expect(scaleInCooldown(180, 420)).toBe(540); // 3 sessions
    expect(scaleInCooldown(60, 420)).toBe(420); // T_total
    expect(scaleInCooldown(100, 400)).toBe(420); // whole minutes, up
    expect(scaleInEvaluationPeriods(180)).toBe(15);
    expect(scaleInEvaluationPeriods(600)).toBe(30);
  });

  it('admission limits are strings for the environment', () => {
    expect(admission(6)).toEqual({ MAX_SESSIONS: '6', MAX_QUEUED_JOBS: '18', MAX_HTTP_STREAMS: '6' });
    expect(admission(1)).toEqual({ MAX_SESSIONS: '1', MAX_QUEUED_JOBS: '3', MAX_HTTP_STREAMS: '1' });
  });

  it('T_total from a startup log rounds up to whole seconds', () => {
    expect(tTotalFromStartup(183.204, 240)).toBe(424);
    expect(tTotalFromStartup(180, 240)).toBe(420);
  });

  it('the surge check tries the minimum and halfway to the maximum', () => {
    expect(surgeSizes(4, 67)).toEqual([4, 36]);
    expect(surgeSizes(3, 3)).toEqual([3]);
  });
});

describe('parseCapacity', () => {
  it('reads the capacity file', () => {
    expect(CAPACITY).toEqual({
      transport: 'ws',
      sloMs: 3000,
      percentile: 95,
      qMax: 6,
      target: 'http://127.0.0.1:8080',
      measuredAt: '2026-12-01T14:00:00.000Z',
    });
  });

  const bad = new Map<Record<string, unknown>, RegExp>([
    [{ kind: 'plan' }, /"kind" should be "capacity"; got "plan"/],
    [{ version: 2 }, /"version" should be 1; got 2/],
    [{ transport: 'grpc' }, /"transport" should be "ws" or "http"; got "grpc"/],
    [{ q_max: 2.5 }, /"q_max" should be a whole number of 0 or more; got 2.5/],
    [{ q_max: undefined }, /"q_max" should be a whole number of 0 or more; got nothing/],
    [{ q_max: 0 }, /q_max is 0: not even one stream met p95 ≤ 3000 ms/],
    [{ slo_ms: -1 }, /"slo_ms" should be a number above 0/],
  ]);
  it.each([...bad])('rejects %j', (change, message) => {
    expect(() => parseCapacity({ ...CAPACITY_FILE, ...change }, 'c.json')).toThrow(message);
  });
});

describe('buildPlan', () => {
  const inputs = {
    capacity: CAPACITY,
    surge: 1.5,
    peak: 200,
    trough: 10,
    tTotalS: 420,
    tTotalFrom: 'stated',
    sessionS: 180,
  };
  const plan = buildPlan(inputs, { runs: 40, seed: 1 });

  it('writes the fields deploy reads, with the values of the formulas', () => {
    expect(Object.keys(plan).slice(0, DEPLOY_FIELDS.length)).toEqual(DEPLOY_FIELDS);
    expect(plan).toMatchObject({
      version: 1,
      kind: 'plan',
      transport: 'ws',
      slo_ms: 3000,
      q_max: 6,
      t_total_s: 420,
      surge: 1.5,
      peak: 200,
      trough: 10,
      target_per_instance: 3,
      scale_in_threshold: 2.4,
      min_instances: 4,
      max_instances: 67,
      scale_out_cooldown_s: 60,
      scale_in_cooldown_s: 540,
      scale_in_period_s: 60,
      scale_in_evaluation_periods: 15,
      admission: { MAX_SESSIONS: '6', MAX_QUEUED_JOBS: '18', MAX_HTTP_STREAMS: '6' },
      session_s: 180,
      detection_s: 30,
      window_s: 450,
      window_surge: 1.5441,
    });
    expect(Object.keys(plan.formulas)).toEqual(expect.arrayContaining(DEPLOY_FIELDS.slice(9)));
    expect(plan.formulas.target_per_instance).toBe(
      'min(q_max, floor(q_max / window_surge)) = floor(6 / 1.5441) = 3',
    );
  });

  it('passes the deploy tooling’s own checks', () => {
    expect(plan.scale_in_threshold).toBeGreaterThan(0);
    expect(plan.scale_in_threshold).toBeLessThan(plan.target_per_instance);
    expect(plan.min_instances).toBeLessThanOrEqual(plan.max_instances);
    expect(plan.scale_in_period_s % 60).toBe(0);
    expect(plan.scale_in_period_s * plan.scale_in_evaluation_periods).toBeLessThanOrEqual(86_400);
  });

  it('reports a seeded surge check over the fleet sizes tried', () => {
    expect(plan.surge_check.runs).toBe(40);
    expect(plan.surge_check.seed).toBe(1);
    expect(plan.surge_check.by_instances.map((s) => s.instances)).toEqual([4, 36]);
    expect(plan.surge_check.exceeded_share).toBe(
      Math.max(...plan.surge_check.by_instances.map((s) => s.exceeded_share)),
    );
    expect(plan.surge_check.worst_per_instance).toBeGreaterThanOrEqual(plan.target_per_instance);
    expect(buildPlan(inputs, { runs: 40, seed: 1 })).toEqual(plan);
  });

  it('a fleet held at q_max exceeds it in most runs; a wide margin in none', () => {
    const tight = buildPlan(
      { ...inputs, capacity: { ...CAPACITY, qMax: 2 }, surge: 1 },
      { runs: 40, seed: 1 },
    );
    expect(tight.target_per_instance).toBe(2);
    expect(tight.surge_check.exceeded_share).toBeGreaterThan(0.5);
    const wide = buildPlan({ ...inputs, minInstancesFloor: 30 }, { runs: 40, seed: 1 });
    expect(wide.min_instances).toBe(30);
    expect(wide.surge_check.exceeded_share).toBeLessThan(plan.surge_check.exceeded_share);
  });

  it('is read back by the simulator', () => {
    const read = parseSimPlan(JSON.parse(JSON.stringify(plan)), 'plan.json');
    expect(read).toEqual({
      policy: {
        targetPerInstance: 3,
        scaleInThreshold: 2.4,
        minInstances: 4,
        maxInstances: 67,
        scaleInCooldownS: 540,
        scaleInPeriodS: 60,
        scaleInEvaluationPeriods: 15,
      },
      qMax: 6,
      tTotalS: 420,
      peak: 200,
      trough: 10,
      sessionS: 180,
    });
    expect(() => parseSimPlan({ ...plan, kind: 'capacity' }, 'p.json')).toThrow(
      /plan p.json: "kind" should be "plan"; got "capacity"/,
    );
    expect(() => parseSimPlan({ ...plan, max_instances: 2 }, 'p.json')).toThrow(
      /at least min_instances \(4\)/,
    );
  });
});

describe('the plan command line', () => {
  const dir = mkdtempSync(join(tmpdir(), 'plan-cli-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  const file = (name: string, content: string) => {
    const path = join(dir, name);
    writeFileSync(path, content);
    return path;
  };
  const capacity = file('capacity.json', JSON.stringify(CAPACITY_FILE));
  const out = join(dir, 'plan.json');
  const LOAD = ['--surge', '1.5', '--peak', '200', '--trough', '10', '--runs', '20'];

  async function run(args: string[]) {
    const capture = () => {
      const stream = new PassThrough();
      const chunks: Buffer[] = [];
      stream.on('data', (c: Buffer) => chunks.push(c));
      return { stream, text: () => Buffer.concat(chunks).toString('utf8') };
    };
    const stdout = capture();
    const stderr = capture();
    const code = await main(args, { stdout: stdout.stream, stderr: stderr.stream });
    return { code, stdout: stdout.text(), stderr: stderr.text() };
  }

  it('prints the table and writes the plan', async () => {
    const r = await run(['--capacity', capacity, ...LOAD, '--t-total-s', '420', '--out', out]);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^ {2}target_per_instance +3 +min\(q_max, floor\(q_max \/ window_surge\)\)/m);
    expect(r.stdout).toContain(`wrote ${out}`);
    const plan = JSON.parse(readFileSync(out, 'utf8')) as Record<string, unknown>;
    expect(Object.keys(plan).slice(0, DEPLOY_FIELDS.length)).toEqual(DEPLOY_FIELDS);
    expect(plan).toMatchObject({ t_total_s: 420, target_per_instance: 3, max_instances: 67 });
  });

  it('takes T_total from a startup log plus provisioning', async () => {
    const log = file(
      'container.log',
      [
        '{"level":30,"msg":"starting"}',
        '=== STAGE framework_init t=2026-12-01T14:26:08.100Z elapsed_s=0.181 ===',
        '=== STAGE weights_ready t=2026-12-01T14:26:09.123Z elapsed_s=1.204 ===',
        '=== STAGE warmup_done t=2026-12-01T14:29:11.500Z elapsed_s=183.181 ===',
        '=== STAGE ready t=2026-12-01T14:29:11.520Z elapsed_s=183.204 ===',
      ].join('\n'),
    );
    let r = await run(['--capacity', capacity, ...LOAD, '--startup-log', log, '--out', out]);
    expect(r.code).toBe(0);
    expect(JSON.parse(readFileSync(out, 'utf8'))).toMatchObject({ t_total_s: 424 });
    expect(r.stdout).toContain('ceil(ready elapsed_s + provision_s) = ceil(183.204 + 240) = 424');
    r = await run([
      '--capacity',
      capacity,
      ...LOAD,
      '--startup-log',
      log,
      '--provision-s',
      '100',
      '--out',
      out,
    ]);
    expect(r.code).toBe(0);
    expect(JSON.parse(readFileSync(out, 'utf8'))).toMatchObject({ t_total_s: 284 });
  });

  it('warns on stderr, and still succeeds, when the surge check fails often', async () => {
    const tight = file('tight.json', JSON.stringify({ ...CAPACITY_FILE, q_max: 2 }));
    const r = await run(
      ['--capacity', tight, '--surge', '1', '--peak', '20', '--trough', '4', '--runs', '20'].concat([
        '--t-total-s',
        '420',
        '--out',
        out,
      ]),
    );
    expect(r.code).toBe(0);
    expect(r.stderr).toMatch(/^plan: warning: in the surge check an instance went above q_max 2/);
    expect(r.stderr).toContain('--min-instances');
  });

  const usage = new Map<string, [string[], RegExp]>([
    ['no capacity', [[...LOAD, '--t-total-s', '420'], /--capacity is required/]],
    ['no T_total', [['--capacity', capacity, ...LOAD], /give T_total one way/]],
    [
      'two T_totals',
      [
        ['--capacity', capacity, ...LOAD, '--t-total-s', '420', '--startup-log', 'x.log'],
        /give T_total one way/,
      ],
    ],
    [
      'provisioning without a log',
      [
        ['--capacity', capacity, ...LOAD, '--t-total-s', '420', '--provision-s', '9'],
        /--provision-s goes with/,
      ],
    ],
    [
      'a surge below 1',
      [
        ['--capacity', capacity, '--surge', '0.8', '--peak', '9', '--trough', '1', '--t-total-s', '420'],
        /--surge should be a number of 1 or more; got "0.8"/,
      ],
    ],
    [
      'a trough above the peak',
      [
        ['--capacity', capacity, '--surge', '1.2', '--peak', '9', '--trough', '10', '--t-total-s', '420'],
        /--trough \(10\) should be at most --peak \(9\)/,
      ],
    ],
    ['an unknown flag', [['--capacity', capacity, '--bogus'], /Unknown option '--bogus'/]],
    [
      'a missing capacity file',
      [
        ['--capacity', join(dir, 'nope.json'), ...LOAD, '--t-total-s', '420'],
        /cannot read the capacity file/,
      ],
    ],
    [
      'a log without ready',
      [
        [
          '--capacity',
          capacity,
          ...LOAD,
          '--startup-log',
          file('short.log', '=== STAGE framework_init t=2026-12-01T14:26:08Z elapsed_s=0.2 ==='),
        ],
        /startup log .*short.log: the log has no "=== STAGE ready …" marker/,
      ],
    ],
    [
      'a surge one instance cannot absorb',
      [
        [
          '--capacity',
          file('one.json', JSON.stringify({ ...CAPACITY_FILE, q_max: 1 })),
          ...LOAD,
          '--t-total-s',
          '420',
        ],
        /one instance cannot absorb this surge: q_max 1 \/ surge 1.5/,
      ],
    ],
  ]);
  it.each([...usage])('exits 2 on %s', async (_name, [args, message]) => {
    const r = await run([...args, '--out', join(dir, 'never.json')]);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/^plan: /);
    expect(r.stderr).toMatch(message);
    expect(r.stderr).toContain('Run with --help for usage.');
  });

  it('prints help', async () => {
    const r = await run(['--help']);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^Usage: node dist\/scripts\/plan.js --capacity FILE/);
  });
});
