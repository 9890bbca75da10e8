/**
 * Runs the replays of the Python agent frameworks' TTS clients (test/fixtures/python/) with
 * Debian's /usr/bin/python3 and the libraries they use (python3-websockets, python3-aiohttp), on a
 * server slow enough that a barge-in lands while a turn is still being synthesized.
 */
import { execFile, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { expect } from 'vitest';
import { writeStandinModelDir } from '../../scripts/lib/standin-model.ts';
import { startServer, type TestServer } from './harness.ts';

const run = promisify(execFile);
const PYTHON = '/usr/bin/python3';

/** The Debian package of each module the replays import. */
const PACKAGES = { websockets: 'python3-websockets', aiohttp: 'python3-aiohttp' } as const;

/**
 * Fails (never skips) when Debian's python3 lacks a module the replays need, naming the package
 * that provides it.
 */
export function expectPythonModules(...modules: (keyof typeof PACKAGES)[]): void {
  for (const module of modules) {
    const probe = spawnSync(PYTHON, ['-c', `import ${module}`]);
    expect(
      probe.status,
      `${PYTHON} cannot import ${module}: install Debian's ${PACKAGES[module]} (sh scripts/test-deps.sh)`,
    ).toBe(0);
  }
}

/**
 * Runs one replay (asynchronously: the server runs in this process) with its arguments, the
 * server's base URL first, and returns its JSON report.
 */
export async function replay<Report = Record<string, unknown>>(
  script: string,
  ...args: string[]
): Promise<Report> {
  const path = fileURLToPath(new URL(`../fixtures/python/${script}`, import.meta.url));
  const { stdout, stderr } = await run(PYTHON, [path, ...args], { timeout: 120_000 });
  expect(stderr).toBe('');
  return JSON.parse(stdout) as Report;
}

/**
 * A server whose stand-in model takes about 100 ms a sentence (its graph repeated 20 times, or
 * `repeat`), so that a long reply is still being synthesized when a client cuts it; `timestamps`:
 * a stand-in with durations. Voices besides those written come from kokoro-js, as on any server.
 */
export async function slowServer({
  repeat = 20,
  timestamps = false,
  voices = ['af_heart'],
  env = {},
}: {
  repeat?: number;
  timestamps?: boolean;
  voices?: string[];
  env?: Record<string, string>;
} = {}): Promise<{ server: TestServer; close(): Promise<void> }> {
  const dir = mkdtempSync(join(tmpdir(), 'kokoro-python-replay-'));
  await writeStandinModelDir(dir, { repeat, timestamps, voices, log: () => {} });
  const server = await startServer({ KOKORO_MODEL_DIR: dir, ...env });
  return {
    server,
    async close() {
      await server.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** An audio report of a replay: its byte count and SHA-256. */
export interface AudioReport {
  readonly bytes: number;
  readonly sha256: string;
}

/** A replay's audio report, without the other fields of the object holding it. */
export const audioOf = ({ bytes, sha256 }: AudioReport): AudioReport => ({ bytes, sha256 });

/** The report of `bytes`, to compare with a replay's. */
export function audioReport(bytes: Uint8Array): AudioReport {
  return { bytes: bytes.length, sha256: createHash('sha256').update(bytes).digest('hex') };
}

/** A server's count of requests whose client went away (its `tts_errors_total{code="client_gone"}`). */
export async function clientGone(server: TestServer): Promise<number> {
  return (await server.lifecycle.metrics.errorCounts()).get('client_gone') ?? 0;
}
