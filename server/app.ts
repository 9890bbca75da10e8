/**
 * Builds the Fastify app (plugins, parsers, error mapping, routes) without listening, so tests
 * build it with a test config and the process in main.ts only listens and handles signals.
 */
import websocket from '@fastify/websocket';
import Fastify, {
  type FastifyBaseLogger,
  type FastifyError,
  type FastifyInstance,
  type FastifyReply,
} from 'fastify';
import type { Config } from './config/config.ts';
import type { Dialect } from './dialects/dialect.ts';
import { DIALECTS } from './dialects/registry.ts';
import {
  MEDIA_TYPES,
  TtsError,
  errorHeaders,
  fromFastifyError,
  rawHttpRefusal,
  toHttpErrorBody,
  ttsError,
} from './http/errors.ts';
import type { Lifecycle } from './http/lifecycle.ts';
import { PlainText } from './http/request.ts';
import { isUpgrade, registerSecurity } from './http/security.ts';
import { recordRefusal } from './observability/outcomes.ts';
import { bidiRoutes } from './routes/bidi.ts';
import { metricsRoutes } from './routes/metrics.ts';
import { isPagePath, pageRoutes } from './routes/page.ts';
import { phonemizeRoutes } from './routes/phonemize.ts';
import { pingRoutes } from './routes/ping.ts';
import { WS_MAX_FRAGMENTS } from './session/ws-session.ts';

const utf8 = new TextDecoder('utf-8', { fatal: true });

/** Bodies are UTF-8: another declared charset is refused, and so are bytes that are not UTF-8. */
function decodeUtf8Body(contentType: string | undefined, body: Buffer): string {
  const charset = /;\s*charset\s*=\s*"?([^";\s]+)/i.exec(contentType ?? '')?.[1]?.toLowerCase();
  if (charset && charset !== 'utf-8' && charset !== 'utf8' && charset !== 'us-ascii') {
    throw ttsError('TTS_ERR_UNSUPPORTED_MEDIA_TYPE', `charset=${charset} is not supported; send UTF-8`);
  }
  try {
    return utf8.decode(body);
  } catch {
    throw ttsError('TTS_ERR_INVALID_UTF8', 'The body is not valid UTF-8 text');
  }
}

/** Parses a JSON body; one that is not JSON is refused as `invalid_json`, saying why. */
function parseJsonBody(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch (err) {
    throw ttsError(
      'TTS_ERR_INVALID_JSON',
      `The body is not valid JSON (${(err as Error).message}); send an object such as {"text": "Hello"}`,
    );
  }
}

export interface AppDeps {
  readonly logger: FastifyBaseLogger;
  readonly lifecycle: Lifecycle;
  /** The wire dialects served: the registry's unless given. */
  readonly dialects?: readonly Dialect[];
}

/**
 * A client that pipelines requests without reading the answers makes the server parse, run and
 * buffer every one of them (Node reads a whole TCP chunk of requests at once). Past `limit`
 * unanswered requests on one connection, the connection is closed instead: the requests already
 * running finish or are cut, the rest never run.
 */
function limitPipelining(app: FastifyInstance, limit: number, log: FastifyBaseLogger): void {
  const unanswered = new WeakMap<object, number>();
  app.addHook('onRequest', async (request, reply) => {
    const socket = request.raw.socket;
    const count = (unanswered.get(socket) ?? 0) + 1;
    unanswered.set(socket, count);
    if (count <= limit) return;
    if (count === limit + 1) {
      log.warn(
        { limit, remote: request.ip },
        'closing a connection that pipelines past its limit without reading',
      );
    }
    reply.hijack();
    socket.destroy();
  });
  app.addHook('onResponse', async (request) => {
    const socket = request.raw.socket;
    unanswered.set(socket, Math.max(0, (unanswered.get(socket) ?? 1) - 1));
  });
}

