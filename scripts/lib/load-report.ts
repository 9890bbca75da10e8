/** The load test's options, its summaries of each round, its targets and its Markdown report (pure). */
import { parseArgs } from 'node:util';
import { PARAGRAPH } from './bench-texts.ts';
import { markdownTable, median, quantile, round } from './stats.ts';
import { intFlag } from './cli.ts';

export const USAGE = `Usage: npm run load -- [options]

Without --model-dir or --url, the load runs on two stand-ins generated here: the fast one (--repeat)
and a real-cost one (--slow-repeat), each with its own counts.

  --rounds N          rounds of load (default 4)
  --sessions N        concurrent WebSocket sessions per round (default 10)
  --sentences N       sentences each session sends (default 5)
  --posts N           concurrent POST clients looping over the same sentences (default 2)
  --raw-sentences N   sentences of each saturated raw-inference run, at least (default 200)
  --repeat N          compute of the fast stand-in (default 30, like npm run bench)
  --slow-repeat N     compute of the real-cost stand-in (default 1000: about a second of model
                      time per sentence on two cores); 0 skips it
  --slow-rounds N, --slow-sessions N, --slow-sentences N, --slow-posts N, --slow-raw-sentences N,
  --slow-ping-ms N    the same for the real-cost stand-in (defaults 3, 10, 3, 2, 40, 100)
  --pipelined         sessions send all their sentences at once instead of one after another
  --workers N         inference workers of the started server and of the raw measurement (default 2)
  --model-dir DIR     use this model directory instead of the generated stand-ins
  --url URL           load a running server at http://127.0.0.1:PORT instead of starting one
                      (the raw measurement then needs --model-dir of the model it serves)
  --ping-ms N         interval of GET /ping (default 20)
  --round-timeout S   deadline of each round in seconds (default 120)
  --out DIR           where load.json and load.md go (default docs/bench)
  --readme            also write the tables into README.md between <!-- bench:load --> markers
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
  /** Sentences of the saturated raw run, at least (whole passes over the rounds' sentences). */
  readonly rawSentences: number;
  /** Trials of each distinct sentence alone in the raw run. */
  readonly aloneTrials: number;
}

/** Only loopback targets: this script is a load generator and must not be pointed elsewhere. */
export function loopbackUrl(raw: string): URL {
  const url = new URL(raw);
  if (url.protocol !== 'http:' || !['127.0.0.1', 'localhost', '[::1]'].includes(url.hostname))
    throw new RangeError(`--url must be http://127.0.0.1:PORT (loopback only); got ${raw}`);
  return url;
}

/**
 * Parses the command line into the loads to run, one per model cost (the fast stand-in, then the
 * real-cost one; a given model or server alone); `undefined` means help was asked for.
 */
export function parseLoadArgs(args: readonly string[]): LoadOptions[] | undefined {
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
      'raw-sentences': { type: 'string' },
      'slow-repeat': { type: 'string' },
      'slow-rounds': { type: 'string' },
      'slow-sessions': { type: 'string' },
      'slow-sentences': { type: 'string' },
      'slow-posts': { type: 'string' },
      'slow-raw-sentences': { type: 'string' },
      'slow-ping-ms': { type: 'string' },
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
  const fast: LoadOptions = {
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
    rawSentences: intFlag('raw-sentences', values['raw-sentences'], 200, 1, 100_000),
    aloneTrials: 3,
  };
  const slowRepeat = intFlag('slow-repeat', values['slow-repeat'], 1000, 0, 10_000);
  if (fast.url !== undefined || fast.modelDir !== undefined || slowRepeat === 0) return [fast];
  const slow: LoadOptions = {
    ...fast,
    repeat: slowRepeat,
    rounds: intFlag('slow-rounds', values['slow-rounds'], 3, 1, 50),
    sessions: intFlag('slow-sessions', values['slow-sessions'], 10, 1, 500),
    sentences: intFlag('slow-sentences', values['slow-sentences'], 3, 1, 100),
    posts: intFlag('slow-posts', values['slow-posts'], 2, 0, 100),
    rawSentences: intFlag('slow-raw-sentences', values['slow-raw-sentences'], 40, 1, 100_000),
    // Its rounds last about 20 s, so 10 pings a second still give a p99; 50 a second from a client on
    // the same two cores would take CPU from the workers (about a tenth of a core here).
    pingMs: intFlag('slow-ping-ms', values['slow-ping-ms'], 100, 1, 10_000),
    aloneTrials: 1,
  };
  return [fast, slow];
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
  /** Seconds of audio of one sentence alone (median). */
  readonly sentenceAudioS: number;
}

