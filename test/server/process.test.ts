/**
 * The server as a process, started exactly as `npm start` does: startup errors, and draining on
 * SIGTERM.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { startServerProcess, type ServerProcess } from '../../scripts/lib/server-process.ts';
import { STANDIN_MODEL_DIR, TestClient, requestsOf } from './harness.ts';
import { waitFor } from '../wait.ts';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

function run(env: Record<string, string>): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['dist/server/main.js'], {
      cwd: ROOT,
      env: { ...process.env, PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'error', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (d: Buffer) => (output += d.toString()));
    child.stderr.on('data', (d: Buffer) => (output += d.toString()));
    child.on('exit', (code) => resolve({ code, output }));
  });
}

/** The startup stage markers in a process's output, parsed. */
function stagesOf(output: readonly string[]): { name: string; t: string; elapsedS: number }[] {
  return output.flatMap((line) => {
    const m = /^=== STAGE (\w+) t=(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z) elapsed_s=(\d+\.\d+) ===$/.exec(
      line,
    );
    return m ? [{ name: m[1]!, t: m[2]!, elapsedS: Number(m[3]) }] : [];
  });
}

/**
 * A server process (one worker, a 20 s drain) and a session that sent one 8-sentence request per
 * id, once the first audio has arrived.
 */
async function busySession(ids: readonly string[]) {
  const server = await startServerProcess({
    KOKORO_MODEL_DIR: STANDIN_MODEL_DIR,
    KOKORO_WORKERS: '1',
    SHUTDOWN_GRACE_S: '20',
  });
  const client = await TestClient.open(server.ws);
  const long = Array.from({ length: 8 }, (_, i) => `Sentence ${i + 1} of a queued request.`).join(' ');
  for (const id of ids) client.send({ text: long, request_id: id });
  await client.until((c) => c.frames.some((f) => f.kind === 'audio'), 'first audio');
  return { server, client };
}

describe.concurrent('npm start refuses to start', () => {
  it('without a model, exits 1 and says exactly what to do', async () => {
    const { code, output } = await run({ KOKORO_MODEL_DIR: '/nonexistent/model' });
    expect(code).toBe(1);
    expect(output).toMatch(/Model directory \/nonexistent\/model does not exist/);
    expect(output).toMatch(/npm run fetch-model/);
    expect(output).toMatch(/KOKORO_FETCH_MODEL=1/);
  });

  it('with a bad setting, exits 2 and lists every problem', async () => {
    const { code, output } = await run({
      KOKORO_MODEL_DIR: STANDIN_MODEL_DIR,
      KOKORO_DEVICE: 'tpu',
      MAX_TEXT_CHARS: 'lots',
    });
    expect(code).toBe(2);
    expect(output).toMatch(/KOKORO_DEVICE="tpu" should be one of: auto, cuda, cpu/);
    expect(output).toMatch(/MAX_TEXT_CHARS="lots" should be a whole number/);
  });

  it('with KOKORO_DEVICE=cuda on a machine without CUDA, exits 1 naming the cause', async () => {
    const { code, output } = await run({ KOKORO_MODEL_DIR: STANDIN_MODEL_DIR, KOKORO_DEVICE: 'cuda' });
    expect(code).toBe(1);
    expect(output).toMatch(/KOKORO_DEVICE=cuda but the CUDA execution provider library/);
  });
});

