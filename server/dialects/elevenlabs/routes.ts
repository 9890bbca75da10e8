/**
 * ElevenLabs' text-to-speech over HTTP, under /v1/text-to-speech: `POST /:voice_id/stream` and
 * `POST /:voice_id` (the audio, streamed as it is synthesized or as one file), and
 * `POST /:voice_id/stream/with-timestamps` (one JSON object per line, under 64 KB: a piece of
 * audio in base64 with the character alignment of the words that start in it, alignment.ts). What ElevenLabs' SDK and LiveKit's plugin
 * send is translated into the server's request; every error under the prefix, the shared hooks' too
 * (auth, the drain), answers in ElevenLabs' shape, `{"detail": {"status", "message"}}`.
 */
import type { FastifyError, FastifyPluginAsync } from 'fastify';
import { audioCuts, type Engine, type WordTiming } from '../../../model/engine.ts';
import { FORMATS, NATIVE_SAMPLE_RATE, bytesPerSample } from '../../../protocol/formats.ts';
import { SPEED_MAX, SPEED_MIN } from '../../../protocol/request.ts';
import type { Config } from '../../config/config.ts';
import { ELEVENLABS_DEFAULT_FORMAT } from './socket.ts';
import { audioPieces, type AudioPiece } from './alignment.ts';
import { TtsError, errorHeaders, fromFastifyError, toErrorBody, ttsError } from '../../http/errors.ts';
import { mapAudio, sendAudioStream, startHttpSynthesis } from '../../http/synthesis.ts';
import type { Lifecycle } from '../../http/lifecycle.ts';
import { recordRefusal } from '../../observability/outcomes.ts';
import { describe, type SynthesisOptions } from '../../http/request.ts';
import { ELEVENLABS_VOICES, elevenLabsOutput } from './voices.ts';
import {
  bodyFields,
  checkVendorModel,
  vendorLanguage,
  vendorOptions,
  vendorSpeed,
  vendorVoice,
} from '../vendor-voices.ts';

/** ElevenLabs' error body. */
export interface ElevenLabsErrorBody {
  readonly detail: { readonly status: string; readonly message: string };
}

/** Any thrown value as ElevenLabs' error body, with its status and the server's own code. */
export function toElevenLabsError(err: unknown): { status: number; body: ElevenLabsErrorBody; code: string } {
  const { status, body } = toErrorBody(err);
  return { status, code: body.code, body: { detail: { status: body.code, message: body.message } } };
}

function invalid(param: string, message: string): never {
  throw ttsError('TTS_ERR_INVALID_OPTION', message, { data: { param } });
}

/** ElevenLabs' `apply_text_normalization`: `off` turns the normalizer off. */
const NORMALIZATION_MODES = ['auto', 'on', 'off'];

/**
 * Checks an ElevenLabs text-to-speech request (the voice in the path, the output in the query, the
 * rest in the body) and translates it into the server's request.
 */
export function parseElevenLabsRequest(
  voiceId: string,
  query: Record<string, unknown>,
  body: unknown,
  ctx: { config: Config; engine: Engine; timestamps: boolean },
): SynthesisOptions {
  const { engine } = ctx;
  const fields = bodyFields(body, '{"text": "Hello", "model_id": "eleven_flash_v2_5"}');
  if (fields.text === undefined)
    throw ttsError('TTS_ERR_BAD_REQUEST', 'text is required: the text to speak', { data: { param: 'text' } });
  checkVendorModel(fields.model_id);

  const voice = vendorVoice(voiceId, ELEVENLABS_VOICES, engine);

  const named = query.output_format;
  if (named !== undefined && typeof named !== 'string')
    invalid('output_format', `output_format should be named once, such as pcm_24000; got ${describe(named)}`);
  const output = elevenLabsOutput(named, ELEVENLABS_DEFAULT_FORMAT);
  if (!engine.info.formats.includes(output.format)) {
    invalid(
      'output_format',
      `output_format ${named ?? ELEVENLABS_DEFAULT_FORMAT} is ${output.format}, which this server does not offer; it offers ${engine.info.formats.join(', ')}`,
    );
  }

  const settings = fields.voice_settings ?? {};
  if (typeof settings !== 'object' || Array.isArray(settings))
    invalid(
      'voice_settings',
      `voice_settings should be an object such as {"speed": 1.1}; got ${describe(settings)}`,
    );
  let speed = (settings as { speed?: unknown }).speed ?? 1;
  if (typeof speed !== 'number' || !Number.isFinite(speed) || speed < SPEED_MIN || speed > SPEED_MAX)
    invalid(
      'voice_settings.speed',
      `voice_settings.speed should be a number from ${SPEED_MIN} to ${SPEED_MAX}; got ${describe(speed)}`,
    );
  speed = vendorSpeed(speed, engine) as number;

  const lang = vendorLanguage(fields.language_code, 'language_code', voice, engine);

  const normalization = fields.apply_text_normalization ?? 'auto';
  if (typeof normalization !== 'string' || !NORMALIZATION_MODES.includes(normalization))
    invalid(
      'apply_text_normalization',
      `apply_text_normalization should be one of: ${NORMALIZATION_MODES.join(', ')}; got ${describe(normalization)}`,
    );

  return vendorOptions(
    {
      text: fields.text,
      voice,
      speed,
      output,
      lang,
      normalizeOff: normalization === 'off',
      // A model without durations: the request parser leaves the words untimed (alignment null).
      timestamps: ctx.timestamps,
    },
    { config: ctx.config, engine },
  );
}

