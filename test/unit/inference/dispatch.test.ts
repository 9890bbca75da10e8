/**
 * The dispatch policy without ONNX Runtime: snapshots of a pool in, decisions out. The costs are
 * 10 ms per character on a pool session and 6 on the solo session, so a 30-character sentence
 * costs 300 ms or 180 ms and the solo session gains 120 ms; the front end alone (a phonemize job)
 * costs 1 ms per character. The rules both policies share run under each; then each policy's own
 * order (`deadline`: earliest deadline first; `fifo`: next-needed first come first served).
 */
import { describe, expect, it } from 'vitest';
import {
  CostModel,
  decide,
  predictFirstAudio,
  type PolicyName,
  type PoolSnapshot,
  type WaitingJob,
  type WaitingPhonemize,
  type WaitingSentence,
  type WorkerState,
} from '../../../model/inference/dispatch.ts';

const costs = () => {
  const model = new CostModel();
  model.seed(10, 6);
  model.observeFrontEnd(100, 100);
  return model;
};
const SETTINGS = { soloMinMs: 50 };
const DEADLINE = { soloMinMs: 50, policy: 'deadline' } as const;
const FIFO = { soloMinMs: 50, policy: 'fifo' } as const;
const POLICIES: PolicyName[] = ['deadline', 'fifo'];

/** A request's next-needed sentence; due when queued (a first sentence) unless said otherwise. */
const needed = (
  id: number,
  request: number,
  chars = 30,
  queuedAt = 0,
  deadline = queuedAt,
): WaitingSentence => ({
  kind: 'sentence',
  id,
  request,
  needed: true,
  queuedAt,
  chars,
  afterFirst: false,
  deadline,
});
/**
 * Look-ahead of a request whose first sentence is done (`afterFirst`), unless said otherwise; due
 * in 10 s unless said otherwise.
 */
const ahead = (
  id: number,
  request: number,
  chars = 30,
  afterFirst = true,
  deadline = 10_000,
): WaitingSentence => ({
  ...needed(id, request, chars),
  needed: false,
  afterFirst,
  deadline,
});
/** A later sentence that its listener waits for: its request's first is done. */
const later = (id: number, request: number, deadline: number, chars = 30, queuedAt = 0): WaitingSentence => ({
  ...needed(id, request, chars, queuedAt, deadline),
  afterFirst: true,
});
/** A sentence's front end alone (POST /v1/phonemize): no request, no listener. */
const phonemize = (id: number, chars = 30, queuedAt = 0): WaitingPhonemize => ({
  kind: 'phonemize',
  id,
  queuedAt,
  chars,
});
const idle = (hasSolo = false): WorkerState => ({ ready: true, hasSolo });
const busy = (startedAt: number, chars = 30, solo = false, hasSolo = false): WorkerState => ({
  ready: true,
  hasSolo,
  running: { kind: 'sentence', solo, startedAt, chars },
});
/** Running a phonemize job of `chars` characters (1 ms each) since `startedAt`. */
const phonemizing = (startedAt: number, chars: number): WorkerState => ({
  ready: true,
  hasSolo: false,
  running: { kind: 'phonemize', solo: false, startedAt, chars },
});
const pool = (
  waiting: WaitingJob[],
  workers: WorkerState[],
  openRequests: number,
  now = 0,
): PoolSnapshot => ({ now, waiting, workers, openRequests });