describe('a server process, as npm start runs it', () => {
  // One process for what a healthy start shows: its warm-up ladder, its stage markers, its EMF
  // lines, and which modules its threads load (the record's hook). The last test stops it.
  const record = join(mkdtempSync(join(tmpdir(), 'kokoro-modules-')), 'loaded.txt');
  let server: ServerProcess;
  beforeAll(async () => {
    server = await startServerProcess({
      KOKORO_MODEL_DIR: STANDIN_MODEL_DIR,
      KOKORO_WORKERS: '1',
      KOKORO_WARMUP_LENGTHS: '510,16,128',
      LOG_LEVEL: 'info',
      METRICS_EMF: 'true',
      METRICS_EMF_INTERVAL_S: '1',
      METRICS_EMF_NAMESPACE: 'KokoroTest',
      METRICS_EMF_DIMENSIONS: 'EndpointName=test-endpoint,VariantName=AllTraffic',
      RECORD_MODULES_FILE: record,
      NODE_OPTIONS: `--import ${pathToFileURL(join(ROOT, 'test/fixtures/record-modules.mjs')).href}`,
    });
  });
  afterAll(() => server.stop());

  it('says 200 on /ping only after the warm-up ladder ran, and logs what each length cost', async () => {
    // startServerProcess returned at the first 200: the ladder was already done then.
    const ping = (await (await fetch(`${server.http}/ping`)).json()) as Record<string, unknown>;
    expect(ping.warmed_lengths).toEqual([16, 128, 510]);
    // The log line is written asynchronously, so it may arrive just after the first 200.
    const readyLine = () => server.logs().find((l) => l.msg === 'ready');
    await expect.poll(readyLine, { timeout: 5_000 }).toBeDefined();
    expect(readyLine()?.ladder).toEqual([
      expect.stringMatching(/^16:\d+\/\d+ms$/),
      expect.stringMatching(/^128:\d+\/\d+ms$/),
      expect.stringMatching(/^510:\d+\/\d+ms$/),
    ]);
  });

  it('marks each startup stage on stdout, in order, in the form T_total is measured from', async () => {
    await expect.poll(() => stagesOf(server.output).length, { timeout: 5_000 }).toBe(4);
    const stages = stagesOf(server.output);
    expect(stages.map((s) => s.name)).toEqual(['framework_init', 'weights_ready', 'warmup_done', 'ready']);
    const elapsed = stages.map((s) => s.elapsedS);
    expect([...elapsed].sort((a, b) => a - b)).toEqual(elapsed);
    // t is the wall clock of the same instant: the gaps agree with elapsed_s's to a few ms.
    const wall = stages.map((s) => Date.parse(s.t) / 1000);
    expect(Math.abs(wall[3]! - wall[0]! - (elapsed[3]! - elapsed[0]!))).toBeLessThan(0.05);
  });

  it('with METRICS_EMF, writes EMF lines with every request’s time to first audio', async () => {
    for (const text of ['One request.', 'Another one.']) {
      const res = await fetch(`${server.http}/invocations`, { method: 'POST', body: text });
      await res.arrayBuffer();
    }
    const emf = () =>
      server.output
        .filter((l) => l.startsWith('{"_aws"'))
        .map((l) => JSON.parse(l) as Record<string, unknown>);
    await expect
      .poll(() => emf().flatMap((d) => (d.TimeToFirstAudio as number[]) ?? []).length, {
        timeout: 10_000,
      })
      .toBe(2);
    const latency = emf().find((d) => 'TimeToFirstAudio' in d)!;
    expect(latency).toMatchObject({ EndpointName: 'test-endpoint', VariantName: 'AllTraffic' });
    expect(
      (latency._aws as { CloudWatchMetrics: { Namespace: string }[] }).CloudWatchMetrics[0]!.Namespace,
    ).toBe('KokoroTest');
    expect(emf().some((d) => 'OpenSessions' in d)).toBe(true);
    // The JSON log is unchanged beside them.
    expect(server.logs().some((l) => l.msg === 'synthesized')).toBe(true);
  });

  it('loads only compiled code and the packages it uses, in every thread', async () => {
    // Every encoder path too: the encoder worker loads its codecs on first use.
    for (const format of ['wav', 'mp3', 'opus', 'flac', 'mulaw', 'aac']) {
      const response = await fetch(`${server.http}/invocations`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ text: 'Hello there.', format, sample_rate: 8000 }),
      });
      expect(response.status, format).toBe(200);
      await response.arrayBuffer();
    }
    // Stopped first, so that everything its threads loaded is in the record.
    await server.stop();
    const loaded = [...new Set(readFileSync(record, 'utf8').split('\n').filter(Boolean))].map((f) =>
      f.startsWith('file:') ? fileURLToPath(f) : f,
    );
    const packages = new Set(
      loaded.flatMap((f) => /\/node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(f)?.[1] ?? []),
    );
    // The inference worker (onnxruntime-node, espeak-ng) and the encoder worker were recorded.
    expect(packages).toContain('onnxruntime-node');
    expect(packages).toContain('@echogarden/espeak-ng-emscripten');
    expect(packages).toContain('wasm-media-encoders');
    // kokoro-js is there for its voice files only; its JavaScript and its dependencies (its phonemizer
    // too) are never loaded.
    const unused = [...packages].filter((p) =>
      /^(kokoro-js|@huggingface\/|onnxruntime-web|sharp|@img\/|phonemizer|@aws-sdk\/|tsx|esbuild|typescript|vite|vitest)/.test(
        p,
      ),
    );
    expect(unused).toEqual([]);
    // The project's own code runs compiled: nothing from the TypeScript sources.
    const own = loaded.filter((f) => f.startsWith(ROOT) && !f.includes('/node_modules/'));
    expect(own.length).toBeGreaterThan(20);
    expect(own.filter((f) => !f.startsWith(join(ROOT, 'dist/')))).toEqual([]);
  });
});

