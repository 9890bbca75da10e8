/** Cartesia's protocol: WS /tts/websocket, POST /tts/bytes and /tts/sse. */
import type { Dialect } from '../dialect.ts';
import { cartesiaRoutes } from './routes.ts';
import { CARTESIA_WS_PATH, cartesiaDialect, cartesiaError, isCartesiaSocketPath } from './socket.ts';

export const cartesia: Dialect = {
  name: 'cartesia',
  socket: {
    paths: [CARTESIA_WS_PATH],
    accepts: isCartesiaSocketPath,
    open: (_path, _query, { lifecycle }) => cartesiaDialect(lifecycle.requireEngine()),
    refusal: (body, status) => cartesiaError(body, status),
    keyInQuery: true,
  },
  routes: [{ plugin: cartesiaRoutes, prefix: '/tts' }],
  listing: 'WS /tts/websocket, POST /tts/bytes, POST /tts/sse',
};
