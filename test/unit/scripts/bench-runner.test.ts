/** The benchmark runner's pure parts: the case table, flags, the measures' arithmetic, the output. */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { CASES } from '../../../scripts/bench/index.ts';
import { MEASURES, playbackStallS } from '../../../scripts/lib/bench-measures.ts';
import { COMMON_FLAGS, helpText, parseBenchArgs } from '../../../scripts/lib/bench-cli.ts';
import {
  buildResult,
  renderResult,
  samplesOf,
  stat,
  type Case,
  type Figure,
  type Settings,
} from '../../../scripts/lib/bench-runner.ts';
import { UsageError } from '../../../scripts/lib/cli.ts';
import { pagesWithBlock, writeDocBlock } from '../../../scripts/lib/doc-blocks.ts';
import { quantile, replaceBlock } from '../../../scripts/lib/stats.ts';

const README = readFileSync(new URL('../../../README.md', import.meta.url), 'utf8');
const settingsOf = (c: Case, argv: string[] = []) => {
  const command = parseBenchArgs([c.name, ...argv], CASES);
  if (command.kind !== 'run') throw new Error(`not a run: ${command.kind}`);
  return command.settings;
};

describe('the case table', () => {
  it('has cases with unique names, each with what --list and --help show', () => {
    expect(CASES.length).toBeGreaterThan(0);
    expect(new Set(CASES.map((c) => c.name)).size).toBe(CASES.length);
    for (const c of CASES) {
      expect({ name: c.name, summary: c.summary.length > 10, about: c.about.length > 20 }).toEqual({
        name: expect.stringMatching(/^[a-z][a-z0-9-]*$/),
        summary: true,
        about: true,
      });
    }
  });

  it.each(CASES.map((c) => [c.name, c] as const))(
    '%s: consistent servers, models, measures and flags',
    (_, c) => {
      expect(c.trials).toBeGreaterThanOrEqual(1);
      expect(c.measures.length).toBeGreaterThan(0);
      expect(c.measures.filter((m) => !(m in MEASURES))).toEqual([]);
      // Models only where servers run them; names only once.
      expect(c.models.length > 0).toBe(c.servers.length > 0);
      expect(new Set(c.servers.map((s) => s.name)).size).toBe(c.servers.length);
      expect(Object.keys(c.flags).filter((k) => k in COMMON_FLAGS)).toEqual([]);
      for (const [k, f] of Object.entries(c.flags))
        expect({ k, int: f.kind !== 'int' || typeof f.default === 'number' }).toEqual({ k, int: true });
    },
  );

  it.each(CASES.map((c) => [c.name, c] as const))(
    '%s: its block is in exactly one page under docs/, where --readme writes it',
    (_, c) => {
      const block = c.block?.(settingsOf(c)) ?? `bench:${c.name}`;
      const pages = pagesWithBlock(block);
      expect(pages, `pages holding <!-- ${block} -->`).toHaveLength(1);
      const page = readFileSync(new URL(`../../../${pages[0]}`, import.meta.url), 'utf8');
      expect(page.indexOf(`<!-- /${block} -->`)).toBeGreaterThan(page.indexOf(`<!-- ${block} -->`));
      // The README is a front door: no generated figures there.
      expect(README).not.toContain(`<!-- ${block} -->`);
    },
  );

  it('--readme writes a block only into the one page under docs/ that holds it', () => {
    expect(() => writeDocBlock('bench:no-such-case', 'x')).toThrow(
      /no page under docs\/ holds <!-- bench:no-such-case -->/,
    );
    expect(pagesWithBlock('config', ['README.md', 'docs/configuration.md'])).toEqual([
      'docs/configuration.md',
    ]);
  });

  it('--help of each case names its measures and flags; --list names every case', () => {
    for (const c of CASES) {
      const help = helpText(CASES, c);
      for (const m of c.measures) expect(help).toContain(`${m}: ${MEASURES[m]}`);
      for (const f of Object.keys(c.flags)) expect(help).toContain(`--${f}`);
    }
    const list = helpText(CASES);
    for (const c of CASES) expect(list).toContain(`  ${c.name} `);
  });
});