describe('SIGTERM', () => {
  it('while draining, refuses new WebSocket upgrades and POSTs with 503 and Retry-After; finishes every request received before it, closes sessions with 1001 and exits 0', async () => {
    const ids = Array.from({ length: 20 }, (_, i) => `r${i}`);
    const { server, client } = await busySession(ids);
    server.child.kill('SIGTERM');
    await waitFor(async () => (await fetch(`${server.http}/ping`)).status === 503, {
      intervalMs: 20,
      what: '/ping to answer 503 (draining)',
    });
    const upgrade = await new Promise<{ status: number; retryAfter: string | undefined; body: string }>(
      (resolve, reject) => {
        const socket = new WebSocket(server.ws);
        socket.once('open', () => reject(new Error('the upgrade was accepted while draining')));
        socket.once('error', () => {});
        socket.once('unexpected-response', (_req, res) => {
          let body = '';
          res.on('data', (d: Buffer) => (body += d.toString()));
          res.on('end', () =>
            resolve({ status: res.statusCode ?? 0, retryAfter: res.headers['retry-after'], body }),
          );
        });
      },
    );
    const post = await fetch(`${server.http}/invocations`, {
      method: 'POST',
      headers: { 'content-type': 'text/plain' },
      body: 'Too late.',
    });
    // The session was still working through its messages when both were refused.
    expect(requestsOf(client.frames).filter((r) => r.complete).length).toBeLessThan(ids.length);
    expect(upgrade.status).toBe(503);
    expect(upgrade.retryAfter).toBe('1');
    expect(JSON.parse(upgrade.body)).toMatchObject({ type: 'error', code: 'shutting_down' });
    expect(post.status).toBe(503);
    expect(post.headers.get('retry-after')).toBe('1');
    expect(await post.json()).toMatchObject({ type: 'error', code: 'shutting_down' });

    // Every request received before SIGTERM is finished, the session closed with 1001, exit 0.
    expect(await server.stop()).toBe(0);
    const requests = requestsOf(client.frames);
    expect(requests.map((r) => [r.id, r.audio.length, r.complete !== undefined])).toEqual(
      ids.map((id) => [id, 8, true]),
    );
    expect(client.controls('error')).toEqual([]);
    await client.until((c) => c.closeCode !== undefined, 'close');
    expect(client.closeCode).toBe(1001);
  });
});
