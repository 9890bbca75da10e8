/**
 * Core latency benchmark. Starts the server (as `npm start` would) on a stand-in model with
 * realistic compute, or on a real model directory, and measures side by side in one run:
 *
 *  1. POST time to first audio: a 4-sentence paragraph vs its first sentence alone (ratio).
 *  2. Server overhead: from a WS message arriving to its first audio frame leaving, minus the
 *     model's run time for that first chunk (and, separately, minus the text front end too).
 *  3. GET /ping latency while every inference worker is busy.
 *
 * Usage: npm run bench -- [--trials 15] [--repeat 30] [--workers 2] [--model-dir DIR] [--out docs/bench] [--readme]
 */
import { mkdtempSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import WebSocket from 'ws';
import { writeStandinModelDir } from './lib/standin-model.ts';
import { timePost } from './lib/http-timing.ts';
import { startServerProcess, type ServerProcess } from './lib/server-process.ts';
import { markdownTable, median, quantile, replaceReadmeBlock, round } from './lib/stats.ts';
import { isMain } from './lib/cli.ts';

export const PARAGRAPH = [
  'Thanks for waiting, I found three flights that match your dates and budget.',
  'The earliest leaves at seven fifteen in the morning and lands just after noon.',
  'A later option departs at two and costs about forty dollars less.',
  'Would you like me to hold a seat on either one while you decide?',
];

interface Completion {
  clientTtfaMs: number;
  serverTtfaMs: number;
  firstInferenceMs: number;
  firstFrontEndMs: number;
}

/** Sends one request over an open session and waits for its completion frame. */
function wsRequest(socket: WebSocket, text: string, id: string): Promise<Completion> {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    let firstAudio: number | undefined;
    const onMessage = (data: Buffer, isBinary: boolean) => {
      if (isBinary) {
        firstAudio ??= performance.now() - started;
        return;
      }
      const m = JSON.parse(data.toString()) as Record<string, number | string>;
      if (m.request_id !== id) return;
      if (m.type === 'error') reject(new Error(String(m.message)));
      if (m.type !== 'synthesis_complete') return;
      socket.off('message', onMessage);
      resolve({
        clientTtfaMs: firstAudio ?? NaN,
        serverTtfaMs: Number(m.time_to_first_audio_s) * 1000,
        firstInferenceMs: Number(m.first_chunk_inference_s) * 1000,
        firstFrontEndMs: Number(m.first_chunk_frontend_s) * 1000,
      });
    };
    socket.on('message', onMessage);
    socket.send(Buffer.from(JSON.stringify({ text, request_id: id, request_timestamp: Date.now() / 1000 })));
  });
}

function openSocket(url: string): Promise<WebSocket> {
  return new Promise((resolve, reject) => {
    const s = new WebSocket(url);
    s.once('open', () => resolve(s));
    s.once('error', reject);
  });
}

