/**
 * Load test. Starts the server (as `npm start` would) on a stand-in model with realistic compute
 * (or a real model with --model-dir), or uses a running one (--url, loopback only), and runs several
 * rounds of mixed traffic:
 *
 *  - N WebSocket sessions, each sending M sentences one after another as a voice agent does
 *    (waiting for each `synthesis_complete`), or all at once with --pipelined;
 *  - P POST clients looping over the same sentences while the sessions run;
 *  - GET /ping every 20 ms.
 *
 * Per round it reports time to first audio (client-measured: from sending a request to its first
 * audio frame, or first body byte for POST), audio seconds produced per wall second, /ping latency
 * and the server's resident memory. Before the server starts (and again after it stopped, so the
 * two never compete for the cores), it measures on the same sentences what the model alone can do:
 * the saturated throughput of the engine (one stream per worker, no HTTP or WebSocket in between)
 * and the time one sentence takes alone; the targets are set against those.
 *
 * Usage: npm run load -- [--rounds 4] [--sessions 10] [--sentences 5] [--posts 2] [--pipelined]
 *          [--repeat 30] [--workers 2] [--model-dir DIR] [--url http://127.0.0.1:8080] [--out docs/bench]
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { request } from 'node:http';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import WebSocket from 'ws';
import { createEngine } from '../model/engine.ts';
import { SAMPLE_RATE } from '../model/kokoro/constants.ts';
import { engineOptions, parseConfig } from '../server/config.ts';
import { PARAGRAPH } from './bench.ts';
import { writeStandinModelDir } from './lib/standin-model.ts';
import { startServerProcess, type ServerProcess } from './lib/server-process.ts';
import { markdownTable, median, quantile, round, replaceReadmeBlock } from './lib/stats.ts';
import { intFlag, isMain } from './lib/cli.ts';

const USAGE = `Usage: npm run load -- [options]

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

async function measureRaw(
  modelDir: string,
  workers: number,
  jobs: readonly string[],
  deadline: number,
): Promise<RawResult> {
  // The server's own defaults for this model and worker count (threads per worker, queue, voice).
  const config = parseConfig({ KOKORO_MODEL_DIR: modelDir, KOKORO_WORKERS: String(workers) });
  const engine = await createEngine(engineOptions(config));
  try {
    const voice = engine.voices.resolve(config.defaultVoice);
    const synthesize = async (text: string) => {
      const started = performance.now();
      let samples = 0;
      let modelMs = 0;
      let frontEndMs = 0;
      for await (const chunk of engine.stream({ text, voice, speed: 1 })) {
        samples += chunk.samples.length;
        modelMs += chunk.inferenceMs;
        frontEndMs += chunk.frontEndMs ?? 0;
      }
      return { ms: performance.now() - started, samples, modelMs, frontEndMs };
    };
    const distinct = [...new Set(jobs)];
    for (const text of distinct) await synthesize(text); // warm caches and JIT

    const alone: Awaited<ReturnType<typeof synthesize>>[] = [];
    for (let trial = 0; trial < 3; trial++) for (const text of distinct) alone.push(await synthesize(text));

    let next = 0;
    let samples = 0;
    const cpu = process.cpuUsage();
    const started = performance.now();
    await Promise.all(
      Array.from({ length: engine.info.workers }, async () => {
        while (next < jobs.length && Date.now() < deadline) {
          // Not `samples += await …`: that reads `samples` before the await and loses the other lane's sums.
          const done = await synthesize(jobs[next++]!);
          samples += done.samples;
        }
      }),
    );
    const wallS = (performance.now() - started) / 1000;
    const cpuUsed = process.cpuUsage(cpu);
    const audioS = samples / SAMPLE_RATE;
    return {
      workers: engine.info.workers,
      jobs: next,
      audioS: round(audioS, 2),
      wallS: round(wallS, 3),
      audioPerWallS: round(audioS / wallS, 2),
      cpuPct: round((cpuUsed.user + cpuUsed.system) / 1e4 / wallS, 0),
      sentenceMs: round(median(alone.map((a) => a.ms)), 2),
      sentenceModelMs: round(median(alone.map((a) => a.modelMs)), 2),
      sentenceFrontEndMs: round(median(alone.map((a) => a.frontEndMs)), 2),
    };
  } finally {
    await engine.dispose();
  }
}

// ---------------------------------------------------------------------------------------------
// Load clients

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function openSocket(url: string, deadline: number): Promise<WebSocket> {
  return new Promise((resolve, reject) => {
    const socket = new WebSocket(url, { handshakeTimeout: Math.max(1, deadline - Date.now()) });
    socket.once('open', () => {
      // Later errors end in 'close', where pending requests are counted as failed.
      socket.on('error', () => {});
      resolve(socket);
    });
    socket.once('error', reject);
  });
}

/**
 * One WebSocket session: sends its sentences one after another (or all at once) and times each
 * request from its send to its first audio frame. Answers arrive strictly in order, so the audio
 * between a request's synthesis_start and synthesis_complete is its own.
 */
