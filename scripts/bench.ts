/**
 * Core latency benchmark. Starts the server (as `npm start` would) on two stand-in models generated
 * here — the fast one (`--repeat 30`, a GPU's order of time per sentence) and a real-cost one
 * (`--repeat 1000`, about a second of model time per sentence on two CPU cores) — or on a real model
 * directory, and measures on each, side by side in one run:
 *
 *  1. POST time to first audio of a long first sentence (five commas) vs its first clause alone,
 *     with the default early release of the first chunk and with `"first_chunk":"sentence"`;
 *  2. POST time to first audio of a 4-sentence paragraph vs its first sentence alone;
 *  3. the completion of one 8-sentence POST vs the ideal: the model time of each of its chunks
 *     alone (measured in the same trial, just before), summed, divided by the workers; on the
 *     default LOOKAHEAD_SENTENCES and, on a second server process, on LOOKAHEAD_SENTENCES=0;
 *  4. playback stalls of those POSTs for a client that plays from its first byte in real time;
 *  5. the server's overhead: from a WS message arriving to its first audio frame leaving, minus
 *     the model's run time for that first chunk (and minus the text front end too);
 *  6. GET /ping latency while every inference worker is busy (fast model only).
 *
 * Usage: npm run bench -- [options] (see --help)
 */
import { mkdtempSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseConfig } from '../server/config.ts';
import { measureServer } from './lib/bench-core.ts';
import {
  evaluateCore,
  renderCore,
  summarizeModel,
  type CoreReport,
  type ModelRun,
  type ServerRaw,
} from './lib/bench-core-report.ts';
import { UsageError, intFlag, parseFlags, runMain } from './lib/cli.ts';
import { startServerProcess } from './lib/server-process.ts';
import { writeStandinModelDir } from './lib/standin-model.ts';
import { replaceReadmeBlock } from './lib/stats.ts';

const USAGE = `Usage: npm run bench -- [options]

Options:
  --trials N          trials of each POST on the fast stand-in (default 15)
  --repeat N          compute of the fast stand-in (default 30: about 30 ms per sentence here)
  --slow-trials N     trials of each POST on the real-cost stand-in (default 5)
  --slow-repeat N     compute of the real-cost stand-in (default 1000: about a second per sentence
                      on two cores); 0 skips it
  --workers N         inference workers (KOKORO_WORKERS, default 2)
  --no-baseline       skip the second server with LOOKAHEAD_SENTENCES=0
  --model-dir DIR     measure this model directory instead of the two stand-ins
  --out DIR           where core.json and core.md go (default docs/bench)
  --readme            also write the tables into README.md between <!-- bench:core --> markers
  -h, --help          show this help
`;

interface Cost {
  readonly label: string;
  /** A generated stand-in's --repeat, or the model directory to use. */
  readonly source: { repeat: number } | { dir: string };
  readonly trials: number;
  /** Rounds of the overhead requests, and whether /ping is measured. */
  readonly rounds: number;
  readonly ping: boolean;
}

/** Both servers (default look-ahead, then LOOKAHEAD_SENTENCES=0) on one model. */
async function benchModel(
  cost: Cost,
  modelDir: string,
  options: { workers: number; baseline: boolean },
  log: (line: string) => void,
): Promise<ModelRun> {
  // The server's own defaults, set explicitly so that nothing in this shell's environment changes them.
  const defaults = parseConfig({ KOKORO_MODEL_DIR: modelDir });
  const base = {
    KOKORO_MODEL_DIR: modelDir,
    KOKORO_WORKERS: String(options.workers),
    FIRST_CHUNK_MIN_CHARS: String(defaults.firstChunkMinChars),
    LOG_LEVEL: 'warn',
  };
  const lookaheads = [defaults.lookaheadSentences, ...(options.baseline ? [0] : [])];
  const servers: ServerRaw[] = [];
  for (const [i, lookahead] of lookaheads.entries()) {
    log(`${cost.label}: starting the server with LOOKAHEAD_SENTENCES=${lookahead}…`);
    const server = await startServerProcess({ ...base, LOOKAHEAD_SENTENCES: String(lookahead) });
    try {
      servers.push(
        await measureServer(server, lookahead, {
          trials: cost.trials,
          firstChunkMinChars: defaults.firstChunkMinChars,
          full: i === 0,
          overheadRounds: cost.rounds,
          pingWorkers: cost.ping ? options.workers : 0,
          log,
        }),
      );
    } finally {
      await server.stop();
    }
  }
  return { model: cost.label, trials: cost.trials, servers };
}

