/**
 * Cartesia's text-to-speech over HTTP, under /tts: `POST /tts/bytes` (the audio, streamed as it is
 * synthesized, in a raw, wav or mp3 container) and `POST /tts/sse` (Cartesia's `chunk`,
 * `timestamps`, `phoneme_timestamps` and `done` events, raw audio only), both in pieces of
 * Cartesia's chunk size. What Cartesia's SDK and LiveKit's plugin send is translated into the
 * server's request; every error under the prefix, the shared hooks' too (auth, the drain), answers
 * in Cartesia's shape, `{"error_code", "title", "message", "request_id"}` with `error` (the
 * message) for older clients.
 */
import { Readable } from 'node:stream';
import type { FastifyError, FastifyPluginAsync } from 'fastify';
import type { Engine, PhonemeTiming, WordTiming } from '../../../model/engine.ts';
import { FORMATS } from '../../../protocol/formats.ts';
import { sseEvent } from '../../../protocol/sse.ts';
import {
  CARTESIA_CHUNK_BYTES,
  cartesiaError,
  cartesiaPhonemes,
  cartesiaSpeed,
  cartesiaVoiceId,
} from './socket.ts';
import type { Config } from '../../config/config.ts';
import { TtsError, errorHeaders, fromFastifyError, toErrorBody, ttsError } from '../../http/errors.ts';
import {
  firstAudio,
  mapAudio,
  pieceAudio,
  sendAudioStream,
  startHttpSynthesis,
  type HttpSynthesis,
} from '../../http/synthesis.ts';
import type { Lifecycle } from '../../http/lifecycle.ts';
import { isCancelled, recordRefusal } from '../../observability/outcomes.ts';
import { describe, type SynthesisOptions } from '../../http/request.ts';
import { CARTESIA_VOICES, cartesiaOutput, pcm16ToFloat32 } from './voices.ts';
import {
  bodyFields,
  checkVendorModel,
  vendorLanguage,
  vendorOptions,
  vendorSpeed,
  vendorVoice,
  type VendorOutput,
} from '../vendor-voices.ts';

/** Cartesia's error body (its API of 2026), with `error` as its older clients read it. */
export interface CartesiaErrorBody {
  readonly error_code: string;
  readonly title: string;
  readonly message: string;
  readonly request_id: string;
  readonly error: string;
}

/** Any thrown value as Cartesia's error body, with its status and the server's own code. */
export function toCartesiaError(
  err: unknown,
  requestId: string,
): { status: number; body: CartesiaErrorBody; code: string } {
  const { status, body } = toErrorBody(err);
  return {
    status,
    code: body.code,
    body: {
      error_code: body.code,
      // As the WebSocket's error messages title it (socket.ts).
      title: body.code.replaceAll('_', ' '),
      message: body.message,
      request_id: body.request_id ?? requestId,
      error: body.message,
    },
  };
}

function invalid(param: string, message: string): never {
  throw ttsError('TTS_ERR_INVALID_OPTION', message, { data: { param } });
}

export interface CartesiaRequest {
  readonly options: SynthesisOptions;
  readonly output: VendorOutput;
  /** `context_id`, echoed on the events. */
  readonly contextId?: string;
}

/**
 * Checks a Cartesia `/tts/bytes` or `/tts/sse` body and translates it into the server's request.
 * `containers`: those the route offers (bytes: raw, wav, mp3; SSE: raw).
 */
