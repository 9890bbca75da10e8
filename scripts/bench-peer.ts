/**
 * Peer benchmark: our server side by side with the server a kokoro-js user writes
 * (scripts/lib/peer-server.ts), on the same machine, the same model file and voice files (the
 * folder scripts/lib/peer-model.ts builds, which both servers load) and the same HTTP client. For two
 * model costs — the fast fixture (test/fixtures/standin-model) and a real-cost stand-in generated
 * with `--repeat 1000` — each trial starts one server, warms it, measures, stops it, then does the
 * same with the other (never both running: they would share the two cores), alternating which goes
 * first. Measured on each:
 *
 *  1. first audio of one sentence (14 words), and of a 4-sentence paragraph;
 *  2. total time of an 8-sentence POST;
 *  3. 8 concurrent clients × 3 paragraphs each: p95 first audio;
 *  4. GET /ping p99 while 4 streams run (polled every 20 ms);
 *
 * with the machine's 1-minute load average at each, and whether both servers produce the same
 * samples for the same text and voice. Ratios are kokoro-js ÷ ours: above 1, ours is faster.
 *
 * Usage: node dist/scripts/bench-peer.js [--repeat-slow 1000] [--trials N] [--readme]
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseConfig } from '../server/config.ts';
import { EIGHT_SENTENCES, PARAGRAPH } from './lib/bench-texts.ts';
import { UsageError, intFlag, parseFlags, runMain } from './lib/cli.ts';
import { projectPath } from './lib/paths.ts';
import {
  CONCURRENT_CLIENTS,
  PARAGRAPHS_PER_CLIENT,
  PARAGRAPH_TEXT,
  PING_STREAMS,
  VOICE,
  concurrentClients,
  load1,
  pingWhileStreaming,
  postPcm,
  sleep,
  type PostResult,
} from './lib/peer-client.ts';
import { writePeerModelDir } from './lib/peer-model.ts';
import { freePort, startServerProcess } from './lib/server-process.ts';
import { writeStandinModelDir } from './lib/standin-model.ts';
import { markdownTable, median, quantile, replaceReadmeBlock, round } from './lib/stats.ts';

const USAGE = `Usage: node dist/scripts/bench-peer.js [options]

Options:
  --trials N          trials on each model (default 3); a trial runs both servers, one after the
                      other, the first one alternating
  --repeat-slow N     compute of the real-cost stand-in (default 1000: about a second per sentence
                      here); 0 skips it
  --out DIR           where peer.json goes (default docs/bench)
  --readme            also write the tables into README.md between <!-- bench:peer --> markers
  -h, --help          show this help
`;

/** One sentence of 14 words, no comma: neither server cuts it. */
const SINGLE = PARAGRAPH[1]!;
const EIGHT_TEXT = EIGHT_SENTENCES.join(' ');

const SERVERS = ['ours', 'kokoro-js'] as const;
type ServerName = (typeof SERVERS)[number];

/** The figures compared, in table order. */
const MEASURES = [
  { key: 'single', label: 'first audio, 1 sentence (14 words)', target: true },
  { key: 'paragraph', label: 'first audio, 4-sentence paragraph', target: true },
  { key: 'eight', label: 'total time, 8 sentences', target: true },
  {
    key: 'concurrent',
    label: `${CONCURRENT_CLIENTS} concurrent clients × ${PARAGRAPHS_PER_CLIENT} paragraphs: p95 first audio`,
    target: false,
  },
  { key: 'ping', label: `GET /ping p99 while ${PING_STREAMS} streams run`, target: false },
] as const;
type MeasureKey = (typeof MEASURES)[number]['key'];

/** The texts whose audio is compared between the servers. */
const CHECKED_TEXTS = [
  { key: 'single', label: '1 sentence' },
  { key: 'paragraph', label: '4-sentence paragraph' },
  { key: 'eight', label: '8 sentences' },
] as const;
type CheckedText = (typeof CHECKED_TEXTS)[number]['key'];

// ---------------------------------------------------------------------------------------------------------
// ---------------------------------------------------------------------------------------------------------
// The servers

interface RunningServer {
  readonly http: string;
  stop(): Promise<unknown>;
}

