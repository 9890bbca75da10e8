/**
 * Load test. Starts the server (as `npm start` would) on two stand-in models generated here — the
 * fast one (`--repeat 30`) and a real-cost one (`--slow-repeat 1000`, about a second of model time
 * per sentence on two cores), each with its own counts — or on a real model (--model-dir), or uses
 * a running one (--url, loopback only), and runs several rounds of mixed traffic on each:
 *
 *  - N WebSocket sessions, each sending M sentences one after another as a voice agent does
 *    (waiting for each `synthesis_complete`: a closed loop), or all at once with --pipelined;
 *  - P POST clients looping over the same sentences while the sessions run;
 *  - GET /ping every 20 ms.
 *
 * Per round it reports time to first audio (client-measured: from sending a request to its first
 * audio frame, or first body byte for POST), audio seconds produced per wall second, /ping latency
 * and the server's resident memory. Before the first round and after each (the server idle, so the
 * two never compete for the cores), it measures on the same sentences what the model alone can do:
 * the saturated throughput of the engine (one stream per worker, no HTTP or WebSocket in between);
 * and before the server starts, the time one sentence takes alone. The targets are set against those.
 *
 * Usage: npm run load -- [options] (see --help)
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { writeStandinModelDir } from './lib/standin-model.ts';
import { startServerProcess, type ServerProcess } from './lib/server-process.ts';
import { replaceReadmeBlock } from './lib/stats.ts';
import { isMain } from './lib/cli.ts';

import {
  type CostReport,
  type LoadOptions,
  type LoadReport,
  type RawResult,
  type RoundResult,
  SENTENCES,
  USAGE,
  compareWithRaw,
  evaluateTargets,
  loopbackUrl,
  metricsRssBytes,
  parseLoadArgs,
  procCpuSeconds,
  renderMarkdown,
  sentencesFor,
  vmRssBytes,
} from './lib/load-report.ts';
import {
  type RawEngine,
  type Target,
  openRawEngine,
  openSocket,
  postOnce,
  runRound,
  stopServer,
  wsSession,
} from './lib/load-traffic.ts';

/** One model cost: raw inference, the server started on it (or the one at --url), the rounds. */
async function runCost(options: LoadOptions, log: (line: string) => void): Promise<CostReport> {
  let tmp: string | undefined;
  let server: ServerProcess | undefined;
  let rawEngine: RawEngine | undefined;
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

    // First, with nothing else running: what the model alone does on the same sentences. The engine
    // stays open, so that a saturated run follows each round too, while the server is idle.
    const roundSentences = Array.from({ length: options.sessions }, (_, i) =>
      sentencesFor(i, options.sentences),
    ).flat();
    const passes = Math.min(20, Math.max(1, Math.ceil(options.rawSentences / roundSentences.length)));
    const rawJobs = Array.from({ length: passes }, () => roundSentences).flat();
    const rawRuns: RawResult[] = [];
    if (modelDir) {
      log(`${model}: raw inference in-process: warming, each sentence alone…`);
      rawEngine = await openRawEngine(
        modelDir,
        options.workers,
        [...new Set(roundSentences)],
        options.aloneTrials,
      );
    }
    const measureRawNow = async (when: string) => {
      if (!rawEngine) return;
      log(`${model}: raw inference ${when}: ${options.workers} streams over ${rawJobs.length} sentences…`);
      rawRuns.push(await rawEngine.saturate(rawJobs, Date.now() + options.roundTimeoutS * 1000));
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
      log(`${model}: starting the server…`);
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
      log(`${model}: round ${r}/${options.rounds}…`);
      rounds.push(await runRound(target, options, r, `r${r}`));
      await measureRawNow(`after round ${r}, the server idle`);
    }

    const workers = options.url
      ? (((await (await fetch(`${target.http}/ping`)).json()) as { workers?: number }).workers ?? null)
      : options.workers;
    const raw = rawRuns[0] ?? null;
    const compared = compareWithRaw(rounds, rawRuns);
    return {
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
      rounds: compared,
      targets: evaluateTargets(compared, raw, options.sessions, options.pipelined),
    };
  } finally {
    if (server) await stopServer(server);
    if (rawEngine) await rawEngine.dispose();
    if (tmp) rmSync(tmp, { recursive: true, force: true });
  }
}

async function main(): Promise<void> {
  const costs = parseLoadArgs(process.argv.slice(2));
  if (!costs) {
    process.stdout.write(USAGE);
    return;
  }
  const log = (line: string) => process.stderr.write(`${line}\n`);
  const reports: CostReport[] = [];
  for (const options of costs) reports.push(await runCost(options, log));
  const report: LoadReport = {
    machine: { cpu: cpus()[0]?.model ?? 'unknown', cores: cpus().length, node: process.version },
    costs: reports,
  };
  const md = renderMarkdown(report);
  const out = costs[0]!.out;
  mkdirSync(out, { recursive: true });
  writeFileSync(join(out, 'load.json'), `${JSON.stringify(report, null, 2)}\n`);
  const flags = process.argv.slice(2).filter((f) => f !== '--readme');
  writeFileSync(
    join(out, 'load.md'),
    `${md}\n\nCommand: \`npm run load${flags.length > 0 ? ` -- ${flags.join(' ')}` : ''}\`\n`,
  );
  process.stdout.write(`${md}\n`);
  if (process.argv.includes('--readme')) replaceReadmeBlock('bench:load', md);
}

if (isMain(import.meta.url)) {
  main().catch((err: unknown) => {
    process.stderr.write(`load failed: ${err instanceof Error ? err.message : String(err)}\n`);
    process.exit(1);
  });
}