describe('dispatch policy, the rules both policies share', () => {
  const cases: [string, PoolSnapshot, ReturnType<typeof decide>][] = [
    [
      'first sentences queued together, then look-ahead due later',
      pool([ahead(1, 1), needed(2, 2), needed(3, 3), ahead(4, 2)], [idle(), idle(), idle()], 3),
      {
        start: [
          { job: 2, worker: 0, solo: false },
          { job: 3, worker: 1, solo: false },
          { job: 1, worker: 2, solo: false },
        ],
      },
    ],
    [
      'a lone request’s next sentence takes every core; its look-ahead waits',
      pool([needed(1, 1), ahead(2, 1), ahead(3, 1)], [idle(true), idle()], 1),
      { start: [{ job: 1, worker: 0, solo: true }] },
    ],
    [
      'a sentence cheaper than soloMinMs stays on a pool session; its look-ahead waits for it',
      pool([needed(1, 1, 3), ahead(2, 1, 30, false)], [idle(true), idle()], 1),
      { start: [{ job: 1, worker: 0, solo: false }] },
    ],
    [
      'another request open: no solo session, even for a lone sentence',
      pool([needed(1, 1)], [idle(true), idle()], 2),
      { start: [{ job: 1, worker: 0, solo: false }] },
    ],
    [
      'beside a solo run, another request’s next sentence starts at once; look-ahead does not',
      pool([ahead(2, 1), needed(3, 2)], [busy(0, 30, true, true), idle()], 2, 50),
      { start: [{ job: 3, worker: 1, solo: false }] },
    ],
    [
      'beside a solo run, look-ahead alone waits',
      pool([ahead(2, 1)], [busy(0, 30, true, true), idle()], 1, 50),
      { start: [] },
    ],
    [
      'without a solo session too, a request’s look-ahead waits for its first sentence (it could only delay it)',
      pool([needed(1, 1), ahead(2, 1, 30, false), ahead(3, 1, 30, false)], [idle(), idle()], 1),
      { start: [{ job: 1, worker: 0, solo: false }] },
    ],
    [
      'once its first sentence is done, a request’s look-ahead runs beside its next-needed sentence',
      pool([needed(2, 1), ahead(3, 1)], [idle(), idle()], 1),
      {
        start: [
          { job: 2, worker: 0, solo: false },
          { job: 3, worker: 1, solo: false },
        ],
      },
    ],
    [
      'another request’s first sentence does not hold this one’s look-ahead',
      pool([ahead(3, 1), ahead(7, 2, 30, false)], [busy(0), idle()], 2, 10),
      { start: [{ job: 3, worker: 1, solo: false }] },
    ],
    [
      'a worker still finishing a cut request’s call for 40 ms: the lone sentence waits for every core',
      // The running call started at 260 ms and costs 300: 40 ms left, less than the 120 ms gained.
      pool([needed(1, 1, 30, 290)], [idle(true), busy(0)], 1, 300),
      { start: [], recheckAt: 290 + 120 },
    ],
    [
      'a worker busy for 200 ms more: waiting would not pay, the sentence runs on a pool session now',
      pool([needed(1, 1, 30, 90)], [idle(true), busy(0)], 1, 100),
      { start: [{ job: 1, worker: 0, solo: false }] },
    ],
    [
      'a running call that overran its estimate is waited for no longer than the solo session gains',
      pool([needed(1, 1, 30, 200)], [idle(true), busy(0)], 1, 320),
      { start: [{ job: 1, worker: 0, solo: false }] },
    ],
    [
      'workers not ready (being replaced) take nothing',
      pool([needed(1, 1), needed(2, 2)], [{ ready: false, hasSolo: true }, idle()], 2),
      { start: [{ job: 1, worker: 1, solo: false }] },
    ],
    ['nothing free: nothing starts', pool([needed(1, 1)], [busy(0), busy(0)], 2, 10), { start: [] }],
    [
      'phonemize work goes after every next-needed sentence, even one queued after it',
      pool([phonemize(1), needed(2, 1), phonemize(3)], [idle()], 1),
      { start: [{ job: 2, worker: 0, solo: false }] },
    ],
    [
      'phonemize work takes the workers no next-needed sentence waits for',
      pool([phonemize(1), needed(2, 1), phonemize(3)], [idle(), idle(), idle()], 1),
      {
        start: [
          { job: 2, worker: 0, solo: false },
          { job: 1, worker: 1, solo: false },
          { job: 3, worker: 2, solo: false },
        ],
      },
    ],
    [
      'beside a solo run, phonemize work waits',
      pool([phonemize(2)], [busy(0, 30, true, true), idle()], 1, 50),
      { start: [] },
    ],
    [
      'a lone request’s sentence waits for every core behind a phonemize job ending in 10 ms; phonemize work waits too',
      // The running job started at 280 ms and costs 30: 10 ms left, less than the 120 ms gained.
      pool([needed(1, 1, 30, 290), phonemize(2)], [idle(true), phonemizing(280, 30)], 1, 300),
      { start: [], recheckAt: 290 + 120 },
    ],
    [
      'a phonemize job busy for 200 ms more: the lone sentence runs on a pool session now',
      pool([needed(1, 1, 30, 90), phonemize(2)], [idle(true), phonemizing(0, 300)], 1, 100),
      { start: [{ job: 1, worker: 0, solo: false }] },
    ],
  ];

  const both = POLICIES.flatMap((policy) =>
    cases.map(([name, snapshot, expected]) => [policy, name, snapshot, expected] as const),
  );
  it.each(both)('%s: %s', (policy, _name, snapshot, expected) => {
    expect(decide(snapshot, costs(), { soloMinMs: 50, policy })).toEqual(expected);
  });

  it('without a policy named, it is `deadline`', () => {
    const snapshot = pool([later(1, 1, 5_000), needed(2, 2, 30, 1_000)], [idle()], 2, 1_000);
    expect(decide(snapshot, costs(), SETTINGS)).toEqual(decide(snapshot, costs(), DEADLINE));
  });

  it('before any measure of the front end, a running phonemize job is not waited for', () => {
    const model = new CostModel();
    model.seed(10, 6);
    const decision = decide(
      pool([needed(1, 1, 30, 290)], [idle(true), phonemizing(280, 30)], 1, 300),
      model,
      SETTINGS,
    );
    expect(decision).toEqual({ start: [{ job: 1, worker: 0, solo: false }] });
  });

  it('before any measure, no sentence is thought cheap enough to keep off the solo session', () => {
    const decision = decide(pool([needed(1, 1)], [idle(true), idle()], 1), new CostModel(), SETTINGS);
    expect(decision).toEqual({ start: [{ job: 1, worker: 0, solo: true }] });
  });
});