async function main(): Promise<number> {
  let values;
  try {
    values = parseFlags(process.argv.slice(2), {
      trials: { type: 'string' },
      repeat: { type: 'string' },
      'slow-trials': { type: 'string' },
      'slow-repeat': { type: 'string' },
      workers: { type: 'string' },
      'no-baseline': { type: 'boolean', default: false },
      'model-dir': { type: 'string' },
      out: { type: 'string', default: 'docs/bench' },
      readme: { type: 'boolean', default: false },
      help: { type: 'boolean', short: 'h', default: false },
    });
  } catch (err) {
    if (!(err instanceof UsageError)) throw err;
    process.stderr.write(`${err.message}\n\n${USAGE}`);
    return 2;
  }
  if (values.help) {
    process.stdout.write(USAGE);
    return 0;
  }
  let trials, repeat, slowTrials, slowRepeat, workers;
  try {
    trials = intFlag('trials', values.trials, 15, 1, 1000);
    repeat = intFlag('repeat', values.repeat, 30, 1, 10_000);
    slowTrials = intFlag('slow-trials', values['slow-trials'], 5, 1, 1000);
    slowRepeat = intFlag('slow-repeat', values['slow-repeat'], 1000, 0, 10_000);
    workers = intFlag('workers', values.workers, 2, 1, 64);
  } catch (err) {
    if (!(err instanceof UsageError)) throw err;
    process.stderr.write(`${err.message}\n`);
    return 2;
  }
  const log = (line: string) => process.stderr.write(`${line}\n`);
  const modelDir = values['model-dir'];
  const costs: Cost[] = modelDir
    ? [
        {
          label: modelDir,
          source: { dir: modelDir },
          trials,
          rounds: Math.max(2, Math.ceil(trials / 2)),
          ping: true,
        },
      ]
    : [
        {
          label: `stand-in (--repeat ${repeat})`,
          source: { repeat },
          trials,
          rounds: Math.max(2, Math.ceil(trials / 2)),
          ping: true,
        },
        ...(slowRepeat > 0
          ? [
              {
                label: `stand-in (--repeat ${slowRepeat})`,
                source: { repeat: slowRepeat },
                trials: slowTrials,
                rounds: 2,
                ping: false,
              },
            ]
          : []),
      ];

  const runs: ModelRun[] = [];
  for (const cost of costs) {
    let tmp: string | undefined;
    try {
      let dir: string;
      if ('dir' in cost.source) dir = cost.source.dir;
      else {
        tmp = mkdtempSync(join(tmpdir(), 'kokoro-bench-'));
        dir = tmp;
        log(`generating a stand-in model with --repeat ${cost.source.repeat} in ${tmp}`);
        await writeStandinModelDir(tmp, { repeat: cost.source.repeat, log: () => {} });
      }
      runs.push(await benchModel(cost, dir, { workers, baseline: !values['no-baseline'] }, log));
    } finally {
      if (tmp) rmSync(tmp, { recursive: true, force: true });
    }
  }

  const summaries = runs.map((r) => summarizeModel(r, workers));
  const report: CoreReport = {
    machine: { cpu: cpus()[0]?.model ?? 'unknown', cores: cpus().length, node: process.version },
    workers,
    defaultLookahead: runs[0]?.servers[0]?.lookahead ?? NaN,
    summaries,
    targets: evaluateCore(summaries),
    runs,
  };
  const md = renderCore(report);
  mkdirSync(values.out, { recursive: true });
  writeFileSync(join(values.out, 'core.json'), `${JSON.stringify(report, null, 2)}\n`);
  const flags = process.argv.slice(2).filter((f) => f !== '--readme');
  writeFileSync(
    join(values.out, 'core.md'),
    `${md}\n\nCommand: \`npm run bench${flags.length > 0 ? ` -- ${flags.join(' ')}` : ''}\`\n`,
  );
  if (values.readme) replaceReadmeBlock('bench:core', md);
  process.stdout.write(`${md}\n`);
  return 0;
}

runMain(import.meta.url, 'bench', main);
