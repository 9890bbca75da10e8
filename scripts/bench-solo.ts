/**
 * The solo session against the pool as it was: our server with `KOKORO_SOLO_THREADS=0` (before)
 * and on its defaults (solo on), side by side on the same machine and client, one server at a time,
 * alternating which goes first, on the fast fixture and on a real-cost stand-in (`--repeat 1000`).
 * Measured on each: first audio and total time of one sentence, total time of 8 sentences, 8
 * concurrent clients × 3 paragraphs (p95 first audio and audio seconds per wall second), and /ping
 * p99 while 4 streams run. What a lone request gains must not cost the busy server anything.
 *
 * Usage: node dist/scripts/bench-solo.js [--trials N] [--repeat-slow N] [--readme]
 */
import { mkdtempSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { EIGHT_SENTENCES, PARAGRAPH } from './lib/bench-texts.ts';
import { UsageError, intFlag, parseFlags, runMain } from './lib/cli.ts';
import { concurrentClients, load1, pingWhileStreaming, postPcm } from './lib/peer-client.ts';
import { projectPath } from './lib/paths.ts';
import { startServerProcess } from './lib/server-process.ts';
import { writeStandinModelDir } from './lib/standin-model.ts';
import { markdownTable, median, quantile, replaceReadmeBlock, round } from './lib/stats.ts';

const USAGE = `Usage: node dist/scripts/bench-solo.js [options]

  --trials N        trials per model (default 2); each runs both configurations, alternating the first
  --repeat-slow N   compute of the real-cost stand-in (default 1000); 0 skips it
  --readme          also write the table into README.md between <!-- bench:solo --> markers
  -h, --help        this text`;

const SINGLE = PARAGRAPH[1]!;
const EIGHT = EIGHT_SENTENCES.join(' ');
const CONFIGS = { before: { KOKORO_SOLO_THREADS: '0' }, solo: {} } as const;
type ConfigName = keyof typeof CONFIGS;

interface Figures {
  readonly singleTtfaMs: number;
  readonly singleTotalMs: number;
  readonly eightTotalMs: number;
  readonly concurrentP95Ms: number;
  readonly audioPerWallS: number;
  readonly pingP99Ms: number;
  readonly load1: number;
}

async function measure(modelDir: string, config: ConfigName, singles: number): Promise<Figures> {
  const server = await startServerProcess({
    KOKORO_MODEL_DIR: modelDir,
    LOG_LEVEL: 'warn',
    ...CONFIGS[config],
  });
  try {
    for (const text of [SINGLE, EIGHT, SINGLE]) await postPcm(server.http, text); // warm
    const load = load1();
    const single = [];
    for (let i = 0; i < singles; i++) single.push(await postPcm(server.http, SINGLE));
    const eight = [];
    for (let i = 0; i < Math.max(1, Math.floor(singles / 2)); i++)
      eight.push(await postPcm(server.http, EIGHT));
    const concurrent = await concurrentClients(server.http);
    const ping = await pingWhileStreaming(server.http);
    return {
      singleTtfaMs: median(single.map((r) => r.ttfaMs)),
      singleTotalMs: median(single.map((r) => r.totalMs)),
      eightTotalMs: median(eight.map((r) => r.totalMs)),
      concurrentP95Ms: quantile(concurrent.ttfaMs, 0.95),
      audioPerWallS: concurrent.audioPerWallS,
      pingP99Ms: quantile(ping.latencies, 0.99),
      load1: load,
    };
  } finally {
    await server.stop();
  }
}

/** Each measure: its label, and whether higher is better. */
const MEASURES: readonly { key: Exclude<keyof Figures, 'load1'>; label: string; higherIsBetter: boolean }[] =
  [
    { key: 'singleTtfaMs', label: 'first audio, 1 sentence (ms)', higherIsBetter: false },
    { key: 'singleTotalMs', label: 'total, 1 sentence (ms)', higherIsBetter: false },
    { key: 'eightTotalMs', label: 'total, 8 sentences (ms)', higherIsBetter: false },
    {
      key: 'concurrentP95Ms',
      label: '8 clients × 3 paragraphs: p95 first audio (ms)',
      higherIsBetter: false,
    },
    { key: 'audioPerWallS', label: '8 clients × 3 paragraphs: audio s per wall s', higherIsBetter: true },
    { key: 'pingP99Ms', label: 'GET /ping p99, 4 streams (ms)', higherIsBetter: false },
  ];

/** Before ÷ solo for times, solo ÷ before for throughput: above 1, solo is better. */
const gain = (higherIsBetter: boolean, before: number, solo: number) =>
  higherIsBetter ? solo / before : before / solo;

export async function main(argv: readonly string[]): Promise<number> {
  let trials: number;
  let repeatSlow: number;
  let readme: boolean;
  try {
    const flags = parseFlags(argv, {
      trials: { type: 'string' },
      'repeat-slow': { type: 'string' },
      readme: { type: 'boolean' },
      help: { type: 'boolean', short: 'h' },
    });
    if (flags.help) {
      console.log(USAGE);
      return 0;
    }
    trials = intFlag('trials', flags.trials, 2, 1);
    repeatSlow = intFlag('repeat-slow', flags['repeat-slow'], 1000, 0);
    readme = flags.readme === true;
  } catch (err) {
    if (!(err instanceof UsageError)) throw err;
    console.error(`error: ${err.message}\n\n${USAGE}`);
    return 2;
  }

  const tmp = mkdtempSync(join(tmpdir(), 'kokoro-bench-solo-'));
  const costs: { name: string; dir: string; singles: number }[] = [
    { name: 'fast (fixture)', dir: projectPath('test', 'fixtures', 'standin-model'), singles: 6 },
  ];
  try {
    if (repeatSlow > 0) {
      console.error(`generating the real-cost stand-in (--repeat ${repeatSlow})…`);
      await writeStandinModelDir(tmp, { repeat: repeatSlow, log: () => {} });
      costs.push({ name: `real cost (--repeat ${repeatSlow})`, dir: tmp, singles: 4 });
    }
    const results: Record<string, Record<ConfigName, Figures[]>> = {};
    for (const cost of costs) {
      results[cost.name] = { before: [], solo: [] };
      for (let t = 0; t < trials; t++) {
        const order: ConfigName[] = t % 2 === 0 ? ['before', 'solo'] : ['solo', 'before'];
        for (const config of order) {
          console.error(`${cost.name}, trial ${t + 1}: ${config}…`);
          results[cost.name]![config].push(await measure(cost.dir, config, cost.singles));
        }
      }
    }

    const med = (figures: Figures[], key: keyof Figures) => median(figures.map((f) => f[key]));
    const rows = MEASURES.map(({ key, label, higherIsBetter }) => [
      label,
      ...costs.flatMap((cost) => {
        const { before, solo } = results[cost.name]!;
        const b = med(before, key);
        const s = med(solo, key);
        return [`${round(b, 2)} / ${round(s, 2)}`, round(gain(higherIsBetter, b, s), 2)];
      }),
    ]);
    const loads = costs
      .map((cost) => {
        const { before, solo } = results[cost.name]!;
        return `${cost.name}: ${round(med(before, 'load1'), 2)} / ${round(med(solo, 'load1'), 2)}`;
      })
      .join('; ');
    const table = markdownTable(
      ['measure', ...costs.flatMap((c) => [`${c.name}: before / solo`, `${c.name}: gain`])],
      rows,
    );
    const text = `${table}\n\n${cpus().length} cores, medians of ${trials} alternating trials; gain above 1: solo is better (before ÷ solo for times, solo ÷ before for throughput). 1-minute load average before each measurement, before / solo: ${loads}.`;
    console.log(text);
    mkdirSync(projectPath('docs', 'bench'), { recursive: true });
    writeFileSync(
      projectPath('docs', 'bench', 'solo.json'),
      `${JSON.stringify({ trials, results }, null, 2)}\n`,
    );
    if (readme) replaceReadmeBlock('bench:solo', text);
    return 0;
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
}

runMain(import.meta.url, 'bench-solo', () => main(process.argv.slice(2)));
