/**
 * The container contract, checked without Docker. A temporary directory is laid out like the
 * image's /opt/program (package.json, the compiled dist/ that `npm test` builds, node_modules, and
 * docker/entrypoint.sh), and the entrypoint is started from there exactly as SageMaker starts the
 * image (`ENTRYPOINT serve`), finding the app beside itself, with a copy of the stand-in model
 * standing in for /opt/ml/model. The entrypoint's own decisions are checked first with a fake Node
 * that prints what it was given.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import {
  chmodSync,
  existsSync,
  cpSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from '../../scripts/lib/server-process.ts';
import { STANDIN_MODEL_DIR, TestClient, requestsOf } from './harness.ts';
import { waitFor } from '../wait.ts';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const ENTRYPOINT = join(ROOT, 'docker/entrypoint.sh');
const TMP = mkdtempSync(join(tmpdir(), 'kokoro-container-'));

afterAll(() => rmSync(TMP, { recursive: true, force: true }));

let counter = 0;
/** A new empty directory under the test's temporary directory. */
function freshDir(name: string): string {
  const dir = join(TMP, `${name}-${++counter}`);
  mkdirSync(dir, { recursive: true });
  return dir;
}

/** A copy of the stand-in model, as SageMaker would place it in /opt/ml/model. */
function modelCopy(): string {
  const dir = freshDir('model');
  cpSync(STANDIN_MODEL_DIR, dir, { recursive: true });
  return dir;
}

/** `tar -czf` of `source`'s contents (`wrap`: of a folder of that name holding them). */
function archive(source: string, wrap?: string): string {
  const dir = freshDir('model-tgz');
  const file = join(dir, 'model.tar.gz');
  const args = wrap
    ? ['-czf', file, '--transform', `s,^\\.,${wrap},`, '-C', source, '.']
    : ['-czf', file, '-C', source, '.'];
  const result = spawnSync('tar', args, { encoding: 'utf8' });
  if (result.status !== 0) throw new Error(`tar failed: ${result.stderr}`);
  return dir;
}

/** Environment shared by every run: nothing from the image paths, everything under TMP. */
function baseEnv(extra: Record<string, string>): NodeJS.ProcessEnv {
  const inherited = { ...process.env };
  delete inherited.PORT; // SAGEMAKER_BIND_TO_PORT gives the port
  delete inherited.LD_LIBRARY_PATH;
  return {
    ...inherited,
    TMPDIR: TMP,
    KOKORO_BAKED_MODEL_DIR: join(TMP, 'no-baked-model'),
    CUDA_COMPAT_DIR: join(TMP, 'no-cuda-compat'),
    NVIDIA_DRIVER_VERSION_FILE: join(TMP, 'no-nvidia-driver'),
    ...extra,
  };
}