/** Spawns scripts/peer-kokoro-js-server.ts (compiled) on a free port and waits until /ping answers. */
async function startPeerServerProcess(modelDir: string, timeoutMs = 120_000): Promise<RunningServer> {
  const port = await freePort();
  const child = spawn(
    process.execPath,
    [
      projectPath('dist', 'scripts', 'peer-kokoro-js-server.js'),
      '--model-dir',
      modelDir,
      '--port',
      String(port),
    ],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  const output: string[] = [];
  const collect = (chunk: Buffer) => output.push(...chunk.toString().split('\n').filter(Boolean));
  child.stdout.on('data', collect);
  child.stderr.on('data', collect);
  const exited = new Promise<number | null>((resolve) => child.once('close', (code) => resolve(code)));
  const http = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (child.exitCode !== null)
      throw new Error(`kokoro-js server exited with ${child.exitCode}:\n${output.slice(-20).join('\n')}`);
    try {
      if ((await fetch(`${http}/ping`)).status === 200) break;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`kokoro-js server not ready after ${timeoutMs} ms:\n${output.slice(-20).join('\n')}`);
    }
    await sleep(100);
  }
  return {
    http,
    async stop() {
      if (child.exitCode === null) child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
      try {
        return await exited;
      } finally {
        clearTimeout(timer);
      }
    },
  };
}

/** Our server as `npm start` runs it, on its defaults (set explicitly, so this shell's environment does not change them). */
async function startOurServer(modelDir: string): Promise<RunningServer> {
  const defaults = parseConfig({ KOKORO_MODEL_DIR: modelDir });
  return startServerProcess({
    KOKORO_MODEL_DIR: modelDir,
    KOKORO_WORKERS: String(defaults.workers),
    KOKORO_INTRA_OP_THREADS: String(defaults.intraOpThreads),
    LOOKAHEAD_SENTENCES: String(defaults.lookaheadSentences),
    FIRST_CHUNK_MIN_CHARS: String(defaults.firstChunkMinChars),
    LOG_LEVEL: 'warn',
  });
}

// ---------------------------------------------------------------------------------------------------------
// Measuring

interface PostMeasure extends PostResult {
  /** The 1-minute load average just before the request. */
  readonly load1: number;
}

/** One server in one trial. */
interface Session {
  readonly server: ServerName;
  readonly trial: number;
  /** 1-minute load average before the server was started (nothing of this benchmark running). */
  readonly loadBeforeStart: number;
  /** Spawn → GET /ping answers (ours warms its workers first). */
  readonly startupMs: number;
  readonly single: PostMeasure[];
  readonly paragraph: PostMeasure[];
  readonly eight: PostMeasure[];
  readonly concurrent: { readonly ttfaMs: number[]; readonly p95Ms: number; readonly load1: number };
  readonly ping: {
    readonly latenciesMs: number[];
    readonly p99Ms: number;
    readonly rounds: number;
    readonly load1: number;
  };
}

async function measureSession(
  server: ServerName,
  trial: number,
  modelDir: string,
  reps: number,
  log: (line: string) => void,
): Promise<Session> {
  const loadBeforeStart = load1();
  const t0 = performance.now();
  const running = server === 'ours' ? await startOurServer(modelDir) : await startPeerServerProcess(modelDir);
  const startupMs = performance.now() - t0;
  try {
    log(`  ${server}: started in ${Math.round(startupMs)} ms; warming up…`);
    for (const text of [SINGLE, PARAGRAPH_TEXT, EIGHT_TEXT]) await postPcm(running.http, text);
    const post = async (text: string): Promise<PostMeasure> => {
      const load = load1();
      return { ...(await postPcm(running.http, text)), load1: load };
    };
    const single: PostMeasure[] = [];
    const paragraph: PostMeasure[] = [];
    const eight: PostMeasure[] = [];
    log(`  ${server}: ${reps} × (1 sentence, paragraph, 8 sentences)…`);
    for (let i = 0; i < reps; i++) {
      single.push(await post(SINGLE));
      paragraph.push(await post(PARAGRAPH_TEXT));
      eight.push(await post(EIGHT_TEXT));
    }
    log(`  ${server}: ${CONCURRENT_CLIENTS} concurrent clients…`);
    const concurrentLoad = load1();
    const { ttfaMs } = await concurrentClients(running.http);
    log(`  ${server}: /ping while ${PING_STREAMS} streams run…`);
    const pingLoad = load1();
    const ping = await pingWhileStreaming(running.http);
    return {
      server,
      trial,
      loadBeforeStart,
      startupMs,
      single,
      paragraph,
      eight,
      concurrent: { ttfaMs, p95Ms: quantile(ttfaMs, 0.95), load1: concurrentLoad },
      ping: {
        latenciesMs: ping.latencies,
        p99Ms: quantile(ping.latencies, 0.99),
        rounds: ping.rounds,
        load1: pingLoad,
      },
    };
  } finally {
    await running.stop();
  }
}

