/**
 * POST /v1/phonemize: what the front end makes of a text, without synthesizing it (as
 * Kokoro-FastAPI's `/dev/phonemize`): `{"text", "lang"}` → `{"phonemes", "tokens", "front_end",
 * "lang"}`. The phonemes can be sent back, edited or not, as a synthesis request's `phonemes`.
 * The front end runs in an inference worker, a sentence-sized piece at a time, below every
 * listener's next sentence (model/inference/dispatch.ts); requests in flight are bounded per
 * client (remote address) and in all, past which they are refused at once with `Retry-After`.
 */
import type { FastifyPluginAsync } from 'fastify';
import { codePointLength } from '../../protocol/request.ts';
import type { Config } from '../config/config.ts';
import { ttsError } from '../http/errors.ts';
import type { Lifecycle } from '../http/lifecycle.ts';
import {
  parseNormalizationOptions,
  parseRequestPronunciations,
  type MarkupMode,
} from '../../model/engine.ts';
import { MARKUP_MODES, describe } from '../http/request.ts';

/** Seconds a refused client is told to wait, as for the server's other refusals under load. */
const RETRY_AFTER_S = 1;

export const phonemizeRoutes: FastifyPluginAsync<{ config: Config; lifecycle: Lifecycle }> = async (
  app,
  { config, lifecycle },
) => {
  const admit = admission(config);
  app.post('/phonemize', async (request) => {
    const engine = lifecycle.requireEngine();
    const body = request.body;
    if (body === null || typeof body !== 'object' || Array.isArray(body))
      throw ttsError(
        'TTS_ERR_BAD_REQUEST',
        'The JSON body should be an object such as {"text": "Hello", "lang": "a"}',
      );
    const fields = body as Record<string, unknown>;
    const { text, lang } = fields;
    if (text === undefined)
      throw ttsError('TTS_ERR_BAD_REQUEST', 'The request has no text: send {"text": "…"} to phonemize');
    if (typeof text !== 'string')
      throw ttsError('TTS_ERR_INVALID_OPTION', `text should be a string; got ${describe(text)}`);
    if (text.trim() === '')
      throw ttsError('TTS_ERR_EMPTY_TEXT', 'text is empty: it should contain something to phonemize');
    const chars = codePointLength(text);
    if (chars > config.maxTextChars)
      throw ttsError(
        'TTS_ERR_TEXT_TOO_LONG',
        `text has ${chars} characters, over the limit of ${config.maxTextChars} per request`,
      );
    if (lang !== undefined && typeof lang !== 'string')
      throw ttsError(
        'TTS_ERR_INVALID_OPTION',
        `lang should be a string such as "a", "b" or "fr-FR"; got ${describe(lang)}`,
      );
    // The default voice's language unless the request names one, by the rules of synthesis; and
    // the text read as a synthesis request's would be: markup, dictionaries, normalizer switches.
    const voice = engine.voices.resolve(config.defaultVoice, lang);
    const markup = fields.markup === undefined ? 'auto' : fields.markup;
    if (typeof markup !== 'string' || !MARKUP_MODES.includes(markup as MarkupMode))
      throw ttsError(
        'TTS_ERR_INVALID_OPTION',
        `markup should be one of: ${MARKUP_MODES.join(', ')}; got ${describe(markup)}`,
        { data: { param: 'markup' } },
      );
    const pronunciations =
      fields.pronunciations === undefined
        ? undefined
        : parseRequestPronunciations(fields.pronunciations, voice.lang);
    const normalization =
      fields.normalization_options === undefined
        ? undefined
        : parseNormalizationOptions(fields.normalization_options);
    const release = admit(request.ip);
    const result = await engine
      .phonemizeText(
        text,
        {
          voice,
          speed: 1,
          markup: markup as MarkupMode,
          firstChunk: 'sentence',
          ...(typeof lang === 'string' ? { lang } : {}),
          ...(pronunciations ? { pronunciations } : {}),
        },
        normalization,
      )
      .finally(release);
    return {
      phonemes: result.phonemes,
      tokens: result.ids,
      front_end: result.frontEnd,
      lang: result.lang,
      ...(result.segments.length > 1 || !('phonemes' in (result.segments[0] ?? {}))
        ? { segments: result.segments }
        : {}),
      ...(result.warnings.length > 0 ? { warnings: result.warnings } : {}),
    };
  });
};

/**
 * Counts requests in flight, in all and by client: `admit` takes a place (or refuses: 429 for a
 * client over its share before 503 for the server) and returns what gives it back. A request
 * holds at most one piece of text in the inference queue at a time, so this bounds the work queued.
 */
function admission(config: Config): (client: string) => () => void {
  let total = 0;
  const byClient = new Map<string, number>();
  return (client) => {
    const own = byClient.get(client) ?? 0;
    if (own >= config.phonemizeMaxPerClient)
      throw ttsError(
        'TTS_ERR_TOO_MANY_REQUESTS',
        `This client has ${own} phonemize requests in flight, the most one address may have (PHONEMIZE_MAX_PER_CLIENT); retry once one is answered`,
        { data: { retryAfterS: RETRY_AFTER_S } },
      );
    if (total >= config.phonemizeMaxQueued)
      throw ttsError(
        'TTS_ERR_BUSY',
        `The server has ${total} phonemize requests in flight, its limit (PHONEMIZE_MAX_QUEUED); retry shortly`,
        { data: { retryAfterS: RETRY_AFTER_S } },
      );
    total++;
    byClient.set(client, own + 1);
    return () => {
      total--;
      const left = byClient.get(client)! - 1;
      if (left === 0) byClient.delete(client);
      else byClient.set(client, left);
    };
  };
}