/** Time a client has to answer our close frame before its socket is destroyed. */
const WS_CLOSE_TIMEOUT_MS = 2000;

/**
 * While draining, new work is refused at the HTTP level: POSTs and WebSocket upgrades get 503 with
 * `Retry-After`, because a router or load balancer can retry an HTTP refusal on another instance,
 * but not a session that was accepted and then closed. `/ping` (503 draining) and `/metrics` still
 * answer; sessions already open finish the messages they have received.
 */
function refuseNewWorkWhileDraining(app: FastifyInstance, lifecycle: Lifecycle): void {
  app.addHook('onRequest', async (request, reply) => {
    if (lifecycle.state !== 'draining') return;
    const path = request.url.split('?')[0];
    if (path === '/ping' || path === '/metrics') return;
    const refusal = ttsError(
      'TTS_ERR_SHUTTING_DOWN',
      'The server is shutting down and takes no new requests; retry on another instance',
    );
    if (isUpgrade(request)) {
      reply.hijack();
      request.raw.socket.end(rawHttpRefusal(refusal));
      return;
    }
    throw refusal;
  });
}

export async function buildApp(config: Config, deps: AppDeps): Promise<FastifyInstance> {
  const dialects = deps.dialects ?? DIALECTS;
  const app = Fastify({
    loggerInstance: deps.logger,
    bodyLimit: config.maxBodyBytes,
    // Streams can be long: no request timeout; keep-alive sockets are closed on shutdown.
    requestTimeout: 0,
    // A connection on which no byte moves either way for this long is closed: a client that stops
    // reading a response would otherwise hold the stream (and its buffers) forever. Streams that
    // are being read, and WebSocket sessions (upgraded), are not affected.
    connectionTimeout: config.httpStallTimeoutS * 1000,
    // While closing, requests still arriving on open connections go through the hooks as before:
    // the drain hook answers them with our coded 503 (`shutting_down`, `Retry-After`), not
    // Fastify's uncoded one. Fastify still marks those answers `Connection: close`.
    return503OnClosing: false,
    forceCloseConnections: 'idle',
    requestIdHeader: 'x-amzn-requestid',
    // Errors Fastify meets before routing (a URL it cannot decode) get the coded body too.
    frameworkErrors: (err, request, reply) => {
      const { status, body } = toHttpErrorBody(fromFastifyError(err, config.maxBodyBytes));
      recordRefusal(request.log, deps.lifecycle.metrics, err, status, body.code, undefined);
      void (reply as FastifyReply).code(status).type('application/json').send(body);
    },
  });

  // JSON and plain text bodies. A body that starts with `{` (after white space) is JSON whatever
  // its type, as on the WebSocket route: `curl -d '{"text":"Hi"}'` sends it as a form. Other form
  // and plain text bodies are the text to speak; any other type is answered with 415.
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('application/json', { parseAs: 'buffer' }, (req, body, done) => {
    try {
      done(null, parseJsonBody(decodeUtf8Body(req.headers['content-type'], body as Buffer)));
    } catch (err) {
      done(err as FastifyError, undefined);
    }
  });
  app.addContentTypeParser(
    ['text/plain', 'application/x-www-form-urlencoded'],
    { parseAs: 'buffer' },
    (req, body, done) => {
      try {
        const text = decodeUtf8Body(req.headers['content-type'], body as Buffer);
        const json = text.trimStart();
        done(null, json.startsWith('{') ? parseJsonBody(json) : new PlainText(text));
      } catch (err) {
        done(err as FastifyError, undefined);
      }
    },
  );
  app.addContentTypeParser('*', { parseAs: 'buffer' }, (req, body, done) => {
    let json: string | undefined;
    try {
      json = decodeUtf8Body(req.headers['content-type'], body as Buffer).trimStart();
    } catch {
      // Neither a known type nor JSON: refused for its type below.
    }
    try {
      if (!json?.startsWith('{')) throw ttsError('TTS_ERR_UNSUPPORTED_MEDIA_TYPE', MEDIA_TYPES);
      done(null, parseJsonBody(json));
    } catch (err) {
      done(err as FastifyError, undefined);
    }
  });

  app.setErrorHandler((err: FastifyError, request, reply) => {
    const mapped = err instanceof TtsError ? err : fromFastifyError(err, config.maxBodyBytes);
    const { status, body } = toHttpErrorBody(mapped);
    recordRefusal(request.log, deps.lifecycle.metrics, err, status, body.code, body.request_id);
    return reply.code(status).headers(errorHeaders(mapped)).type('application/json').send(body);
  });
  const routeListing = ['GET /ping', ...dialects.map((d) => d.listing)].join(', ');
  app.setNotFoundHandler((request, reply) =>
    reply
      .code(404)
      .send(
        toHttpErrorBody(
          ttsError('TTS_ERR_NOT_FOUND', `No route ${request.method} ${request.url}; routes: ${routeListing}`),
        ).body,
      ),
  );

  registerSecurity(app, config, { isOpen: (path) => config.webPage && isPagePath(path), dialects });
  limitPipelining(app, config.httpMaxPipelined, deps.logger);
  refuseNewWorkWhileDraining(app, deps.lifecycle);

  await app.register(websocket, {
    options: {
      maxPayload: config.wsMaxMessageBytes,
      // Invalid UTF-8 gets an error frame and the session lives on, so we check it ourselves.
      skipUTF8Validation: true,
      // One message per turn of the event loop (ws emits each in its own setImmediate), instead of
      // every message of a socket read in one go: a read holds thousands of small messages, and
      // /ping, pongs and other sessions waited for all of them (2-3 s for 20,000 context opens and
      // drops); ws then reads the socket again only as fast as the session takes them.
      allowSynchronousEvents: false,
      // A browser's token travels as an offered `bearer.…` subprotocol (http/security.ts): never
      // selected, so it is not echoed back; the first other one offered is.
      handleProtocols: (protocols: Set<string>) =>
        [...protocols].find((p) => !p.startsWith('bearer.')) ?? false,
      // After a close frame, how long to wait for the client's before the socket is destroyed
      // (ws 8.19+; @types/ws does not know it yet).
      ...({ closeTimeout: WS_CLOSE_TIMEOUT_MS } as object),
      // ws 8.20+ (not in @types/ws either): stated here so the error frame can name the number.
      ...({ maxFragments: WS_MAX_FRAGMENTS } as object),
    },
    errorHandler: (error, socket, request) => {
      // A protocol violation the ws library caught (too many fragments: 1008; a message over
      // WS_MAX_MESSAGE_BYTES: 1009) has already sent its close frame, and ws keeps reading and
      // discarding until the client answers or closeTimeout passes. Destroying the socket now would
      // reset the connection and lose that close frame: the client would see 1006, not why.
      if ((error as NodeJS.ErrnoException).code?.startsWith('WS_ERR_')) {
        request.log.info({ err: error.message }, 'closing a session that broke the protocol');
        return;
      }
      request.log.warn({ err: error.message }, 'websocket error');
      socket.terminate();
    },
  });
  await app.register(pingRoutes, { lifecycle: deps.lifecycle });
  await app.register(metricsRoutes, { lifecycle: deps.lifecycle });
  await app.register(bidiRoutes, { config, lifecycle: deps.lifecycle, dialects });
  for (const { routes = [] } of dialects) {
    for (const { plugin, prefix } of routes) {
      await app.register(plugin, {
        ...(prefix !== undefined ? { prefix } : {}),
        config,
        lifecycle: deps.lifecycle,
      });
    }
  }
  await app.register(phonemizeRoutes, { prefix: '/v1', config, lifecycle: deps.lifecycle });
  if (config.webPage) await app.register(pageRoutes);
  return app;
}
