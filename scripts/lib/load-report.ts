/** The load test's options, its summaries of each round, its targets and its Markdown report (pure). */
import { parseArgs } from 'node:util';
import { PARAGRAPH } from '../bench.ts';
import { markdownTable, median, quantile, round } from './stats.ts';
import { intFlag } from './cli.ts';

export const USAGE = `Usage: npm run load -- [options]

  --rounds N          rounds of load (default 4)
  --sessions N        concurrent WebSocket sessions per round (default 10)
  --sentences N       sentences each session sends (default 5)
  --posts N           concurrent POST clients looping over the same sentences (default 2)
  --pipelined         sessions send all their sentences at once instead of one after another
  --repeat N          compute of the generated stand-in model (default 30, like npm run bench)
  --workers N         inference workers of the started server and of the raw measurement (default 2)
  --model-dir DIR     use this model directory instead of a generated stand-in
  --url URL           load a running server at http://127.0.0.1:PORT instead of starting one
                      (the raw measurement then needs --model-dir of the model it serves)
  --ping-ms N         interval of GET /ping (default 20)
  --round-timeout S   deadline of each round in seconds (default 120)
  --out DIR           where load.json and load.md go (default docs/bench)
  -h, --help          this text
`;

/** What a voice agent says: short sentences, one request each. */
export const SENTENCES: readonly string[] = [
  ...PARAGRAPH,
  'Sure, I can help with that.',
  'Your package should arrive on Tuesday afternoon.',
  'Let me check that for you, it will only take a moment.',
  'I have moved your reservation to Friday at eight in the evening.',
  'Is there anything else you would like to change today?',
  'Tomorrow looks sunny, with a high of seventy two degrees.',
];

export interface LoadOptions {
  readonly url: string | undefined;
  readonly modelDir: string | undefined;
  readonly repeat: number;
  readonly workers: number;
  readonly rounds: number;
  readonly sessions: number;
  readonly sentences: number;
  readonly posts: number;
  readonly pipelined: boolean;
  readonly pingMs: number;
  readonly roundTimeoutS: number;
  readonly out: string;
}

/** Only loopback targets: this script is a load generator and must not be pointed elsewhere. */
export function loopbackUrl(raw: string): URL {
  const url = new URL(raw);
  if (url.protocol !== 'http:' || !['127.0.0.1', 'localhost', '[::1]'].includes(url.hostname))
    throw new RangeError(`--url must be http://127.0.0.1:PORT (loopback only); got ${raw}`);
  return url;
}

/** Parses the command line; `undefined` means help was asked for. */
export function parseLoadArgs(args: readonly string[]): LoadOptions | undefined {
  const { values } = parseArgs({
    args: [...args],
    options: {
      url: { type: 'string' },
      'model-dir': { type: 'string' },
      repeat: { type: 'string' },
      workers: { type: 'string' },
      rounds: { type: 'string' },
      sessions: { type: 'string' },
      sentences: { type: 'string' },
      posts: { type: 'string' },
      pipelined: { type: 'boolean', default: false },
      'ping-ms': { type: 'string' },
      'round-timeout': { type: 'string' },
      out: { type: 'string', default: 'docs/bench' },
      help: { type: 'boolean', short: 'h', default: false },
      readme: { type: 'boolean', default: false },
    },
  });
  if (values.help) return undefined;
  if (values.url !== undefined) loopbackUrl(values.url);
  return {
    url: values.url,
    modelDir: values['model-dir'],
    repeat: intFlag('repeat', values.repeat, 30, 1, 10_000),
    workers: intFlag('workers', values.workers, 2, 1, 64),
    rounds: intFlag('rounds', values.rounds, 4, 1, 50),
    sessions: intFlag('sessions', values.sessions, 10, 1, 500),
    sentences: intFlag('sentences', values.sentences, 5, 1, 100),
    posts: intFlag('posts', values.posts, 2, 0, 100),
    pipelined: values.pipelined,
    pingMs: intFlag('ping-ms', values['ping-ms'], 20, 1, 10_000),
    roundTimeoutS: intFlag('round-timeout', values['round-timeout'], 120, 1, 3600),
    out: values.out,
  };
}