// ---------------------------------------------------------------------------------------------------------
// Summaries

interface Cost {
  readonly key: 'fast' | 'real';
  readonly label: string;
  /** Repetitions of each single-request POST per server and trial. */
  readonly reps: number;
}

interface MeasureSummary {
  readonly key: MeasureKey;
  readonly label: string;
  /** Medians over every sample of every trial (single requests), or over the trials' p95 / p99. */
  readonly oursMs: number;
  readonly peerMs: number;
  /** kokoro-js ÷ ours: above 1, ours is faster. */
  readonly ratio: number;
  /** Median 1-minute load average when the samples were taken. */
  readonly oursLoad1: number;
  readonly peerLoad1: number;
}

interface SampleCheck {
  readonly text: CheckedText;
  /** Distinct sample counts seen (one each when every answer had the same length). */
  readonly oursSamples: number[];
  readonly peerSamples: number[];
  readonly sameSamples: boolean;
  /** Whether both sent byte-identical PCM16. */
  readonly sameBytes: boolean;
}

interface CostRun {
  readonly cost: Cost;
  readonly measures: MeasureSummary[];
  readonly samples: SampleCheck[];
  readonly sessions: Session[];
}

const distinct = <T>(values: readonly T[]): T[] => [...new Set(values)];

function summarizeMeasure(
  key: MeasureKey,
  sessions: readonly Session[],
  server: ServerName,
): [number, number] {
  const mine = sessions.filter((s) => s.server === server);
  switch (key) {
    case 'single':
    case 'paragraph':
      return [
        median(mine.flatMap((s) => s[key].map((p) => p.ttfaMs))),
        median(mine.flatMap((s) => s[key].map((p) => p.load1))),
      ];
    case 'eight':
      return [
        median(mine.flatMap((s) => s.eight.map((p) => p.totalMs))),
        median(mine.flatMap((s) => s.eight.map((p) => p.load1))),
      ];
    case 'concurrent':
      return [median(mine.map((s) => s.concurrent.p95Ms)), median(mine.map((s) => s.concurrent.load1))];
    case 'ping':
      return [median(mine.map((s) => s.ping.p99Ms)), median(mine.map((s) => s.ping.load1))];
  }
}

function summarizeCost(cost: Cost, sessions: Session[]): CostRun {
  const measures = MEASURES.map(({ key, label }): MeasureSummary => {
    const [oursMs, oursLoad1] = summarizeMeasure(key, sessions, 'ours');
    const [peerMs, peerLoad1] = summarizeMeasure(key, sessions, 'kokoro-js');
    return { key, label, oursMs, peerMs, ratio: peerMs / oursMs, oursLoad1, peerLoad1 };
  });
  const samples = CHECKED_TEXTS.map(({ key }): SampleCheck => {
    const of = (server: ServerName) => sessions.filter((s) => s.server === server).flatMap((s) => s[key]);
    const oursSamples = distinct(of('ours').map((p) => p.bytes / 2));
    const peerSamples = distinct(of('kokoro-js').map((p) => p.bytes / 2));
    const oursHashes = distinct(of('ours').map((p) => p.sha256));
    const peerHashes = distinct(of('kokoro-js').map((p) => p.sha256));
    return {
      text: key,
      oursSamples,
      peerSamples,
      sameSamples: oursSamples.length === 1 && peerSamples.length === 1 && oursSamples[0] === peerSamples[0],
      sameBytes: oursHashes.length === 1 && peerHashes.length === 1 && oursHashes[0] === peerHashes[0],
    };
  });
  return { cost, measures, samples, sessions };
}

interface Target {
  readonly measure: MeasureKey;
  readonly cost: Cost['key'];
  readonly ratio: number;
  readonly met: boolean;
}

/** Single-request first audio and total time: kokoro-js ÷ ours ≥ 1.0 at both costs. */
function evaluateTargets(runs: readonly CostRun[]): Target[] {
  return runs.flatMap((run) =>
    run.measures
      .filter((m) => MEASURES.find((d) => d.key === m.key)!.target)
      .map((m) => ({ measure: m.key, cost: run.cost.key, ratio: m.ratio, met: m.ratio >= 1 })),
  );
}

