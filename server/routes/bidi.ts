/**
 * The WebSocket routes, each connection one Session (ws-session.ts) in the dialect its path names:
 * WS /invocations-bidirectional-stream (SageMaker's bidirectional streaming route: the project's
 * own protocol, with `?contexts=true` its contexts), WS /v1/speak and /v2/speak (Deepgram's Aura
 * and Flux, deepgram.ts),
 * WS /v1/text-to-speech/{voice_id}/stream-input and /multi-stream-input (ElevenLabs',
 * elevenlabs.ts) and WS /tts/websocket (Cartesia's, cartesia.ts).
 *
 * SageMaker connects to the path a client names as its ModelInvocationPath (with the
 * ModelQueryString as the query), so Pipecat's `v1/speak` arrives on /v1/speak; the same names in
 * `X-Amzn-SageMaker-Model-Invocation-Path` / `-Query-String` headers on the default path are
 * honoured too, for every dialect.
 */
import type { FastifyPluginAsync, FastifyRequest } from 'fastify';
import type { WebSocket } from 'ws';
import type { Config } from '../config.ts';
import type { Lifecycle } from '../http/lifecycle.ts';
import { CARTESIA_WS_PATH, cartesiaDialect, cartesiaError, isCartesiaSocketPath } from '../cartesia.ts';
import {
  DEEPGRAM_PATH,
  DEEPGRAM_V2_PATH,
  deepgramDialect,
  deepgramVersion,
  deepgramWarning,
} from '../deepgram.ts';
import { elevenLabsDialect, elevenLabsError, elevenLabsSocketPath } from '../elevenlabs.ts';
import { TtsError, toErrorBody, ttsError } from '../http/errors.ts';
import { nativeDialect, type SessionDialect } from '../session-messages.ts';
import { Session } from '../session/ws-session.ts';
import type { ErrorBody } from '../../protocol/errors.ts';

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
  /**
   * The connection's dialect, from its path (or SageMaker's invocation path header) and query,
   * and how that dialect words a refusal of the connection. Building it throws what to tell the
   * client (an unknown voice, a format it cannot have).
   */
  const dialectOf = (
    request: FastifyRequest,
  ): { build: () => SessionDialect | undefined; refusal: (body: ErrorBody, status: number) => object } => {
    const [own, ownQuery] = request.url.split('?', 2) as [string, string | undefined];
    const forwarded = own === BIDI_PATH ? header(request, INVOCATION_PATH_HEADER) : undefined;
    const [forwardedPath, forwardedQuery] = (forwarded ?? '').split('?', 2) as [string, string | undefined];
    const path = forwarded !== undefined ? `/${forwardedPath.replace(/^\/+/, '')}` : own;
    const query = new URLSearchParams(
      ownQuery ?? header(request, QUERY_STRING_HEADER) ?? forwardedQuery ?? '',
    );
    const deepgram = deepgramVersion(path);
    if (deepgram) {
      return {
        build: () => deepgramDialect(query, lifecycle.requireEngine(), config, deepgram),
        refusal: (body) => deepgramWarning(body.code, body.message),
      };
    }
    const elevenLabs = elevenLabsSocketPath(path);
    if (elevenLabs) {
      return {
        build: () =>
          elevenLabsDialect(elevenLabs.voiceId, elevenLabs.multi, query, lifecycle.requireEngine()),
        refusal: (body) => elevenLabsError(body),
      };
    }
    if (isCartesiaSocketPath(path)) {
      return {
        build: () => cartesiaDialect(lifecycle.requireEngine()),
        refusal: (body, status) => cartesiaError(body, status),
      };
    }
    return {
      build: () => {
        const contexts = query.get('contexts');
        if (contexts === null || contexts === 'false') return undefined;
        if (contexts !== 'true') {
          throw ttsError(
            'TTS_ERR_INVALID_OPTION',
            `contexts should be true or false; got ${JSON.stringify(contexts.slice(0, 20))}`,
          );
        }
        return nativeDialect({ contexts: true });
      },
      refusal: (body) => body,
    };
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
    const { build, refusal } = dialectOf(request);
    let dialect: SessionDialect | undefined;
    try {
      dialect = build();
    } catch (err) {
      // The reason in the dialect's words, then the close: 1008 a query the server cannot serve,
      // 1013 not ready.
      const { status, body } = toErrorBody(err);
      socket.send(JSON.stringify(refusal(body, status)));
      const notReady = !(err instanceof TtsError) || err.status >= 500;
      socket.close(notReady ? 1013 : 1008, body.code);
      return;
    }
    new Session(socket, { config, lifecycle, log: request.log, ...(dialect ? { dialect } : {}) });
  };

  const urls = [
    BIDI_PATH,
    DEEPGRAM_PATH,
    DEEPGRAM_V2_PATH,
    '/v1/text-to-speech/:voice_id/stream-input',
    '/v1/text-to-speech/:voice_id/multi-stream-input',
    CARTESIA_WS_PATH,
  ];
  for (const url of urls) {
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
