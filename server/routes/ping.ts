/**
 * GET/POST /ping: SageMaker's health check. 200 only once every worker has loaded and warmed up
 * the model; 503 while starting, after a failed start, and while draining. It touches nothing
 * but memory, so it answers at once even while every worker is busy.
 */
import type { FastifyPluginAsync } from 'fastify';
import type { Lifecycle } from '../http/lifecycle.ts';

export const pingRoutes: FastifyPluginAsync<{ lifecycle: Lifecycle }> = async (app, { lifecycle }) => {
  const handler = async (_request: unknown, reply: { code(n: number): unknown }) => {
    const engine = lifecycle.engine;
    if (lifecycle.state !== 'ready' || !engine) {
      reply.code(503);
      return { status: lifecycle.state };
    }
    const load = engine.load();
    if (load.workers === 0) {
      // Every inference worker is down (being replaced): unhealthy until one is back.
      reply.code(503);
      return { status: 'degraded', workers: 0 };
    }
    const {
      provider,
      fallbackReason,
      dtype,
      layout,
      voices,
      languages,
      formats,
      warmupLadder,
      capabilities,
      telemetry,
      english,
    } = engine.info;
    return {
      status: 'healthy',
      provider,
      ...(fallbackReason ? { provider_fallback: fallbackReason } : {}),
      dtype,
      layout,
      workers: load.workers, // ready now, not as configured
      voices,
      languages,
      formats,
      capabilities: { word_timestamps: capabilities.timestamps },
      onnxruntime_telemetry: telemetry,
      english_front_end: english.frontEnd,
      warmed_lengths: warmupLadder.map((s) => s.tokens),
      queued: load.queued,
      busy: load.busy,
      sessions: lifecycle.sessions,
    };
  };
  // SageMaker pings every few seconds: keep those out of the info log.
  app.get('/ping', { logLevel: 'warn' }, handler);
  app.post('/ping', { logLevel: 'warn' }, handler);
};
