/**
 * Deepgram's protocol on /v1/speak, driven by a Python client that does exactly what Pipecat's
 * DeepgramSageMakerTTSService does (test/fixtures/pipecat_like_client.py, Debian's
 * python3-websockets), both on the path SageMaker connects to and through SageMaker's headers on
 * the default path. The query's refusals, the voice it names and bad messages are tested
 * in-process (test/app/deepgram.test.ts).
 */
import { execFile, spawnSync } from 'node:child_process';
import { promisify } from 'node:util';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServer, type TestServer } from './harness.ts';

const run = promisify(execFile);
const PYTHON = '/usr/bin/python3';
const CLIENT = fileURLToPath(new URL('../fixtures/pipecat_like_client.py', import.meta.url));
const HAVE_WEBSOCKETS = spawnSync(PYTHON, ['-c', 'import websockets']).status === 0;
const NOTE = HAVE_WEBSOCKETS
  ? ''
  : ' (skipped: Debian python3 with python3-websockets not installed; sh scripts/test-deps.sh installs it)';

let server: TestServer;
beforeAll(async () => {
  server = await startServer();
});
afterAll(() => server.close());

const base = () => server.ws.replace(/\/invocations-bidirectional-stream$/, '');

/** Runs the client (asynchronously: the server runs in this process) and returns its report. */
async function runClient(...args: string[]): Promise<Record<string, unknown>> {
  const { stdout, stderr } = await run(PYTHON, [CLIENT, base(), ...args], { timeout: 60_000 });
  expect(stderr).toBe('');
  return JSON.parse(stdout) as Record<string, unknown>;
}

describe.skipIf(!HAVE_WEBSOCKETS)(`Pipecat's DeepgramSageMakerTTSService, unchanged${NOTE}`, () => {
  for (const via of ['the v1/speak path', 'SageMaker’s invocation-path headers']) {
    it(`speaks, flushes, clears and closes over ${via}`, async () => {
      const report = await runClient(...(via.includes('headers') ? ['--via-headers'] : []));
      expect(report.opening).toEqual([
        {
          type: 'Metadata',
          request_id: expect.any(String),
          model_name: 'af_heart',
          model_version: 'kokoro-82m-v1.0',
          model_uuid: expect.any(String),
        },
        {
          type: 'Warning',
          code: 'MODEL_NOT_FOUND',
          description: expect.stringMatching(/aura-2-helena-en.*af_heart/),
        },
      ]);
      // linear16 at 24 kHz: two bytes a sample, audio before each Flushed.
      expect(report.first_audio).toBeGreaterThan(24_000);
      expect((report.first_audio as number) % 2).toBe(0);
      expect(report.first_controls).toEqual([{ type: 'Flushed', sequence_id: 0 }]);
      // After Cleared, exactly the next response's audio: nothing from before the Clear.
      expect(report.clear_controls).toEqual([{ type: 'Cleared', sequence_id: 0 }]);
      expect(report.after_clear_audio).toBe(report.short_audio);
      expect(report.after_clear_controls).toEqual([{ type: 'Flushed', sequence_id: 2 }]);
      expect(report.empty_flush_audio).toBe(0);
      expect(report.empty_flush_controls).toEqual([{ type: 'Flushed', sequence_id: 3 }]);
      expect(report.unknown_controls).toEqual([
        {
          type: 'Warning',
          code: 'unknown_type',
          description: expect.stringMatching(/Speak, Flush, Clear or Close/),
        },
      ]);
      expect(report.sequence).toEqual(['Flushed', 'Flushed', 'Cleared', 'Flushed', 'Flushed', 'Warning']);
      expect(report.close_code).toBe(1000);
      // mulaw at 8 kHz: one byte a sample, "Hello there." is well under a second.
      expect(report.mulaw_audio).toBeGreaterThan(2_000);
      expect(report.mulaw_audio).toBeLessThan(16_000);
    });
  }
});