describe('dispatch policy: deadline', () => {
  // The pool's clock reads 20 s; 30 characters cost 300 ms on a pool session.
  const NOW = 20_000;
  const cases: [string, PoolSnapshot, readonly number[]][] = [
    [
      'a new request’s first sentence goes before the next sentence of a request with 10 s buffered',
      pool([later(1, 1, NOW + 10_000, 30, 5_000), needed(2, 2, 30, NOW)], [idle()], 2, NOW),
      [2],
    ],
    [
      'a starving request (its listener ran dry 1 s ago) goes before a new request’s first sentence',
      pool([needed(1, 1, 30, NOW - 100), later(2, 2, NOW - 1_000, 30, NOW - 3_000)], [idle()], 2, NOW),
      [2],
    ],
    [
      'the earliest deadline first, whatever the order they were queued in',
      pool(
        [later(1, 1, NOW + 3_000), later(2, 2, NOW + 1_000), needed(3, 3, 30, NOW), later(4, 4, NOW + 2_000)],
        [idle(), idle(), idle(), idle()],
        4,
        NOW,
      ),
      [3, 2, 4, 1],
    ],
    [
      'equal deadlines: the cheaper sentence first, then the one queued first',
      pool(
        [later(1, 1, NOW + 500, 60, 1), later(2, 2, NOW + 500, 30, 5), later(3, 3, NOW + 500, 30, 2)],
        [idle(), idle(), idle()],
        3,
        NOW,
      ),
      [3, 2, 1],
    ],
    [
      'look-ahead due sooner goes before another request’s next sentence due later: it is only work whose deadline is far',
      pool([later(1, 2, NOW + 8_000), ahead(2, 1, 30, true, NOW + 4_000)], [idle()], 2, NOW),
      [2],
    ],
    [
      'look-ahead due later waits for the next-needed sentences due before it',
      pool([ahead(1, 1, 30, true, NOW + 9_000), later(2, 2, NOW + 4_000)], [idle()], 2, NOW),
      [2],
    ],
    [
      'look-ahead of a request whose first audio is not out does not run, however early it seems due',
      pool([ahead(1, 1, 30, false, 0), later(2, 2, NOW + 4_000)], [idle(), idle()], 2, NOW),
      [2],
    ],
    [
      'phonemize work goes below every listener’s next sentence, even one due in 10 s',
      pool([phonemize(1, 30, 0), later(2, 1, NOW + 10_000)], [idle()], 2, NOW),
      [2],
    ],
    [
      'phonemize work is due when it was queued against look-ahead: after look-ahead due sooner, before look-ahead due later',
      pool(
        [
          ahead(1, 1, 30, true, NOW + 5_000),
          phonemize(2, 30, NOW - 1_000),
          ahead(3, 2, 30, true, NOW - 2_000),
        ],
        [idle(), idle(), idle()],
        2,
        NOW,
      ),
      [3, 2, 1],
    ],
    [
      'phonemize work does not hold a request’s look-ahead back, nor the other way round',
      pool([ahead(1, 1), phonemize(2)], [idle(), idle()], 1),
      [2, 1],
    ],
  ];

  it.each(cases)('%s', (_name, snapshot, order) => {
    const decision = decide(snapshot, costs(), DEADLINE);
    expect(decision.start.map((s) => s.job)).toEqual(order);
    expect(decision.start.every((s) => !s.solo)).toBe(true);
  });
});

