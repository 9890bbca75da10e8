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
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { writeStandinModelDir } from './lib/standin-model.ts';
import { startServerProcess, type ServerProcess } from './lib/server-process.ts';
import { replaceReadmeBlock } from './lib/stats.ts';
import { isMain } from './lib/cli.ts';

import {
  type LoadReport,
  type RawResult,
  type RoundResult,
  SENTENCES,
  USAGE,
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
  type Target,
  measureRaw,
  openSocket,
  postOnce,
  runRound,
  stopServer,
  wsSession,
} from './lib/load-traffic.ts';

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