// ---------------------------------------------------------------------------------------------------------
// Report

interface PeerReport {
  readonly machine: { cpu: string; cores: number; node: string };
  /** 1-minute load average when the benchmark started. */
  readonly loadAtStart: number;
  readonly trials: number;
  readonly voice: string;
  readonly texts: { single: string; paragraph: string; eight: string };
  readonly runs: CostRun[];
  readonly targets: Target[];
}

const ms = (x: number) => String(round(x, x < 10 ? 2 : 1));
const ratioText = (x: number) => String(round(x, 2));
const loadText = (x: number) => String(round(x, 2));

function renderReport(report: PeerReport): string {
  const byCost = (key: Cost['key']) => report.runs.find((r) => r.cost.key === key);
  const fast = byCost('fast');
  const real = byCost('real');
  const costs = [fast, real].filter((r): r is CostRun => r !== undefined);
  const header = [
    'measure',
    ...costs.map((r) => `ratio, ${r.cost.key === 'fast' ? 'fast' : 'real cost'}`),
    ...costs.map((r) => `${r.cost.key === 'fast' ? 'fast' : 'real cost'}: ours / kokoro-js (ms)`),
    ...costs.map((r) => `1-min load, ${r.cost.key === 'fast' ? 'fast' : 'real cost'}: ours / kokoro-js`),
  ];
  const rows = MEASURES.map(({ key, label }) => {
    const of = (r: CostRun) => r.measures.find((m) => m.key === key)!;
    return [
      label,
      ...costs.map((r) => ratioText(of(r).ratio)),
      ...costs.map((r) => `${ms(of(r).oursMs)} / ${ms(of(r).peerMs)}`),
      ...costs.map((r) => `${loadText(of(r).oursLoad1)} / ${loadText(of(r).peerLoad1)}`),
    ];
  });
  const sampleRows = costs.flatMap((r) =>
    r.samples.map((s) => [
      r.cost.label,
      CHECKED_TEXTS.find((t) => t.key === s.text)!.label,
      `${s.oursSamples.join(', ')} / ${s.peerSamples.join(', ')}`,
      s.sameSamples ? 'yes' : 'NO',
      s.sameBytes ? 'yes' : 'no',
    ]),
  );
  const targetRows = report.targets.map((t) => [
    MEASURES.find((m) => m.key === t.measure)!.label,
    byCost(t.cost)!.cost.label,
    ratioText(t.ratio),
    '≥ 1.0',
    t.met ? 'yes' : 'NO',
  ]);
  const startup = costs
    .map((r) => {
      const of = (server: ServerName) =>
        Math.round(median(r.sessions.filter((s) => s.server === server).map((s) => s.startupMs)));
      return `${r.cost.label}: ours ${of('ours')} ms (workers warmed before it answers), kokoro-js ${of('kokoro-js')} ms`;
    })
    .join('; ');
  const sessionFacts = costs
    .map((r) => {
      const of = (server: ServerName) => r.sessions.filter((s) => s.server === server);
      const pings = (server: ServerName) => of(server).reduce((n, s) => n + s.ping.latenciesMs.length, 0);
      const before = (server: ServerName) => loadText(median(of(server).map((s) => s.loadBeforeStart)));
      return `${r.cost.label}: ${pings('ours')} / ${pings('kokoro-js')} pings, load ${before('ours')} / ${before('kokoro-js')}`;
    })
    .join('; ');
  const perRequest = costs.map((r) => `${r.cost.label}: ${r.cost.reps}`).join(', ');
  return [
    `Machine: ${report.machine.cpu.trim()}, ${report.machine.cores} cores, Node ${report.machine.node}; 1-minute load average ${loadText(report.loadAtStart)} at the start. ` +
      `Both servers run on the same model folder (the stand-in's onnx/model.onnx with the tokenizer files kokoro-js needs) and kokoro-js's own voice files, voice ${report.voice}, ` +
      `one server at a time, ${report.trials} trial(s) alternating which goes first; each is warmed with three requests after it starts. ` +
      `Our server on its defaults; the kokoro-js server is Fastify + kokoro-js ${'`'}tts.stream(TextSplitterStream)${'`'} writing PCM16 per sentence (scripts/lib/peer-server.ts). ` +
      `Requests of each single-request kind per server and trial: ${perRequest}. Medians; ratio = kokoro-js ÷ ours (above 1: ours is faster); ` +
      `the load columns give the 1-minute load average when the figures were taken (the benchmark's own server included).`,
    '',
    markdownTable(header, rows),
    '',
    '**Same audio?** (samples of PCM16 per answer, ours / kokoro-js)',
    '',
    markdownTable(['model', 'text', 'samples', 'same count', 'byte-identical'], sampleRows),
    '',
    '**Targets**',
    '',
    markdownTable(['measure', 'model', 'ratio', 'target', 'met'], targetRows),
    '',
    `Startup (spawn → GET /ping answers, median): ${startup}.`,
    '',
    `Pings taken while all ${PING_STREAMS} streams ran (all trials; a server whose event loop is blocked answers few) and the 1-minute load average before each server started (median), ours / kokoro-js: ${sessionFacts}.`,
  ].join('\n');
}

