/**
 * The process: reads the configuration, listens at once (so /ping can say 503 while the model
 * loads), starts the engine, and drains on SIGTERM. SageMaker sends SIGTERM, then SIGKILL 30 s
 * later; everything accepted before SIGTERM is finished within SHUTDOWN_GRACE_S.
 */
import { existsSync } from 'node:fs';
import type { Logger } from 'pino';
import { pinMmapThreshold } from './allocator.ts';
import { createEngine, fetchModel, locateModel, type Engine } from '../model/engine.ts';
import { buildApp } from './app.ts';
import { ConfigError, engineOptions, parseConfig, type Config } from './config/config.ts';
import { EmfReporter } from './observability/emf.ts';
import { engineEvents } from './observability/engine-events.ts';
import { Lifecycle } from './http/lifecycle.ts';
import { createLogger } from './observability/logger.ts';
import { markStage } from './observability/startup-stages.ts';

const stdout = (line: string) => process.stdout.write(line.endsWith('\n') ? line : `${line}\n`);

async function ensureModel(config: Config, log: Logger): Promise<void> {
  const wanted = config.fetchModel || process.argv.includes('--fetch-model');
  if (!wanted || existsSync(config.modelDir)) return;
  log.info({ dir: config.modelDir, dtype: config.dtype }, 'fetching Kokoro-82M (KOKORO_FETCH_MODEL)');
  let lastPercent = -10;
  await fetchModel({
    outDir: config.modelDir,
    dtype: config.dtype,
    ...(config.hfEndpoint ? { baseUrl: config.hfEndpoint } : {}),
    onProgress: (event) => {
      const { bytes, totalBytes, totalKnown } = event.overall;
      if (!totalKnown || totalBytes === 0) return;
      const percent = Math.floor((100 * bytes) / totalBytes);
      if (percent >= lastPercent + 10) {
        lastPercent = percent;
        log.info({ percent, bytes }, 'fetching model');
      }
    },
  });
}

/** Time given to close frames (1001) to reach clients before their sockets are destroyed. */
const CLOSE_FRAME_MS = 1000;
/** Time given to an inference call still running at shutdown to return (see engine.dispose). */
const WORKER_STOP_MS = 2000;

/**
 * Closes the listener and every connection by `deadline` (epoch ms) plus the time for close frames:
 * a client that half-sent a request, or never reads its socket, must not keep the process alive
 * past SageMaker's SIGKILL, 30 s after SIGTERM. What remains then is destroyed, and logged.
 */
async function closeBy(
  app: Awaited<ReturnType<typeof buildApp>>,
  deadline: number,
  log: Logger,
): Promise<void> {
  const closing = app.close();
  const wait = (ms: number) =>
    new Promise<'late'>((resolve) => setTimeout(() => resolve('late'), ms).unref());
  if ((await Promise.race([closing, wait(Math.max(0, deadline - Date.now()) + CLOSE_FRAME_MS)])) !== 'late')
    return;
  const sockets = app.websocketServer.clients.size;
  for (const socket of app.websocketServer.clients) socket.terminate();
  app.server.closeAllConnections();
  log.warn({ websockets: sockets }, 'shutdown deadline: destroyed the connections still open');
  await Promise.race([closing, wait(CLOSE_FRAME_MS)]);
}

