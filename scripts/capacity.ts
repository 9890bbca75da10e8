/**
 * Measures Q_max, the per-instance capacity the autoscaling plan is built on: the most concurrent
 * WebSocket sessions (or streaming POST clients) at which the p95 time to first audio stays within
 * an SLO, found by a closed-loop ladder and bisection (scripts/lib/capacity.ts). Against a URL, a
 * SageMaker endpoint (through the client toolkit), or a server it starts itself on a stand-in model.
 *
 * Usage: npm run capacity -- [options] (see --help)
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SENTENCES } from './lib/bench-texts.ts';
import {
  LADDER_DEFAULTS,
  httpUrlDriver,
  renderCapacity,
  runLadder,
  sageMakerHttpDriver,
  sageMakerWsDriver,
  wsUrlDriver,
  type Driver,
  type LadderOptions,
  type Transport,
} from './lib/capacity.ts';
import { UsageError, intFlag, parseFlags, runMain } from './lib/cli.ts';
import { projectPath } from './lib/paths.ts';
import { startServerProcess, type ServerProcess } from './lib/server-process.ts';
import { writeStandinModelDir } from './lib/standin-model.ts';
import { replaceReadmeBlock } from './lib/stats.ts';

const USAGE = `Usage: npm run capacity -- [options]

Target (one of; the default starts the server here on the stand-in model):
  --url URL             a running server, e.g. http://127.0.0.1:8080
  --endpoint NAME       a SageMaker endpoint, through the client toolkit (--region REGION)
  --repeat N            start the server on a stand-in generated with --repeat N (1000: about a
                        second of model time per sentence here, like the real model on CPU)
  --model-dir DIR       start the server on this model directory
  --env KEY=VALUE       an environment variable for the server it starts (repeatable)

Ladder:
  --transport ws|http   WebSocket sessions (default) or streaming POST clients
  --slo-ms MS           the time-to-first-audio SLO (default ${LADDER_DEFAULTS.sloMs})
  --percentile P        the percentile held to it (default ${LADDER_DEFAULTS.percentile})
  --rung-s S            seconds per rung after its warm-up (default ${LADDER_DEFAULTS.rungS})
  --warmup-s S          seconds at a rung's start not counted (default ${LADDER_DEFAULTS.warmupS})
  --min-requests N      counted requests a rung needs (default ${LADDER_DEFAULTS.minRequests})
  --max-concurrency N   the ladder's cap (default ${LADDER_DEFAULTS.maxConcurrency})

Output:
  --out FILE            the JSON report (default capacity-<transport>.json)
  --readme              also write the table into README.md between <!-- capacity:<transport> --> markers`;

export async function main(argv: readonly string[]): Promise<number> {
  let flags;
  try {
    flags = parseFlags(argv, {
      url: { type: 'string' },
      endpoint: { type: 'string' },
      region: { type: 'string' },
      repeat: { type: 'string' },
      'model-dir': { type: 'string' },
      env: { type: 'string', multiple: true },
      transport: { type: 'string' },
      'slo-ms': { type: 'string' },
      percentile: { type: 'string' },
      'rung-s': { type: 'string' },
      'warmup-s': { type: 'string' },
      'min-requests': { type: 'string' },
      'max-concurrency': { type: 'string' },
      out: { type: 'string' },
      readme: { type: 'boolean' },
      help: { type: 'boolean' },
    });
    if (flags.help) {
      console.log(USAGE);
      return 0;
    }
    const targets = [flags.url, flags.endpoint, flags.repeat ?? flags['model-dir']].filter(Boolean);
    if (targets.length > 1)
      throw new UsageError('give one target: --url, --endpoint, or --repeat/--model-dir');
    const transport = (flags.transport ?? 'ws') as Transport;
    if (transport !== 'ws' && transport !== 'http')
      throw new UsageError(`--transport should be ws or http; got "${flags.transport}"`);
    const env: Record<string, string> = {};
    for (const pair of flags.env ?? []) {
      const eq = pair.indexOf('=');
      if (eq <= 0) throw new UsageError(`--env should be KEY=VALUE; got "${pair}"`);
      env[pair.slice(0, eq)] = pair.slice(eq + 1);
    }
    const options: LadderOptions = {
      transport,
      sloMs: intFlag('slo-ms', flags['slo-ms'], LADDER_DEFAULTS.sloMs, 1),
      percentile: intFlag('percentile', flags.percentile, LADDER_DEFAULTS.percentile, 1, 99),
      rungS: intFlag('rung-s', flags['rung-s'], LADDER_DEFAULTS.rungS, 1),
      warmupS: intFlag('warmup-s', flags['warmup-s'], LADDER_DEFAULTS.warmupS, 0),
      minRequests: intFlag('min-requests', flags['min-requests'], LADDER_DEFAULTS.minRequests, 1),
      maxConcurrency: intFlag('max-concurrency', flags['max-concurrency'], LADDER_DEFAULTS.maxConcurrency, 1),
      texts: SENTENCES,
    };
    const repeat = flags.repeat === undefined ? undefined : intFlag('repeat', flags.repeat, 1, 1);
    return await measure(flags, options, env, repeat);
  } catch (err) {
    if (!(err instanceof UsageError)) throw err;
    console.error(`error: ${err.message}\n\n${USAGE}`);
    return 2;
  }
}

async function measure(
  flags: {
    url?: string;
    endpoint?: string;
    region?: string;
    'model-dir'?: string;
    out?: string;
    readme?: boolean;
  },
  options: LadderOptions,
  env: Record<string, string>,
  repeat: number | undefined,
): Promise<number> {
  let server: ServerProcess | undefined;
  let tmp: string | undefined;
  let driver: Driver;
  let label: string;
  if (flags.endpoint) {
    driver =
      options.transport === 'ws'
        ? sageMakerWsDriver(flags.endpoint, flags.region)
        : sageMakerHttpDriver(flags.endpoint, flags.region);
    label = `SageMaker endpoint ${flags.endpoint}`;
  } else {
    let base = flags.url?.replace(/\/+$/, '');
    if (!base) {
      let modelDir = flags['model-dir'] ?? projectPath('test', 'fixtures', 'standin-model');
      if (repeat !== undefined) {
        tmp = mkdtempSync(join(tmpdir(), 'kokoro-capacity-'));
        console.error(`generating a stand-in model with --repeat ${repeat}`);
        await writeStandinModelDir(tmp, { repeat, log: () => {} });
        modelDir = tmp;
      }
      console.error('starting the server…');
      server = await startServerProcess({ KOKORO_MODEL_DIR: modelDir, LOG_LEVEL: 'warn', ...env });
      base = server.http;
      label =
        repeat !== undefined
          ? `the stand-in model (--repeat ${repeat}) on this machine`
          : `the model in ${modelDir}`;
    } else label = base;
    driver =
      options.transport === 'ws'
        ? wsUrlDriver(`${base.replace(/^http/, 'ws')}/invocations-bidirectional-stream`)
        : httpUrlDriver(base);
  }
  try {
    console.error(
      `capacity ladder: ${options.transport === 'ws' ? 'WebSocket sessions' : 'POST clients'} against ${label}; p${options.percentile} ≤ ${options.sloMs} ms`,
    );
    const report = await runLadder(driver, options, (line) => console.error(line));
    const out = flags.out ?? `capacity-${options.transport}.json`;
    writeFileSync(out, `${JSON.stringify(report, null, 2)}\n`);
    const text = renderCapacity({ ...report, target: label });
    console.log(text);
    console.error(`wrote ${out}`);
    if (flags.readme) replaceReadmeBlock(`capacity:${options.transport}`, text);
    return 0;
  } finally {
    await server?.stop();
    if (tmp) rmSync(tmp, { recursive: true, force: true });
  }
}

runMain(import.meta.url, 'capacity', () => main(process.argv.slice(2)));