export function parseCartesiaRequest(
  body: unknown,
  ctx: { config: Config; engine: Engine; containers: readonly string[]; sse: boolean },
): CartesiaRequest {
  const { engine } = ctx;
  const fields = bodyFields(
    body,
    '{"model_id": "sonic-3", "transcript": "Hello", "voice": {"mode": "id", "id": "af_heart"}, "output_format": {"container": "raw", "encoding": "pcm_s16le", "sample_rate": 24000}}',
  );
  const { transcript } = fields;
  if (transcript === undefined)
    throw ttsError('TTS_ERR_BAD_REQUEST', 'transcript is required: the text to speak', {
      data: { param: 'transcript' },
    });
  if (typeof transcript !== 'string')
    invalid('transcript', `transcript should be a string; got ${describe(transcript)}`);
  if (transcript.trim() === '')
    throw ttsError('TTS_ERR_EMPTY_TEXT', 'transcript is empty: it should contain something to speak', {
      data: { param: 'transcript' },
    });
  checkVendorModel(fields.model_id);

  const voice = vendorVoice(cartesiaVoiceId(fields.voice), CARTESIA_VOICES, engine);

  const output = cartesiaOutput(fields.output_format, ctx.containers);
  if (!engine.info.formats.includes(output.format)) {
    invalid(
      'output_format',
      `output_format ${JSON.stringify(fields.output_format).slice(0, 120)}: ${output.format} is not offered by this server; it offers ${engine.info.formats.join(', ')}`,
    );
  }

  const generation = fields.generation_config;
  if (
    generation !== undefined &&
    generation !== null &&
    (typeof generation !== 'object' || Array.isArray(generation))
  )
    invalid(
      'generation_config',
      `generation_config should be an object such as {"speed": 1.1}; got ${describe(generation)}`,
    );
  // generation_config.speed, else speed (a number, or slow / normal / fast), as on the WebSocket.
  const speed = vendorSpeed(cartesiaSpeed(fields) ?? 1, engine);

  if (fields.language != null && fields.locale != null)
    invalid('locale', 'send language or locale, not both');
  const languageParam = fields.locale != null ? 'locale' : 'language';
  const lang = vendorLanguage(fields[languageParam], languageParam, voice, engine);

  const normalization = fields.normalization ?? 'auto';
  if (typeof normalization !== 'string')
    invalid(
      'normalization',
      `normalization should be "auto", "off" or a locale; got ${describe(normalization)}`,
    );

  const timestamps = ctx.sse ? (fields.add_timestamps ?? false) : false;
  if (typeof timestamps !== 'boolean')
    invalid('add_timestamps', `add_timestamps should be true or false; got ${describe(timestamps)}`);
  const phonemeTimestamps = ctx.sse ? (fields.add_phoneme_timestamps ?? false) : false;
  if (typeof phonemeTimestamps !== 'boolean')
    invalid(
      'add_phoneme_timestamps',
      `add_phoneme_timestamps should be true or false; got ${describe(phonemeTimestamps)}`,
    );
  const contextId = ctx.sse ? fields.context_id : undefined;
  if (contextId !== undefined && contextId !== null && typeof contextId !== 'string')
    invalid('context_id', `context_id should be a string; got ${describe(contextId)}`);

  const options = vendorOptions(
    {
      text: transcript,
      voice,
      speed,
      output,
      lang,
      normalizeOff: normalization === 'off',
      timestamps: timestamps === true,
      phonemeTimestamps: phonemeTimestamps === true,
    },
    ctx,
  );
  return { options, output, ...(typeof contextId === 'string' ? { contextId } : {}) };
}

/** The content type of Cartesia output: the server's for its formats, 32-bit float PCM apart. */
function contentType(output: VendorOutput): string {
  return output.float
    ? `audio/pcm;rate=${output.sampleRate};encoding=f32le;channels=1`
    : FORMATS[output.format].contentType(output.sampleRate);
}

