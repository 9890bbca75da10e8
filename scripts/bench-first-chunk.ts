/**
 * The first-chunk budget (FIRST_CHUNK_BUDGET_MS): a whole text's first sentence is cut at a clause
 * mark only when synthesizing it whole would take longer than the budget. Side by side on one
 * server per setting: the budget at 0 (always cut, the old rule) and at `--budget` (default 250),
 * on the committed stand-in (fast) and on a stand-in with `--repeat N` (about a second per
 * sentence on two cores), each POST a text whose long first sentence has an early comma. Reports
 * the time to the first audio byte (PCM, so no header comes first) and whether the first
 * sentence was cut (one more inference run than sentences).
 *
 * Usage: node dist/scripts/bench-first-chunk.js [--trials 5] [--budget 250] [--repeat 1000]
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { UsageError, intFlag, parseFlags, runMain } from './lib/cli.ts';
import { timePost } from './lib/http-timing.ts';
import { projectPath } from './lib/paths.ts';
import { startServerProcess } from './lib/server-process.ts';
import { writeStandinModelDir } from './lib/standin-model.ts';
import { markdownTable, median, round } from './lib/stats.ts';

const USAGE = `Usage: node dist/scripts/bench-first-chunk.js [options]

  --trials N   requests per setting and model (default 5)
  --budget MS  the budget to compare with 0 (default 250)
  --repeat N   compute of the slow stand-in (default 1000; 0: skip it)
  -h, --help   this text`;

/** A first sentence of 120 characters with a comma at 37, then two more. */
const TEXT =
  'When you reach the station tomorrow, take the second exit on the left and walk straight on for about five minutes. ' +
  'The office is on the corner. Ring the bell twice.';

interface Figures {
  readonly ttfaMs: number[];
  readonly cut: number;
}

async function measure(modelDir: string, budget: number, trials: number): Promise<Figures> {
  const server = await startServerProcess({
    KOKORO_MODEL_DIR: modelDir,
    FIRST_CHUNK_BUDGET_MS: String(budget),
    LOG_LEVEL: 'info',
  });
  try {
    await timePost(server.http, { text: TEXT, format: 'pcm' }); // warm
    const ttfaMs: number[] = [];
    let cut = 0;
    for (let i = 0; i < trials; i++) {
      const before = server.logs().length;
      ttfaMs.push((await timePost(server.http, { text: TEXT, format: 'pcm' })).ttfaMs);
      await new Promise((r) => setTimeout(r, 100));
      const line = server
        .logs()
        .slice(before)
        .find((l) => l.msg === 'synthesized');
      // Three sentences of under 510 ids each: a fourth run is the first sentence's cut.
      if (line && (line.chunks as number) > 3) cut++;
    }
    return { ttfaMs, cut };
  } finally {
    await server.stop();
  }
}

async function main(): Promise<number> {
  let trials: number, budget: number, repeat: number;
  try {
    const values = parseFlags(process.argv.slice(2), {
      trials: { type: 'string' },
      budget: { type: 'string' },
      repeat: { type: 'string' },
      help: { type: 'boolean', short: 'h', default: false },
    });
    if (values.help) {
      process.stdout.write(`${USAGE}\n`);
      return 0;
    }
    trials = intFlag('trials', values.trials, 5, 1, 100);
    budget = intFlag('budget', values.budget, 250, 1, 60_000);
    repeat = intFlag('repeat', values.repeat, 1000, 0, 100_000);
  } catch (err) {
    if (!(err instanceof UsageError)) throw err;
    process.stderr.write(`${err.message}\n\n${USAGE}\n`);
    return 2;
  }
  const slowDir = mkdtempSync(join(tmpdir(), 'kokoro-first-chunk-'));
  try {
    const models: [string, string][] = [
      ['committed stand-in (fast)', projectPath('test', 'fixtures', 'standin-model')],
    ];
    if (repeat > 0) {
      await writeStandinModelDir(slowDir, { repeat, log: () => {} });
      models.push([`stand-in --repeat ${repeat}`, slowDir]);
    }
    const rows: string[][] = [];
    for (const [name, dir] of models) {
      for (const b of [0, budget]) {
        const f = await measure(dir, b, trials);
        process.stderr.write(`${name}, budget ${b} ms: ${f.ttfaMs.map((t) => round(t, 1)).join(', ')} ms\n`);
        rows.push([
          name,
          `${b} ms${b === 0 ? ' (always cut)' : ''}`,
          String(round(median(f.ttfaMs), 1)),
          `${f.cut} of ${trials}`,
        ]);
      }
    }
    process.stdout.write(
      `${markdownTable(['model', 'FIRST_CHUNK_BUDGET_MS', 'first audio, ms (median)', 'first sentence cut'], rows)}\n`,
    );
    return 0;
  } finally {
    rmSync(slowDir, { recursive: true, force: true });
  }
}

runMain(import.meta.url, 'bench-first-chunk', main);
