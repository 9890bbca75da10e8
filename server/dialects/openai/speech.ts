/**
 * The OpenAI dialect of the HTTP API (protocol/openai.ts): a speech request's fields checked and
 * translated into the server's own request (server/http/request.ts does the rest of the checking,
 * with the same messages as every route), the listings, and errors in OpenAI's shape with OpenAI's
 * status codes.
 */
import type { Engine } from '../../../model/engine.ts';
import { SPEED_MAX, SPEED_MIN, refuseControlChars } from '../../../protocol/request.ts';
import {
  OPENAI_FORMATS,
  OPENAI_MODELS,
  OPENAI_SPEED_MAX,
  OPENAI_SPEED_MIN,
  OPENAI_STREAM_FORMATS,
  OPENAI_VOICES,
  kokoroVoiceFor,
  openAiModel,
  type ModelEntry,
  type OpenAiErrorBody,
  type OpenAiStreamFormat,
  type VoiceListing,
} from '../../../protocol/openai.ts';
import type { Config } from '../../config/config.ts';
import { TtsError, toErrorBody, ttsError } from '../../http/errors.ts';
import type { ErrorCode } from '../../../protocol/errors.ts';
import { describe, parseOptions, type SynthesisOptions } from '../../http/request.ts';

export interface SpeechOptions {
  readonly options: SynthesisOptions;
  readonly streamFormat: OpenAiStreamFormat;
  /** The speed Kokoro runs at, after the clamp. */
  readonly speed: number;
}

function invalid(param: string, message: string): never {
  throw ttsError('TTS_ERR_INVALID_OPTION', message, { data: { param } });
}

/**
 * OpenAI's speed range is 0.25 to 4.0; Kokoro's is 0.5 to 2.0 (whole numbers for an export whose
 * speed input is int32). A speed inside OpenAI's range is clamped to Kokoro's; outside it, refused.
 */
export function clampSpeed(speed: number, wholeNumbers: boolean): number {
  const clamped = Math.min(SPEED_MAX, Math.max(SPEED_MIN, speed));
  return wholeNumbers ? Math.min(SPEED_MAX, Math.max(1, Math.round(clamped))) : clamped;
}

/** Checks a `POST /v1/audio/speech` body and translates it into the server's request. */
export function parseSpeechRequest(body: unknown, ctx: { config: Config; engine: Engine }): SpeechOptions {
  if (body === null || typeof body !== 'object' || Array.isArray(body)) {
    throw ttsError(
      'TTS_ERR_BAD_REQUEST',
      `The body should be a JSON object such as {"model": "kokoro", "input": "Hello", "voice": "af_heart"}; got ${describe(body)}`,
      { data: { param: 'body' } },
    );
  }
  const fields = body as Record<string, unknown>;

  if (fields.model === undefined || fields.model === '')
    throw ttsError('TTS_ERR_BAD_REQUEST', `model is required: one of ${OPENAI_MODELS.join(', ')}`, {
      data: { param: 'model' },
    });
  if (typeof fields.model !== 'string')
    invalid('model', `model should be a string; got ${describe(fields.model)}`);
  refuseControlChars(fields.model, 'model');
  if (!openAiModel(fields.model)) {
    throw unknownModel(
      `The model ${JSON.stringify(fields.model.slice(0, 60))} does not exist here; this server serves ${OPENAI_MODELS.join(', ')} (all of them Kokoro-82M)`,
    );
  }

  if (fields.input === undefined)
    throw ttsError('TTS_ERR_BAD_REQUEST', 'input is required: the text to speak', {
      data: { param: 'input' },
    });
  if (typeof fields.input !== 'string')
    invalid('input', `input should be a string; got ${describe(fields.input)}`);

  let voice: string = ctx.config.defaultVoice;
  if (typeof fields.voice === 'string') voice = kokoroVoiceFor(fields.voice);
  else if (
    fields.voice !== null &&
    typeof fields.voice === 'object' &&
    typeof (fields.voice as { id?: unknown }).id === 'string'
  ) {
    voice = kokoroVoiceFor((fields.voice as { id: string }).id);
  } else if (fields.voice !== undefined) {
    invalid(
      'voice',
      `voice should be an OpenAI voice name (${Object.keys(OPENAI_VOICES).join(', ')}), a Kokoro voice id or blend such as "af_bella+af_sky", or {"id": …}; got ${describe(fields.voice)}`,
    );
  }

  const formats = OPENAI_FORMATS.filter((f) => ctx.engine.info.formats.includes(f));
  const format = fields.response_format ?? 'mp3';
  if (typeof format !== 'string' || !(formats as readonly string[]).includes(format)) {
    const missing = OPENAI_FORMATS.filter((f) => !formats.includes(f));
    invalid(
      'response_format',
      `response_format should be one of: ${formats.join(', ')}; got ${describe(format)}${missing.length > 0 ? ` (${missing.join(', ')} needs ffmpeg on the server, which was not found)` : ''}`,
    );
  }

  const requested = fields.speed ?? 1;
  if (
    typeof requested !== 'number' ||
    !Number.isFinite(requested) ||
    requested < OPENAI_SPEED_MIN ||
    requested > OPENAI_SPEED_MAX
  ) {
    invalid(
      'speed',
      `speed should be a number from ${OPENAI_SPEED_MIN} to ${OPENAI_SPEED_MAX}; got ${describe(requested)}`,
    );
  }
  const speed = clampSpeed(requested, ctx.engine.info.contract.speedType === 'int32');

  const streamFormat = fields.stream_format ?? 'audio';
  if (
    typeof streamFormat !== 'string' ||
    !(OPENAI_STREAM_FORMATS as readonly string[]).includes(streamFormat)
  ) {
    invalid('stream_format', `stream_format should be "audio" or "sse"; got ${describe(streamFormat)}`);
  }
  if (fields.instructions !== undefined && typeof fields.instructions !== 'string')
    invalid('instructions', `instructions should be a string; got ${describe(fields.instructions)}`);

  const options = parseOptions(
    {
      text: fields.input,
      voice,
      speed,
      format,
      ...(fields.lang_code !== undefined ? { lang: fields.lang_code } : {}),
      // Kokoro-FastAPI's extensions of this route, and ours: how the input's markup and words are read.
      ...pick(fields, ['normalization_options', 'pronunciations', 'markup']),
    },
    { route: 'http', config: ctx.config, engine: ctx.engine },
  );
  return { options, streamFormat: streamFormat as OpenAiStreamFormat, speed };
}

