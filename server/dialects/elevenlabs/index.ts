/**
 * ElevenLabs' protocol: WS /v1/text-to-speech/{voice_id}/stream-input and /multi-stream-input,
 * POST /v1/text-to-speech/{voice_id}[/stream][/with-timestamps].
 */
import type { Dialect } from '../dialect.ts';
import { elevenLabsRoutes } from './routes.ts';
import { elevenLabsDialect, elevenLabsError, elevenLabsSocketPath } from './socket.ts';

export const elevenLabs: Dialect = {
  name: 'elevenlabs',
  socket: {
    paths: ['/v1/text-to-speech/:voice_id/stream-input', '/v1/text-to-speech/:voice_id/multi-stream-input'],
    accepts: (path) => elevenLabsSocketPath(path) !== undefined,
    open: (path, query, { lifecycle }) => {
      const { voiceId, multi } = elevenLabsSocketPath(path)!;
      return elevenLabsDialect(voiceId, multi, query, lifecycle.requireEngine());
    },
    refusal: (body) => elevenLabsError(body),
    keyInQuery: true,
  },
  routes: [{ plugin: elevenLabsRoutes, prefix: '/v1/text-to-speech' }],
  listing:
    'WS /v1/text-to-speech/{voice_id}/stream-input and /multi-stream-input, POST /v1/text-to-speech/{voice_id}[/stream]',
};