describe('parseBenchArgs', () => {
  const c = CASES.find((k) => k.servers.length > 0) ?? CASES[0]!;
  it.each([
    [['--list'], { kind: 'list' }],
    [['--help'], { kind: 'help' }],
    [[c.name, '-h'], { kind: 'help', case: c }],
  ] as const)('%j → %j', (argv, expected) => {
    expect(parseBenchArgs(argv, CASES)).toEqual(expected);
  });

  it('applies the defaults: the case’s trials, --repeat 1000, no README', () => {
    expect(settingsOf(c)).toMatchObject({ trials: c.trials, repeat: 1000, readme: false, env: {} });
  });

  it('reads the common flags', () => {
    const s = settingsOf(c, ['--trials', '2', '--repeat', '0', '--env', 'A=1', '--env', 'B=x=y', '--readme']);
    expect(s).toMatchObject({ trials: 2, repeat: 0, readme: true, env: { A: '1', B: 'x=y' } });
  });

  it('applies a case’s own flags and their defaults', () => {
    const peer = CASES.find((k) => k.name === 'peer')!;
    expect(settingsOf(peer).flags).toEqual({ requests: 3, streams: 8, paragraphs: 3 });
    expect(settingsOf(peer, ['--streams', '2']).flags).toMatchObject({ streams: 2 });
    const capacity = CASES.find((k) => k.name === 'capacity')!;
    expect(settingsOf(capacity, ['--transport', 'http', '--url', 'http://127.0.0.1:8080'])).toMatchObject({
      url: 'http://127.0.0.1:8080',
      flags: { transport: 'http', 'slo-ms': 3000, endpoint: undefined },
    });
  });

  it.each([
    [['peer', '--requests', '0'], /--requests should be a whole number from 1 to 1000; got "0"/],
    [['peer', '--url', 'http://127.0.0.1:8080'], /--url needs a case with one server; peer has 2/],
    [['load', '--url', 'ws://127.0.0.1:8080/x'], /--url should be http:\/\/HOST:PORT; got "ws:/],
    [['formats', '--transport', 'ws'], /Unknown option '--transport'/],
    [[], /name a case first/],
    [['nope'], /no case "nope"/],
    [[c.name, '--bogus'], /Unknown option '--bogus'/],
    [[c.name, '--trials', '0'], /--trials should be a whole number from 1 to 1000; got "0"/],
    [[c.name, '--repeat', 'many'], /--repeat should be a whole number/],
    [[c.name, '--env', 'NOEQUALS'], /--env should be KEY=VALUE; got "NOEQUALS"/],
    [[c.name, 'extra'], /Unexpected argument 'extra'/],
  ])('%j is a usage error', (argv, message) => {
    expect(() => parseBenchArgs(argv, CASES)).toThrow(UsageError);
    expect(() => parseBenchArgs(argv, CASES)).toThrow(message);
  });
});

describe('the measures’ arithmetic', () => {
  it.each([
    [[], 0.5, NaN],
    [[7], 0.99, 7],
    [[1, 2, 3, 4], 0.5, 2.5],
    [[4, 1, 3, 2], 0, 1],
    [[4, 1, 3, 2], 1, 4],
    [[10, 20], 0.95, 19.5],
    [Array.from({ length: 101 }, (_, i) => i), 0.99, 99],
  ])('quantile(%j, %d) = %d', (values, q, expected) => {
    expect(quantile(values, q)).toBe(expected);
  });

  // 48,000 bytes a second (PCM16 at 24 kHz): 4,800 bytes play for 100 ms.
  it.each([
    ['nothing arrives', [], 0],
    ['all at once', [{ atMs: 50, bytes: 48_000 }], 0],
    [
      'each piece before the last one ends',
      [
        { atMs: 0, bytes: 4800 },
        { atMs: 90, bytes: 4800 },
      ],
      0,
    ],
    [
      'a 50 ms gap',
      [
        { atMs: 0, bytes: 4800 },
        { atMs: 150, bytes: 4800 },
      ],
      0.05,
    ],
    [
      'two gaps, the later one after the catch-up',
      [
        { atMs: 0, bytes: 4800 },
        { atMs: 200, bytes: 4800 },
        { atMs: 400, bytes: 4800 },
      ],
      0.2,
    ],
    [
      'the first byte late is not a stall',
      [
        { atMs: 900, bytes: 4800 },
        { atMs: 1000, bytes: 4800 },
      ],
      0,
    ],
  ])('playback stalls: %s', (_, arrivals, expected) => {
    expect(playbackStallS(arrivals)).toBeCloseTo(expected, 9);
  });

  const figures: Figure[] = [
    { measure: 'ttfa', what: 'one sentence', server: 'ours', unit: 'ms', samples: [10, 30], load1: 1 },
    { measure: 'ttfa', what: 'one sentence', server: 'ours', unit: 'ms', samples: [20], load1: 2 },
    { measure: 'ttfa', what: 'one sentence', server: 'kokoro-js', unit: 'ms', samples: [90], load1: 1 },
    { measure: 'total', what: 'one sentence', server: 'ours', unit: 'ms', samples: [50], load1: 1 },
  ];
  it('pools the samples of matching figures across trials', () => {
    expect(samplesOf(figures, { measure: 'ttfa', server: 'ours' })).toEqual([10, 30, 20]);
    expect(stat(figures, { measure: 'ttfa', server: 'ours' })).toBe(20);
    expect(stat(figures, { measure: 'ttfa' }, 1)).toBe(90);
    expect(stat(figures, { measure: 'cancel' })).toBeNaN();
  });
});

describe('the loaded case’s report', () => {
  const loaded = CASES.find((k) => k.name === 'loaded')!;
  const figure = (
    server: string,
    measure: Figure['measure'],
    samples: number[],
    what = '8 clients',
  ): Figure => ({
    measure,
    what,
    server,
    model: 'm',
    unit: '',
    samples,
    load1: 0,
  });
  const servers = {
    deadline: { ttfa: [100, 200, 300], stalls: [0, 0, 1], throughput: 5.5 },
    fifo: { ttfa: [100, 400, 800], stalls: [0, 1, 1], throughput: 5.3 },
    'deadline, no look-ahead': { ttfa: [100, 300, 500], stalls: [1, 1, 1], throughput: 5 },
    'kokoro-js': { ttfa: [1000, 2000, 3000], stalls: [2, 2, 2], throughput: 4.8 },
  };
  const figures = Object.entries(servers).flatMap(([server, f]) => [
    figure(server, 'ttfa', f.ttfa),
    figure(server, 'stalls', f.stalls),
    figure(server, 'throughput', [f.throughput]),
    figure(server, 'ttfa', [0], '8 clients, refused'),
  ]);
  const report = loaded.report(figures, settingsOf(loaded, ['--clients', '8', '--trials', '1']), []);

  it('has a row per server with first audio, stalls (p50, p95, the run’s total) and throughput', () => {
    expect(report.tables[0]!.rows).toEqual([
      ['m', 8, 'deadline', '3 (0)', '200 / 290 / 300', '0 / 0.9 / 1', 5.5],
      ['m', 8, 'fifo', '3 (0)', '400 / 760 / 800', '1 / 1 / 2', 5.3],
      ['m', 8, 'deadline, no look-ahead', '3 (0)', '300 / 480 / 500', '1 / 1 / 3', 5],
      ['m', 8, 'kokoro-js', '3 (0)', '2000 / 2900 / 3000', '2 / 2 / 6', 4.8],
    ]);
  });

  it('holds the deadline policy to its targets against fifo and kokoro-js', () => {
    // p95: 290 against 760 (0.38) and 2,900 (10×); throughput up; stalls 1 s against 2 s.
    expect(report.tables[1]!.rows).toEqual([
      ['m', 8, '0.38 (yes)', '10 (yes)', '5.5 / 5.3 (yes)', '1 / 2 (yes)'],
    ]);
  });
});

describe('replaceBlock', () => {
  const text = 'a\n<!-- bench:x -->\nold\nlines\n<!-- /bench:x -->\nb\n';
  it('replaces what lies between the markers, and only that', () => {
    expect(replaceBlock(text, 'bench:x', 'new')).toBe('a\n<!-- bench:x -->\nnew\n<!-- /bench:x -->\nb\n');
    expect(replaceBlock(replaceBlock(text, 'bench:x', 'new'), 'bench:x', 'new')).toBe(
      replaceBlock(text, 'bench:x', 'new'),
    );
  });
  it.each([
    ['no markers', 'a\nb\n'],
    ['the end first', '<!-- /bench:x -->\n<!-- bench:x -->\n'],
    ['another block only', '<!-- bench:y -->\n<!-- /bench:y -->\n'],
  ])('refuses %s', (_, t) => {
    expect(() => replaceBlock(t, 'bench:x', 'new')).toThrow(
      /no <!-- bench:x --> … <!-- \/bench:x --> markers/,
    );
  });
});

describe('the result', () => {
  const c = CASES[0]!;
  const settings: Settings = settingsOf(c, ['--readme', '--out', 'x.json']);
  const figures: Figure[] = [{ measure: c.measures[0]!, what: 'w', unit: 'ms', samples: [1, 2], load1: 0.5 }];
  const result = buildResult(
    c,
    {
      settings,
      figures,
      command: `npm run bench -- ${c.name}`,
      report: {
        tables: [{ title: 'T', header: ['a', 'b'], rows: [[1, 'x']] }],
        notes: ['A note.'],
        fields: { kind: 'extra', version: 7 },
      },
    },
    {
      machine: { cpu: 'CPU ', cores: 2, node: 'v22.0.0' },
      load1: { start: 0.123, end: 1.5 },
      at: new Date('2025-01-02T03:04:05Z'),
    },
  );

  it('has the common fields, with the report’s own beside them', () => {
    expect(result).toEqual({
      kind: 'extra',
      version: 1,
      case: c.name,
      command: `npm run bench -- ${c.name}`,
      measured_at: '2025-01-02T03:04:05.000Z',
      machine: { cpu: 'CPU ', cores: 2, node: 'v22.0.0' },
      load1: { start: 0.123, end: 1.5 },
      settings: { trials: settings.trials, repeat: 1000, env: {}, flags: settings.flags },
      measures: Object.fromEntries(c.measures.map((m) => [m, MEASURES[m]])),
      figures,
      tables: [{ title: 'T', header: ['a', 'b'], rows: [[1, 'x']] }],
      notes: ['A note.'],
    });
    // What is written is what is read back.
    expect(JSON.parse(JSON.stringify(result))).toEqual(result);
  });

  it('renders as Markdown: the machine and load, the command, each table, the notes', () => {
    expect(renderResult(result)).toBe(
      [
        `Machine: CPU, 2 cores, Node v22.0.0; 1-minute load average 0.12 at the start, 1.5 at the end. \`npm run bench -- ${c.name}\`, ${c.trials} trial(s).`,
        '',
        '**T**',
        '',
        '| a | b |',
        '| --- | --- |',
        '| 1 | x |',
        '',
        'A note.',
      ].join('\n'),
    );
  });
});