export const cartesiaRoutes: FastifyPluginAsync<{ config: Config; lifecycle: Lifecycle }> = async (
  app,
  { config, lifecycle },
) => {
  app.setErrorHandler((err: FastifyError, request, reply) => {
    const mapped = err instanceof TtsError ? err : fromFastifyError(err, config.maxBodyBytes);
    const { status, body, code } = toCartesiaError(mapped, request.id);
    recordRefusal(request.log, lifecycle.metrics, err, status, code, body.request_id);
    return reply.code(status).headers(errorHeaders(mapped)).type('application/json').send(body);
  });
  app.setNotFoundHandler((request, reply) => {
    const { status, body } = toCartesiaError(
      ttsError(
        'TTS_ERR_NOT_FOUND',
        `No route ${request.method} ${request.url}; the Cartesia-compatible routes are POST /tts/bytes and POST /tts/sse`,
      ),
      request.id,
    );
    return reply.code(status).type('application/json').send(body);
  });

  app.post('/bytes', async (request, reply) => {
    const engine = lifecycle.requireEngine();
    const { options, output } = parseCartesiaRequest(request.body, {
      config,
      engine,
      containers: ['raw', 'wav', 'mp3'],
      sse: false,
    });
    const synthesis = startHttpSynthesis(request, reply, lifecycle, options, {
      limits: config,
    });
    // PCM16 comes in whole samples, so each piece widens on its own.
    const sent = pieceAudio(
      output.float ? mapAudio(synthesis, pcm16ToFloat32) : synthesis,
      CARTESIA_CHUNK_BYTES,
    );
    return sendAudioStream(reply, sent, contentType(output));
  });

  app.post('/sse', async (request, reply) => {
    const engine = lifecycle.requireEngine();
    const { options, output, contextId } = parseCartesiaRequest(request.body, {
      config,
      engine,
      containers: ['raw'],
      sse: true,
    });
    const pending: WordTiming[] = [];
    const sounds: PhonemeTiming[] = [];
    const synthesis = startHttpSynthesis(request, reply, lifecycle, options, {
      limits: config,
      ...(options.timestamps ? { onWords: (words: readonly WordTiming[]) => pending.push(...words) } : {}),
      ...(options.phonemeTimestamps
        ? { onPhonemes: (phonemes: readonly PhonemeTiming[]) => sounds.push(...phonemes) }
        : {}),
    });
    const sent = pieceAudio(
      output.float ? mapAudio(synthesis, pcm16ToFloat32) : synthesis,
      CARTESIA_CHUNK_BYTES,
    );
    // The status waits for the first audio, so that a failure before it is a clean error answer.
    const started = performance.now();
    const audio = sent.run[Symbol.asyncIterator]();
    const first = await firstAudio(sent, audio);
    if (!first) return reply; // the client went away
    reply.header('cache-control', 'no-cache').header('x-accel-buffering', 'no');
    return reply
      .type('text/event-stream; charset=utf-8')
      .send(Readable.from(cartesiaEvents(sent, audio, first, { pending, sounds, contextId, started })));
  });
};

/**
 * Cartesia's events: each piece of audio as a `chunk` (base64), after the `timestamps` of the words
 * it finished and the `phoneme_timestamps` of its sounds when asked for; then `done`; or `error` if
 * synthesis fails after the stream began.
 */
async function* cartesiaEvents(
  synthesis: HttpSynthesis,
  audio: AsyncIterator<Uint8Array>,
  first: IteratorResult<Uint8Array>,
  stream: {
    /** Words timed and not yet sent. */
    readonly pending: WordTiming[];
    /** Sounds timed and not yet sent. */
    readonly sounds: PhonemeTiming[];
    readonly contextId: string | undefined;
    /** When synthesis began: the first chunk's `step_time` counts from it. */
    readonly started: number;
  },
): AsyncGenerator<string> {
  const { pending, sounds, contextId } = stream;
  const { run, signal, log, options } = synthesis;
  const context = contextId === undefined ? {} : { context_id: contextId };
  const timestamps = (): string[] => {
    const words = pending.splice(0);
    const phonemes = sounds.splice(0);
    const events: string[] = [];
    if (words.length > 0) {
      const word_timestamps = {
        words: words.map((w) => w.word),
        start: words.map((w) => w.start_s),
        end: words.map((w) => w.end_s),
      };
      events.push(
        sseEvent('timestamps', {
          type: 'timestamps',
          ...context,
          word_timestamps,
          done: false,
          status_code: 206,
        }),
      );
    }
    if (phonemes.length > 0) {
      const phoneme_timestamps = cartesiaPhonemes(phonemes);
      events.push(
        sseEvent('phoneme_timestamps', {
          type: 'phoneme_timestamps',
          ...context,
          phoneme_timestamps,
          done: false,
          status_code: 206,
        }),
      );
    }
    return events;
  };
  let since = stream.started;
  try {
    for (let next = first; !next.done; next = await audio.next()) {
      yield* timestamps();
      const now = performance.now();
      yield sseEvent('chunk', {
        type: 'chunk',
        ...context,
        data: Buffer.from(next.value).toString('base64'),
        done: false,
        status_code: 206,
        step_time: Math.round((now - since) * 10) / 10,
      });
      since = now;
    }
    yield* timestamps();
    synthesis.completed('sse');
    yield sseEvent('done', { type: 'done', ...context, done: true, status_code: 200 });
  } catch (err) {
    if (signal.aborted || isCancelled(err)) return;
    const { status, body } = toErrorBody(err, options.requestId);
    if (status >= 500) log.error({ err, ...run.figures() }, 'synthesis failed after the event stream began');
    yield sseEvent('error', cartesiaError(body, status, contextId));
  } finally {
    // A client that leaves mid-stream returns this generator at a yield: the audio is returned
    // too, so that its encoder is let go at once.
    await audio.return?.();
  }
}
