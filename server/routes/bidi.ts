/**
 * The WebSocket routes: each connection one Session (session/ws-session.ts) in the dialect its path
 * names, every dialect of the registry (dialects/registry.ts) on its socket paths.
 *
 * SageMaker connects to the path a client names as its ModelInvocationPath (with the
 * ModelQueryString as the query), so Pipecat's `v1/speak` arrives on /v1/speak; the same names in
 * `X-Amzn-SageMaker-Model-Invocation-Path` / `-Query-String` headers on the default path
 * (/invocations-bidirectional-stream) are honoured too, for every dialect.
 */
import type { FastifyPluginAsync, FastifyRequest } from 'fastify';
import type { WebSocket } from 'ws';
import type { Config } from '../config/config.ts';
import type { Dialect, DialectSocket, SessionDialect } from '../dialects/dialect.ts';
import type { Lifecycle } from '../http/lifecycle.ts';
import { TtsError, toErrorBody, ttsError } from '../http/errors.ts';
import { Session } from '../session/ws-session.ts';

const INVOCATION_PATH_HEADER = 'x-amzn-sagemaker-model-invocation-path';
const QUERY_STRING_HEADER = 'x-amzn-sagemaker-model-query-string';

const header = (request: FastifyRequest, name: string): string | undefined => {
  const value = request.headers[name];
  return Array.isArray(value) ? value[0] : value;
};

export const bidiRoutes: FastifyPluginAsync<{
  config: Config;
  lifecycle: Lifecycle;
  dialects: readonly Dialect[];
}> = async (app, { config, lifecycle, dialects }) => {
  const sockets = dialects.flatMap((d) => (d.socket ? [d.socket] : []));

  /**
   * The connection's dialect, from its path (or SageMaker's invocation path header) and query:
   * the socket entry that serves it, and how to open its session dialect. Opening throws what to
   * tell the client (an unknown voice, a format it cannot have).
   */
  const dialectOf = (
    request: FastifyRequest,
    own: DialectSocket,
  ): { socket: DialectSocket; build: () => SessionDialect | undefined } => {
    const [ownPath, ownQuery] = request.url.split('?', 2) as [string, string | undefined];
    const forwarded = own.forwardsInvocationPath ? header(request, INVOCATION_PATH_HEADER) : undefined;
    const [forwardedPath, forwardedQuery] = (forwarded ?? '').split('?', 2) as [string, string | undefined];
    const path = forwarded !== undefined ? `/${forwardedPath.replace(/^\/+/, '')}` : ownPath;
    const query = new URLSearchParams(
      ownQuery ?? header(request, QUERY_STRING_HEADER) ?? forwardedQuery ?? '',
    );
    // A path no dialect accepts (an invocation path of no protocol) gets the default path's.
    const socket =
      sockets.find((s) => s.accepts(path)) ?? sockets.find((s) => s.forwardsInvocationPath) ?? own;
    return { socket, build: () => socket.open(path, query, { config, lifecycle }) };
  };

  const open = (own: DialectSocket) => (socket: WebSocket, request: FastifyRequest) => {
    if (lifecycle.state === 'draining') {
      socket.close(1001, 'server shutting down');
      return;
    }
    if (lifecycle.sessions >= config.maxSessions) {
      // 1013: try again later. The limit keeps memory and scheduling fair for those admitted.
      socket.close(1013, `the server has ${config.maxSessions} sessions open, its limit`);
      return;
    }
    const { socket: served, build } = dialectOf(request, own);
    let dialect: SessionDialect | undefined;
    try {
      dialect = build();
    } catch (err) {
      // The reason in the dialect's words, then the close: 1008 a query the server cannot serve,
      // 1013 not ready.
      const { status, body } = toErrorBody(err);
      socket.send(JSON.stringify(served.refusal(body, status)));
      const notReady = !(err instanceof TtsError) || err.status >= 500;
      socket.close(notReady ? 1013 : 1008, body.code);
      return;
    }
    new Session(socket, { config, lifecycle, log: request.log, ...(dialect ? { dialect } : {}) });
  };

  for (const own of sockets) {
    for (const url of own.paths) {
      app.route({
        method: 'GET',
        url,
        // A plain GET (no upgrade) gets a readable answer instead of an empty 404.
        handler: async () => {
          throw ttsError(
            'TTS_ERR_UPGRADE_REQUIRED',
            `${url} is a WebSocket endpoint: connect with a WebSocket client`,
          );
        },
        wsHandler: open(own),
      });
    }
  }
};
