/**
 * The server as a process, started exactly as `npm start` does: startup errors, and draining on
 * SIGTERM.
 */
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { startServerProcess } from '../../scripts/lib/server-process.ts';
import { STANDIN_MODEL_DIR, TestClient, requestsOf } from './harness.ts';

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

describe('npm start', () => {
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

  it('says 200 on /ping only after the warm-up ladder ran, and logs what each length cost', async () => {
    const server = await startServerProcess({
      KOKORO_MODEL_DIR: STANDIN_MODEL_DIR,
      KOKORO_WORKERS: '1',
      KOKORO_WARMUP_LENGTHS: '510,16,128',
      LOG_LEVEL: 'info',
    });
    try {
      // startServerProcess returned at the first 200: the ladder was already done then.
      const ping = (await (await fetch(`${server.http}/ping`)).json()) as Record<string, unknown>;
      expect(ping.warmed_lengths).toEqual([16, 128, 510]);
      const ready = server.output
        .map((l) => JSON.parse(l) as Record<string, unknown>)
        .find((l) => l.msg === 'ready');
      expect(ready?.ladder).toEqual([
        expect.stringMatching(/^16:\d+\/\d+ms$/),
        expect.stringMatching(/^128:\d+\/\d+ms$/),
        expect.stringMatching(/^510:\d+\/\d+ms$/),
      ]);
    } finally {
      await server.stop();
    }
  });

  it('on SIGTERM finishes every request received before it, closes sessions with 1001 and exits 0', async () => {
    const server = await startServerProcess({
      KOKORO_MODEL_DIR: STANDIN_MODEL_DIR,
      KOKORO_WORKERS: '1',
      SHUTDOWN_GRACE_S: '20',
    });
    const client = await TestClient.open(server.ws);
    const long = Array.from({ length: 8 }, (_, i) => `Sentence ${i + 1} of a queued request.`).join(' ');
    for (const id of ['a', 'b', 'c']) client.send({ text: long, request_id: id });
    await client.until((c) => c.frames.some((f) => f.kind === 'audio'), 'first audio');
    const code = await server.stop(); // one SIGTERM, as SageMaker sends
    expect(code).toBe(0);
    const requests = requestsOf(client.frames);
    expect(requests.map((r) => [r.id, r.audio.length, r.complete !== undefined])).toEqual([
      ['a', 8, true],
      ['b', 8, true],
      ['c', 8, true],
    ]);
    expect(client.controls('error')).toEqual([]);
    await client.until((c) => c.closeCode !== undefined, 'close');
    expect(client.closeCode).toBe(1001);
  });

  it('while draining, refuses new WebSocket upgrades and POSTs with 503 and Retry-After; the open session finishes', async () => {
    const server = await startServerProcess({
      KOKORO_MODEL_DIR: STANDIN_MODEL_DIR,
      KOKORO_WORKERS: '1',
      SHUTDOWN_GRACE_S: '20',
    });
    const client = await TestClient.open(server.ws);
    const long = Array.from({ length: 8 }, (_, i) => `Sentence ${i + 1} of a queued request.`).join(' ');
    const ids = Array.from({ length: 20 }, (_, i) => `r${i}`);
    for (const id of ids) client.send({ text: long, request_id: id });
    await client.until((c) => c.frames.some((f) => f.kind === 'audio'), 'first audio');
    server.child.kill('SIGTERM');
    for (;;) {
      const ping = await fetch(`${server.http}/ping`);
      if (ping.status === 503) break;
      await new Promise((r) => setTimeout(r, 20));
    }
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

    expect(await server.stop()).toBe(0);
    const requests = requestsOf(client.frames);
    expect(requests.map((r) => [r.id, r.audio.length, r.complete !== undefined])).toEqual(
      ids.map((id) => [id, 8, true]),
    );
    expect(client.closeCode).toBe(1001);
  });
});
