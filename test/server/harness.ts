/**
 * Starts the real server (Fastify app + worker pool running the stand-in ONNX model through
 * onnxruntime-node) on a free loopback port, for black-box tests with real clients. It is the
 * compiled server in dist/ (what `npm start` and the image run), so `npm test` builds first.
 */
import { fileURLToPath } from 'node:url';
import type { FastifyInstance } from 'fastify';
import type { DestinationStream } from 'pino';
import { createEngine, type Engine, type EngineOptions } from '../../dist/model/engine.js';
import { buildApp } from '../../dist/server/app.js';
import { engineOptions, parseConfig, type Config } from '../../dist/server/config/config.js';
import { engineEvents } from '../../dist/server/observability/engine-events.js';
import { Lifecycle } from '../../dist/server/http/lifecycle.js';
import { createLogger } from '../../dist/server/observability/logger.js';

export const STANDIN_MODEL_DIR = fileURLToPath(new URL('../fixtures/standin-model', import.meta.url));
/** The stand-in with a durations output, which times words. */
export const TIMESTAMPED_MODEL_DIR = fileURLToPath(
  new URL('../fixtures/standin-model-timestamped', import.meta.url),
);

/**
 * Engine options for a test that starts an engine of its own, as the server fills them from its
 * settings: `env` over one worker of one thread on the stand-in model, on the CPU, with ONNX
 * Runtime's log quiet.
 */
export function testEngineOptions(env: Record<string, string> = {}): EngineOptions {
  const config = parseConfig({
    KOKORO_MODEL_DIR: STANDIN_MODEL_DIR,
    KOKORO_DEVICE: 'cpu',
    KOKORO_WORKERS: '1',
    KOKORO_INTRA_OP_THREADS: '1',
    ...env,
  });
  return { ...engineOptions(config), logSeverity: 3 };
}

export interface TestServer {
  readonly config: Config;
  readonly app: FastifyInstance;
  readonly lifecycle: Lifecycle;
  readonly engine: Engine | undefined;
  readonly http: string;
  readonly ws: string;
  close(): Promise<void>;
}

/**
 * Builds and starts a server; `ready: false` leaves it in the starting state (no engine). Its log
 * is the process's own logger (LOG_LEVEL, silent by default), written to `log` when given.
 */
export async function startServer(
  env: Record<string, string> = {},
  options: { ready?: boolean; log?: DestinationStream } = {},
): Promise<TestServer> {
  const config = parseConfig({
    KOKORO_MODEL_DIR: STANDIN_MODEL_DIR,
    // misaki's lexicons, as the test setup provides them (test/lexicon-setup.ts).
    ...(process.env.KOKORO_LEXICON_DIR ? { KOKORO_LEXICON_DIR: process.env.KOKORO_LEXICON_DIR } : {}),
    KOKORO_WORKERS: '1',
    KOKORO_INTRA_OP_THREADS: '1',
    // American English warm, as every test needs it; British loads at its first sentence, which
    // saves each test server a lexicon's load (a file's tests that need more ask for it).
    KOKORO_WARM_LANGUAGES: 'a',
    LOG_LEVEL: 'silent',
    PORT: '0',
    HOST: '127.0.0.1',
    ...env,
  });
  const lifecycle = new Lifecycle();
  const logger = createLogger(config.logLevel, options.log);
  const app = await buildApp(config, { logger, lifecycle });
  await app.listen({ port: 0, host: '127.0.0.1' });
  let engine: Engine | undefined;
  if (options.ready !== false) {
    engine = await createEngine(
      {
        ...engineOptions(config),
        device: 'cpu',
        logSeverity: 3,
        faultInjection: env.FAULT_INJECTION === '1',
      },
      // The process's own wiring of engine events to logs and metrics (server/main.ts uses it too).
      engineEvents(logger, lifecycle.metrics),
    );
    lifecycle.setReady(engine);
  }
  const address = app.server.address();
  if (!address || typeof address === 'string') throw new Error('no address');
  const base = `127.0.0.1:${address.port}`;
  return {
    config,
    app,
    lifecycle,
    engine,
    http: `http://${base}`,
    ws: `ws://${base}/invocations-bidirectional-stream`,
    async close() {
      await app.close();
      await engine?.dispose();
    },
  };
}

const shared = new Map<string, Promise<TestServer>>();

/**
 * A server shared by every test file that asks for the same settings: the server project runs its
 * files one after another in one process (vitest.config.ts), so one start serves them all, and it
 * ends with the process. Its `close()` does nothing. For files whose tests leave nothing behind
 * that another file would see; a file that counts from zero, crashes a worker or holds sessions
 * open starts a server of its own.
 */
export async function sharedServer(env: Record<string, string> = {}): Promise<TestServer> {
  const key = JSON.stringify(Object.entries(env).sort());
  let server = shared.get(key);
  if (!server) {
    server = startServer(env);
    shared.set(key, server);
  }
  return { ...(await server), close: async () => {} };
}

export { TestClient, requestsOf, type Frame } from '../test-client.ts';

/** Pieces of one to four characters, as an LLM's tokens come. */
export function llmTokens(text: string): string[] {
  const out: string[] = [];
  for (let i = 0; i < text.length; ) {
    const n = 1 + (i % 4);
    out.push(text.slice(i, i + n));
    i += n;
  }
  return out;
}

/**
 * Where two byte arrays first differ, as a sentence; undefined when they hold the same bytes.
 * For `expect(bytesDiff(a, b)).toBeUndefined()`: `toEqual` walks large typed arrays element by
 * element and takes about a second per half megabyte of audio.
 */
export function bytesDiff(actual: Uint8Array, expected: Uint8Array): string | undefined {
  const a = Buffer.from(actual.buffer, actual.byteOffset, actual.byteLength);
  const b = Buffer.from(expected.buffer, expected.byteOffset, expected.byteLength);
  if (a.equals(b)) return undefined;
  let at = 0;
  while (at < a.length && at < b.length && a[at] === b[at]) at++;
  return `${a.length} bytes against ${b.length}, first different at byte ${at}`;
}

/** A text's raw PCM16 from POST /invocations: what another route's or dialect's audio must equal. */
export async function referencePcm(
  server: TestServer,
  text: string,
  voice = 'af_heart',
  sampleRate = 24_000,
): Promise<Buffer> {
  const response = await fetch(`${server.http}/invocations`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ text, voice, format: 'pcm', sample_rate: sampleRate }),
  });
  if (response.status !== 200) throw new Error(`POST /invocations answered ${response.status}`);
  return Buffer.from(await response.arrayBuffer());
}
