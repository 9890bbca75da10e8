/**
 * Optional protections for deployments outside SageMaker (inside it, the endpoint is already
 * behind IAM): a bearer token on everything but /ping (and the browser page's static files), and
 * CORS for browser clients. Both are off unless configured.
 */
import { timingSafeEqual } from 'node:crypto';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Config } from '../config/config.ts';
import type { Dialect } from '../dialects/dialect.ts';
import { BEARER_PROTOCOL, KEY_HEADERS, KEY_PARAMS } from './credentials.ts';
import { rawHttpRefusal, ttsError } from './errors.ts';

/** Routes a load balancer or SageMaker must reach without credentials. */
const OPEN_PATHS = new Set(['/ping']);

/**
 * The socket paths whose key may travel in the query (KEY_PARAMS): those of the dialects whose
 * clients send it there (`keyInQuery`), as one pattern (a route's `:name` is one path segment).
 */
function keyInQueryPaths(dialects: readonly Dialect[]): RegExp {
  const paths = dialects.flatMap((d) => (d.socket?.keyInQuery ? d.socket.paths : []));
  const patterns = paths.map((p) =>
    p
      .split('/')
      .map((part) => (part.startsWith(':') ? '[^/]+' : part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')))
      .join('/'),
  );
  return patterns.length === 0 ? /(?!)/ : new RegExp(`^(?:${patterns.join('|')})$`);
}

/**
 * The token a request carries: `Authorization: Bearer …` (or `Token …`, as Deepgram's clients send
 * it), a vendor's key header (`xi-api-key`, `X-API-Key`); or for a WebSocket upgrade, a vendor's key
 * parameter in the query, or from a browser (which cannot set headers on one) a
 * `bearer.<base64url token>` subprotocol offered after the real one (`kokoro-tts`), which the
 * server then selects.
 */
function presentedToken(request: FastifyRequest, keyInQuery: RegExp): string | undefined {
  const match = /^(?:Bearer|Token)\s+(.+)$/i.exec(request.headers.authorization ?? '');
  if (match) return match[1]!.trim();
  for (const name of KEY_HEADERS) {
    const value = request.headers[name];
    if (typeof value === 'string' && value !== '') return value.trim();
  }
  if (!isUpgrade(request)) return undefined;
  const [path, search] = request.url.split('?', 2) as [string, string | undefined];
  const query = new URLSearchParams(keyInQuery.test(path) ? (search ?? '') : '');
  for (const name of KEY_PARAMS) {
    const value = query.get(name)?.replace(/^Bearer\s+/i, '');
    if (value) return value;
  }
  const offered = (request.headers['sec-websocket-protocol'] ?? '').split(',').map((p) => p.trim());
  const carried = offered.find((p) => p.startsWith(BEARER_PROTOCOL));
  return carried ? Buffer.from(carried.slice(BEARER_PROTOCOL.length), 'base64url').toString() : undefined;
}

/** A request to upgrade to a WebSocket (Fastify routes it before the WebSocket plugin takes it). */
export function isUpgrade(request: FastifyRequest): boolean {
  return request.headers.upgrade?.toLowerCase() === 'websocket';
}

function sameToken(given: string, expected: string): boolean {
  const a = Buffer.from(given);
  const b = Buffer.from(expected);
  return a.length === b.length && timingSafeEqual(a, b);
}

/**
 * Adds the hooks. `isOpen`: paths served without credentials besides /ping; `dialects`: the
 * registry, whose socket paths say where a key may come in the query.
 */
export function registerSecurity(
  app: FastifyInstance,
  config: Config,
  { isOpen = () => false, dialects }: { isOpen?: (path: string) => boolean; dialects: readonly Dialect[] },
): void {
  const keyInQuery = keyInQueryPaths(dialects);
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
      const path = request.url.split('?')[0]!;
      if (request.method === 'OPTIONS' || OPEN_PATHS.has(path) || isOpen(path)) return;
      const presented = presentedToken(request, keyInQuery);
      if (presented !== undefined && sameToken(presented, token)) return;
      const refusal = ttsError(
        'TTS_ERR_UNAUTHORIZED',
        'Missing or wrong credentials: send Authorization: Bearer <token> (or the key header of the protocol you speak: xi-api-key, X-API-Key, Authorization: Token)',
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
