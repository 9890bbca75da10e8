/**
 * The capacity plan `deploy --autoscaling` reads: the JSON file `npm run plan` writes. Checked once,
 * here, so that the request builders can trust every field; each mistake is a UsageError naming the
 * field, the valid range and the value found.
 */
import { UsageError } from './cli.ts';

/** The plan format this deploy tooling reads (`"version"`). */
export const PLAN_VERSION = 1;
/** Transports a plan can be made for: the WebSocket route, or the streaming HTTP routes. */
export const PLAN_TRANSPORTS = ['ws', 'http'] as const;
/** Admission limits the server must get from the plan (environment variables, as strings). */
export const ADMISSION_VARIABLES = ['MAX_SESSIONS', 'MAX_QUEUED_JOBS', 'MAX_HTTP_STREAMS'] as const;
/** Upper bound of min_instances: the initial instance count, the same bound as --instance-count. */
export const MAX_INITIAL_INSTANCES = 100;
export const MAX_INSTANCES = 1000;

/** A validated plan. Field names are the file's own, so the mapping onto AWS requests reads directly. */
export interface ScalingPlan {
  readonly version: typeof PLAN_VERSION;
  readonly kind: 'plan';
  readonly transport: (typeof PLAN_TRANSPORTS)[number];
  /** The time-to-first-audio objective; the TTFA alarm's threshold. */
  readonly slo_ms: number;
  readonly q_max: number;
  readonly t_total_s: number;
  /** Concurrent requests per instance that target tracking holds (scale-out only). */
  readonly target_per_instance: number;
  /** Average concurrent requests per instance below which the fleet sheds one instance. */
  readonly scale_in_threshold: number;
  readonly min_instances: number;
  readonly max_instances: number;
  readonly scale_out_cooldown_s: number;
  readonly scale_in_cooldown_s: number;
  /** Period of the scale-in alarm, in seconds. */
  readonly scale_in_period_s: number;
  /** Consecutive low periods before scale-in. */
  readonly scale_in_evaluation_periods: number;
  /** Environment variables for the container: the server's admission limits. */
  readonly admission: Readonly<Record<string, string>>;
}

type NumberField = Exclude<
  { [K in keyof ScalingPlan]: ScalingPlan[K] extends number ? K : never }[keyof ScalingPlan],
  'version'
>;

interface NumberCheck {
  /** What a valid value is, for the message. */
  readonly expected: string;
  readonly ok: (value: number) => boolean;
}

const whole = (min: number, max: number): NumberCheck => ({
  expected: `a whole number from ${min} to ${max}`,
  ok: (value) => Number.isInteger(value) && value >= min && value <= max,
});
const positive: NumberCheck = { expected: 'a number greater than 0', ok: (value) => value > 0 };
const COOLDOWN = whole(0, 86_400);

const NUMBER_FIELDS: Readonly<Record<NumberField, NumberCheck>> = {
  // The planner passes the measured SLO through; CloudWatch thresholds are doubles.
  slo_ms: positive,
  q_max: whole(1, 100_000),
  t_total_s: positive,
  target_per_instance: positive,
  // Zero would never alarm: the average concurrency is never below 0.
  scale_in_threshold: positive,
  min_instances: whole(1, MAX_INITIAL_INSTANCES),
  max_instances: whole(1, MAX_INSTANCES),
  scale_out_cooldown_s: COOLDOWN,
  scale_in_cooldown_s: COOLDOWN,
  // CloudWatch alarm periods: 10, 20 and 30 s for high-resolution metrics, else whole minutes.
  scale_in_period_s: {
    expected: '10, 20, 30, or a multiple of 60 up to 86400',
    ok: (value) =>
      [10, 20, 30].includes(value) ||
      (Number.isInteger(value) && value > 0 && value % 60 === 0 && value <= 86_400),
  },
  scale_in_evaluation_periods: whole(1, 10_080),
};

function shown(value: unknown): string {
  if (value === undefined) return 'nothing (the field is missing)';
  const json = JSON.stringify(value);
  return json.length > 60 ? `${json.slice(0, 57)}...` : json;
}

/**
 * Checks a parsed plan file and returns it typed. Fields the deploy tooling does not know are
 * ignored, so the planner can add some.
 *
 * @param source The file name, for the messages.
 * @throws {UsageError} naming the first field that is missing or out of range.
 */