describe('dispatch policy: fifo (the policy before deadlines)', () => {
  const NOW = 20_000;
  const cases: [string, PoolSnapshot, readonly number[]][] = [
    [
      'next-needed sentences first come first served: a request with 10 s buffered before a new one',
      pool([later(1, 1, NOW + 10_000, 30, 5_000), needed(2, 2, 30, NOW)], [idle()], 2, NOW),
      [1],
    ],
    [
      'next-needed before any look-ahead, whatever their deadlines',
      pool([later(1, 2, NOW + 8_000), ahead(2, 1, 30, true, NOW + 4_000)], [idle()], 2, NOW),
      [1],
    ],
    [
      'phonemize work and look-ahead share the idle workers, first come first served',
      pool([phonemize(1), ahead(2, 1), phonemize(3), ahead(4, 2)], [idle(), idle(), idle(), busy(0)], 2, 10),
      [1, 2, 3],
    ],
    [
      'phonemize work does not hold a request’s look-ahead back, nor the other way round',
      pool([ahead(1, 1), phonemize(2)], [idle(), idle()], 1),
      [1, 2],
    ],
  ];

  it.each(cases)('%s', (_name, snapshot, order) => {
    expect(decide(snapshot, costs(), FIFO).start.map((s) => s.job)).toEqual(order);
  });
});

describe('predictFirstAudio', () => {
  // Two workers, free in 100 and 200 ms; a new 30-character first sentence costs 300 ms.
  const NOW = 1_000;
  const workers = [busy(NOW - 200, 30), busy(NOW - 100, 30)];
  const waiting = [later(1, 1, NOW - 50), later(2, 2, NOW + 5_000), ahead(3, 1, 30, true, NOW - 10)];

  it.each([
    ['an idle pool: no wait, its own run', pool([], [idle(), idle()], 0, NOW), DEADLINE, 0],
    // Due now or before: 1 and 3, on the worker free at 100 then the one free at 200.
    ['deadline: the sentences already due run before it', pool(waiting, workers, 2, NOW), DEADLINE, 400],
    // Every next-needed sentence: 1 and 2.
    ['fifo: every next-needed sentence runs before it', pool(waiting, workers, 2, NOW), FIFO, 400],
    ['fifo: one next-needed sentence ahead', pool(waiting.slice(0, 1), workers, 2, NOW), FIFO, 200],
    [
      'a running call past its estimate counts as ending now',
      pool([], [busy(0), busy(0)], 2, NOW),
      DEADLINE,
      0,
    ],
  ] as const)('%s', (_name, snapshot, settings, wait) => {
    expect(predictFirstAudio(snapshot, costs(), settings, 30)).toEqual({ wait, total: wait + 300 });
  });

  it('with no worker ready, the wait is unknown', () => {
    expect(
      predictFirstAudio(pool([], [{ ready: false, hasSolo: false }], 0), costs(), DEADLINE, 30).wait,
    ).toBe(Infinity);
  });
});

describe('CostModel', () => {
  it('is seeded once, by the first worker ready, then follows the sentences run', () => {
    const model = new CostModel();
    expect(model.poolMs(10)).toBe(Infinity);
    expect(model.soloMs(10)).toBe(Infinity);
    model.seed(10, 5);
    model.seed(99, 99);
    expect(model.poolMs(10)).toBe(100);
    expect(model.soloMs(10)).toBe(50);
    model.observe(false, 10, 200); // 20 ms a character: a fifth of the way there
    expect(model.poolMs(1)).toBeCloseTo(12);
    model.observe(true, 10, 100);
    expect(model.soloMs(1)).toBeCloseTo(6);
    model.observe(false, 0, 500); // an empty sentence says nothing
    expect(model.poolMs(1)).toBeCloseTo(12);
  });

  it('follows the front end alone over the phonemize jobs run, apart from the sentences', () => {
    const model = new CostModel();
    model.seed(10, 5);
    expect(model.frontEndMs(10)).toBe(Infinity);
    model.observeFrontEnd(100, 50);
    expect(model.frontEndMs(10)).toBe(5);
    model.observeFrontEnd(100, 150); // 1.5 ms a character: a fifth of the way there
    expect(model.frontEndMs(1)).toBeCloseTo(0.7);
    model.observeFrontEnd(0, 500); // an empty text says nothing
    expect(model.frontEndMs(1)).toBeCloseTo(0.7);
    expect(model.poolMs(10)).toBe(100);
    expect(model.runMs({ kind: 'phonemize', solo: false, startedAt: 0, chars: 10 })).toBeCloseTo(7);
    expect(model.runMs({ kind: 'sentence', solo: true, startedAt: 0, chars: 10 })).toBe(50);
  });

  it('follows the audio a character makes, at speed 1, for the deadlines behind a sentence not yet run', () => {
    const model = new CostModel();
    expect(model.audioMs(10)).toBe(0); // nothing known: no slack assumed
    model.observeAudio(20, 1_000); // 50 ms a character
    expect(model.audioMs(10)).toBe(500);
    expect(model.audioMs(10, 2)).toBe(250);
    model.observeAudio(10, 250, 2); // 50 ms a character at speed 1 again
    expect(model.audioMs(1)).toBeCloseTo(50);
    model.observeAudio(0, 100);
    expect(model.audioMs(1)).toBeCloseTo(50);
  });
});
