/** GET /metrics: Prometheus text format. Like /ping, it never waits for inference. */
import type { FastifyPluginAsync } from 'fastify';
import type { Lifecycle } from '../lifecycle.ts';

export const metricsRoutes: FastifyPluginAsync<{ lifecycle: Lifecycle }> = async (app, { lifecycle }) => {
  app.get('/metrics', { logLevel: 'warn' }, async (_request, reply) => {
    const registry = lifecycle.metrics.registry;
    return reply.type(registry.contentType).send(await registry.metrics());
  });
};
