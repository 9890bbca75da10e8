/**
 * Deepgram's text-to-speech over HTTP: `POST /v1/speak` and `POST /v2/speak` (Flux's batch route,
 * the same request), what Deepgram's SDK (`speak.v1.audio.generate`, `speak.v2.audio.generate`),
 * Pipecat's `DeepgramHttpTTSService` and LiveKit's Deepgram plugins (`synthesize()`) call. The
 * query names the voice (`model`), the encoding, container and rate; the body is `{"text": …}`;
 * the audio streams as it is synthesized. Errors answer in Deepgram's shape,
 * `{"err_code", "err_msg", "request_id"}`.
 */
import type { FastifyError, FastifyPluginAsync } from 'fastify';
import { FORMATS, type AudioFormat } from '../../../protocol/formats.ts';
import type { Config } from '../../config/config.ts';
import { deepgramVoice } from './socket.ts';
import { TtsError, errorHeaders, fromFastifyError, toErrorBody, ttsError } from '../../http/errors.ts';
import { headerText, sendAudioStream, startHttpSynthesis } from '../../http/synthesis.ts';
import type { Lifecycle } from '../../http/lifecycle.ts';
import { recordRefusal } from '../../observability/outcomes.ts';
import { offeredRate, parseOptions } from '../../http/request.ts';
import { bodyFields } from '../vendor-voices.ts';

/** Deepgram's error body. */
export function toDeepgramError(err: unknown): {
  status: number;
  code: string;
  body: { err_code: string; err_msg: string; request_id?: string };
} {
  const { status, body } = toErrorBody(err);
  return {
    status,
    code: body.code,
    body: {
      err_code: body.code.toUpperCase(),
      err_msg: body.message,
      ...(body.request_id !== undefined ? { request_id: body.request_id } : {}),
    },
  };
}

const invalid = (param: string, message: string) =>
  ttsError('TTS_ERR_INVALID_OPTION', message, { data: { param } });

/**
 * Deepgram's `encoding` and `container` as a format: linear16 is WAV unless the container is
 * `none` (Deepgram's default for it), mulaw and alaw raw; mp3, opus (Ogg), flac and aac as they are.
 */
function formatOf(encoding: string, container: string | null): AudioFormat {
  const codecs: Record<string, AudioFormat> = { mp3: 'mp3', opus: 'opus', flac: 'flac', aac: 'aac' };
  if (encoding === 'linear16') {
    if (container === null || container === 'wav') return 'wav';
    if (container === 'none') return 'pcm';
  } else if (encoding === 'mulaw' || encoding === 'alaw') {
    if (container === null || container === 'none') return encoding;
  } else if (Object.hasOwn(codecs, encoding)) {
    if (container === null || container === 'none' || (encoding === 'opus' && container === 'ogg'))
      return codecs[encoding]!;
  } else {
    throw invalid(
      'encoding',
      `encoding ${JSON.stringify(encoding.slice(0, 32))} is not supported; use linear16, mulaw, alaw, mp3, opus, flac or aac`,
    );
  }
  throw invalid(
    'container',
    `container ${JSON.stringify(String(container).slice(0, 16))} does not hold ${encoding} here`,
  );
}

export const deepgramHttpRoutes: FastifyPluginAsync<{ config: Config; lifecycle: Lifecycle }> = async (
  app,
  { config, lifecycle },
) => {
  app.setErrorHandler((err: FastifyError, request, reply) => {
    const mapped = err instanceof TtsError ? err : fromFastifyError(err, config.maxBodyBytes);
    const { status, body, code } = toDeepgramError(mapped);
    recordRefusal(request.log, lifecycle.metrics, err, status, code, undefined);
    return reply.code(status).headers(errorHeaders(mapped)).type('application/json').send(body);
  });

  app.post('/', async (request, reply) => {
    const engine = lifecycle.requireEngine();
    const query = new URLSearchParams(request.url.split('?', 2)[1] ?? '');
    const fields = bodyFields(request.body, '{"text": "Hello"}');
    const model = query.get('model');
    // As on the WebSocket: a Kokoro voice or a mapped Deepgram model, any other name the default voice.
    const { voice, known } = deepgramVoice(model, engine, config);
    if (!known) {
      // The name as the client sent it in the URL (percent-encoded): header-safe whatever it holds.
      // Cut at 64 code units, without the half of a surrogate pair that encodeURIComponent refuses.
      const named = model!.slice(0, 64).replace(/[\ud800-\udbff]$/, '');
      reply.header(
        'dg-warning',
        `model ${encodeURIComponent(named)} is not a Kokoro voice; spoke with ${voice}`,
      );
    }
    const format = formatOf(query.get('encoding') ?? 'linear16', query.get('container'));
    const rateText = query.get('sample_rate');
    const sampleRate = offeredRate(format, rateText === null ? undefined : Number(rateText), (rates) =>
      invalid(
        'sample_rate',
        `sample_rate ${JSON.stringify(rateText)} is not offered for this encoding; use one of ${rates}`,
      ),
    );
    const speedText = query.get('speed');
    const options = parseOptions(
      {
        text: fields.text,
        voice,
        format,
        sample_rate: sampleRate,
        markup: 'none',
        ...(speedText !== null ? { speed: Number(speedText) } : {}),
      },
      { route: 'http', config, engine },
    );
    // The voice passed the parser, which forgives Unicode white space around its parts: encoded.
    reply.header('dg-model-name', headerText(voice)).header('dg-char-count', String(options.chars));
    const synthesis = startHttpSynthesis(request, reply, lifecycle, options, {
      limits: config,
    });
    return sendAudioStream(reply, synthesis, FORMATS[format].contentType(sampleRate));
  });
};