/** The sentences session (or POST client) `i` sends: M of the list, starting at its own offset. */
export function sentencesFor(i: number, count: number, list: readonly string[] = SENTENCES): string[] {
  return Array.from({ length: count }, (_, k) => list[(i + k) % list.length]!);
}

// ---------------------------------------------------------------------------------------------
// Pure summaries

export interface RequestSample {
  readonly route: 'ws' | 'post';
  /** Send → first audio frame (WS) or first body byte (POST); NaN when none came. */
  readonly ttfaMs: number;
  readonly audioS: number;
  /** An error code, `timeout` or `closed`, for a request that did not complete. */
  readonly error?: string;
}

export interface RoundResult {
  readonly round: number;
  readonly wallS: number;
  readonly ws: { requests: number; errors: number; ttfaP50Ms: number; ttfaP95Ms: number };
  readonly post: { requests: number; errors: number; ttfaP50Ms: number; ttfaP95Ms: number };
  readonly audioS: number;
  readonly audioPerWallS: number;
  readonly ping: { samples: number; failures: number; p50Ms: number; p99Ms: number; maxMs: number };
  readonly rssBytes: number | null;
  /**
   * CPU time per wall time, in % of one core, of this script and of the server process (null when
   * unknown): the load generator shares the cores with the server, and this shows how much.
   */
  readonly cpu: { clientPct: number; serverPct: number | null };
}

export function summarizeRound(
  roundNumber: number,
  samples: readonly RequestSample[],
  pings: readonly number[],
  pingFailures: number,
  wallS: number,
  rssBytes: number | null,
  cpuS: { client: number; server: number | null } = { client: NaN, server: null },
): RoundResult {
  const part = (route: RequestSample['route']) => {
    const mine = samples.filter((s) => s.route === route);
    const ttfa = mine.filter((s) => s.error === undefined && Number.isFinite(s.ttfaMs)).map((s) => s.ttfaMs);
    return {
      requests: mine.length,
      errors: mine.filter((s) => s.error !== undefined).length,
      ttfaP50Ms: round(median(ttfa), 1),
      ttfaP95Ms: round(quantile(ttfa, 0.95), 1),
    };
  };
  const audioS = samples.reduce((n, s) => n + s.audioS, 0);
  return {
    round: roundNumber,
    wallS: round(wallS, 3),
    ws: part('ws'),
    post: part('post'),
    audioS: round(audioS, 2),
    audioPerWallS: round(audioS / wallS, 2),
    ping: {
      samples: pings.length,
      failures: pingFailures,
      p50Ms: round(median(pings), 2),
      p99Ms: round(quantile(pings, 0.99), 2),
      maxMs: round(pings.length > 0 ? Math.max(...pings) : NaN, 2),
    },
    rssBytes,
    cpu: {
      clientPct: round((100 * cpuS.client) / wallS, 0),
      serverPct: cpuS.server === null ? null : round((100 * cpuS.server) / wallS, 0),
    },
  };
}

/** VmRSS from the text of /proc/<pid>/status, in bytes. */
export function vmRssBytes(status: string): number | null {
  const m = /^VmRSS:\s+(\d+)\s+kB/m.exec(status);
  return m ? Number(m[1]) * 1024 : null;
}

/** User + system CPU seconds from the text of /proc/<pid>/stat (Linux counts in 1/100 s). */
export function procCpuSeconds(stat: string): number | null {
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  const utime = Number(fields[11]);
  const stime = Number(fields[12]);
  return Number.isFinite(utime) && Number.isFinite(stime) ? (utime + stime) / 100 : null;
}

/** `process_resident_memory_bytes` from a Prometheus text exposition, in bytes. */
export function metricsRssBytes(text: string): number | null {
  const m = /^process_resident_memory_bytes(?:\{[^}]*\})?\s+([0-9.eE+-]+)/m.exec(text);
  return m ? Number(m[1]) : null;
}

