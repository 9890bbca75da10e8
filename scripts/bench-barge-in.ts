/**
 * Barge-in benchmark: how soon a cancel is answered. Starts the server (as `npm start` would, with
 * info logging) on the committed stand-in fixture, then on a slow stand-in (`--repeat 1000`, about a
 * second of model time per sentence on two cores), and on each measures side by side in one run:
 *
 *  1. idle: one session sends a twelve-sentence answer and, the moment its first audio frame
 *     arrives, `{"type":"cancel"}`. Server side, `ackMs` of its 'cancel acknowledged' log line (the
 *     cancel's arrival to synthesis_cancelled leaving); client side, sending the cancel to receiving
 *     synthesis_cancelled. Each trial starts with every worker idle.
 *  2. under load: the same while `--load` other sessions keep every worker busy, each sending one
 *     sentence after another.
 *
 * The target is at most one chunk's model time plus 5 ms. The chunk time comes from the same run:
 * inference_s / chunks of completed requests (reference requests on the measuring session when
 * idle, the load sessions' requests under load), as synthesis_complete reports them.
 *
 * Usage: npm run bench:barge-in -- [--trials 20] [--slow-trials 5] [--repeat 1000] [--workers 2]
 *          [--load 4] [--out docs/bench] [--readme]
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  LoadSessions,
  SENTENCES,
  attachAcks,
  cancelTrial,
  collectLogLines,
  completeRequest,
  waitIdle,
  type ChunkFigures,
  type Trial,
} from './lib/barge-in.ts';
import { UsageError, intFlag, parseFlags, runMain } from './lib/cli.ts';
import { projectPath } from './lib/paths.ts';
import { RawWsSession } from './lib/raw-ws.ts';
import { startServerProcess } from './lib/server-process.ts';
import { writeStandinModelDir } from './lib/standin-model.ts';
import { markdownTable, median, quantile, replaceReadmeBlock, round } from './lib/stats.ts';

const USAGE = `Usage: npm run bench:barge-in -- [options]

Options:
  --trials N        cancels per condition on the stand-in fixture (default 20)
  --slow-trials N   cancels per condition on the slow stand-in; 0 skips it (default 5, at most --trials)
  --repeat N        compute of the slow stand-in (default 1000: about a second per sentence on 2 cores)
  --workers N       inference workers (KOKORO_WORKERS, default 2)
  --load N          sessions keeping the workers busy under load (default 2 × workers)
  --out DIR         where barge-in.json and barge-in.md go (default docs/bench)
  --readme          also write the table into README.md between <!-- bench:barge-in --> markers
  -h, --help        show this help
`;

/** Completed requests per model that say what one chunk of model time is when idle. */
const REFERENCES = 4;
/** The allowance on top of one chunk's model time. */
const TARGET_SLACK_MS = 5;

interface Condition {
  condition: 'idle' | 'under load';
  sent: number;
  /** Cancels that cut a request still running; only these count in the figures. */
  cut: number;
  ackMs: { median: number; p95: number };
  clientMs: { median: number; p95: number };
  /** Median model time of one chunk (inference_s / chunks) over `completions` completed requests. */
  chunkMs: number;
  firstChunkMs: number;
  completions: number;
  targetMs: number;
  withinTarget: boolean;
  raw: { ackMs: number[]; clientMs: number[]; chunkMs: number[] };
}

function summarize(
  condition: Condition['condition'],
  trials: readonly Trial[],
  chunks: readonly ChunkFigures[],
) {
  const cut = trials.filter((t) => t.cut);
  const ack = cut.map((t) => t.ackMs ?? NaN);
  const client = cut.map((t) => t.clientMs);
  const chunkMs = median(chunks.map((c) => c.perChunkMs));
  const targetMs = chunkMs + TARGET_SLACK_MS;
  return {
    condition,
    sent: trials.length,
    cut: cut.length,
    ackMs: { median: round(median(ack), 2), p95: round(quantile(ack, 0.95), 2) },
    clientMs: { median: round(median(client), 2), p95: round(quantile(client, 0.95), 2) },
    chunkMs: round(chunkMs, 2),
    firstChunkMs: round(median(chunks.map((c) => c.firstChunkMs)), 2),
    completions: chunks.length,
    targetMs: round(targetMs, 2),
    withinTarget: quantile(ack, 0.95) <= targetMs,
    raw: {
      ackMs: ack,
      clientMs: client.map((x) => round(x, 3)),
      chunkMs: chunks.map((c) => round(c.perChunkMs, 3)),
    },
  } satisfies Condition;
}