/** The fields of `fields` named in `keys` that are present. */
function pick(fields: Record<string, unknown>, keys: readonly string[]): Record<string, unknown> {
  return Object.fromEntries(keys.filter((k) => fields[k] !== undefined).map((k) => [k, fields[k]]));
}

/** A model id this server does not serve: OpenAI's 404 `model_not_found`. */
export function unknownModel(message: string): TtsError {
  return ttsError('TTS_ERR_NOT_FOUND', message, { data: { param: 'model' } });
}

/** OpenAI's names for the request fields where the shared parser uses the server's own. */
const OPENAI_PARAMS: Readonly<Record<string, string>> = {
  text: 'input',
  phonemes: 'input',
  format: 'response_format',
  lang: 'lang_code',
};

/** OpenAI's codes where they differ from the server's (docs/protocol.md, "OpenAI-compatible API"). */
const OPENAI_CODES: Partial<Record<ErrorCode, string>> = {
  invalid_option: 'invalid_value',
  text_too_long: 'string_above_max_length',
  unauthorized: 'invalid_api_key',
};

/**
 * Any thrown value as OpenAI's error body, with the status to answer with (an over-long input is
 * a 400 there) and the server's own code, for the metrics.
 */
export function toOpenAiError(err: unknown): { status: number; body: OpenAiErrorBody; code: string } {
  const { status, body } = toErrorBody(err);
  const known = err instanceof TtsError ? err : undefined;
  const field = known?.data.param;
  const param = field === undefined ? null : (OPENAI_PARAMS[field] ?? field);
  const openStatus = body.code === 'text_too_long' ? 400 : status;
  const code =
    body.code === 'not_found' && param === 'model'
      ? 'model_not_found'
      : (OPENAI_CODES[body.code] ?? body.code);
  return {
    status: openStatus,
    code: body.code,
    body: {
      error: {
        message: body.message,
        type: openStatus >= 500 ? 'server_error' : 'invalid_request_error',
        param,
        code,
      },
    },
  };
}

/** `GET /v1/models`: the ids the speech route accepts, all of them Kokoro-82M. */
export function modelList(): { object: 'list'; data: ModelEntry[] } {
  return { object: 'list', data: OPENAI_MODELS.map(modelEntry) };
}

/** Kokoro v1.0's release, 2025-01-27, as the models' `created`. */
const KOKORO_V1_RELEASED = 1_737_936_000;

export function modelEntry(id: string): ModelEntry {
  return { id, object: 'model', created: KOKORO_V1_RELEASED, owned_by: 'hexgrad' };
}

/** `GET /v1/audio/voices`: the voices present, OpenAI's names, and how blends are written. */
export function voiceListing(engine: Engine, defaultVoice: string): VoiceListing {
  const aliases = new Map<string, string[]>();
  for (const [alias, id] of Object.entries(OPENAI_VOICES))
    aliases.set(id, [...(aliases.get(id) ?? []), alias]);
  const data = engine.voices.ids.map((id) => {
    const facts = engine.voices.describe(id);
    return {
      id,
      object: 'voice' as const,
      name: facts.name,
      language: facts.language,
      gender: facts.gender,
      supported: facts.supported,
      aliases: aliases.get(id) ?? [],
    };
  });
  return {
    object: 'list',
    data,
    voices: data.map((v) => v.id),
    default_voice: defaultVoice,
    openai_voices: OPENAI_VOICES,
    blends: {
      syntax: 'voice+voice or voice(weight)+voice(weight)',
      examples: ['af_bella+af_sky', 'af_bella(2)+af_sky(1)', 'am_adam(0.3)+am_michael(0.7)'],
      rules:
        'Up to 8 voices of one language, joined with +; a weight in parentheses (any positive number, 1 when absent) sets each voice’s share, and the shares are normalized to add up to 1. The style vectors are mixed before synthesis, so a blend costs the same as one voice.',
    },
  };
}
