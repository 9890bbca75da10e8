/**
 * The dispatch policy: which waiting sentence runs next, on which worker, on which of its
 * sessions. Pure: it reads a snapshot of the pool and returns what to start; the pool
 * (worker-pool.ts) only queues and runs. Its rules (`deadline`, the default):
 *
 * 1. Every sentence carries its deadline, when its listener needs it (the request window says,
 *    synthesis/window.ts): a request's first sentence when it was asked for, since its listener
 *    hears nothing yet; a later one when the audio already handed over for its request will have
 *    played out, at the pace its consumer took it. The sentence with the earliest deadline runs
 *    first; equal deadlines go to the cheaper sentence by the cost estimates, then first come
 *    first served. A new request's first sentence thus goes before a request with seconds of audio
 *    buffered, and a listener whose audio ran out (its deadline passed) before both. Look-ahead is
 *    simply work whose deadline is far.
 * 2. A lone request (no other open) gets every core for its next-needed sentence: worker 0's solo
 *    session, when one pool session would need at least `soloMinMs` for it. If a worker is still
 *    finishing earlier work (the last call of a cancelled request, which cannot be interrupted),
 *    the sentence waits for it when that and the solo run end sooner than a pool session would, by
 *    the cost estimates, and never longer than the solo session gains.
 * 3. Look-ahead never runs beside a solo run (whose cores it would take), nor before its request's
 *    first sentence is done: until then it could only delay that first audio, on cores or a GPU
 *    shared with it, and its deadline is not known.
 * 4. Phonemize work (`POST /v1/phonemize`: the front end alone, a job no longer than a sentence)
 *    has no listener: it runs below every request's next-needed sentence, and otherwise as due
 *    when it was queued, so no listener's next sentence waits for more than the job a worker has
 *    already started, and a flood of it neither starves look-ahead nor is starved by it. Its cost
 *    is the front end's.
 *
 * The `fifo` policy, kept to measure against, replaces rule 1: next-needed sentences before any
 * look-ahead, first come first served, whatever their listeners hold; look-ahead and phonemize work
 * then share the idle workers first come first served. Fairness across the contexts of one session
 * comes from the same rules: each context's turn is a request of its own.
 */

/** Which rule 1 decides the order: earliest deadline first, or next-needed first come first served. */
export type PolicyName = 'deadline' | 'fifo';

/** Work waiting for a worker: a sentence of a request, or a text's front end alone. */
export type WaitingJob = WaitingSentence | WaitingPhonemize;

/** A sentence waiting for a worker. */
export interface WaitingSentence {
  readonly kind: 'sentence';
  readonly id: number;
  /** The request it belongs to. */
  readonly request: number;
  /** Its listener waits for it; otherwise it is look-ahead. */
  readonly needed: boolean;
  /** When it was queued, on the pool's clock (ms). */
  readonly queuedAt: number;
  /** Characters of its text: what cost estimates scale with. */
  readonly chars: number;
  /** Its request's first sentence is done (its first audio exists). */
  readonly afterFirst: boolean;
  /** When its listener needs it, on the pool's clock (ms): see rule 1. */
  readonly deadline: number;
}

/** A sentence's front end alone (`POST /v1/phonemize`): no listener waits for its audio. */
export interface WaitingPhonemize {
  readonly kind: 'phonemize';
  readonly id: number;
  readonly queuedAt: number;
  /** Characters of its text: what its cost estimate scales with. */
  readonly chars: number;
}

export interface WorkerState {
  /** Loaded and able to take work. */
  readonly ready: boolean;
  /** It has a solo session (every core). */
  readonly hasSolo: boolean;
  /** The job it runs now, if any. */
  readonly running?: {
    readonly kind: WaitingJob['kind'];
    readonly solo: boolean;
    readonly startedAt: number;
    readonly chars: number;
  };
}

export interface PoolSnapshot {
  /** The pool's clock (ms). */
  readonly now: number;
  /** In the order they were queued. */
  readonly waiting: readonly WaitingJob[];
  /** By worker index. */
  readonly workers: readonly WorkerState[];
  /** Requests being synthesized now. */
  readonly openRequests: number;
}

export interface Start {
  readonly job: number;
  readonly worker: number;
  /** On the worker's solo session. */
  readonly solo: boolean;
}