/** A round with the raw throughput it is compared with. */
export interface ComparedRound extends RoundResult {
  /** The mean of the raw runs just before and just after this round; null when raw was not measured. */
  readonly rawAudioPerWallS: number | null;
  /** audioPerWallS against it, in %. */
  readonly pctOfRaw: number | null;
}

/**
 * Sets each round against the raw runs on either side of it (`rawRuns[i]` ran before round i + 1,
 * `rawRuns[i + 1]` after it): the machine's speed drifts over minutes, so raw inference is measured
 * next to each round rather than once. With fewer runs, the nearest ones stand in.
 */
export function compareWithRaw(
  rounds: readonly RoundResult[],
  rawRuns: readonly RawResult[],
): ComparedRound[] {
  return rounds.map((r, i) => {
    const around = [rawRuns[i], rawRuns[i + 1]].filter((x): x is RawResult => x !== undefined);
    const near = around.length > 0 ? around : rawRuns.slice(-1);
    if (near.length === 0) return { ...r, rawAudioPerWallS: null, pctOfRaw: null };
    const raw = near.reduce((n, x) => n + x.audioPerWallS, 0) / near.length;
    return { ...r, rawAudioPerWallS: round(raw, 2), pctOfRaw: round((100 * r.audioPerWallS) / raw, 1) };
  });
}

export interface TargetCheck {
  readonly name: string;
  readonly target: string;
  readonly value: string;
  /** null: could not be measured in this run. */
  readonly met: boolean | null;
}

/** Closed-loop audio throughput against raw inference at saturation. */
export const THROUGHPUT_TARGET = 0.95;

/** Compares the rounds with the targets; each is judged on the worst round. */
export function evaluateTargets(
  rounds: readonly ComparedRound[],
  raw: RawResult | null,
  sessions: number,
  pipelined = false,
): TargetCheck[] {
  const worst = (pick: (r: ComparedRound) => number, sign: 1 | -1) =>
    rounds.map(pick).reduce((a, b) => (sign * b > sign * a ? b : a));
  const checks: TargetCheck[] = [];

  const compared = rounds.filter((r) => r.pctOfRaw !== null);
  const low = compared.length > 0 ? compared.reduce((a, b) => (b.pctOfRaw! < a.pctOfRaw! ? b : a)) : null;
  checks.push({
    name: 'audio throughput vs raw inference at saturation (worst round, against the raw runs beside it)',
    target: `≥ ${100 * THROUGHPUT_TARGET} %`,
    value: low
      ? `${low.pctOfRaw} % (round ${low.round}: ${low.audioPerWallS} / ${low.rawAudioPerWallS} audio s per s)`
      : `${worst((r) => r.audioPerWallS, -1)} audio s per s; raw not measured`,
    met: low ? low.pctOfRaw! >= 100 * THROUGHPUT_TARGET : null,
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
    name:
      later.length > 2
        ? `server RSS growth, round ${later[0]!.round} → highest of rounds ${later[1]!.round}–${later[later.length - 1]!.round}`
        : later.length === 2
          ? `server RSS growth, round ${later[0]!.round} → round ${later[1]!.round}`
          : 'server RSS growth (needs 2 rounds or more)',
    target: '< 5 %',
    value: Number.isFinite(growth)
      ? `${round(100 * growth, 1)} % (${mb(first!)} → ${mb(peak!)} MB)`
      : 'not measured',
    met: Number.isFinite(growth) ? growth < 0.05 : null,
  });
  return checks;
}

const mb = (bytes: number): number => round(bytes / (1024 * 1024), 1);

/** The load on one model: its counts, its rounds, raw inference on it and the targets. */
export interface CostReport {
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
  /** The first raw run (the sentence-alone figures are the same in every run). */
  readonly raw: RawResult | null;
  /** Before the first round, then after each round (the server idle meanwhile). */
  readonly rawRuns: readonly RawResult[];
  readonly rounds: readonly ComparedRound[];
  readonly targets: readonly TargetCheck[];
}

