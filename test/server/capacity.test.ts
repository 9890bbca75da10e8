/**
 * The capacity ladder against the real server with tiny admission limits, where Q_max is known in
 * advance: the limit itself (a rung above it is refused). Its rung verdict is tested on its own.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  capacityTable,
  capacityVerdict,
  httpUrlDriver,
  judgeRung,
  runLadder,
  wsUrlDriver,
  type LadderOptions,
} from '../../scripts/lib/capacity.ts';
import { startServer, type TestServer } from './harness.ts';

const TEXTS = ['A short sentence.', 'Another short one.'];
const QUICK = {
  sloMs: 3000,
  percentile: 95,
  rungS: 0.5,
  warmupS: 0,
  minRequests: 5,
  maxConcurrency: 64,
  texts: TEXTS,
};

describe('judgeRung', () => {
  const options = { sloMs: 100, percentile: 95, warmupS: 1 };
  const at = (atMs: number, ttfaMs: number, error?: string) => ({
    atMs,
    ttfaMs,
    ...(error ? { error } : {}),
  });

  it('holds the percentile of the counted requests to the SLO, leaving out the warm-up', () => {
    const samples = [at(0, 5000), ...Array.from({ length: 20 }, (_, i) => at(1000 + i, 50 + i))];
    const rung = judgeRung(4, samples, options, 3);
    expect(rung.requests).toBe(20);
    expect(rung.ttfa_ms.p50).toBeCloseTo(59.5, 5);
    expect(rung.within_slo).toBe(true);
    const slow = judgeRung(
      4,
      [...samples, ...Array.from({ length: 5 }, (_, i) => at(2000 + i, 500))],
      options,
      3,
    );
    expect(slow.within_slo).toBe(false);
  });

  it('is outside the SLO when any counted request was refused, however fast the others', () => {
    const rung = judgeRung(8, [at(1500, 10), at(1500, NaN, 'busy'), at(1600, 12)], options, 2);
    expect(rung).toMatchObject({ errors: 1, errorCodes: { busy: 1 }, within_slo: false });
  });

  it('is outside the SLO with no counted request at all', () => {
    expect(judgeRung(1, [at(0, 10)], options, 1).within_slo).toBe(false);
  });
});

describe('the ladder against a server whose limit is 2', () => {
  // One server: 2 WebSocket sessions and 2 streaming POSTs at most, each ladder meeting its own.
  let server: TestServer;
  beforeAll(async () => {
    server = await startServer({ MAX_SESSIONS: '2', MAX_HTTP_STREAMS: '2' });
  });
  afterAll(() => server.close());

  it('WebSocket sessions: 1 and 2 within, 4 refused, bisection tries 3: Q_max = 2', async () => {
    const options: LadderOptions = { transport: 'ws', ...QUICK };
    const report = await runLadder(wsUrlDriver(server.ws), options);
    expect(report.rungs.map((r) => [r.concurrency, r.within_slo])).toEqual([
      [1, true],
      [2, true],
      [3, false],
      [4, false],
    ]);
    expect(report.rungs.find((r) => r.concurrency === 4)!.errorCodes).toHaveProperty('refused');
    expect(report).toMatchObject({ kind: 'capacity', version: 1, transport: 'ws', q_max: 2, capped: false });
    expect(capacityVerdict(report)).toMatch(/Q_max = 2 \(ws, p95 time to first audio ≤ 3000 ms/);
    expect(capacityTable(report).rows.map((r) => [r[0], r.at(-1)])).toEqual([
      [1, 'yes'],
      [2, 'yes'],
      [3, 'no'],
      [4, 'no'],
    ]);
  });

  it('streaming POST clients: refused with busy above the limit: Q_max = 2', async () => {
    const report = await runLadder(httpUrlDriver(server.http), { transport: 'http', ...QUICK });
    expect(report.q_max).toBe(2);
    expect(report.rungs.find((r) => r.concurrency === 4)!.errorCodes).toHaveProperty('busy');
  });

  it('an SLO no request can meet gives Q_max = 0 after one rung', async () => {
    const report = await runLadder(httpUrlDriver(server.http), { transport: 'http', ...QUICK, sloMs: 0 });
    expect(report.rungs).toHaveLength(1);
    expect(report.q_max).toBe(0);
    expect(capacityVerdict(report)).toMatch(/Q_max = 0: even one client misses the SLO/);
  });

  it('stops at its cap, and says so', async () => {
    const report = await runLadder(wsUrlDriver(server.ws), {
      transport: 'ws',
      ...QUICK,
      maxConcurrency: 2,
    });
    expect(report.rungs.map((r) => r.concurrency)).toEqual([1, 2]);
    expect(report).toMatchObject({ q_max: 2, capped: true });
  });
});
