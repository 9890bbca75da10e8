/**
 * WS /invocations-bidirectional-stream: SageMaker's bidirectional streaming route. Each
 * connection is one Session (see session.ts).
 */
import type { FastifyPluginAsync } from 'fastify';
import type { Config } from '../config.ts';
import type { Lifecycle } from '../lifecycle.ts';
import { ttsError } from '../errors.ts';
import { Session } from '../ws-session.ts';

export const BIDI_PATH = '/invocations-bidirectional-stream';

export const bidiRoutes: FastifyPluginAsync<{ config: Config; lifecycle: Lifecycle }> = async (
  app,
  { config, lifecycle },
) => {
  app.route({
    method: 'GET',
    url: BIDI_PATH,
    // A plain GET (no upgrade) gets a readable answer instead of an empty 404.
    handler: async () => {
      throw ttsError(
        'TTS_ERR_UPGRADE_REQUIRED',
        `${BIDI_PATH} is a WebSocket endpoint: connect with a WebSocket client`,
      );
    },
    wsHandler: (socket, request) => {
      if (lifecycle.state === 'draining') {
        socket.close(1001, 'server shutting down');
        return;
      }
      if (lifecycle.sessions >= config.maxSessions) {
        // 1013: try again later. The limit keeps memory and scheduling fair for those admitted.
        socket.close(1013, `the server has ${config.maxSessions} sessions open, its limit`);
        return;
      }
      new Session(socket, { config, lifecycle, log: request.log });
    },
  });
};