async function pingUnderLoad(
  server: ServerProcess,
  workers: number,
): Promise<{ latencies: number[]; busySeen: number }> {
  const long = Array.from({ length: 3 }, () => PARAGRAPH.join(' ')).join(' ');
  const sockets = await Promise.all(Array.from({ length: workers * 2 }, () => openSocket(server.ws)));
  let remaining = sockets.length * 2;
  const done = new Promise<void>((resolve) => {
    for (const s of sockets) {
      s.on('message', (data: Buffer, isBinary: boolean) => {
        if (
          !isBinary &&
          (JSON.parse(data.toString()) as { type: string }).type === 'synthesis_complete' &&
          --remaining === 0
        )
          resolve();
      });
      for (let i = 0; i < 2; i++) s.send(Buffer.from(JSON.stringify({ text: long })));
    }
  });
  const latencies: number[] = [];
  let busySeen = 0;
  let finished = false;
  void done.then(() => (finished = true));
  while (!finished) {
    const t = performance.now();
    const res = await fetch(`${server.http}/ping`);
    const body = (await res.json()) as { busy: number };
    const ms = performance.now() - t;
    // Only pings taken while every worker was busy count.
    if (body.busy >= workers) {
      latencies.push(ms);
      busySeen++;
    }
    await new Promise((r) => setTimeout(r, 10));
  }
  for (const s of sockets) s.close();
  return { latencies, busySeen };
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      trials: { type: 'string', default: '15' },
      repeat: { type: 'string', default: '30' },
      workers: { type: 'string', default: '2' },
      'model-dir': { type: 'string' },
      out: { type: 'string', default: 'docs/bench' },
      readme: { type: 'boolean', default: false },
      help: { type: 'boolean', short: 'h' },
    },
  });
  if (values.help) {
    process.stdout.write(
      'Usage: npm run bench -- [--trials 15] [--repeat 30] [--workers 2] [--model-dir DIR] [--out docs/bench] [--readme]\n',
    );
    return;
  }
  const trials = Number(values.trials);
  const workers = Number(values.workers);
  let modelDir = values['model-dir'];
  let tmp: string | undefined;
  if (!modelDir) {
    tmp = mkdtempSync(join(tmpdir(), 'kokoro-bench-'));
    modelDir = tmp;
    process.stderr.write(`generating a stand-in model with --repeat ${values.repeat} in ${tmp}\n`);
    await writeStandinModelDir(tmp, { repeat: Number(values.repeat), log: () => {} });
  }

  process.stderr.write('starting the server…\n');
  const server = await startServerProcess({
    KOKORO_MODEL_DIR: modelDir,
    KOKORO_WORKERS: String(workers),
    LOG_LEVEL: 'warn',
  });
  try {
    // Warm both paths once.
    await timePost(server.http, { text: PARAGRAPH[0]! });
    await timePost(server.http, { text: PARAGRAPH.join(' ') });

    process.stderr.write(`1/3 POST time to first audio, ${trials} trials each, alternating…\n`);
    const single: number[] = [];
    const paragraph: number[] = [];
    for (let i = 0; i < trials; i++) {
      single.push((await timePost(server.http, { text: PARAGRAPH[0]! })).ttfaMs);
      paragraph.push((await timePost(server.http, { text: PARAGRAPH.join(' ') })).ttfaMs);
    }

    process.stderr.write('2/3 WS server overhead, one request at a time…\n');
    const socket = await openSocket(server.ws);
    const completions: Completion[] = [];
    const sentences = [
      ...PARAGRAPH,
      'Sure, I can help with that.',
      'Your package should arrive on Tuesday afternoon.',
    ];
    for (let round_ = 0; round_ < Math.max(2, Math.ceil(trials / 2)); round_++) {
      for (const [i, s] of sentences.entries())
        completions.push(await wsRequest(socket, s, `o${round_}-${i}`));
    }
    socket.close();
    const overheadModel = completions.map((c) => c.serverTtfaMs - c.firstInferenceMs);
    const overheadAll = completions.map((c) => c.serverTtfaMs - c.firstInferenceMs - c.firstFrontEndMs);

    process.stderr.write('3/3 GET /ping while every worker is busy…\n');
    const ping = await pingUnderLoad(server, workers);

    const result = {
      machine: { cpu: cpus()[0]?.model ?? 'unknown', cores: cpus().length, node: process.version },
      model: tmp ? `stand-in (--repeat ${values.repeat})` : modelDir,
      workers,
      trials,
      postTtfa: {
        singleMedianMs: round(median(single)),
        paragraphMedianMs: round(median(paragraph)),
        ratio: round(median(paragraph) / median(single), 3),
      },
      overhead: {
        requests: completions.length,
        medianInferenceMs: round(median(completions.map((c) => c.firstInferenceMs)), 2),
        medianFrontEndMs: round(median(completions.map((c) => c.firstFrontEndMs)), 2),
        medianServerTtfaMs: round(median(completions.map((c) => c.serverTtfaMs)), 2),
        medianMinusInferenceMs: round(median(overheadModel), 2),
        medianMinusInferenceAndFrontEndMs: round(median(overheadAll), 2),
        p95MinusInferenceAndFrontEndMs: round(quantile(overheadAll, 0.95), 2),
      },
      pingWhileBusy: {
        samples: ping.latencies.length,
        p50Ms: round(median(ping.latencies), 2),
        p99Ms: round(quantile(ping.latencies, 0.99), 2),
        maxMs: round(Math.max(...ping.latencies), 2),
      },
    };

    const md = [
      `Machine: ${result.machine.cpu}, ${result.machine.cores} cores, Node ${result.machine.node}. Model: ${result.model}, ${workers} workers.`,
      '',
      markdownTable(
        ['measure', 'value'],
        [
          ['POST time to first audio, first sentence alone (median)', `${result.postTtfa.singleMedianMs} ms`],
          [
            'POST time to first audio, 4-sentence paragraph (median)',
            `${result.postTtfa.paragraphMedianMs} ms`,
          ],
          ['ratio paragraph / sentence (target ≤ 1.10)', result.postTtfa.ratio],
          ['first chunk: model run time (median)', `${result.overhead.medianInferenceMs} ms`],
          [
            'first chunk: text front end, normalize + espeak (median)',
            `${result.overhead.medianFrontEndMs} ms`,
          ],
          [
            'arrival → first frame sent, minus model run time (median)',
            `${result.overhead.medianMinusInferenceMs} ms`,
          ],
          [
            '… minus model and front end: queueing, transfer, encoding, send (median / p95; target ≤ 2 ms)',
            `${result.overhead.medianMinusInferenceAndFrontEndMs} / ${result.overhead.p95MinusInferenceAndFrontEndMs} ms`,
          ],
          [
            `GET /ping while all ${workers} workers busy: p50 / p99 / max (${result.pingWhileBusy.samples} pings; target p99 < 50 ms)`,
            `${result.pingWhileBusy.p50Ms} / ${result.pingWhileBusy.p99Ms} / ${result.pingWhileBusy.maxMs} ms`,
          ],
        ],
      ),
    ].join('\n');
    mkdirSync(values.out!, { recursive: true });
    writeFileSync(join(values.out!, 'core.json'), `${JSON.stringify(result, null, 2)}\n`);
    writeFileSync(join(values.out!, 'core.md'), `${md}\n\nCommand: \`npm run bench\`\n`);
    if (values.readme) replaceReadmeBlock('bench:core', md);
    process.stdout.write(`${md}\n`);
  } finally {
    await server.stop();
    if (tmp) rmSync(tmp, { recursive: true, force: true });
  }
}

if (isMain(import.meta.url)) {
  main().catch((err: unknown) => {
    process.stderr.write(`bench failed: ${err instanceof Error ? err.message : String(err)}\n`);
    process.exit(1);
  });
}
