/**
 * The server as a process, started exactly as `npm start` does: startup errors, and draining on
 * SIGTERM.
 */
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
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
});