/** ElevenLabs' character alignment over HTTP: characters and their times in seconds. */
export interface ElevenLabsAlignment {
  readonly characters: string[];
  readonly character_start_times_seconds: number[];
  readonly character_end_times_seconds: number[];
}

/** One line of the stream with timestamps: a piece's audio and its characters, in seconds. */
function timestampLine(piece: AudioPiece): string {
  const { chars, charStartTimesMs, charDurationsMs } = piece.alignment;
  const aligned: ElevenLabsAlignment | null =
    chars.length === 0
      ? null
      : {
          characters: chars,
          character_start_times_seconds: charStartTimesMs.map((ms) => ms / 1000),
          character_end_times_seconds: charStartTimesMs.map((ms, i) => (ms + charDurationsMs[i]!) / 1000),
        };
  const audio = Buffer.from(piece.bytes.buffer, piece.bytes.byteOffset, piece.bytes.length);
  return `${JSON.stringify({
    audio_base64: audio.toString('base64'),
    alignment: aligned,
    normalized_alignment: aligned,
  })}\n`;
}

const NO_CHARS: ElevenLabsAlignment = {
  characters: [],
  character_start_times_seconds: [],
  character_end_times_seconds: [],
};
/** What a line takes besides its audio's base64 and its characters. */
const LINE_ENVELOPE = Buffer.byteLength(
  `${JSON.stringify({ audio_base64: '', alignment: NO_CHARS, normalized_alignment: NO_CHARS })}\n`,
);
/** The most a character adds to a line: itself and two times in seconds (13 characters each), twice. */
const lineCharBytes = (char: string) => 2 * (Buffer.byteLength(JSON.stringify(char)) + 1 + 14 + 14);

export const elevenLabsRoutes: FastifyPluginAsync<{ config: Config; lifecycle: Lifecycle }> = async (
  app,
  { config, lifecycle },
) => {
  app.setErrorHandler((err: FastifyError, request, reply) => {
    const mapped = err instanceof TtsError ? err : fromFastifyError(err, config.maxBodyBytes);
    const { status, body, code } = toElevenLabsError(mapped);
    recordRefusal(request.log, lifecycle.metrics, err, status, code, undefined);
    return reply.code(status).headers(errorHeaders(mapped)).type('application/json').send(body);
  });
  app.setNotFoundHandler((request, reply) => {
    const { status, body } = toElevenLabsError(
      ttsError(
        'TTS_ERR_NOT_FOUND',
        `No route ${request.method} ${request.url}; the ElevenLabs-compatible routes are POST /v1/text-to-speech/:voice_id, POST /v1/text-to-speech/:voice_id/stream and POST /v1/text-to-speech/:voice_id/stream/with-timestamps`,
      ),
    );
    return reply.code(status).type('application/json').send(body);
  });

  type Route = { Params: { voice_id: string }; Querystring: Record<string, unknown> };

  /** The audio routes: the same audio, streamed or (`complete`) as one file. */
  const audio = (complete: boolean) =>
    app.post<Route>(complete ? '/:voice_id' : '/:voice_id/stream', async (request, reply) => {
      const engine = lifecycle.requireEngine();
      const options = parseElevenLabsRequest(request.params.voice_id, request.query, request.body, {
        config,
        engine,
        timestamps: false,
      });
      const synthesis = startHttpSynthesis(request, reply, lifecycle, options, {
        limits: config,
        complete,
      });
      return sendAudioStream(reply, synthesis, FORMATS[options.format].contentType(options.sampleRate));
    });
  audio(false);
  audio(true);

  app.post<Route>('/:voice_id/stream/with-timestamps', async (request, reply) => {
    const engine = lifecycle.requireEngine();
    const options = parseElevenLabsRequest(request.params.voice_id, request.query, request.body, {
      config,
      engine,
      timestamps: true,
    });
    // Each piece's words arrive before its audio and wait here for the lines that carry it.
    const pending: WordTiming[] = [];
    const synthesis = startHttpSynthesis(request, reply, lifecycle, options, {
      limits: config,
      ...(options.timestamps ? { onWords: (words: readonly WordTiming[]) => pending.push(...words) } : {}),
    });
    const sampleBytes = bytesPerSample(options.format);
    let sentBytes = 0;
    /** Where the audio sent so far ends, in seconds (exact where bytes count samples). */
    let sentS = 0;
    const lines = (bytes: Uint8Array, endS: number) => {
      const pieces = audioPieces(bytes, { startS: sentS, endS }, pending.splice(0), {
        cuts: audioCuts(options.format, bytes),
        envelopeBytes: LINE_ENVELOPE,
        charBytes: lineCharBytes,
        timed: options.timestamps,
      });
      sentS = endS;
      return Buffer.from(pieces.map(timestampLine).join(''));
    };
    const audio = (bytes: Uint8Array) => {
      sentBytes += bytes.length;
      const endS =
        sampleBytes > 0
          ? sentBytes / sampleBytes / options.sampleRate
          : synthesis.run.samplesSoFar() / NATIVE_SAMPLE_RATE;
      return lines(bytes, Math.max(sentS, endS));
    };
    // Words timed after the last audio (a codec's tail held none) go in a line of no audio.
    const rest = () => (pending.length > 0 ? lines(new Uint8Array(0), sentS) : undefined);
    return sendAudioStream(reply, mapAudio(synthesis, audio, rest), 'application/json');
  });
};
