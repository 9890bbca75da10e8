/**
 * Builds the image's cpu target with docker or podman and tests it as SageMaker would use it: the
 * stand-in model mounted read-only at /opt/ml/model, GET /ping, the WebSocket smoke test, one AAC
 * request over POST /invocations, the labels and entrypoint, and a clean stop within 30 s.
 *
 * Usage: `npm run image:test -- [--engine docker|podman] [--node-image IMAGE] [--tag TAG] [--out DIR]`
 *
 * The base image is the Dockerfile's NODE_IMAGE when it can be pulled, else one assembled from
 * Debian and npm packages and cached (scripts/lib/image-base.ts). Needs root for podman and
 * debootstrap: `sh scripts/test-deps.sh` installs both on Debian. Exit code 0 when every step
 * passed, 1 at the first failure (named), 2 for a usage mistake.
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, rmSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { decode } from './lib/audio-decode.ts';
import { parseFlags, runMain, UsageError } from './lib/cli.ts';
import { dockerfileNodeImage, nodeBaseImage, parseNodeImage } from './lib/image-base.ts';
import { devDependenciesIn, imageConfigProblems, megabytes, type ImageInspect } from './lib/image-checks.ts';
import { detectEngine, engineRun, engineStream, type Engine, type EngineName } from './lib/image-engine.ts';
import { PROJECT_ROOT, projectPath } from './lib/paths.ts';
import { freePort } from './lib/server-process.ts';

const USAGE = `Builds the cpu image and tests it (see docs/deploy.md, "The image test").

  --engine docker|podman   the engine (default: docker when its engine answers, else podman)
  --node-image IMAGE       the base image (default: the Dockerfile's NODE_IMAGE)
  --tag TAG                the image's tag (default: kokoro-tts:cpu-test)
  --out DIR                build log and smoke output (default: out/image-test)`;

/** SageMaker's limit, and the drain the server gets within it (SHUTDOWN_GRACE_S is 25 s). */
const STOP_LIMIT_S = 30;
const PING_TIMEOUT_MS = 180_000;
const AAC_TEXT = 'The image serves every format, AAC included.';

const log = (line: string) => console.log(`image-test: ${line}`);
const seconds = (ms: number) => `${(ms / 1000).toFixed(1)} s`;

/** A failed check; its message is the report. */
class CheckFailed extends Error {}

function fail(message: string): never {
  throw new CheckFailed(message);
}

/** Runs an engine command that must succeed; returns its stdout. */
async function must(engine: Engine, args: readonly string[], what: string): Promise<string> {
  const r = await engineRun(engine, args);
  if (r.status !== 0) fail(`${what}: ${engine.name} ${args[0]} exited with ${r.status}: ${r.stderr.trim()}`);
  return r.stdout;
}

/** The CA bundle that the environment names, if the file is there. */
function caBundle(): string | undefined {
  return [process.env.NODE_EXTRA_CA_CERTS, process.env.SSL_CERT_FILE].find((f) => f && existsSync(f));
}

/** Runs a command with its output prefixed; resolves with its exit status. */
function runPrefixed(command: string, args: readonly string[], prefix: string): Promise<number | null> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    const print = (d: Buffer) => {
      for (const line of d.toString('utf8').split('\n')) if (line.trim()) console.log(`${prefix}${line}`);
    };
    child.stdout.on('data', print);
    child.stderr.on('data', print);
    child.once('error', reject);
    child.once('close', resolve);
  });
}

async function waitForPing(engine: Engine, container: string, url: string): Promise<number> {
  const started = Date.now();
  let last = '';
  while (Date.now() - started < PING_TIMEOUT_MS) {
    try {
      const res = await fetch(`${url}/ping`, { signal: AbortSignal.timeout(2000) });
      if (res.status === 200) return Date.now() - started;
      last = `HTTP ${res.status}`;
    } catch (err) {
      last = err instanceof Error ? ((err.cause as Error | undefined)?.message ?? err.message) : String(err);
    }
    const state = await engineRun(engine, [
      'inspect',
      '--format',
      '{{.State.Running}} {{.State.ExitCode}}',
      container,
    ]);
    if (state.stdout.startsWith('false'))
      fail(`the container exited (code ${state.stdout.split(' ')[1]?.trim()}) before /ping answered`);
    await new Promise((r) => setTimeout(r, 500));
  }
  fail(`GET /ping did not answer 200 within ${seconds(PING_TIMEOUT_MS)} (last: ${last})`);
}