async function wsSession(
  socket: WebSocket,
  texts: readonly string[],
  pipelined: boolean,
  idPrefix: string,
  deadline: number,
): Promise<RequestSample[]> {
  interface Pending {
    sentAt: number;
    firstAt?: number;
    resolve(sample: RequestSample): void;
  }
  const pending = new Map<string, Pending>();
  let current: string | undefined;
  const finish = (id: string, sample: Omit<RequestSample, 'route' | 'ttfaMs'>) => {
    const p = pending.get(id);
    if (!p) return;
    pending.delete(id);
    p.resolve({ route: 'ws', ttfaMs: p.firstAt === undefined ? NaN : p.firstAt - p.sentAt, ...sample });
  };
  socket.on('message', (data: Buffer, isBinary: boolean) => {
    if (isBinary) {
      const p = current === undefined ? undefined : pending.get(current);
      if (p && p.firstAt === undefined) p.firstAt = performance.now();
      return;
    }
    const m = JSON.parse(data.toString()) as Record<string, unknown>;
    const id = String(m.request_id);
    if (m.type === 'synthesis_start') current = id;
    else if (m.type === 'synthesis_complete') finish(id, { audioS: Number(m.total_duration_s) || 0 });
    else if (m.type === 'error') finish(id, { audioS: 0, error: String(m.code) });
  });
  socket.once('close', () => {
    for (const id of [...pending.keys()]) finish(id, { audioS: 0, error: 'closed' });
  });

  const send = (text: string, k: number): Promise<RequestSample> => {
    const id = `${idPrefix}-${k}`;
    const done = new Promise<RequestSample>((resolve) => {
      pending.set(id, { sentAt: performance.now(), resolve });
    });
    socket.send(Buffer.from(JSON.stringify({ text, request_id: id, request_timestamp: Date.now() / 1000 })));
    return done;
  };
  const timeout = new Promise<'timeout'>((resolve) => {
    const timer = setTimeout(() => resolve('timeout'), Math.max(0, deadline - Date.now()));
    timer.unref();
  });
  const timedOut = (): RequestSample => ({ route: 'ws', ttfaMs: NaN, audioS: 0, error: 'timeout' });

  if (pipelined) {
    const all = Promise.all(texts.map((t, k) => send(t, k)));
    const result = await Promise.race([all, timeout]);
    return result === 'timeout' ? texts.map(timedOut) : result;
  }
  const samples: RequestSample[] = [];
  for (const [k, text] of texts.entries()) {
    const result = await Promise.race([send(text, k), timeout]);
    if (result === 'timeout') return [...samples, ...texts.slice(k).map(timedOut)];
    samples.push(result);
  }
  return samples;
}

/** One POST: time to the first body byte; audio seconds from the raw PCM length. */
function postOnce(http: string, text: string, deadline: number): Promise<RequestSample> {
  return new Promise((resolve) => {
    const started = performance.now();
    let first: number | undefined;
    let bytes = 0;
    const fail = (error: string) => resolve({ route: 'post', ttfaMs: NaN, audioS: 0, error });
    const req = request(`${http}/invocations`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      timeout: Math.max(1, deadline - Date.now()),
    });
    req.on('timeout', () => req.destroy(new Error('timeout')));
    req.on('error', (err) => fail(err.message === 'timeout' ? 'timeout' : 'network'));
    req.on('response', (res) => {
      if (res.statusCode !== 200) {
        res.resume();
        fail(`http_${res.statusCode}`);
        return;
      }
      res.on('data', (chunk: Buffer) => {
        first ??= performance.now();
        bytes += chunk.length;
      });
      res.on('end', () =>
        resolve({
          route: 'post',
          ttfaMs: first === undefined ? NaN : first - started,
          audioS: bytes / (SAMPLE_RATE * 2),
        }),
      );
      res.on('error', () => fail('network'));
    });
    req.end(JSON.stringify({ text, format: 'pcm' }));
  });
}

