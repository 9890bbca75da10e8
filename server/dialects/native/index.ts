/**
 * The project's own protocol: POST /invocations, and WS /invocations-bidirectional-stream
 * (SageMaker's bidirectional streaming route; with `?contexts=true`, its contexts).
 */
import { ttsError } from '../../http/errors.ts';
import type { Dialect } from '../dialect.ts';
import { invocationRoutes } from './invocations.ts';
import { nativeDialect } from './messages.ts';

export const BIDI_PATH = '/invocations-bidirectional-stream';

export const native: Dialect = {
  name: 'native',
  socket: {
    paths: [BIDI_PATH],
    accepts: (path) => path === BIDI_PATH,
    open: (_path, query) => {
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
    forwardsInvocationPath: true,
  },
  routes: [{ plugin: invocationRoutes }],
  listing: 'POST /invocations, WS /invocations-bidirectional-stream',
};