describe('docker/entrypoint.sh decisions (with a fake node)', () => {
  const fakeNode = join(TMP, 'fake-node');
  writeFileSync(
    fakeNode,
    [
      '#!/bin/sh',
      'printf "pid=%s\\n" "$$"',
      'printf "argv=%s\\n" "$*"',
      'printf "model=%s\\n" "$KOKORO_MODEL_DIR"',
      'printf "ld=%s\\n" "${LD_LIBRARY_PATH:-}"',
      '',
    ].join('\n'),
  );
  chmodSync(fakeNode, 0o755);

  function entry(args: string[], env: Record<string, string> = {}) {
    const result = spawnSync(ENTRYPOINT, args, {
      encoding: 'utf8',
      env: baseEnv({ PROGRAM_DIR: '/opt/program', NODE_BIN: fakeNode, ...env }),
    });
    const fields = Object.fromEntries(
      result.stdout
        .split('\n')
        .filter((l) => /^\w+=/.test(l))
        .map((l) => [l.slice(0, l.indexOf('=')), l.slice(l.indexOf('=') + 1)]),
    ) as Record<string, string>;
    return { ...result, fields };
  }

  it('`serve` execs node on dist/server/main.js, passing further arguments; no command means serve', () => {
    const model = modelCopy();
    const served = entry(['serve', '--fetch-model'], { KOKORO_MODEL_DIR: model });
    expect(served.status, served.stderr).toBe(0);
    expect(served.fields.argv).toBe('/opt/program/dist/server/main.js --fetch-model');
    expect(served.fields.model).toBe(model);
    expect(served.stderr).toContain(`entrypoint: serving the model in ${model}`);
    // exec: the process that runs node is the one that was started, so it receives SIGTERM itself.
    expect(Number(served.fields.pid)).toBe(served.pid);

    expect(entry([], { KOKORO_MODEL_DIR: model }).fields.argv).toBe('/opt/program/dist/server/main.js');
  });

  it('without PROGRAM_DIR, finds the app in the folder above its own docker/ folder', () => {
    // An install somewhere else than /opt/program: <dir>/docker/entrypoint.sh beside <dir>/dist.
    const app = freshDir('installed-app');
    mkdirSync(join(app, 'docker'));
    cpSync(ENTRYPOINT, join(app, 'docker', 'entrypoint.sh'));
    const model = modelCopy();
    const env = baseEnv({ NODE_BIN: fakeNode, KOKORO_MODEL_DIR: model });
    delete env.PROGRAM_DIR;
    const run = (args: string[]) =>
      spawnSync('sh', [join(app, 'docker', 'entrypoint.sh'), ...args], { encoding: 'utf8', env, cwd: TMP });
    expect(run(['serve']).stdout).toContain(`argv=${app}/dist/server/main.js\n`);
    expect(run(['gpu-check', '--json']).stdout).toContain(`argv=${app}/dist/scripts/gpu-check.js --json\n`);
  });

  it('`gpu-check` runs the CUDA check on the same model directory as `serve`', () => {
    const model = archive(modelCopy());
    const checked = entry(['gpu-check'], { KOKORO_MODEL_DIR: model });
    expect(checked.status, checked.stderr).toBe(0);
    expect(checked.fields.argv).toBe('/opt/program/dist/scripts/gpu-check.js');
    // The archive was extracted, as for serve.
    expect(checked.fields.model).not.toBe(model);
    expect(existsSync(join(checked.fields.model!, 'config.json'))).toBe(true);
  });

  it('runs any other command as given, with its exit code', () => {
    const echo = entry(['echo', 'hello', 'there']);
    expect(echo.stdout).toBe('hello there\n');
    expect(entry(['sh', '-c', 'exit 3']).status).toBe(3);
  });

  it('falls back to the baked weights only when the model directory is missing or empty', () => {
    const baked = modelCopy();
    const empty = freshDir('empty');
    expect(entry(['serve'], { KOKORO_MODEL_DIR: empty, KOKORO_BAKED_MODEL_DIR: baked }).fields.model).toBe(
      baked,
    );
    const missing = join(TMP, 'missing-model');
    const result = entry(['serve'], { KOKORO_MODEL_DIR: missing, KOKORO_BAKED_MODEL_DIR: baked });
    expect(result.fields.model).toBe(baked);
    expect(result.stderr).toContain(
      `no model in ${missing}; using the weights baked into the image at ${baked}`,
    );

    const mounted = modelCopy();
    expect(entry(['serve'], { KOKORO_MODEL_DIR: mounted, KOKORO_BAKED_MODEL_DIR: baked }).fields.model).toBe(
      mounted,
    );
    // Nothing baked either: left as it is, for the server to say what is missing.
    expect(
      entry(['serve'], { KOKORO_MODEL_DIR: empty, KOKORO_BAKED_MODEL_DIR: freshDir('e') }).fields.model,
    ).toBe(empty);
  });

  it('extracts a lone .tar.gz into a fresh directory, entering a single wrapping folder', () => {
    const flat = entry(['serve'], { KOKORO_MODEL_DIR: archive(STANDIN_MODEL_DIR) });
    expect(flat.status, flat.stderr).toBe(0);
    expect(flat.fields.model).toMatch(new RegExp(`^${TMP}/kokoro-model\\.\\w{6}$`));
    expect(readFileSync(join(flat.fields.model!, 'onnx/model.onnx')).length).toBeGreaterThan(1000);

    const wrapped = entry(['serve'], { KOKORO_MODEL_DIR: archive(STANDIN_MODEL_DIR, 'kokoro-82m') });
    expect(wrapped.fields.model).toMatch(/\/kokoro-model\.\w{6}\/kokoro-82m$/);
    expect(readFileSync(join(wrapped.fields.model!, 'onnx/model.onnx')).length).toBeGreaterThan(1000);

    // An archive holding only onnx/ is a model directory (voices from kokoro-js), not a wrapper.
    const onnxOnly = freshDir('onnx-only');
    cpSync(join(STANDIN_MODEL_DIR, 'onnx'), join(onnxOnly, 'onnx'), { recursive: true });
    expect(entry(['serve'], { KOKORO_MODEL_DIR: archive(onnxOnly) }).fields.model).toMatch(
      /\/kokoro-model\.\w{6}$/,
    );
  });

  it('leaves an archive alone when it is not the only entry, and fails on a broken one', () => {
    const mixed = archive(STANDIN_MODEL_DIR);
    writeFileSync(join(mixed, 'README.txt'), 'notes');
    expect(entry(['serve'], { KOKORO_MODEL_DIR: mixed }).fields.model).toBe(mixed);

    const broken = freshDir('broken');
    writeFileSync(join(broken, 'model.tar.gz'), 'not gzip');
    const result = entry(['serve'], { KOKORO_MODEL_DIR: broken });
    expect(result.status).not.toBe(0);
    expect(result.fields.argv).toBeUndefined(); // node never started
  });

  it('puts the CUDA compat libraries first only when the driver is older than them', () => {
    const compat = freshDir('compat');
    symlinkSync('libcuda.so.550.54.15', join(compat, 'libcuda.so.1'));
    writeFileSync(join(compat, 'libcuda.so.550.54.15'), '');
    const driver = (line: string) => {
      const file = join(freshDir('driver'), 'version');
      writeFileSync(file, `${line}\nGCC version:  gcc version 10.2.1 20210130 (Red Hat 10.2.1-11) (GCC)\n`);
      return entry(['sh', '-c', 'printf "ld=%s\\n" "${LD_LIBRARY_PATH:-}"'], {
        CUDA_COMPAT_DIR: compat,
        NVIDIA_DRIVER_VERSION_FILE: file,
        LD_LIBRARY_PATH: '/usr/local/nvidia/lib64',
      });
    };
    const old = driver(
      'NVRM version: NVIDIA UNIX x86_64 Kernel Module  470.256.02  Thu May  2 14:37:44 UTC 2024',
    );
    expect(old.fields.ld).toBe(`${compat}:/usr/local/nvidia/lib64`);
    expect(old.stderr).toContain('CUDA compat: driver 470.256.02 is older than 550.54.15');

    const open = driver('NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  535.216.01  Release Build');
    expect(open.fields.ld).toBe(`${compat}:/usr/local/nvidia/lib64`);

    const newer = driver(
      'NVRM version: NVIDIA UNIX x86_64 Kernel Module  550.127.05  Tue Oct  8 03:22:07 UTC 2024',
    );
    expect(newer.fields.ld).toBe('/usr/local/nvidia/lib64');

    // No GPU driver (CPU host): nothing changes.
    const none = entry(['sh', '-c', 'printf "ld=%s\\n" "${LD_LIBRARY_PATH:-}"'], { CUDA_COMPAT_DIR: compat });
    expect(none.fields.ld).toBe('');
  });
});