/** A POST client: loops over its sentences until the sessions are done (bounded by count and time). */
async function postClient(
  http: string,
  texts: readonly string[],
  stop: () => boolean,
  maxRequests: number,
  deadline: number,
): Promise<RequestSample[]> {
  const samples: RequestSample[] = [];
  for (let k = 0; k < maxRequests && !stop() && Date.now() < deadline; k++)
    samples.push(await postOnce(http, texts[k % texts.length]!, deadline));
  return samples;
}

/** GET /ping every `intervalMs` until stopped (bounded by count and time). */
async function pingLoop(
  http: string,
  intervalMs: number,
  stop: () => boolean,
  deadline: number,
): Promise<{ latencies: number[]; failures: number }> {
  const latencies: number[] = [];
  let failures = 0;
  const maxPings = Math.ceil((deadline - Date.now()) / intervalMs) + 1;
  for (let n = 0; n < maxPings && !stop() && Date.now() < deadline; n++) {
    const started = performance.now();
    try {
      const res = await fetch(`${http}/ping`, { signal: AbortSignal.timeout(5000) });
      await res.arrayBuffer();
      if (res.status === 200) latencies.push(performance.now() - started);
      else failures++;
    } catch {
      failures++;
    }
    await sleep(Math.max(0, intervalMs - (performance.now() - started)));
  }
  return { latencies, failures };
}

interface Target {
  readonly http: string;
  readonly ws: string;
  rss(): Promise<number | null>;
  /** The server's CPU seconds so far, when it is our child process. */
  cpuSeconds(): number | null;
}

async function runRound(
  target: Target,
  options: LoadOptions,
  roundNumber: number,
  label: string,
): Promise<RoundResult> {
  const deadline = Date.now() + options.roundTimeoutS * 1000;
  const sockets = await Promise.all(
    Array.from({ length: options.sessions }, () => openSocket(target.ws, deadline)),
  );
  let sessionsDone = false;
  const clientCpu = process.cpuUsage();
  const serverCpu = target.cpuSeconds();
  const ping = pingLoop(target.http, options.pingMs, () => sessionsDone, deadline);
  const started = performance.now();
  const sessions = Promise.all(
    sockets.map((socket, i) =>
      wsSession(socket, sentencesFor(i, options.sentences), options.pipelined, `${label}-s${i}`, deadline),
    ),
  ).finally(() => (sessionsDone = true));
  const posts = Promise.all(
    Array.from({ length: options.posts }, (_, j) =>
      postClient(
        target.http,
        sentencesFor(options.sessions + j, SENTENCES.length),
        () => sessionsDone,
        options.sessions * options.sentences,
        deadline,
      ),
    ),
  );
  const samples = [...(await sessions).flat(), ...(await posts).flat()];
  const wallS = (performance.now() - started) / 1000;
  const serverCpuNow = target.cpuSeconds();
  const clientCpuS = (({ user, system }) => (user + system) / 1e6)(process.cpuUsage(clientCpu));
  const { latencies, failures } = await ping;
  for (const s of sockets) s.close();
  return summarizeRound(roundNumber, samples, latencies, failures, wallS, await target.rss(), {
    client: clientCpuS,
    server: serverCpu === null || serverCpuNow === null ? null : serverCpuNow - serverCpu,
  });
}

async function stopServer(server: ServerProcess): Promise<void> {
  const timer = setTimeout(() => server.child.kill('SIGKILL'), 40_000);
  await server.stop();
  clearTimeout(timer);
}

