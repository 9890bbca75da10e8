/**
 * Optional protections for deployments outside SageMaker (inside it, the endpoint is already
 * behind IAM): a bearer token on everything but /ping, and CORS for browser clients. Both are off
 * unless configured.
 */
import { timingSafeEqual } from 'node:crypto';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Config } from './config.ts';
import { rawHttpRefusal, ttsError } from './errors.ts';

/** Routes a load balancer or SageMaker must reach without credentials. */
const OPEN_PATHS = new Set(['/ping']);

/** A request to upgrade to a WebSocket (Fastify routes it before the WebSocket plugin takes it). */
export function isUpgrade(request: FastifyRequest): boolean {
  return request.headers.upgrade?.toLowerCase() === 'websocket';
}

function sameToken(given: string, expected: string): boolean {
  const a = Buffer.from(given);
  const b = Buffer.from(expected);
  return a.length === b.length && timingSafeEqual(a, b);
}

export function registerSecurity(app: FastifyInstance, config: Config): void {
  const origins = config.corsOrigins;
  if (origins.length > 0) {
    const any = origins.includes('*');
    app.addHook('onRequest', async (request, reply) => {
      const origin = request.headers.origin;
      if (!origin || !(any || origins.includes(origin))) return;
      reply.header('access-control-allow-origin', any ? '*' : origin);
      reply.header('vary', 'Origin');
      reply.header('access-control-expose-headers', 'x-request-id');
      if (request.method === 'OPTIONS') {
        reply
          .header('access-control-allow-methods', 'GET, POST, OPTIONS')
          .header('access-control-allow-headers', 'authorization, content-type, accept')
          .header('access-control-max-age', '600')
          .code(204)
          .send();
      }
    });
  }

  const token = config.authToken;
  if (token) {
    app.addHook('onRequest', async (request, reply) => {
      if (request.method === 'OPTIONS' || OPEN_PATHS.has(request.url.split('?')[0]!)) return;
      const header = request.headers.authorization ?? '';
      const match = /^Bearer\s+(.+)$/i.exec(header);
      if (match && sameToken(match[1]!.trim(), token)) return;
      const refusal = ttsError(
        'TTS_ERR_UNAUTHORIZED',
        'Missing or wrong credentials: send Authorization: Bearer <token>',
      );
      if (isUpgrade(request)) {
        reply.hijack();
        request.raw.socket.end(rawHttpRefusal(refusal));
        return;
      }
      throw refusal;
    });
  }
}
