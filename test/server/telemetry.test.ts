/**
 * ONNX Runtime's telemetry stays off, however the server is started. Three views of the built
 * server as a process (`node dist/server/main.js`, what `npm start` and the images run):
 * - in every thread, ONNX Runtime's switch is set at the moment its native binding loads;
 * - traced with strace, the server opens no connection but loopback and asks no DNS server
 *   anything (ONNX Runtime's uploader resolves mobile.events.data.microsoft.com within seconds);
 * - the runtime writes none of its telemetry files (a device id and an event cache under
 *   ~/.cache/Microsoft). The opt-in is the control: with it, in a network namespace of its own
 *   where nothing can leave, the runtime writes them, so the checks above could fail.
 * ONNX Runtime also turns its telemetry off by itself where a CI variable is set, so every run
 * here clears them: the switch must do the work alone.
 */
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { beforeAll, describe, expect, it } from 'vitest';
import { startServerProcess } from '../../scripts/lib/server-process.ts';
import { STANDIN_MODEL_DIR } from './harness.ts';
import { waitFor } from '../wait.ts';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

/** The CI markers ONNX Runtime 1.30 reads (core/platform/telemetry_environment.h), emptied. */
const NOT_CI = Object.fromEntries(
  [
    'CI',
    'TF_BUILD',
    'GITHUB_ACTIONS',
    'GITLAB_CI',
    'CIRCLECI',
    'TRAVIS',
    'JENKINS_URL',
    'CODEBUILD_BUILD_ID',
    'BUILDKITE',
    'TEAMCITY_VERSION',
    'APPVEYOR',
    'BITBUCKET_BUILD_NUMBER',
    'SYSTEM_TEAMFOUNDATIONCOLLECTIONURI',
  ].map((name) => [name, '']),
);

/** The server's environment: the stand-in model, a home of its own, not CI, no switch inherited. */
function serverEnv(extra: Record<string, string> = {}): Record<string, string> {
  return {
    ...NOT_CI,
    ORT_DISABLE_TELEMETRY: '',
    KOKORO_ORT_TELEMETRY: '',
    HOME: mkdtempSync(join(tmpdir(), 'kokoro-home-')),
    KOKORO_MODEL_DIR: STANDIN_MODEL_DIR,
    KOKORO_WORKERS: '2',
    LOG_LEVEL: 'info',
    ...extra,
  };
}

/** Every file under `dir`, relative to it. */
function filesUnder(dir: string): string[] {
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile())
    .map((e) => join(e.parentPath, e.name).slice(dir.length + 1));
}

function requireTool(name: string): void {
  const found = spawnSync('sh', ['-c', `command -v ${name}`]).status === 0;
  if (!found) throw new Error(`${name} is not installed: run sh scripts/test-deps.sh (it installs it)`);
}

/** One synthesis, so a session has been created and run (the runtime reports both). */
async function speak(http: string): Promise<void> {
  const response = await fetch(`${http}/invocations`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ text: 'Hello there. Nothing of this leaves the machine.' }),
  });
  expect(response.status).toBe(200);
  await response.arrayBuffer();
}

interface Control {
  readonly stdout: string;
  readonly stderr: string;
  /** Where the runtime keeps its telemetry files. */
  readonly dir: string;
}

/**
 * The server opted in to telemetry, in a network namespace of its own (so it is not reachable from
 * here: its log and its files say when it is ready and has written them), then stopped as SageMaker
 * stops it, so that the runtime closes its cache.
 */