async function main(): Promise<void> {
  const options = parseLoadArgs(process.argv.slice(2));
  if (!options) {
    process.stdout.write(USAGE);
    return;
  }
  const log = (line: string) => process.stderr.write(`${line}\n`);
  let tmp: string | undefined;
  let server: ServerProcess | undefined;
  try {
    let modelDir = options.modelDir;
    if (!modelDir && !options.url) {
      tmp = mkdtempSync(join(tmpdir(), 'kokoro-load-'));
      modelDir = tmp;
      log(`generating a stand-in model with --repeat ${options.repeat} in ${tmp}`);
      await writeStandinModelDir(tmp, { repeat: options.repeat, log: () => {} });
    }
    const model =
      options.modelDir ??
      (options.url ? `the server at ${options.url}` : `stand-in (--repeat ${options.repeat})`);

    // First, with nothing else running: what the model alone does on the same sentences.
    const roundSentences = Array.from({ length: options.sessions }, (_, i) =>
      sentencesFor(i, options.sentences),
    ).flat();
    const passes = Math.min(20, Math.max(1, Math.ceil(200 / roundSentences.length)));
    const rawJobs = Array.from({ length: passes }, () => roundSentences).flat();
    const rawRuns: RawResult[] = [];
    const measureRawNow = async (when: string) => {
      if (!modelDir) return;
      log(`raw inference ${when}: ${options.workers} streams over the rounds' sentences, in-process…`);
      const deadline = Date.now() + options.roundTimeoutS * 1000;
      rawRuns.push(await measureRaw(modelDir, options.workers, rawJobs, deadline));
    };
    await measureRawNow('before the server starts');

    let target: Target;
    if (options.url) {
      const base = loopbackUrl(options.url);
      const http = base.origin;
      target = {
        http,
        ws: `ws://${base.host}/invocations-bidirectional-stream`,
        rss: async () => {
          try {
            const res = await fetch(`${http}/metrics`, { signal: AbortSignal.timeout(5000) });
            return res.ok ? metricsRssBytes(await res.text()) : null;
          } catch {
            return null;
          }
        },
        cpuSeconds: () => null,
      };
    } else {
      log('starting the server…');
      const started = await startServerProcess({
        KOKORO_MODEL_DIR: modelDir!,
        KOKORO_WORKERS: String(options.workers),
        LOG_LEVEL: 'warn',
      });
      server = started;
      target = {
        http: started.http,
        ws: started.ws,
        rss: async () => {
          try {
            return vmRssBytes(readFileSync(`/proc/${started.child.pid}/status`, 'utf8'));
          } catch {
            return null;
          }
        },
        cpuSeconds: () => {
          try {
            return procCpuSeconds(readFileSync(`/proc/${started.child.pid}/stat`, 'utf8'));
          } catch {
            return null;
          }
        },
      };
    }

    // Warm the server as the raw run was warmed (every distinct sentence once), through both routes.
    const warmDeadline = Date.now() + options.roundTimeoutS * 1000;
    const warmSocket = await openSocket(target.ws, warmDeadline);
    await wsSession(warmSocket, [...new Set(roundSentences)], false, 'warm', warmDeadline);
    warmSocket.close();
    await postOnce(target.http, SENTENCES[0]!, warmDeadline);

    const rounds: RoundResult[] = [];
    for (let r = 1; r <= options.rounds; r++) {
      log(`round ${r}/${options.rounds}…`);
      rounds.push(await runRound(target, options, r, `r${r}`));
    }

    const workers = options.url
      ? (((await (await fetch(`${target.http}/ping`)).json()) as { workers?: number }).workers ?? null)
      : options.workers;
    // Once more with the server stopped: a shared machine can disturb one run; the better one counts.
    if (server) {
      await stopServer(server);
      server = undefined;
      await measureRawNow('after the server stopped');
    }
    const raw = rawRuns.reduce<RawResult | null>(
      (best, r) => (best === null || r.audioPerWallS > best.audioPerWallS ? r : best),
      null,
    );
    const report: LoadReport = {
      machine: { cpu: cpus()[0]?.model ?? 'unknown', cores: cpus().length, node: process.version },
      model,
      workers,
      load: {
        rounds: options.rounds,
        sessions: options.sessions,
        sentencesPerSession: options.sentences,
        posts: options.posts,
        pipelined: options.pipelined,
        pingMs: options.pingMs,
      },
      raw,
      rawRuns,
      rounds,
      targets: evaluateTargets(rounds, raw, options.sessions, options.pipelined),
    };
    const md = renderMarkdown(report);
    mkdirSync(options.out, { recursive: true });
    writeFileSync(join(options.out, 'load.json'), `${JSON.stringify(report, null, 2)}\n`);
    const flags = process.argv.slice(2).join(' ');
    writeFileSync(
      join(options.out, 'load.md'),
      `${md}\n\nCommand: \`npm run load${flags ? ` -- ${flags}` : ''}\`\n`,
    );
    process.stdout.write(`${md}\n`);
    if (process.argv.includes('--readme')) replaceReadmeBlock('bench:load', md);
  } finally {
    if (server) await stopServer(server);
    if (tmp) rmSync(tmp, { recursive: true, force: true });
  }
}

if (isMain(import.meta.url)) {
  main().catch((err: unknown) => {
    process.stderr.write(`load failed: ${err instanceof Error ? err.message : String(err)}\n`);
    process.exit(1);
  });
}