export async function main(argv: readonly string[]): Promise<number> {
  let flags;
  try {
    flags = parseFlags(argv, {
      engine: { type: 'string' },
      'node-image': { type: 'string' },
      tag: { type: 'string' },
      out: { type: 'string' },
      help: { type: 'boolean' },
    });
    if (flags.engine !== undefined && flags.engine !== 'docker' && flags.engine !== 'podman') {
      throw new UsageError(`--engine should be docker or podman; got "${flags.engine}"`);
    }
  } catch (err) {
    if (!(err instanceof UsageError)) throw err;
    console.error(`error: ${err.message}\n\n${USAGE}`);
    return 2;
  }
  if (flags.help) {
    console.log(USAGE);
    return 0;
  }

  const tag = flags.tag ?? 'kokoro-tts:cpu-test';
  const out = resolve(flags.out ?? projectPath('out', 'image-test'));
  const buildLog = join(out, 'build.log');
  const container = `kokoro-image-test-${process.pid}`;
  const dockerfile = readFileSync(projectPath('Dockerfile'), 'utf8');
  const nodeImage = flags['node-image'] ?? dockerfileNodeImage(dockerfile);
  const model = projectPath('test', 'fixtures', 'standin-model');
  rmSync(out, { recursive: true, force: true });
  mkdirSync(out, { recursive: true });

  const steps = [
    'engine',
    'base image',
    'build',
    'inspect',
    'contents',
    'start',
    'smoke',
    'aac',
    'stop',
  ] as const;
  let current: string = steps[0];
  let engine: Engine | undefined;
  let containerCreated = false;
  const timings: Record<string, number> = {};
  const t0 = Date.now();
  const step = async <T>(name: (typeof steps)[number], run: () => Promise<T>): Promise<T> => {
    current = name;
    const index = `[${steps.indexOf(name) + 1}/${steps.length}]`;
    log(`${index} ${name} …`);
    const start = Date.now();
    const result = await run();
    timings[name] = Date.now() - start;
    log(`${index} ${name}: ok (${seconds(timings[name])})`);
    return result;
  };

  try {
    engine = await step('engine', async () => {
      const e = detectEngine(flags.engine as EngineName | undefined);
      log(`  ${e.name} ${[...e.globalArgs, ...e.limitArgs].join(' ')}`.trimEnd());
      return e;
    });
    const eng = engine;

    const base = await step('base image', async () => {
      if (!nodeImage) fail('the Dockerfile has no `ARG NODE_IMAGE=…` default; pass --node-image');
      const found = await nodeBaseImage(eng, nodeImage, buildLog, (line) => log(`  ${line}`));
      log(`  ${found.image}: ${found.how}`);
      return found.image;
    });

    await step('build', async () => {
      const ca = caBundle();
      const args = ['build', '--target', 'cpu', '--build-arg', `NODE_IMAGE=${base}`, '-t', tag];
      // A secret, not a build arg: it is mounted for the RUN steps that use it and kept in no layer.
      if (ca) args.push('--secret', `id=ca_bundle,src=${ca}`);
      if (eng.name === 'docker') args.push('--progress', 'plain');
      args.push(...eng.limitArgs, '-f', projectPath('Dockerfile'), PROJECT_ROOT);
      if (ca) log(`  CA bundle ${ca} passed as the build secret ca_bundle`);
      log(`  full log: ${buildLog}`);
      const { status, tail } = await engineStream(
        eng,
        args,
        buildLog,
        (line) => {
          // Podman: "[3/9] STEP 2/4: RUN …"; BuildKit (plain): "#7 [deps-cpu 1/1] RUN …".
          if (/^(\[\d+\/\d+\] )?STEP \d+|^#\d+ \[/.test(line)) log(`  ${line.slice(0, 150)}`);
        },
        { ...process.env, DOCKER_BUILDKIT: '1' },
      );
      if (status !== 0)
        fail(`${eng.name} build exited with ${status}; its last lines:\n${tail.slice(-25).join('\n')}`);
    });

    await step('inspect', async () => {
      const [image] = JSON.parse(await must(eng, ['image', 'inspect', tag], 'inspect')) as ImageInspect[];
      if (!image) fail(`${eng.name} image inspect ${tag} returned nothing`);
      const problems = imageConfigProblems(image);
      if (problems.length > 0) fail(problems.join('; '));
      log(
        '  SageMaker labels bidirectional-streaming=true and accept-bind-to-port=true; entrypoint + cmd serve; 8080',
      );
      const history = await must(
        eng,
        ['history', '--no-trunc', '--format', '{{.Size}}\t{{.CreatedBy}}', tag],
        'history',
      );
      log('  layers (size, instruction), newest first:');
      for (const line of history.trim().split('\n')) {
        const [size = '', createdBy = ''] = line.split('\t');
        if (/^0\s*B$/i.test(size.trim())) continue;
        log(
          `    ${size.trim().padStart(9)}  ${createdBy
            .replace(/\s+/g, ' ')
            .replace(/^\/bin\/sh -c #\(nop\) /, '')
            .slice(0, 110)}`,
        );
      }
      log(`  image size: ${megabytes(image.Size ?? 0)}`);
    });

    await step('contents', async () => {
      const script = [
        'cd /opt/program',
        'echo "node $(node --version)"',
        'ffmpeg -hide_banner -encoders 2>/dev/null | grep -q " aac " && echo "ffmpeg-aac yes"',
        'test ! -e /run/secrets/ca_bundle && echo "no-secret yes"',
        'du -sk node_modules dist /usr/local/bin/node /usr/local/bin/ffmpeg | sed "s/^/size /"',
        'cd node_modules && ls -d -- * @*/* 2>/dev/null | sed "s/^/module /"',
      ].join('; ');
      const stdout = await must(eng, ['run', '--rm', ...eng.limitArgs, tag, 'sh', '-c', script], 'contents');
      const lines = stdout.split('\n');
      const node = lines.find((l) => l.startsWith('node '))?.slice(5) ?? '';
      const major = parseNodeImage(nodeImage ?? '')?.major;
      if (major !== undefined && !node.startsWith(`v${major}.`))
        fail(`the image runs Node ${node || '(none)'}, not ${major}`);
      if (!lines.includes('ffmpeg-aac yes')) fail('the image has no ffmpeg with the aac encoder');
      if (!lines.includes('no-secret yes')) fail('the CA bundle secret is in the image');
      const pkg = JSON.parse(readFileSync(projectPath('package.json'), 'utf8')) as {
        devDependencies?: Record<string, string>;
      };
      const modules = lines.filter((l) => l.startsWith('module ')).map((l) => l.slice(7));
      const dev = devDependenciesIn(modules, Object.keys(pkg.devDependencies ?? {}));
      if (dev.length > 0) fail(`devDependencies in the image's node_modules: ${dev.join(', ')}`);
      log(
        `  Node ${node}; ffmpeg with aac; no devDependencies among ${modules.length} packages; no build secret`,
      );
      for (const l of lines.filter((x) => x.startsWith('size '))) {
        const [kb = '0', path = ''] = l.slice(5).split('\t');
        log(`    ${megabytes(Number(kb) * 1024).padStart(9)}  ${path}`);
      }
    });

    const port = await freePort();
    const url = `http://127.0.0.1:${port}`;
    await step('start', async () => {
      await must(
        eng,
        [
          'run',
          '-d',
          '--name',
          container,
          ...eng.limitArgs,
          '-p',
          `127.0.0.1:${port}:8080`,
          '-v',
          `${model}:/opt/ml/model:ro`,
          tag,
        ],
        'start',
      );
      containerCreated = true;
      const ms = await waitForPing(eng, container, url);
      log(`  GET ${url}/ping 200 after ${seconds(ms)}`);
    });

    await step('smoke', async () => {
      const status = await runPrefixed(
        process.execPath,
        [projectPath('dist', 'scripts', 'smoke.js'), '--url', url, '--out', join(out, 'smoke')],
        'image-test:   smoke: ',
      );
      if (status !== 0) fail(`the smoke test exited with ${status}`);
    });

    await step('aac', async () => {
      const res = await fetch(`${url}/invocations`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ text: AAC_TEXT, format: 'aac' }),
        signal: AbortSignal.timeout(60_000),
      });
      const body = new Uint8Array(await res.arrayBuffer());
      if (res.status !== 200)
        fail(
          `POST /invocations (aac) answered ${res.status}: ${Buffer.from(body).toString('utf8').slice(0, 300)}`,
        );
      const type = res.headers.get('content-type') ?? '';
      if (!type.startsWith('audio/aac')) fail(`POST /invocations (aac) answered ${type}, not audio/aac`);
      const decoded = decode(body, 'aac', 24_000);
      if (!decoded.ok)
        fail(
          `ffmpeg could not decode the AAC (sh scripts/test-deps.sh installs it): ${decoded.stderr.trim()}`,
        );
      const samples = decoded.samples.length;
      if (samples < 2400) fail(`the AAC decodes to ${samples} samples, less than 0.1 s`);
      log(`  ${body.length} bytes of ADTS decode to ${(samples / 24_000).toFixed(2)} s at 24 kHz`);
    });

    await step('stop', async () => {
      const start = Date.now();
      await must(eng, ['stop', '-t', String(STOP_LIMIT_S), container], 'stop');
      const ms = Date.now() - start;
      const code = (
        await must(eng, ['inspect', '--format', '{{.State.ExitCode}}', container], 'stop')
      ).trim();
      log(`  stopped in ${seconds(ms)}, exit code ${code}`);
      if (code !== '0') fail(`the container exited with ${code} on SIGTERM, not 0`);
      if (ms >= STOP_LIMIT_S * 1000) fail(`stopping took ${seconds(ms)}, SageMaker allows ${STOP_LIMIT_S} s`);
    });

    log(`passed: build ${seconds(timings.build ?? 0)}, total ${seconds(Date.now() - t0)}`);
    return 0;
  } catch (err) {
    const message =
      err instanceof CheckFailed || !(err instanceof Error)
        ? String((err as Error).message ?? err)
        : (err.stack ?? err.message);
    log(`FAILED at step "${current}": ${message}`);
    if (engine && containerCreated && current !== 'stop') {
      const logs = await engineRun(engine, ['logs', '--tail', '30', container]);
      log(`container's last log lines:\n${logs.stdout}${logs.stderr}`);
    }
    return 1;
  } finally {
    if (engine && containerCreated) await engineRun(engine, ['rm', '-f', container]);
  }
}

runMain(import.meta.url, 'image-test', () => main(process.argv.slice(2)));