export function parsePlan(value: unknown, source: string): ScalingPlan {
  const fail = (message: string) => new UsageError(`Plan ${source}: ${message}`);
  const wrong = (field: string, expected: string, got: unknown) =>
    fail(`"${field}" should be ${expected}; got ${shown(got)}.`);
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw fail(`should hold a JSON object (as \`npm run plan\` writes it); got ${shown(value)}.`);
  }
  const plan = value as Record<string, unknown>;
  if (plan.kind !== 'plan') throw wrong('kind', '"plan"', plan.kind);
  if (plan.version !== PLAN_VERSION) {
    throw wrong('version', `${PLAN_VERSION} (the plan format this deploy reads)`, plan.version);
  }
  if (!PLAN_TRANSPORTS.includes(plan.transport as never)) {
    throw wrong('transport', `one of ${PLAN_TRANSPORTS.map((t) => `"${t}"`).join(', ')}`, plan.transport);
  }
  for (const [field, check] of Object.entries(NUMBER_FIELDS)) {
    const got = plan[field];
    if (typeof got !== 'number' || !Number.isFinite(got) || !check.ok(got)) {
      throw wrong(field, check.expected, got);
    }
  }
  const numbers = plan as Record<NumberField, number>;
  if (numbers.min_instances > numbers.max_instances) {
    throw fail(
      `"min_instances" (${numbers.min_instances}) should be at most "max_instances" (${numbers.max_instances}).`,
    );
  }
  if (numbers.scale_in_threshold >= numbers.target_per_instance) {
    // At or above the target, scale-in would remove the capacity target tracking has just added.
    throw fail(
      `"scale_in_threshold" (${numbers.scale_in_threshold}) should be less than "target_per_instance" ` +
        `(${numbers.target_per_instance}), or scale-in and scale-out would fight.`,
    );
  }
  // CloudWatch's limit on how far back an alarm looks: a day for periods under an hour, else a week.
  const window = numbers.scale_in_period_s * numbers.scale_in_evaluation_periods;
  const longest = numbers.scale_in_period_s < 3600 ? 86_400 : 604_800;
  if (window > longest) {
    throw fail(
      `"scale_in_evaluation_periods" × "scale_in_period_s" (${window} s) should be at most ${longest} s, ` +
        'the longest a CloudWatch alarm with that period evaluates.',
    );
  }
  // Only the known fields, so nothing the planner added leaks into the requests.
  const known = Object.fromEntries(Object.keys(NUMBER_FIELDS).map((field) => [field, plan[field]]));
  return Object.freeze({
    ...(known as Record<NumberField, number>),
    version: PLAN_VERSION,
    kind: 'plan',
    transport: plan.transport as ScalingPlan['transport'],
    admission: parseAdmission(plan.admission, wrong),
  });
}

function parseAdmission(
  value: unknown,
  wrong: (field: string, expected: string, got: unknown) => UsageError,
): Readonly<Record<string, string>> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw wrong('admission', `an object of environment variables (${ADMISSION_VARIABLES.join(', ')})`, value);
  }
  const admission = value as Record<string, unknown>;
  for (const name of ADMISSION_VARIABLES) {
    const got = admission[name];
    // Environment values are strings; a number here means the planner wrote the wrong type.
    if (typeof got !== 'string' || !/^\d+$/.test(got) || Number(got) < 1) {
      throw wrong(`admission.${name}`, 'a whole number of 1 or more, as a string ("6")', got);
    }
  }
  for (const [name, got] of Object.entries(admission)) {
    if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(name)) {
      throw wrong(`admission.${name}`, 'named like an environment variable (letters, digits, _)', got);
    }
    if (typeof got !== 'string') throw wrong(`admission.${name}`, 'a string', got);
  }
  return Object.freeze({ ...(admission as Record<string, string>) });
}

/**
 * Reads and checks the plan file at `path`.
 *
 * @throws {UsageError} when the file cannot be read, is not JSON, or is not a valid plan.
 */
export function readPlan(path: string, readText: (path: string) => string): ScalingPlan {
  let text: string;
  try {
    text = readText(path);
  } catch (error) {
    throw new UsageError(
      `--autoscaling: cannot read plan ${path}: ${error instanceof Error ? error.message : String(error)}`,
    );
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new UsageError(
      `Plan ${path} is not JSON: ${error instanceof Error ? error.message : String(error)}`,
    );
  }
  return parsePlan(value, path);
}
