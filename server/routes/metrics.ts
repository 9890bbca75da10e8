/**
 * GET /metrics: Prometheus text format. Like /ping, it never waits for inference. The text is
 * rendered at most once a second and served from that copy in between, so a client hammering the
 * route (or pipelining thousands of requests) costs the server one render a second, not one each.
 */
import type { FastifyPluginAsync } from 'fastify';
import type { Lifecycle } from '../http/lifecycle.ts';

/** How long one rendering of the metrics is served. Scrapers ask every 10 s or more. */
export const METRICS_CACHE_MS = 1000;

export const metricsRoutes: FastifyPluginAsync<{ lifecycle: Lifecycle }> = async (app, { lifecycle }) => {
  const registry = lifecycle.metrics.registry;
  let cached: { text: Promise<string>; at: number } | undefined;
  app.get('/metrics', { logLevel: 'warn' }, async (_request, reply) => {
    const now = performance.now();
    if (!cached || now - cached.at >= METRICS_CACHE_MS) cached = { text: registry.metrics(), at: now };
    return reply.type(registry.contentType).send(await cached.text);
  });
};
