/**
 * WS /invocations-bidirectional-stream: SageMaker's bidirectional streaming route, and WS
 * /v1/speak: Deepgram's protocol (deepgram.ts). Each connection is one Session (ws-session.ts).
 *
 * SageMaker connects to the path a client names as its ModelInvocationPath (with the
 * ModelQueryString as the query), so Pipecat's `v1/speak` arrives on /v1/speak; the same names in
 * `X-Amzn-SageMaker-Model-Invocation-Path` / `-Query-String` headers on the default path are
 * honoured too.
 */
import type { FastifyPluginAsync, FastifyRequest } from 'fastify';
import type { WebSocket } from 'ws';
import type { Config } from '../config.ts';
import type { Lifecycle } from '../lifecycle.ts';
import { DEEPGRAM_PATH, deepgramDialect, isDeepgramPath } from '../deepgram.ts';
import { TtsError, toErrorBody, ttsError } from '../errors.ts';
import type { SessionDialect } from '../session-messages.ts';
import { Session } from '../ws-session.ts';

export const BIDI_PATH = '/invocations-bidirectional-stream';

const INVOCATION_PATH_HEADER = 'x-amzn-sagemaker-model-invocation-path';
const QUERY_STRING_HEADER = 'x-amzn-sagemaker-model-query-string';

const header = (request: FastifyRequest, name: string): string | undefined => {
  const value = request.headers[name];
  return Array.isArray(value) ? value[0] : value;
};

export const bidiRoutes: FastifyPluginAsync<{ config: Config; lifecycle: Lifecycle }> = async (
  app,
  { config, lifecycle },
) => {
  /** The Deepgram dialect when the connection asks for it; throws what to tell the client. */
  const dialectOf = (request: FastifyRequest): SessionDialect | undefined => {
    const [path, query] = request.url.split('?', 2) as [string, string | undefined];
    const forwarded = header(request, INVOCATION_PATH_HEADER);
    if (path !== DEEPGRAM_PATH && !isDeepgramPath(forwarded)) return undefined;
    const params = new URLSearchParams(query ?? header(request, QUERY_STRING_HEADER) ?? '');
    return deepgramDialect(params, lifecycle.requireEngine(), config);
  };

  const open = (socket: WebSocket, request: FastifyRequest) => {
    if (lifecycle.state === 'draining') {
      socket.close(1001, 'server shutting down');
      return;
    }
    if (lifecycle.sessions >= config.maxSessions) {
      // 1013: try again later. The limit keeps memory and scheduling fair for those admitted.
      socket.close(1013, `the server has ${config.maxSessions} sessions open, its limit`);
      return;
    }
    let dialect: SessionDialect | undefined;
    try {
      dialect = dialectOf(request);
    } catch (err) {
      // Deepgram's way: the reason as a Warning, then the close (1008 a query it cannot serve,
      // 1013 not ready).
      const { body } = toErrorBody(err);
      socket.send(JSON.stringify({ type: 'Warning', description: body.message, code: body.code }));
      socket.close(err instanceof TtsError && err.code === 'invalid_option' ? 1008 : 1013, body.code);
      return;
    }
    new Session(socket, { config, lifecycle, log: request.log, ...(dialect ? { dialect } : {}) });
  };

  for (const url of [BIDI_PATH, DEEPGRAM_PATH]) {
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
      wsHandler: open,
    });
  }
};