export interface LoadReport {
  readonly machine: { cpu: string; cores: number; node: string };
  /** The fast stand-in, then the real-cost one (or the one model or server given). */
  readonly costs: readonly CostReport[];
}

/** A raw run whose workers did not get (most of) a core each was disturbed by something else. */
export function rawDisturbed(raw: RawResult, cores: number): boolean {
  return raw.cpuPct < 0.8 * 100 * Math.min(raw.workers, cores);
}

function describeLoad(c: CostReport): string {
  const { load } = c;
  return (
    `${c.model}: ${load.rounds} rounds of ${load.sessions} WebSocket sessions × ${load.sentencesPerSession} sentences ` +
    `(${load.pipelined ? 'all sent at once' : 'one after another, each waiting for synthesis_complete'}) ` +
    `and ${load.posts} POST clients looping over the same sentences meanwhile, GET /ping every ${load.pingMs} ms`
  );
}

function describeRaw(c: CostReport, cores: number): string {
  const { raw } = c;
  if (!raw) return `- ${c.model}: not measured (--url without --model-dir).`;
  const perAudio = raw.sentenceModelMs / 1000 / raw.sentenceAudioS;
  return [
    `- ${c.model}: ${c.rawRuns.map((r) => r.audioPerWallS).join(', ')} audio s per wall s ` +
      `(${raw.jobs} sentences each; CPU ${c.rawRuns.map((r) => r.cpuPct).join(', ')} %). One sentence alone: ${round(raw.sentenceMs, 1)} ms ` +
      `(model ${round(raw.sentenceModelMs, 1)} ms, text front end ${round(raw.sentenceFrontEndMs, 1)} ms) ` +
      `for ${round(raw.sentenceAudioS, 2)} s of audio: ${round(perAudio, 3)} s of model time per s of audio, ` +
      `${perAudio < 1 ? 'faster' : 'slower'} than real time.`,
    ...(c.rawRuns.some((r) => rawDisturbed(r, cores))
      ? [
          `  **Warning:** a raw run had less than ${80 * Math.min(raw.workers, cores)} % CPU for ${raw.workers} workers: ` +
            'something else was running on this machine, so the comparison with it is not reliable.',
        ]
      : []),
  ].join('\n');
}

export function renderMarkdown(report: LoadReport): string {
  const { costs } = report;
  const workers = costs.find((c) => c.workers)?.workers;
  const lines = [
    `Machine: ${report.machine.cpu}, ${report.machine.cores} cores, Node ${report.machine.node}` +
      `${workers ? `, ${workers} workers` : ''}. ` +
      'Times are measured by the client (which shares the cores with the server).',
    '',
    `Each model: ${costs.map(describeLoad).join('; ')}.`,
    '',
    markdownTable(
      [
        'model',
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
      costs.flatMap((c) =>
        c.rounds.map((r) => [
          c.model,
          r.round,
          r.wallS,
          `${r.ws.requests} (${r.ws.errors})`,
          `${r.ws.ttfaP50Ms} / ${r.ws.ttfaP95Ms}`,
          `${r.post.requests} (${r.post.errors})`,
          `${r.post.ttfaP50Ms} / ${r.post.ttfaP95Ms}`,
          r.audioPerWallS,
          r.pctOfRaw ?? '–',
          `${r.ping.p50Ms} / ${r.ping.p99Ms} / ${r.ping.maxMs}`,
          r.rssBytes === null ? '–' : mb(r.rssBytes),
          `${r.cpu.serverPct ?? '–'} / ${r.cpu.clientPct}`,
        ]),
      ),
    ),
    '',
    'Raw inference on the same sentences (the engine in-process, one stream per worker, the server idle): ' +
      'a run before the first round and one after each; "% of raw" sets a round against the mean of the runs ' +
      'just before and after it, because the speed of this machine drifts by several % over minutes:',
    '',
    ...costs.map((c) => describeRaw(c, report.machine.cores)),
    '',
    markdownTable(
      ['model', 'target', 'goal', 'measured', 'met'],
      costs.flatMap((c) =>
        c.targets.map((t) => [
          c.model,
          t.name,
          t.target,
          t.value,
          t.met === null ? 'n/a' : t.met ? 'yes' : 'NO',
        ]),
      ),
    ),
  ];
  return lines.join('\n');
}

// ---------------------------------------------------------------------------------------------
// Raw inference (no server)
