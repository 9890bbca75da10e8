/** OpenAI's speech API: POST /v1/audio/speech, GET /v1/models, GET /v1/audio/voices (no socket). */
import type { Dialect } from '../dialect.ts';
import { openAiRoutes } from './routes.ts';

export const openAi: Dialect = {
  name: 'openai',
  routes: [{ plugin: openAiRoutes, prefix: '/v1' }],
  listing: 'POST /v1/audio/speech, GET /v1/models, GET /v1/audio/voices',
};