async function main(): Promise<void> {
  // First: this may re-execute the process (glibc reads the variable only at startup).
  const allocator = pinMmapThreshold();
  let config: Config;
  try {
    config = parseConfig(process.env);
  } catch (err) {
    if (err instanceof ConfigError) {
      process.stderr.write(`${err.message}\n`);
      process.exit(2);
    }
    throw err;
  }
  const log = createLogger(config.logLevel);
  markStage('framework_init', stdout);
  // A bug in one request must not take every session down: log it loudly and keep serving.
  process.on('unhandledRejection', (reason) => log.error({ err: reason }, 'unhandled rejection'));

  // Until the server listens there is nothing to drain: a signal during a model download exits.
  const early = (signal: NodeJS.Signals) => {
    log.info({ signal }, 'stopped before the server started');
    process.exit(0);
  };
  process.once('SIGTERM', early);
  process.once('SIGINT', early);
  try {
    await ensureModel(config, log);
    locateModel(config.modelDir, config.dtype); // fail fast, with the fix, before listening
    markStage('weights_ready', stdout);
  } catch (err) {
    log.fatal({ err: (err as Error).message }, 'cannot start: no usable model');
    process.stderr.write(`\n${(err as Error).message}\n`);
    process.exit(1);
  }

  const lifecycle = new Lifecycle();
  const app = await buildApp(config, { logger: log, lifecycle });
  await app.listen({ port: config.port, host: config.host });

  const emf = config.metricsEmf
    ? new EmfReporter(
        { namespace: config.metricsEmfNamespace, dimensions: config.metricsEmfDimensions },
        {
          errorCounts: () => lifecycle.metrics.errorCounts(),
          openSessions: () => lifecycle.sessions,
          httpStreams: () => lifecycle.httpStreams,
        },
        stdout,
      )
    : undefined;
  if (emf) {
    lifecycle.metrics.completionSink = (figures) => emf.record(figures);
    emf.start(config.metricsEmfIntervalS * 1000, (err) => log.warn({ err }, 'writing EMF metrics failed'));
  }

  let engine: Engine | undefined;
  let stopping = false;
  const shutdown = async (signal: string) => {
    if (stopping) {
      // A second Ctrl-C means "now"; a repeated SIGTERM does not cut the drain short.
      if (signal === 'SIGINT') {
        log.warn({ signal }, 'second interrupt: exiting now');
        process.exit(1);
      }
      return;
    }
    stopping = true;
    const deadline = Date.now() + config.shutdownGraceS * 1000;
    log.info({ signal, graceS: config.shutdownGraceS }, 'draining');
    const cut = await lifecycle.drain(config.shutdownGraceS * 1000);
    if (cut.length > 0) log.warn({ cut }, 'shutdown deadline: cut the work still in flight');
    await closeBy(app, deadline, log);
    await emf?.stop().catch((err: unknown) => log.warn({ err }, 'writing EMF metrics failed'));
    // A cut request's sentence may still be inside ONNX Runtime; its worker ends when that call
    // returns. Bounded so that the process is gone before SageMaker's SIGKILL.
    await engine?.dispose({ timeoutMs: WORKER_STOP_MS });
    log.info('stopped');
    process.exit(0);
  };
  process.off('SIGTERM', early);
  process.off('SIGINT', early);
  process.on('SIGTERM', (s) => void shutdown(s));
  process.on('SIGINT', (s) => void shutdown(s));

  try {
    engine = await createEngine(engineOptions(config), engineEvents(log, lifecycle.metrics));
  } catch (err) {
    lifecycle.setFailed();
    log.fatal({ err: (err as Error).message }, 'cannot start: the model failed to load');
    process.stderr.write(`\n${(err as Error).message}\n`);
    await app.close();
    process.exit(1);
  }
  if (stopping) return;
  markStage('warmup_done', stdout);
  const {
    provider,
    fallbackReason,
    modelFile,
    workers,
    dtype,
    warmupMs,
    warmupLadder,
    voices,
    formats,
    telemetry,
    english,
  } = engine.info;
  if (fallbackReason) log.warn({ reason: fallbackReason }, 'running on CPU: CUDA unavailable');
  lifecycle.setReady(engine);
  markStage('ready', stdout);
  const ladder = warmupLadder.map((s) => `${s.tokens}:${Math.round(s.firstMs)}/${Math.round(s.repeatMs)}ms`);
  log.info(
    {
      provider,
      modelFile,
      dtype,
      workers,
      voices,
      formats,
      warmupMs: Math.round(warmupMs),
      ladder,
      onnxruntimeTelemetry: telemetry,
      englishFrontEnd: english.frontEnd,
      malloc: allocator,
    },
    'ready',
  );
  if (english.frontEnd !== 'misaki')
    log.warn(
      { lexiconDir: english.lexiconDir },
      "English without misaki's lexicons: every word goes through misaki's espeak mapping (npm run fetch-model fetches them)",
    );
}

void main();
