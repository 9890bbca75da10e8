/**
 * WS /invocations-bidirectional-stream: SageMaker's bidirectional streaming route. Each
 * connection is one Session (see session.ts).
 */
import type { FastifyPluginAsync } from 'fastify';
import type { Config } from '../config.ts';
import type { Lifecycle } from '../lifecycle.ts';
import { Session } from '../session.ts';

export const BIDI_PATH = '/invocations-bidirectional-stream';

export const bidiRoutes: FastifyPluginAsync<{ config: Config; lifecycle: Lifecycle }> = async (
  app,
  { config, lifecycle },
) => {
  app.get(BIDI_PATH, { websocket: true }, (socket, request) => {
    if (lifecycle.state === 'draining') {
      socket.close(1001, 'server shutting down');
      return;
    }
    new Session(socket, { config, lifecycle, log: request.log });
  });
};