/** Both conditions on one model: one server, one measuring session. */
async function benchModel(
  modelDir: string,
  options: { trials: number; workers: number; load: number },
  log: (line: string) => void,
): Promise<{ conditions: Condition[]; loadErrors: number }> {
  const server = await startServerProcess({
    KOKORO_MODEL_DIR: modelDir,
    KOKORO_WORKERS: String(options.workers),
    LOG_LEVEL: 'info',
  });
  const lines = collectLogLines(server.child);
  try {
    const session = await RawWsSession.open(server.ws);
    const references: ChunkFigures[] = [];
    for (let i = 0; i < REFERENCES; i++)
      references.push(await completeRequest(session, SENTENCES[i % SENTENCES.length]!, `ref${i}`));

    log(`  idle: ${options.trials} cancels…`);
    const idle: Trial[] = [];
    for (let i = 0; i < options.trials; i++) {
      await waitIdle(server.http);
      idle.push(await cancelTrial(session, `idle${i}`));
    }

    log(`  under load (${options.load} sessions): ${options.trials} cancels…`);
    const load = await LoadSessions.start(server.ws, options.load);
    while (load.completed < options.load) await new Promise((r) => setTimeout(r, 20));
    load.recording = true;
    const loaded: Trial[] = [];
    for (let i = 0; i < options.trials; i++) loaded.push(await cancelTrial(session, `busy${i}`));
    load.recording = false;
    await load.stop();
    await session.close();
    await attachAcks(lines, [...idle, ...loaded]);
    return {
      conditions: [summarize('idle', idle, references), summarize('under load', loaded, load.completions)],
      loadErrors: load.errors,
    };
  } finally {
    await server.stop();
  }
}

async function main(argv: readonly string[]): Promise<number> {
  let values;
  let trials: number, slowTrials: number, repeat: number, workers: number, load: number;
  try {
    values = parseFlags(argv, {
      trials: { type: 'string' },
      'slow-trials': { type: 'string' },
      repeat: { type: 'string' },
      workers: { type: 'string' },
      load: { type: 'string' },
      out: { type: 'string', default: 'docs/bench' },
      readme: { type: 'boolean', default: false },
      help: { type: 'boolean', short: 'h' },
    });
    trials = intFlag('trials', values.trials, 20, 1);
    slowTrials = intFlag('slow-trials', values['slow-trials'], Math.min(5, trials), 0);
    repeat = intFlag('repeat', values.repeat, 1000, 1);
    workers = intFlag('workers', values.workers, 2, 1, 64);
    load = intFlag('load', values.load, 2 * workers, 1);
  } catch (err) {
    if (!(err instanceof UsageError)) throw err;
    process.stderr.write(`bench-barge-in: ${err.message}\nRun with --help for usage.\n`);
    return 2;
  }
  if (values.help) {
    process.stdout.write(USAGE);
    return 0;
  }
  const log = (line: string) => process.stderr.write(`${line}\n`);
  const tmp = mkdtempSync(join(tmpdir(), 'kokoro-barge-in-'));
  try {
    const models = [
      { model: 'stand-in fixture', dir: projectPath('test', 'fixtures', 'standin-model'), trials },
      ...(slowTrials > 0 ? [{ model: `stand-in (--repeat ${repeat})`, dir: tmp, trials: slowTrials }] : []),
    ];
    if (slowTrials > 0) {
      log(`generating a stand-in model with --repeat ${repeat} in ${tmp}`);
      await writeStandinModelDir(tmp, { repeat, log: () => {} });
    }
    const runs = [];
    for (const [i, m] of models.entries()) {
      log(`${i + 1}/${models.length} ${m.model}: starting the server…`);
      runs.push({
        model: m.model,
        trials: m.trials,
        ...(await benchModel(m.dir, { trials: m.trials, workers, load }, log)),
      });
    }

    const result = {
      machine: { cpu: cpus()[0]?.model ?? 'unknown', cores: cpus().length, node: process.version },
      workers,
      loadSessions: load,
      answerSentences: SENTENCES.length * 3,
      targetSlackMs: TARGET_SLACK_MS,
      models: runs,
    };
    const md = [
      `Machine: ${result.machine.cpu}, ${result.machine.cores} cores, Node ${result.machine.node}. ${workers} workers; under load, ${load} more sessions each send one sentence after another. Each cancel is sent as the first audio frame of a ${result.answerSentences}-sentence answer arrives; only cancels that cut a running request count. One chunk: median inference_s / chunks of requests completed in the same condition.`,
      '',
      markdownTable(
        [
          'model',
          'condition',
          'cancels (cut / sent)',
          'server: arrival → answer sent, median / p95 (ms)',
          'client: cancel sent → synthesis_cancelled, median / p95 (ms)',
          'one chunk’s model time, median (ms)',
          `target: one chunk + ${TARGET_SLACK_MS} ms`,
          'server p95 within target',
        ],
        runs.flatMap((r) =>
          r.conditions.map((c) => [
            r.model,
            c.condition,
            `${c.cut} / ${c.sent}`,
            `${c.ackMs.median} / ${c.ackMs.p95}`,
            `${c.clientMs.median} / ${c.clientMs.p95}`,
            c.chunkMs,
            c.targetMs,
            c.withinTarget ? 'yes' : 'no',
          ]),
        ),
      ),
    ].join('\n');
    mkdirSync(values.out, { recursive: true });
    writeFileSync(join(values.out, 'barge-in.json'), `${JSON.stringify(result, null, 2)}\n`);
    writeFileSync(join(values.out, 'barge-in.md'), `${md}\n\nCommand: \`npm run bench:barge-in\`\n`);
    process.stdout.write(`${md}\n`);
    if (values.readme) replaceReadmeBlock('bench:barge-in', md);
    return 0;
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
}

runMain(import.meta.url, 'bench-barge-in', () => main(process.argv.slice(2)));