export interface RawResult {
  readonly workers: number;
  /** Sentences synthesized in the saturated run (the rounds' WS sentences, repeated). */
  readonly jobs: number;
  readonly audioS: number;
  readonly wallS: number;
  readonly audioPerWallS: number;
  /** CPU time of the saturated run per wall time, in % of one core. */
  readonly cpuPct: number;
  /** One sentence alone, start to end of its stream (front end + model, as a worker spends it). */
  readonly sentenceMs: number;
  readonly sentenceModelMs: number;
  readonly sentenceFrontEndMs: number;
}

export interface TargetCheck {
  readonly name: string;
  readonly target: string;
  readonly value: string;
  /** null: could not be measured in this run. */
  readonly met: boolean | null;
}

/** Compares the rounds with the targets; each is judged on the worst round. */
export function evaluateTargets(
  rounds: readonly RoundResult[],
  raw: RawResult | null,
  sessions: number,
  pipelined = false,
): TargetCheck[] {
  const worst = (pick: (r: RoundResult) => number, sign: 1 | -1) =>
    rounds.map(pick).reduce((a, b) => (sign * b > sign * a ? b : a));
  const checks: TargetCheck[] = [];

  const throughput = worst((r) => r.audioPerWallS, -1);
  checks.push({
    name: 'audio throughput vs raw inference at saturation (worst round)',
    target: '≥ 90 %',
    value: raw
      ? `${round((100 * throughput) / raw.audioPerWallS, 1)} % (${throughput} / ${raw.audioPerWallS} audio s per s)`
      : `${throughput} audio s per s; raw not measured`,
    met: raw ? throughput >= 0.9 * raw.audioPerWallS : null,
  });

  const p95 = worst((r) => r.ws.ttfaP95Ms, 1);
  const limit = raw ? 1.5 * sessions * raw.sentenceMs : NaN;
  checks.push({
    name: `WS time to first audio p95 with ${sessions} sessions (worst round)`,
    target: raw
      ? `≤ 1.5 × ${sessions} × ${round(raw.sentenceMs, 1)} ms = ${round(limit, 1)} ms`
      : '≤ 1.5 × sessions × one sentence alone',
    // Pipelined requests also wait behind their own session's earlier ones: the target is not for them.
    value: `${p95} ms${pipelined ? ' (pipelined: not comparable)' : ''}`,
    met: raw && !pipelined ? p95 <= limit : null,
  });

  const p99 = worst((r) => r.ping.p99Ms, 1);
  const pingFailures = rounds.reduce((n, r) => n + r.ping.failures, 0);
  checks.push({
    name: 'GET /ping p99 under load (worst round)',
    target: '< 50 ms, all 200',
    value: `${p99} ms${pingFailures > 0 ? `, ${pingFailures} not 200` : ''}`,
    met: p99 < 50 && pingFailures === 0,
  });

  // Round 1 still grows caches and pools; growth is judged from round 2 on when there are 3+ rounds:
  // the highest RSS after it, against it.
  const later = rounds.length >= 3 ? rounds.slice(1) : rounds;
  const first = later[0]?.rssBytes ?? null;
  const after = later.slice(1).map((r) => r.rssBytes);
  const peak = after.length > 0 && after.every((b) => b !== null) ? Math.max(...(after as number[])) : null;
  const growth = first !== null && peak !== null ? (peak - first) / first : NaN;
  checks.push({
    name: `server RSS growth, round ${later[0]?.round} → highest of rounds ${later[1]?.round ?? '–'}–${later[later.length - 1]?.round}`,
    target: '< 5 %',
    value: Number.isFinite(growth)
      ? `${round(100 * growth, 1)} % (${mb(first!)} → ${mb(peak!)} MB)`
      : 'not measured',
    met: Number.isFinite(growth) ? growth < 0.05 : null,
  });
  return checks;
}

const mb = (bytes: number): number => round(bytes / (1024 * 1024), 1);