export interface Decision {
  readonly start: readonly Start[];
  /** Decide again at this time if nothing else happens first (a sentence waiting for every core). */
  readonly recheckAt?: number;
}

export interface PolicySettings {
  /** A lone sentence goes to the solo session only if one pool session would need this long (ms). */
  readonly soloMinMs: number;
  /** Rule 1 as it is (`deadline`, the default), or as it was (`fifo`). */
  readonly policy?: PolicyName;
}

/**
 * What a sentence costs, per character of text, on a pool session and on the solo session:
 * measured by each worker at warm-up, then followed over the sentences run since; what the front
 * end alone costs, followed over the phonemize jobs run; and how much audio a character makes, for
 * the deadlines of sentences behind one not yet computed.
 */
export class CostModel {
  #pool: number | undefined;
  #solo: number | undefined;
  #frontEnd: number | undefined;
  #audio: number | undefined;

  /** A worker's warm-up measures; the first worker's seed the estimates. */
  seed(poolMsPerChar: number, soloMsPerChar?: number): void {
    this.#pool ??= poolMsPerChar;
    if (soloMsPerChar !== undefined) this.#solo ??= soloMsPerChar;
  }

  /** A sentence of `chars` characters took `ms` of model time. */
  observe(solo: boolean, chars: number, ms: number): void {
    if (chars <= 0) return;
    if (solo) this.#solo = average(this.#solo, ms / chars);
    else this.#pool = average(this.#pool, ms / chars);
  }

  /** A phonemize job of `chars` characters held its worker for `ms`. */
  observeFrontEnd(chars: number, ms: number): void {
    if (chars > 0) this.#frontEnd = average(this.#frontEnd, ms / chars);
  }

  /** A sentence of `chars` characters, spoken at `speed`, made `ms` of audio. */
  observeAudio(chars: number, ms: number, speed = 1): void {
    if (chars > 0 && ms > 0) this.#audio = average(this.#audio, (ms * speed) / chars);
  }

