/**
 * The OpenAI-compatible API under /v1: `POST /v1/audio/speech` (audio streamed as it is
 * synthesized, or OpenAI's speech events with `stream_format: "sse"`), `GET /v1/models`,
 * `GET /v1/models/:id` and `GET /v1/audio/voices`. Every error under /v1, the shared hooks' too
 * (bearer auth, the drain), answers in OpenAI's shape.
 */
import { Readable } from 'node:stream';
import type { FastifyError, FastifyPluginAsync } from 'fastify';
import { FORMATS } from '../../../protocol/formats.ts';
import { AUDIO_TOKENS_PER_SECOND, formatSpeechEvent, openAiModel } from '../../../protocol/openai.ts';
import type { Config } from '../../config/config.ts';
import { TtsError, errorHeaders, fromFastifyError, ttsError } from '../../http/errors.ts';
import { sendAudioStream, startHttpSynthesis, type HttpSynthesis } from '../../http/synthesis.ts';
import type { Lifecycle } from '../../http/lifecycle.ts';
import {
  modelEntry,
  modelList,
  parseSpeechRequest,
  toOpenAiError,
  unknownModel,
  voiceListing,
} from './speech.ts';
import { isCancelled, recordRefusal } from '../../observability/outcomes.ts';

export const openAiRoutes: FastifyPluginAsync<{ config: Config; lifecycle: Lifecycle }> = async (
  app,
  { config, lifecycle },
) => {
  app.setErrorHandler((err: FastifyError, request, reply) => {
    const mapped = err instanceof TtsError ? err : fromFastifyError(err, config.maxBodyBytes);
    const { status, body, code } = toOpenAiError(mapped);
    recordRefusal(request.log, lifecycle.metrics, err, status, code, undefined);
    return reply.code(status).headers(errorHeaders(mapped)).type('application/json').send(body);
  });
  app.setNotFoundHandler((request, reply) => {
    const { status, body } = toOpenAiError(
      ttsError(
        'TTS_ERR_NOT_FOUND',
        `No route ${request.method} ${request.url}; the OpenAI-compatible routes are POST /v1/audio/speech, GET /v1/models, GET /v1/audio/voices`,
      ),
    );
    return reply.code(status).send(body);
  });

  app.get('/models', async () => modelList());
  app.get<{ Params: { id: string } }>('/models/:id', async (request) => {
    const id = request.params.id;
    if (!openAiModel(id)) {
      throw unknownModel(
        `The model ${JSON.stringify(id.slice(0, 60))} does not exist here; GET /v1/models lists the ids`,
      );
    }
    return modelEntry(id);
  });
  app.get('/audio/voices', async () => voiceListing(lifecycle.requireEngine(), config.defaultVoice));

  app.post('/audio/speech', async (request, reply) => {
    const engine = lifecycle.requireEngine();
    const { options, streamFormat, speed } = parseSpeechRequest(request.body, { config, engine });
    reply.header('x-kokoro-speed', String(speed));
    const synthesis = startHttpSynthesis(request, reply, lifecycle, options, {
      limits: config,
    });
    if (streamFormat === 'sse') {
      reply.header('cache-control', 'no-cache').header('x-accel-buffering', 'no');
      return reply.type('text/event-stream; charset=utf-8').send(Readable.from(speechEvents(synthesis)));
    }
    return sendAudioStream(reply, synthesis, FORMATS[options.format].contentType(options.sampleRate));
  });
};

/**
 * OpenAI's speech events: one `speech.audio.delta` per encoded piece of audio (whole codec frames,
 * base64), then `speech.audio.done` with the usage; an `error` event if synthesis fails after the
 * stream began.
 */
async function* speechEvents(synthesis: HttpSynthesis): AsyncGenerator<string> {
  const { run, options, signal, log } = synthesis;
  try {
    for await (const bytes of run) {
      yield formatSpeechEvent('speech.audio.delta', {
        type: 'speech.audio.delta',
        audio: Buffer.from(bytes).toString('base64'),
      });
    }
  } catch (err) {
    if (signal.aborted || isCancelled(err)) return;
    const { status, body } = toOpenAiError(err);
    if (status >= 500) log.error({ err, ...run.figures() }, 'synthesis failed after the event stream began');
    yield formatSpeechEvent('error', { type: 'error', ...body });
    return;
  }
  const { audioS } = synthesis.completed('sse');
  const output = Math.round(audioS * AUDIO_TOKENS_PER_SECOND);
  yield formatSpeechEvent('speech.audio.done', {
    type: 'speech.audio.done',
    usage: { input_tokens: options.chars, output_tokens: output, total_tokens: options.chars + output },
  });
}
