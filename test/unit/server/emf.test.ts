/**
 * The EMF lines against CloudWatch's Embedded Metric Format specification (checked by a validator
 * written from the specification's rules below), and what they carry: every request's latency,
 * counts per interval, errors by code as the counter's growth.
 */
import { describe, expect, it } from 'vitest';
import { EMF_MAX_VALUES, EmfReporter, parseDimensions } from '../../../server/observability/emf.ts';

/** CloudWatch's standard units, the only values `Unit` may take. */
const UNITS = new Set([
  'Seconds',
  'Microseconds',
  'Milliseconds',
  'Bytes',
  'Kilobytes',
  'Megabytes',
  'Gigabytes',
  'Terabytes',
  'Bits',
  'Kilobits',
  'Megabits',
  'Gigabits',
  'Terabits',
  'Percent',
  'Count',
  'Bytes/Second',
  'Kilobytes/Second',
  'Megabytes/Second',
  'Gigabytes/Second',
  'Terabytes/Second',
  'Bits/Second',
  'Kilobits/Second',
  'Megabits/Second',
  'Gigabits/Second',
  'Terabits/Second',
  'Count/Second',
  'None',
]);

/**
 * The specification's rules: the root is a JSON object with `_aws`; `_aws.Timestamp` is epoch
 * milliseconds; `CloudWatchMetrics` is an array of directives, each with a `Namespace` (1–255
 * characters), `Dimensions` (an array of dimension sets, each an array of at most 30 names, every
 * one a root member whose value is a string) and `Metrics` (at most 100 definitions, each a `Name`
 * of 1–255 characters that is a root member whose value is a number or an array of at most 100
 * numbers, an optional `Unit` from CloudWatch's units and an optional `StorageResolution` of 1 or
 * 60). The event is at most 1 MB. Returns the problems found.
 */
function emfProblems(line: string): string[] {
  const problems: string[] = [];
  if (Buffer.byteLength(line) > 1024 * 1024) problems.push('over 1 MB');
  let root: Record<string, unknown>;
  try {
    root = JSON.parse(line) as Record<string, unknown>;
  } catch {
    return ['not JSON'];
  }
  if (root === null || typeof root !== 'object' || Array.isArray(root)) return ['root is not an object'];
  const aws = root._aws as Record<string, unknown> | undefined;
  if (!aws || typeof aws !== 'object') return ['no _aws object'];
  if (typeof aws.Timestamp !== 'number' || !Number.isInteger(aws.Timestamp) || aws.Timestamp < 1e12)
    problems.push('Timestamp is not epoch milliseconds');
  const directives = aws.CloudWatchMetrics;
  if (!Array.isArray(directives) || directives.length === 0) return [...problems, 'no CloudWatchMetrics'];
  for (const d of directives as Record<string, unknown>[]) {
    const ns = d.Namespace;
    if (typeof ns !== 'string' || ns.length < 1 || ns.length > 255) problems.push('bad Namespace');
    if (!Array.isArray(d.Dimensions)) problems.push('Dimensions is not an array');
    for (const set of (d.Dimensions as unknown[]) ?? []) {
      if (!Array.isArray(set) || set.length > 30) problems.push('bad dimension set');
      for (const name of (set as unknown[]) ?? []) {
        if (typeof name !== 'string' || typeof root[name] !== 'string')
          problems.push(`dimension ${String(name)} is not a string member of the root`);
      }
    }
    if (!Array.isArray(d.Metrics) || d.Metrics.length > 100) problems.push('bad Metrics');
    for (const m of (d.Metrics as Record<string, unknown>[]) ?? []) {
      const name = m.Name;
      if (typeof name !== 'string' || name.length < 1 || name.length > 255) {
        problems.push('bad metric Name');
        continue;
      }
      if (m.Unit !== undefined && !UNITS.has(m.Unit as string)) problems.push(`bad Unit ${String(m.Unit)}`);
      if (m.StorageResolution !== undefined && m.StorageResolution !== 1 && m.StorageResolution !== 60)
        problems.push('bad StorageResolution');
      const value = root[name];
      const values = Array.isArray(value) ? value : [value];
      if (Array.isArray(value) && value.length > 100) problems.push(`${name} has over 100 values`);
      if (!values.every((v) => typeof v === 'number' && Number.isFinite(v)))
        problems.push(`${name} is not a number or an array of numbers`);
    }
  }
  return problems;
}

const SETTINGS = {
  namespace: 'KokoroTTS',
  dimensions: { EndpointName: 'kokoro', VariantName: 'AllTraffic' },
};

function reporter(errors: Map<string, number> = new Map(), sessions = 3) {
  const lines: string[] = [];
  const r = new EmfReporter(
    SETTINGS,
    { errorCounts: async () => errors, openSessions: () => sessions, httpStreams: () => 1 },
    (line) => lines.push(line),
    () => 1_764_600_000_000,
  );
  return { r, lines, parsed: () => lines.map((l) => JSON.parse(l) as Record<string, unknown>) };
}

const figures = (ttfaMs: number) => ({ ttfaMs, firstQueueMs: ttfaMs / 10, rtf: 0.2, audioS: 2 });

