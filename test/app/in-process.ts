/**
 * The app built in-process over a fake engine (fake-engine.ts), for tests of the HTTP layer with
 * Fastify's `inject()` and in-process WebSocket sessions (ws-client.ts): no port, no worker, no
 * model. Its log lines are kept, parsed, for the tests that check what was logged.
 */
import { Writable } from 'node:stream';
import type { FastifyInstance } from 'fastify';
import pino from 'pino';
import { buildApp } from '../../dist/server/app.js';
import { parseConfig, type Config } from '../../dist/server/config/config.js';
import type { Dialect } from '../../dist/server/dialects/dialect.js';
import { Lifecycle } from '../../dist/server/http/lifecycle.js';
import { fakeEngine, type FakeEngine, type FakeEngineOptions } from './fake-engine.ts';

export interface InProcessApp {
  readonly app: FastifyInstance;
  readonly config: Config;
  readonly lifecycle: Lifecycle;
  /** Undefined while the app is left starting. */
  readonly engine: FakeEngine | undefined;
  /** The JSON log lines written so far. */
  logs(): Record<string, unknown>[];
  close(): Promise<void>;
}

/**
 * Builds the app with `env` as its environment (the model settings point nowhere: nothing is
 * loaded). `engine: false` leaves it starting, as while a model loads; `dialects` replaces the
 * registry's.
 */
export async function inProcessApp(
  env: Record<string, string> = {},
  options: { engine?: FakeEngineOptions | false; dialects?: readonly Dialect[] } = {},
): Promise<InProcessApp> {
  const config = parseConfig({ KOKORO_MODEL_DIR: '/nonexistent', LOG_LEVEL: 'info', ...env });
  const lines: string[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      lines.push(...chunk.toString().split('\n').filter(Boolean));
      done();
    },
  });
  const lifecycle = new Lifecycle();
  const app = await buildApp(config, {
    logger: pino({ level: config.logLevel }, sink),
    lifecycle,
    ...(options.dialects ? { dialects: options.dialects } : {}),
  });
  await app.ready();
  const engine = options.engine === false ? undefined : fakeEngine(options.engine);
  if (engine) lifecycle.setReady(engine);
  return {
    app,
    config,
    lifecycle,
    engine,
    logs: () => lines.map((line) => JSON.parse(line) as Record<string, unknown>),
    close: () => app.close(),
  };
}