describe('docker/entrypoint.sh serve, as SageMaker starts the image', () => {
  let program = '';
  const children: ChildProcess[] = [];

  beforeAll(() => {
    // The image's /opt/program: package.json (for "type": "module"), the compiled dist/ that
    // `npm test` has just built, node_modules, and the entrypoint in docker/, found from there.
    program = freshDir('program');
    mkdirSync(join(program, 'docker'));
    cpSync(ENTRYPOINT, join(program, 'docker', 'entrypoint.sh'));
    cpSync(join(ROOT, 'package.json'), join(program, 'package.json'));
    symlinkSync(join(ROOT, 'dist'), join(program, 'dist'));
    symlinkSync(join(ROOT, 'node_modules'), join(program, 'node_modules'));
  });

  afterAll(() => {
    for (const child of children)
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  });

  interface Started {
    readonly child: ChildProcess;
    readonly http: string;
    readonly ws: string;
    readonly output: string[];
    readonly exited: Promise<number | null>;
  }

  async function serve(modelDir: string): Promise<Started> {
    const port = await freePort();
    const child = spawn(join(program, 'docker', 'entrypoint.sh'), ['serve'], {
      env: baseEnv({
        NODE_BIN: process.execPath,
        SAGEMAKER_BIND_TO_PORT: String(port),
        HOST: '127.0.0.1',
        KOKORO_MODEL_DIR: modelDir,
        KOKORO_DEVICE: 'cpu',
        KOKORO_WORKERS: '1',
        KOKORO_INTRA_OP_THREADS: '1',
        SHUTDOWN_GRACE_S: '20',
        LOG_LEVEL: 'info',
      }),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    children.push(child);
    const output: string[] = [];
    const collect = (chunk: Buffer) => output.push(...chunk.toString().split('\n').filter(Boolean));
    child.stdout!.on('data', collect);
    child.stderr!.on('data', collect);
    const exited = new Promise<number | null>((resolve) => child.once('close', (code) => resolve(code)));
    return {
      child,
      http: `http://127.0.0.1:${port}`,
      ws: `ws://127.0.0.1:${port}/invocations-bidirectional-stream`,
      output,
      exited,
    };
  }

  /** Polls GET /ping from the start until 200; returns every answer seen (0: not listening yet). */
  async function pingUntilHealthy(server: Started): Promise<{ statuses: number[]; slowestMs: number }> {
    const statuses: number[] = [];
    let slowestMs = 0;
    await waitFor(
      async () => {
        if (server.child.exitCode !== null) {
          throw new Error(`exited with ${server.child.exitCode}:\n${server.output.slice(-20).join('\n')}`);
        }
        const start = performance.now();
        try {
          const res = await fetch(`${server.http}/ping`, { signal: AbortSignal.timeout(2000) });
          await res.arrayBuffer();
          slowestMs = Math.max(slowestMs, performance.now() - start);
          statuses.push(res.status);
          return res.status === 200;
        } catch {
          statuses.push(0);
          return false;
        }
      },
      {
        timeoutMs: 30_000,
        intervalMs: 25,
        what: () => `a healthy /ping; the output:\n${server.output.slice(-20).join('\n')}`,
      },
    );
    return { statuses, slowestMs };
  }

  const longText = (n: number) =>
    Array.from({ length: n }, (_, i) => `This is sentence number ${i + 1} of a long request.`).join(' ');

  it('pings 503 then 200, upgrades within 250 ms during inference, pongs, and drains on SIGTERM', async () => {
    const server = await serve(modelCopy());
    const { statuses, slowestMs } = await pingUntilHealthy(server);
    const answered = statuses.filter((s) => s !== 0);
    expect(answered[0]).toBe(503);
    expect(answered.at(-1)).toBe(200);
    expect(new Set(answered)).toEqual(new Set([503, 200]));
    expect(slowestMs).toBeLessThan(2000);

    // The entrypoint exec'd node: the process SageMaker signals is node running dist/server/main.js.
    const argv = readFileSync(`/proc/${server.child.pid}/cmdline`, 'utf8').split('\0');
    expect(argv.slice(0, 2)).toEqual([process.execPath, join(program, 'dist/server/main.js')]);

    // A long synthesis in flight on one socket ...
    const busy = await TestClient.open(server.ws);
    busy.send({ text: longText(30), request_id: 'long' });
    await busy.until((c) => c.frames.some((f) => f.kind === 'audio'), 'first audio of the long request');
    // ... does not hold up a second connection's upgrade.
    const start = performance.now();
    const second = await TestClient.open(server.ws);
    const upgradeMs = performance.now() - start;
    expect(busy.controls('synthesis_complete')).toEqual([]);
    expect(upgradeMs).toBeLessThan(250);
    busy.close(); // its remaining sentences are dropped, so the drain below waits only for one request

    // RFC 6455 ping → pong with the same payload.
    const pong = new Promise<Buffer>((resolve) => second.socket.once('pong', resolve));
    second.socket.ping(Buffer.from('are you there'));
    expect((await pong).toString()).toBe('are you there');

    // SIGTERM while a request is in flight: it completes, sessions close with 1001, exit 0.
    second.send({ text: longText(12), request_id: 'in-flight' });
    await second.until(
      (c) => c.frames.some((f) => f.kind === 'audio'),
      'first audio of the in-flight request',
    );
    expect(second.controls('synthesis_complete')).toEqual([]);
    server.child.kill('SIGTERM');
    expect(await server.exited).toBe(0);
    await second.until((c) => c.closeCode !== undefined, 'close');
    const [request] = requestsOf(second.frames);
    expect(request?.id).toBe('in-flight');
    expect(request?.complete).toBeDefined();
    expect(request?.audio.length).toBe(12);
    expect(second.controls('error')).toEqual([]);
    expect(second.closeCode).toBe(1001);
    expect(server.output.some((l) => l.includes('"msg":"stopped"'))).toBe(true);
  });

  it('serves a model directory that holds only a .tar.gz, from where it was extracted', async () => {
    const server = await serve(archive(STANDIN_MODEL_DIR, 'kokoro-82m'));
    await pingUntilHealthy(server);
    const res = await fetch(`${server.http}/invocations`, {
      method: 'POST',
      headers: { 'content-type': 'text/plain' },
      body: 'Hello from an archive.',
    });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^audio\/wav/);
    expect((await res.arrayBuffer()).byteLength).toBeGreaterThan(44);
    // The log line and /ping's answer travel on different pipes: wait for the line.
    const readyLine = () =>
      server.output.map((l) => (l.startsWith('{') ? JSON.parse(l) : {})).find((l) => l.msg === 'ready');
    await expect.poll(readyLine).toBeDefined();
    expect(readyLine()?.modelFile).toMatch(
      new RegExp(`^${TMP}/kokoro-model\\.\\w{6}/kokoro-82m/onnx/model\\.onnx$`),
    );
    server.child.kill('SIGTERM');
    expect(await server.exited).toBe(0);
  });
});