describe('the validator', () => {
  it('rejects documents that break the specification', () => {
    expect(emfProblems('{"a":1}')).toEqual(['no _aws object']);
    const bad = {
      _aws: {
        Timestamp: 5,
        CloudWatchMetrics: [
          { Namespace: '', Dimensions: [['Missing']], Metrics: [{ Name: 'X', Unit: 'Furlongs' }] },
        ],
      },
      X: 'fast',
    };
    expect(emfProblems(JSON.stringify(bad))).toEqual([
      'Timestamp is not epoch milliseconds',
      'bad Namespace',
      'dimension Missing is not a string member of the root',
      'bad Unit Furlongs',
      'X is not a number or an array of numbers',
    ]);
  });
});

describe('EmfReporter', () => {
  it('writes valid EMF: every request’s latency in arrays of at most 100, and the counts', async () => {
    const { r, lines, parsed } = reporter();
    for (let i = 0; i < 250; i++) r.record(figures(100 + i));
    await r.flush();
    for (const line of lines) expect(emfProblems(line)).toEqual([]);
    const docs = parsed();
    const latency = docs.filter((d) => 'TimeToFirstAudio' in d);
    expect(latency.map((d) => (d.TimeToFirstAudio as number[]).length)).toEqual([100, 100, 50]);
    expect(latency.flatMap((d) => d.TimeToFirstAudio as number[])).toEqual(
      Array.from({ length: 250 }, (_, i) => 100 + i),
    );
    expect(latency[0]).toMatchObject({ EndpointName: 'kokoro', VariantName: 'AllTraffic' });
    const counts = docs.find((d) => 'Requests' in d)!;
    expect(counts).toMatchObject({ Requests: 250, OpenSessions: 3, HttpStreams: 1 });
    expect(EMF_MAX_VALUES).toBe(100);
  });

  it('keeps each value, so CloudWatch’s p95 is the requests’ p95 (a per-minute p95 of p95s is not)', async () => {
    // Minute one: 99 fast requests and 1 slow; minute two: 20 slow ones. The requests' p95 is slow.
    const { r, parsed } = reporter();
    const all: number[] = [];
    for (let i = 0; i < 99; i++) all.push(100);
    all.push(5000);
    for (const v of all) r.record(figures(v));
    await r.flush();
    for (let i = 0; i < 20; i++) r.record(figures(4000));
    all.push(...Array.from({ length: 20 }, () => 4000));
    await r.flush();
    const p95 = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.ceil(0.95 * xs.length) - 1]!;
    const emitted = parsed().flatMap((d) => (d.TimeToFirstAudio as number[] | undefined) ?? []);
    expect(p95(emitted)).toBe(p95(all));
    expect(p95(all)).toBe(4000);
    // What one value per minute would have said: the mean of the two minutes' p95s.
    const perMinute = (p95(all.slice(0, 100)) + p95(all.slice(100))) / 2;
    expect(perMinute).not.toBe(p95(all));
  });

  it('writes no latency line for an interval without requests, but always the counts', async () => {
    const { r, parsed } = reporter(new Map(), 0);
    await r.flush();
    const docs = parsed();
    expect(docs).toHaveLength(1);
    expect(docs[0]).toMatchObject({ Requests: 0, OpenSessions: 0 });
  });

  it('reports errors by code as the counter’s growth since the last flush, with a Code dimension', async () => {
    const errors = new Map([['busy', 3]]);
    const { r, lines, parsed } = reporter(errors);
    await r.flush();
    errors.set('busy', 5);
    errors.set('voice_not_found', 1);
    await r.flush();
    await r.flush(); // nothing grew: no error lines
    for (const line of lines) expect(emfProblems(line)).toEqual([]);
    const errorDocs = parsed().filter((d) => 'Errors' in d);
    expect(errorDocs.map((d) => [d.Code, d.Errors])).toEqual([
      ['busy', 3],
      ['busy', 2],
      ['voice_not_found', 1],
    ]);
    const directive = (errorDocs[0]!._aws as { CloudWatchMetrics: { Dimensions: string[][] }[] })
      .CloudWatchMetrics[0]!;
    expect(directive.Dimensions).toEqual([['EndpointName', 'VariantName', 'Code']]);
  });

  it('leaves the real-time factor out for requests without audio', async () => {
    const { r, parsed } = reporter();
    r.record({ ttfaMs: 50, firstQueueMs: 1, rtf: 0, audioS: 0 });
    await r.flush();
    const doc = parsed().find((d) => 'TimeToFirstAudio' in d)!;
    expect(doc.RealTimeFactor).toBeUndefined();
    expect(emfProblems(JSON.stringify(doc))).toEqual([]);
  });
});

describe('parseDimensions', () => {
  it('reads Name=Value pairs and refuses what EMF cannot take', () => {
    expect(parseDimensions('EndpointName=kokoro, VariantName=AllTraffic')).toEqual({
      EndpointName: 'kokoro',
      VariantName: 'AllTraffic',
    });
    expect(parseDimensions('EndpointName')).toMatchObject({ problem: expect.stringMatching(/Name=Value/) });
    expect(parseDimensions('Code=x')).toMatchObject({ problem: expect.stringMatching(/reserved/) });
    const many = Array.from({ length: 30 }, (_, i) => `D${i}=v`).join(',');
    expect(parseDimensions(many)).toMatchObject({ problem: expect.stringMatching(/at most 29/) });
  });
});