async function optedIn(): Promise<Control> {
  const env = serverEnv({ KOKORO_ORT_TELEMETRY: 'true', PORT: '18080', HOST: '127.0.0.1' });
  const dir = join(env.HOME!, '.cache/Microsoft/DeveloperTools/.onnxruntime');
  const child = spawn('unshare', ['-n', process.execPath, join(ROOT, 'dist/server/main.js')], {
    cwd: ROOT,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  const exited = new Promise((resolve) => child.once('close', resolve));
  try {
    await waitFor(() => stdout.includes('"msg":"ready"') && existsSync(join(dir, 'deviceid')), {
      timeoutMs: 30_000,
      intervalMs: 100,
      what: "the opted-in server's ready line and the runtime's device id",
    });
  } finally {
    child.kill('SIGTERM');
    await exited;
  }
  return { stdout, stderr, dir };
}

describe('ONNX Runtime telemetry', () => {
  // One server for the first two views: traced with strace, its threads recording the switch.
  const record = join(mkdtempSync(join(tmpdir(), 'kokoro-ort-switch-')), 'switch.jsonl');
  const trace = join(mkdtempSync(join(tmpdir(), 'kokoro-strace-')), 'trace.txt');
  const env = serverEnv({
    RECORD_ORT_SWITCH_FILE: record,
    NODE_OPTIONS: `--import ${pathToFileURL(join(ROOT, 'test/fixtures/record-ort-switch.mjs')).href}`,
  });
  let ping: Record<string, unknown> = {};
  let logs: Record<string, unknown>[] = [];
  let control: Promise<Control> | undefined;
  beforeAll(async () => {
    requireTool('strace');
    requireTool('unshare');
    // The control runs meanwhile: its own process, in its own network namespace.
    control = optedIn();
    const server = await startServerProcess(env, 120_000, [
      'strace',
      '-f',
      '-qq',
      '-e',
      'trace=connect,sendto,sendmsg,sendmmsg',
      '-s',
      '256',
      '-o',
      trace,
    ]);
    try {
      await speak(server.http);
      ping = (await (await fetch(`${server.http}/ping`)).json()) as Record<string, unknown>;
      // ONNX Runtime's uploader resolved its collector about a second after the sessions existed.
      await new Promise((r) => setTimeout(r, 4000));
      logs = server.logs();
    } finally {
      // SIGTERM to strace does not reach the server: stop the server, and strace ends with it.
      const pid = server.child.pid!;
      for (const child of readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim().split(' ')) {
        if (child) process.kill(Number(child), 'SIGTERM');
      }
      await server.stop();
    }
  });

  it('is switched off in the main thread and every worker before the runtime loads; /ping and the log say so', () => {
    expect(ping.onnxruntime_telemetry).toBe('off');
    expect(logs.find((l) => l.msg === 'ready')?.onnxruntimeTelemetry).toBe('off');
    const loads = readFileSync(record, 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((line) => JSON.parse(line) as { thread: number; main: boolean; value: string | null });
    // Two inference workers loaded the binding (the main thread never does), each with the switch on.
    expect(loads.filter((l) => !l.main)).toHaveLength(2);
    expect(loads.map((l) => l.value)).toEqual(loads.map(() => '1'));
    expect(filesUnder(env.HOME!)).toEqual([]);
  });

  it('opens no connection but loopback and sends no DNS query (strace)', () => {
    const lines = readFileSync(trace, 'utf8').split('\n');
    const connects = lines.filter((l) => /\bconnect\(/.test(l) && /AF_INET6?\b/.test(l));
    const outside = connects.filter((l) => !/inet_addr\("127\.|inet_pton\(AF_INET6, "::1"/.test(l));
    expect(outside).toEqual([]);
    expect(connects.filter((l) => /htons\(53\)/.test(l))).toEqual([]);
    expect(lines.filter((l) => /microsoft/i.test(l))).toEqual([]);
    expect(filesUnder(env.HOME!)).toEqual([]);
  });

  it('control: opted in, the runtime starts its telemetry (in a network namespace where nothing can leave)', async () => {
    const { stdout, stderr, dir } = await control!;
    expect(stdout).toContain('"onnxruntimeTelemetry":"on"');
    expect(existsSync(dir), stderr).toBe(true);
    expect(filesUnder(dir).sort()).toEqual(['deviceid', 'onnxruntime.db']);
  });
});