  /** Audio that `chars` characters make at `speed` (ms; 0 before any sentence has run). */
  audioMs(chars: number, speed = 1): number {
    return ((this.#audio ?? 0) * chars) / speed;
  }

  /** Model time of `chars` characters on one pool session (Infinity before any measure). */
  poolMs(chars: number): number {
    return (this.#pool ?? Infinity) * chars;
  }

  /** The same on the solo session (Infinity without one). */
  soloMs(chars: number): number {
    return (this.#solo ?? Infinity) * chars;
  }

  /** The front end alone over `chars` characters (Infinity before any phonemize job). */
  frontEndMs(chars: number): number {
    return (this.#frontEnd ?? Infinity) * chars;
  }

  /** What a running job is expected to take in all, by its kind and session. */
  runMs(running: NonNullable<WorkerState['running']>): number {
    if (running.kind === 'phonemize') return this.frontEndMs(running.chars);
    return running.solo ? this.soloMs(running.chars) : this.poolMs(running.chars);
  }
}

const average = (previous: number | undefined, observed: number) =>
  previous === undefined ? observed : 0.8 * previous + 0.2 * observed;

const NOTHING: Decision = { start: [] };

/** What to start now, given the pool's state and what sentences cost. */
export function decide(pool: PoolSnapshot, costs: CostModel, settings: PolicySettings): Decision {
  const free = pool.workers.flatMap((w, index) => (w.ready && !w.running ? [index] : []));
  if (free.length === 0 || pool.waiting.length === 0) return NOTHING;
  const needed = pool.waiting.filter((job) => job.kind === 'sentence' && job.needed);
  const everyCore = soloDecision(pool, needed, costs, settings);
  if (everyCore) return everyCore;
  const soloRunning = pool.workers.some((w) => w.running?.solo);
  // Rules 3 and 4: look-ahead once its request's first audio exists, and phonemize work, never
  // beside a solo run.
  const rest = soloRunning
    ? []
    : pool.waiting.filter((job) => job.kind === 'phonemize' || (!job.needed && job.afterFirst));
  const order =
    settings.policy === 'fifo' ? [...needed, ...rest] : byDeadline([...needed, ...rest], needed, costs);
  return {
    start: order.slice(0, free.length).map((job, k) => ({ job: job.id, worker: free[k]!, solo: false })),
  };
}

/**
 * Rule 1: earliest deadline first; equal deadlines to the cheaper job, then to the first queued.
 * Phonemize work is due when it was queued, but never before a listener's next sentence (rule 4).
 */
function byDeadline(
  jobs: readonly WaitingJob[],
  needed: readonly WaitingJob[],
  costs: CostModel,
): WaitingJob[] {
  let lastNeeded = -Infinity;
  for (const job of needed) if (job.kind === 'sentence') lastNeeded = Math.max(lastNeeded, job.deadline);
  const keyed = jobs.map((job) => ({
    job,
    due: job.kind === 'sentence' ? job.deadline : Math.max(job.queuedAt, lastNeeded),
    // At an equal deadline a listener's sentence goes before phonemize work.
    rank: job.kind === 'sentence' ? 0 : 1,
    cost: job.kind === 'sentence' ? costs.poolMs(job.chars) : costs.frontEndMs(job.chars),
  }));
  keyed.sort(
    (a, b) =>
      a.due - b.due ||
      a.rank - b.rank ||
      compareCosts(a.cost, b.cost) ||
      a.job.queuedAt - b.job.queuedAt ||
      a.job.id - b.job.id,
  );
  return keyed.map((k) => k.job);
}

/** Cheaper first; costs not yet known (Infinity) compare equal. */
const compareCosts = (a: number, b: number) => (a === b ? 0 : a < b ? -1 : 1);

/**
 * When the first sentence of a request that opens now, `chars` characters long, would be done (ms
 * from now), by the cost estimates: the jobs that would run before it under the policy (under
 * `deadline`, every sentence already due; under `fifo`, every next-needed one), each on the worker
 * that frees first, then its own run on a pool session. `wait` is the part spent waiting for a
 * worker: 0 when one is free and nothing runs before it. What admission by first audio weighs.
 */
export function predictFirstAudio(
  pool: PoolSnapshot,
  costs: CostModel,
  settings: PolicySettings,
  chars: number,
): { wait: number; total: number } {
  const freeAt = pool.workers.flatMap((w) =>
    !w.ready ? [] : [w.running ? Math.max(0, w.running.startedAt + costs.runMs(w.running) - pool.now) : 0],
  );
  if (freeAt.length === 0) return { wait: Infinity, total: Infinity };
  const before = pool.waiting.filter(
    (job) =>
      job.kind === 'sentence' &&
      (settings.policy === 'fifo' ? job.needed : (job.needed || job.afterFirst) && job.deadline <= pool.now),
  );
  for (const job of before) {
    const k = freeAt.indexOf(Math.min(...freeAt));
    freeAt[k] = freeAt[k]! + costs.poolMs(job.chars);
  }
  const wait = Math.min(...freeAt);
  return { wait, total: wait + costs.poolMs(chars) };
}

/** Rule 2: a lone request's next sentence on every core, now or once the cores are free. */
function soloDecision(
  pool: PoolSnapshot,
  needed: readonly WaitingJob[],
  costs: CostModel,
  settings: PolicySettings,
): Decision | undefined {
  const job = needed[0];
  if (pool.openRequests > 1 || needed.length !== 1 || job === undefined) return undefined;
  const soloWorker = pool.workers.findIndex((w) => w.hasSolo && w.ready);
  if (soloWorker < 0) return undefined;
  const poolMs = costs.poolMs(job.chars);
  if (!(poolMs >= settings.soloMinMs)) return undefined;
  const busy = pool.workers.flatMap((w) => (w.running ? [w.running] : []));
  if (busy.length === 0) return { start: [{ job: job.id, worker: soloWorker, solo: true }] };
  // Every core is not free yet. Waiting pays while the running calls end within what the solo
  // session gains; a call that overruns its estimate is waited for no longer than that either.
  const gain = poolMs - costs.soloMs(job.chars);
  if (!(gain > 0)) return undefined;
  const remaining = Math.max(...busy.map((r) => r.startedAt + costs.runMs(r) - pool.now));
  const giveUpAt = job.queuedAt + gain;
  if (remaining < gain && pool.now < giveUpAt) return { start: [], recheckAt: giveUpAt };
  return undefined;
}