// ---------------------------------------------------------------------------------------------------------

async function main(): Promise<number> {
  let values, trials, repeatSlow;
  try {
    values = parseFlags(process.argv.slice(2), {
      trials: { type: 'string' },
      'repeat-slow': { type: 'string' },
      out: { type: 'string', default: 'docs/bench' },
      readme: { type: 'boolean', default: false },
      help: { type: 'boolean', short: 'h', default: false },
    });
    trials = intFlag('trials', values.trials, 3, 1, 100);
    repeatSlow = intFlag('repeat-slow', values['repeat-slow'], 1000, 0, 10_000);
  } catch (err) {
    if (!(err instanceof UsageError)) throw err;
    process.stderr.write(`${err.message}\n\n${USAGE}`);
    return 2;
  }
  if (values.help) {
    process.stdout.write(USAGE);
    return 0;
  }
  const log = (line: string) => process.stderr.write(`${line}\n`);
  const loadAtStart = load1();
  log(`1-minute load average: ${loadText(loadAtStart)}`);
  if (loadAtStart >= 1) log('warning: the machine is busy; the figures will show it');

  const costs: (Cost & { source: { fixture: string } | { repeat: number } })[] = [
    {
      key: 'fast',
      label: 'fast (fixture)',
      reps: 5,
      source: { fixture: projectPath('test', 'fixtures', 'standin-model') },
    },
    ...(repeatSlow > 0
      ? [
          {
            key: 'real' as const,
            label: `real cost (--repeat ${repeatSlow})`,
            reps: 3,
            source: { repeat: repeatSlow },
          },
        ]
      : []),
  ];
  const runs: CostRun[] = [];
  for (const { source, ...cost } of costs) {
    const tmp = mkdtempSync(join(tmpdir(), 'kokoro-peer-'));
    try {
      let standin: string;
      if ('fixture' in source) standin = source.fixture;
      else {
        standin = join(tmp, 'standin');
        log(`generating a stand-in model with --repeat ${source.repeat}…`);
        await writeStandinModelDir(standin, { repeat: source.repeat, log: () => {} });
      }
      const { dir } = await writePeerModelDir(standin, join(tmp, 'peer'));
      const sessions: Session[] = [];
      for (let trial = 0; trial < trials; trial++) {
        const order = trial % 2 === 0 ? SERVERS : ([...SERVERS].reverse() as ServerName[]);
        log(`${cost.label}, trial ${trial + 1}/${trials}:`);
        for (const server of order) sessions.push(await measureSession(server, trial, dir, cost.reps, log));
      }
      runs.push(summarizeCost(cost, sessions));
    } finally {
      rmSync(tmp, { recursive: true, force: true });
    }
  }

  const report: PeerReport = {
    machine: { cpu: cpus()[0]?.model ?? 'unknown', cores: cpus().length, node: process.version },
    loadAtStart,
    trials,
    voice: VOICE,
    texts: { single: SINGLE, paragraph: PARAGRAPH_TEXT, eight: EIGHT_TEXT },
    runs,
    targets: evaluateTargets(runs),
  };
  const md = renderReport(report);
  mkdirSync(values.out, { recursive: true });
  writeFileSync(join(values.out, 'peer.json'), `${JSON.stringify(report, null, 2)}\n`);
  process.stdout.write(`${md}\n`);
  if (values.readme) replaceReadmeBlock('bench:peer', md);
  return 0;
}

runMain(import.meta.url, 'bench-peer', main);
