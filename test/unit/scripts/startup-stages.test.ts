/** The startup-marker parser (scripts/lib/startup-stages.ts) that gives the planner T_total. */
import { describe, expect, it } from 'vitest';
import { STARTUP_STAGES, stageLine } from '../../../server/observability/startup-stages.ts';
import {
  STAGES,
  StartupLogError,
  parseStageLine,
  parseStartupLog,
  startupTimes,
} from '../../../scripts/lib/startup-stages.ts';

const line = (stage: string, at: string, elapsed: string) =>
  `=== STAGE ${stage} t=${at} elapsed_s=${elapsed} ===`;

/** One start as the server writes it, between JSON log lines. */
const BOOT = [
  '{"level":30,"msg":"starting"}',
  line('framework_init', '2026-12-01T14:26:08.100Z', '0.181'),
  line('weights_ready', '2026-12-01T14:26:09.123Z', '1.204'),
  '{"level":30,"msg":"warming up"}',
  line('warmup_done', '2026-12-01T14:26:11.500Z', '3.581'),
  line('ready', '2026-12-01T14:26:11.520Z', '3.601'),
  '{"level":30,"msg":"ready"}',
];

describe('parseStageLine', () => {
  const valid = new Map([
    [
      line('ready', '2026-12-01T14:26:11.520Z', '3.601'),
      { stage: 'ready', at: '2026-12-01T14:26:11.520Z', elapsedS: 3.601 },
    ],
    [
      line('weights_ready', '2026-12-01T14:26:09Z', '12'),
      { stage: 'weights_ready', at: '2026-12-01T14:26:09Z', elapsedS: 12 },
    ],
    // A log shipper's prefix (CloudWatch, docker) in front of the marker.
    [
      `2026-12-01T14:26:11.521Z stdout F ${line('ready', '2026-12-01T14:26:11.520Z', '183.2')}`,
      { stage: 'ready', at: '2026-12-01T14:26:11.520Z', elapsedS: 183.2 },
    ],
  ]);
  it.each([...valid])('reads %s', (text, expected) => {
    expect(parseStageLine(text, 7)).toEqual({
      ...expected,
      atMs: Date.parse(expected.at),
      line: 7,
    });
  });

  it.each(['{"level":30,"msg":"ready"}', '', 'STAGE ready t=2026-12-01T14:26:11.520Z elapsed_s=1 ==='])(
    'says %j is not a marker',
    (text) => {
      expect(parseStageLine(text)).toBeUndefined();
    },
  );

  const malformed = new Map([
    ['=== STAGE ready ===', /should read "=== STAGE <name> t=<ISO-8601 UTC> elapsed_s=<seconds> ==="/],
    [line('ready', '2026-12-01T14:26:11.520+01:00', '3.6'), /t= should be an ISO-8601 UTC time ending in Z/],
    [line('ready', '2026-12-01 14:26:11Z', '3.6'), /should read/],
    [line('ready', '2026-13-45T14:26:11Z', '3.6'), /t= should be an ISO-8601 UTC time/],
    [line('ready', '2026-12-01T14:26:11Z', '-1'), /elapsed_s should be a number of seconds ≥ 0; got "-1"/],
    [line('ready', '2026-12-01T14:26:11Z', '3.6s'), /elapsed_s should be a number/],
  ]);
  it.each([...malformed])('rejects %s', (text, message) => {
    expect(() => parseStageLine(text, 3)).toThrow(StartupLogError);
    expect(() => parseStageLine(text, 3)).toThrow(message);
    expect(() => parseStageLine(text, 3)).toThrow(/^line 3: /);
  });
});

describe('parseStartupLog and startupTimes', () => {
  it('finds every marker with its line number, CRLF or not', () => {
    for (const eol of ['\n', '\r\n']) {
      const marks = parseStartupLog(BOOT.join(eol));
      expect(marks.map((m) => [m.stage, m.line])).toEqual([
        ['framework_init', 2],
        ['weights_ready', 3],
        ['warmup_done', 5],
        ['ready', 6],
      ]);
    }
  });

  it('gives the ready elapsed_s and every stage of the start', () => {
    expect(startupTimes(parseStartupLog(BOOT.join('\n')))).toEqual({
      readyS: 3.601,
      stages: { framework_init: 0.181, weights_ready: 1.204, warmup_done: 3.581, ready: 3.601 },
    });
    expect(Object.keys(startupTimes(parseStartupLog(BOOT.join('\n'))).stages)).toEqual([...STAGES]);
  });

  it('takes the last start that reached ready', () => {
    const second = [
      line('framework_init', '2026-12-01T15:00:00.200Z', '0.2'),
      line('weights_ready', '2026-12-01T15:00:09.000Z', '9'),
      line('ready', '2026-12-01T15:00:20.000Z', '20'),
      // A third start that never finished does not count.
      line('framework_init', '2026-12-01T16:00:00.200Z', '0.2'),
    ];
    const times = startupTimes(parseStartupLog([...BOOT, ...second].join('\n')));
    expect(times).toEqual({ readyS: 20, stages: { framework_init: 0.2, weights_ready: 9, ready: 20 } });
  });

  it('refuses a log without a ready marker, saying what it found', () => {
    expect(() => startupTimes(parseStartupLog(BOOT.slice(0, 3).join('\n')))).toThrow(
      /no "=== STAGE ready …" marker \(only framework_init, weights_ready\)/,
    );
    expect(() => startupTimes(parseStartupLog('{"msg":"hello"}'))).toThrow(/no markers at all/);
  });

  it('refuses elapsed_s that goes backwards within a start', () => {
    const log = [
      line('weights_ready', '2026-12-01T14:26:09Z', '5'),
      line('ready', '2026-12-01T14:26:10Z', '4'),
    ].join('\n');
    expect(() => startupTimes(parseStartupLog(log))).toThrow(/line 2: elapsed_s 4 of ready is before/);
  });

  it('reports a malformed marker in a whole log by its line', () => {
    expect(() => parseStartupLog([...BOOT, '=== STAGE ready t=yesterday ==='].join('\n'))).toThrow(
      /^line 8: /,
    );
  });
});

describe('the server’s markers', () => {
  it('are read back by the parser exactly: every stage, in order, with its time', () => {
    const at = new Date('2026-12-01T14:26:09.123Z');
    const log = STARTUP_STAGES.map((stage, i) =>
      stageLine(stage, new Date(at.getTime() + i * 1000), 0.5 + i),
    ).join('\n');
    const marks = parseStartupLog(log);
    expect(marks.map((m) => [m.stage, m.at, m.elapsedS])).toEqual(
      STARTUP_STAGES.map((stage, i) => [stage, new Date(at.getTime() + i * 1000).toISOString(), 0.5 + i]),
    );
  });
});
