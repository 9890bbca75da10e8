/** Deepgram's protocol: Aura on WS and POST /v1/speak, Flux on WS and POST /v2/speak. */
import type { Dialect } from '../dialect.ts';
import { deepgramHttpRoutes } from './routes.ts';
import { DEEPGRAM_PATH, DEEPGRAM_V2_PATH, deepgramDialect, deepgramVersion, warningOf } from './socket.ts';

export const deepgram: Dialect = {
  name: 'deepgram',
  socket: {
    paths: [DEEPGRAM_PATH, DEEPGRAM_V2_PATH],
    accepts: (path) => deepgramVersion(path) !== undefined,
    open: (path, query, { config, lifecycle }) =>
      deepgramDialect(query, lifecycle.requireEngine(), config, deepgramVersion(path)),
    refusal: warningOf,
  },
  routes: [
    { plugin: deepgramHttpRoutes, prefix: DEEPGRAM_PATH },
    { plugin: deepgramHttpRoutes, prefix: DEEPGRAM_V2_PATH },
  ],
  listing: 'WS and POST /v1/speak and /v2/speak',
};