export interface LoadReport {
  readonly machine: { cpu: string; cores: number; node: string };
  readonly model: string;
  readonly workers: number | null;
  readonly load: {
    rounds: number;
    sessions: number;
    sentencesPerSession: number;
    posts: number;
    pipelined: boolean;
    pingMs: number;
  };
  /** The better of the raw runs (before the server started and after it stopped). */
  readonly raw: RawResult | null;
  readonly rawRuns: readonly RawResult[];
  readonly rounds: readonly RoundResult[];
  readonly targets: readonly TargetCheck[];
}

/** A raw run whose workers did not get (most of) a core each was disturbed by something else. */
export function rawDisturbed(raw: RawResult, cores: number): boolean {
  return raw.cpuPct < 0.8 * 100 * Math.min(raw.workers, cores);
}

export function renderMarkdown(report: LoadReport): string {
  const { load, raw } = report;
  const lines = [
    `Machine: ${report.machine.cpu}, ${report.machine.cores} cores, Node ${report.machine.node}. ` +
      `Model: ${report.model}${report.workers ? `, ${report.workers} workers` : ''}.`,
    `Each round: ${load.sessions} WebSocket sessions × ${load.sentencesPerSession} sentences ` +
      `(${load.pipelined ? 'all sent at once' : 'one after another, each waiting for synthesis_complete'}), ` +
      `${load.posts} POST clients looping over the same sentences meanwhile, GET /ping every ${load.pingMs} ms. ` +
      'Times are measured by the client (which shares the cores with the server).',
    '',
    markdownTable(
      [
        'round',
        'wall s',
        'WS requests (errors)',
        'WS TTFA p50 / p95 ms',
        'POST requests (errors)',
        'POST TTFA p50 / p95 ms',
        'audio s per wall s',
        '% of raw',
        '/ping p50 / p99 / max ms',
        'server RSS MB',
        'CPU % server / client',
      ],
      report.rounds.map((r) => [
        r.round,
        r.wallS,
        `${r.ws.requests} (${r.ws.errors})`,
        `${r.ws.ttfaP50Ms} / ${r.ws.ttfaP95Ms}`,
        `${r.post.requests} (${r.post.errors})`,
        `${r.post.ttfaP50Ms} / ${r.post.ttfaP95Ms}`,
        r.audioPerWallS,
        raw ? round((100 * r.audioPerWallS) / raw.audioPerWallS, 0) : '–',
        `${r.ping.p50Ms} / ${r.ping.p99Ms} / ${r.ping.maxMs}`,
        r.rssBytes === null ? '–' : mb(r.rssBytes),
        `${r.cpu.serverPct ?? '–'} / ${r.cpu.clientPct}`,
      ]),
    ),
    '',
    raw
      ? `Raw inference on the same sentences (the engine in-process, ${raw.workers} concurrent streams, ` +
        `one per worker, the server not running): ${raw.audioPerWallS} audio s per wall s over ${raw.jobs} sentences, ` +
        `CPU ${raw.cpuPct} % (runs: ${report.rawRuns.map((r) => r.audioPerWallS).join(', ')}; the best counts). ` +
        `One sentence alone: ${round(raw.sentenceMs, 1)} ms (model ${round(raw.sentenceModelMs, 1)} ms, ` +
        `text front end ${round(raw.sentenceFrontEndMs, 1)} ms; medians).`
      : 'Raw inference: not measured (--url without --model-dir).',
    ...(raw && rawDisturbed(raw, report.machine.cores)
      ? [
          '',
          `**Warning:** the raw run had only ${raw.cpuPct} % CPU for ${raw.workers} workers: something else ` +
            'was running on this machine, so the comparison with it is not reliable.',
        ]
      : []),
    '',
    markdownTable(
      ['target', 'goal', 'measured', 'met'],
      report.targets.map((t) => [t.name, t.target, t.value, t.met === null ? 'n/a' : t.met ? 'yes' : 'NO']),
    ),
  ];
  return lines.join('\n');
}

// ---------------------------------------------------------------------------------------------
// Raw inference (no server)
