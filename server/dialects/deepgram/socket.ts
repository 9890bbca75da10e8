/**
 * Deepgram's text-to-speech WebSocket protocols, so that a client written for them drives a Kokoro
 * session unchanged: `/v1/speak` (Aura: Pipecat's `DeepgramTTSService` and
 * `DeepgramSageMakerTTSService`, LiveKit's `TTS`) and `/v2/speak` (Flux: Pipecat's
 * `DeepgramFluxTTSService`, LiveKit's `TTSv2`). docs/protocol.md says what each message does.
 *
 * Query (both): `model` (a Kokoro voice or blend, or a Deepgram model of the vendor-voice table;
 * another name falls back to the default voice with one `Warning`; one with a control character is
 * refused), `encoding` (`linear16`, `mulaw` or `alaw`), `sample_rate`, `speed`.
 * v1: `Speak` appends text, `Flush` speaks it (answered by `Flushed` after its audio), `Clear` cuts
 * (answered by `Cleared`), `KeepAlive`, `Close` (finish, then close); `Metadata` first, audio as
 * binary frames, problems as `Warning`. v2: the same turns reported as Flux reports them:
 * `Connected` first, `SpeechStarted` when a turn starts, `SpeechMetadata` (then `Flushed`) after its
 * last audio, `Interrupt` answered by `SpeechInterrupted`, `SessionMetadata` before the close.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import type { Engine, RunFigures } from '../../../model/engine.ts';
import { statusOfCode, type ErrorBody } from '../../../protocol/errors.ts';
import type { AudioFormat } from '../../../protocol/formats.ts';
import { SPEED_MAX, SPEED_MIN, codePointLength, refuseControlChars } from '../../../protocol/request.ts';
import type { Config } from '../../config/config.ts';
import { ttsError } from '../../http/errors.ts';
import { offeredRate } from '../../http/request.ts';
import type { Command, SessionDialect, Turn } from '../dialect.ts';
import { decodeText, parseJsonObject } from '../messages.ts';
import { DEEPGRAM_VOICES } from './voices.ts';
import { vendorVoice } from '../vendor-voices.ts';

export const DEEPGRAM_PATH = '/v1/speak';
export const DEEPGRAM_V2_PATH = '/v2/speak';

export type DeepgramVersion = 1 | 2;

/**
 * The version of Deepgram's protocol a path names (a SageMaker client's invocation path too:
 * Pipecat's `v1/speak`), or undefined for another path.
 */
export function deepgramVersion(path: string | undefined): DeepgramVersion | undefined {
  const named = path?.replace(/^\/+/, '').split('?')[0];
  if (named === DEEPGRAM_PATH.slice(1)) return 1;
  if (named === DEEPGRAM_V2_PATH.slice(1)) return 2;
  return undefined;
}

/** Deepgram's warning frame. `warn_msg` repeats the description: LiveKit's plugin logs that field. */
export interface DeepgramWarning {
  readonly type: 'Warning';
  readonly description: string;
  readonly code: string;
  readonly warn_msg: string;
}

/** Every Warning this server sends, on both versions, is built here. */
export function deepgramWarning(code: string, description: string): DeepgramWarning {
  return { type: 'Warning', description, code, warn_msg: description };
}

/** An error as a Warning: a message refused, a connection refused. */
export const warningOf = (body: ErrorBody): DeepgramWarning => deepgramWarning(body.code, body.message);

const ENCODINGS = { linear16: 'pcm', mulaw: 'mulaw', alaw: 'alaw' } as const satisfies Record<
  string,
  AudioFormat
>;

/** A query the server cannot serve: refused at connection time, and the session closes with 1008. */
const badQuery = (message: string) => ttsError('TTS_ERR_INVALID_OPTION', message);

/** Same for every session of this process: Deepgram's `model_uuid` names the model loaded. */
const MODEL_UUID = randomUUID();
const MODEL_VERSION = 'kokoro-82m-v1.0';

/**
 * The voice a Deepgram `model` speaks with: a Kokoro voice or blend, or a Deepgram model the vendor
 * table maps; `known: false` for another name, which speaks with the default voice.
 * @throws TtsError `invalid_option` for a name with a control character.
 */
export function deepgramVoice(
  model: string | null,
  engine: Engine,
  config: Config,
): { voice: string; known: boolean } {
  if (model === null || model === '') return { voice: config.defaultVoice, known: true };
  refuseControlChars(model, 'model');
  try {
    return { voice: vendorVoice(model, DEEPGRAM_VOICES, engine), known: true };
  } catch {
    return { voice: config.defaultVoice, known: false };
  }
}

/**
 * The session's defaults from the connection's query, and the warnings to open with.
 * @throws TtsError `invalid_option` for a model with a control character, or an encoding, sample
 * rate or speed the server cannot give.
 */
function sessionOptions(query: URLSearchParams, engine: Engine, config: Config) {
  const warnings: DeepgramWarning[] = [];
  const requested = query.get('model');
  const { voice, known } = deepgramVoice(requested, engine, config);
  if (!known) {
    warnings.push(
      deepgramWarning(
        'MODEL_NOT_FOUND',
        `model "${requested!.slice(0, 64)}" is not a Kokoro voice; speaking with the default voice ${config.defaultVoice}`,
      ),
    );
  }
  const encoding = query.get('encoding') ?? 'linear16';
  if (!Object.hasOwn(ENCODINGS, encoding)) {
    throw badQuery(`encoding "${encoding.slice(0, 32)}" is not supported; use linear16, mulaw or alaw`);
  }
  const format = ENCODINGS[encoding as keyof typeof ENCODINGS];
  const rateText = query.get('sample_rate');
  const sampleRate = offeredRate(format, rateText === null ? undefined : Number(rateText), (rates) =>
    badQuery(`sample_rate ${JSON.stringify(rateText)} is not supported for ${encoding}; use one of ${rates}`),
  );
  const speedText = query.get('speed');
  const speed = speedText === null ? undefined : Number(speedText);
  if (speed !== undefined && !(speed >= SPEED_MIN && speed <= SPEED_MAX)) {
    throw badQuery(`speed ${JSON.stringify(speedText)} should be from ${SPEED_MIN} to ${SPEED_MAX}`);
  }
  return {
    voice,
    warnings,
    defaults: { voice, format, sample_rate: sampleRate, ...(speed !== undefined ? { speed } : {}) },
  };
}

/**
 * The dialect of one session opened with `query` on the path of `version`.
 * @throws TtsError `invalid_option` for a query the server cannot serve (see {@link sessionOptions}).
 */
export function deepgramDialect(
  query: URLSearchParams,
  engine: Engine,
  config: Config,
  version: DeepgramVersion = 1,
): SessionDialect {
  const options = sessionOptions(query, engine, config);
  return version === 2 ? fluxDialect(options) : auraDialect(options);
}

type SessionOptions = ReturnType<typeof sessionOptions>;

/** `/v1/speak`. */
function auraDialect({ voice, warnings, defaults }: SessionOptions): SessionDialect {
  let flushed = 0;
  let cleared = 0;
  return {
    parse: (data) => parseDeepgramMessage(data, 1),
    contexts: false,
    opening: (sessionId) => [
      {
        type: 'Metadata',
        request_id: sessionId,
        model_name: voice,
        model_version: MODEL_VERSION,
        model_uuid: MODEL_UUID,
      },
      ...warnings,
    ],
    start: () => undefined,
    audio: (_turn, bytes) => ({ data: bytes, binary: true }),
    complete: () => ({ type: 'Flushed', sequence_id: flushed++ }),
    words: () => undefined,
    mark: () => undefined,
    // Deepgram's Cleared, with what the listener received of the cut audio (an extra field).
    cancelled: (_target, _cancelled, heard) => ({
      type: 'Cleared',
      sequence_id: cleared++,
      ...(heard ? { heard } : {}),
    }),
    contextClosed: () => undefined,
    error: warningOf,
    defaults,
  };
}

/** Flux counts inline controls it applied; Kokoro applies none of Deepgram's (always 0 there too). */
const CONTROLS_APPLIED = { pronunciations_applied: 0, breaks_applied: 0, pronunciation_warnings: 0 };

/** Turns whose characters are remembered until they end: more wait only on a flooded queue. */
const TURNS_KEPT = 64;

/**
 * `/v2/speak` (Flux). Each turn (the Speaks up to a Flush or an Interrupt) is one utterance of the
 * session, named by a speech id the dialect makes (`dg_sp_` and 12 hex digits) and passes as the
 * utterance's request id, so every frame of the turn can name it.
 */
function fluxDialect({ voice, warnings, defaults }: SessionOptions): SessionDialect {
  /** The turn Speaks go to, until a Flush or an Interrupt. */
  let open: string | undefined;
  /** Characters of each turn not yet reported. */
  const chars = new Map<string, number>();
  let sessionAudioMs = 0;
  let sessionChars = 0;
  const newTurn = (): string => {
    const id = `dg_sp_${randomBytes(6).toString('hex')}`;
    chars.set(id, 0);
    if (chars.size > TURNS_KEPT) chars.delete(chars.keys().next().value!);
    return id;
  };
  /** A turn's report (SpeechMetadata's fields, SpeechInterrupted's `metadata`); it is forgotten. */
  const report = (speechId: string, audioMs: number) => {
    const count = chars.get(speechId) ?? 0;
    chars.delete(speechId);
    sessionAudioMs += audioMs;
    sessionChars += count;
    return {
      speech_id: speechId,
      audio_duration_ms: audioMs,
      input_character_count: count,
      billable_character_count: count,
      controls_applied: CONTROLS_APPLIED,
    };
  };
  const parse = (data: Buffer): Command => {
    const command = parseDeepgramMessage(data, 2);
    switch (command.kind) {
      case 'append': {
        const speechId = (open ??= newTurn());
        const { text } = command.fields;
        if (typeof text === 'string') chars.set(speechId, (chars.get(speechId) ?? 0) + codePointLength(text));
        // The id on every Speak of the turn (the utterance's, so it may be repeated).
        return { ...command, fields: { ...command.fields, request_id: speechId } };
      }
      case 'flush': {
        const speechId = open ?? newTurn();
        open = undefined;
        return { ...command, fields: { request_id: speechId } };
      }
      case 'cancel':
        open = undefined;
        return command;
      default:
        return command;
    }
  };
  return {
    parse,
    contexts: false,
    opening: (sessionId) => [
      {
        type: 'Connected',
        request_id: sessionId,
        model_name: voice,
        model_version: MODEL_VERSION,
        model_uuids: [MODEL_UUID],
      },
      ...warnings,
    ],
    start: ({ requestId }) => ({ type: 'SpeechStarted', speech_id: requestId }),
    audio: (_turn, bytes) => ({ data: bytes, binary: true }),
    // SpeechMetadata ends the turn (Flux's clients wait for it); Flushed follows it, as LiveKit's
    // TTSv2 notes Flux sends it (tts_v2.py L419-422).
    complete: ({ requestId }, figures?: RunFigures) => [
      { type: 'SpeechMetadata', ...report(requestId, Math.round((figures?.audioS ?? 0) * 1000)) },
      { type: 'Flushed', speech_id: requestId },
    ],
    words: () => undefined,
    mark: () => undefined,
    cancelled: (_target, cancelled, heard) => {
      const speechId = heard?.request_id ?? cancelled[0];
      if (speechId === undefined) {
        return deepgramWarning('NO_ACTIVE_SPEECH', 'Interrupt arrived with no turn to interrupt');
      }
      // The turns waiting behind it are dropped unreported.
      for (const id of cancelled) if (id !== speechId) chars.delete(id);
      const metadata = report(speechId, Math.round(heard?.ms ?? 0));
      return {
        type: 'SpeechInterrupted',
        audio_played_ms: sessionAudioMs,
        metadata,
        ...(heard ? { heard } : {}),
      };
    },
    contextClosed: () => undefined,
    // A turn that failed ends its Speaks' turn: the next Speak starts another.
    ended: (turn: Turn) => {
      if (open === turn.requestId) open = undefined;
    },
    closing: () => ({
      type: 'SessionMetadata',
      total_audio_duration_ms: sessionAudioMs,
      total_input_character_count: sessionChars,
      total_billable_character_count: sessionChars,
    }),
    // Flux's Error is a failure of the server's (LiveKit's TTSv2 raises, ending the stream at once);
    // what the client sent is a Warning, as on v1.
    error: (body: ErrorBody) =>
      statusOfCode(body.code) >= 500
        ? { type: 'Error', code: body.code, description: body.message }
        : warningOf(body),
    defaults,
  };
}

const TYPES = {
  1: ['speak', 'flush', 'clear', 'keepalive', 'close'],
  2: ['speak', 'flush', 'interrupt', 'keepalive', 'close'],
} as const;

const TYPE_NAMES = {
  1: 'Speak, Flush, Clear, KeepAlive or Close',
  2: 'Speak, Flush, Interrupt, KeepAlive or Close',
} as const;

/** Deepgram's client messages (of `version`) as the session's commands. */
export function parseDeepgramMessage(data: Buffer, version: DeepgramVersion = 1): Command {
  const text = decodeText(data);
  if (!text.trimStart().startsWith('{')) {
    throw ttsError('TTS_ERR_INVALID_JSON', 'Send JSON messages such as {"type": "Speak", "text": "Hello"}');
  }
  const fields = parseJsonObject(text.trimStart());
  const type = typeof fields.type === 'string' ? fields.type.toLowerCase() : '';
  if (!(TYPES[version] as readonly string[]).includes(type)) {
    const named = JSON.stringify(String(fields.type).slice(0, 40));
    throw ttsError(
      'TTS_ERR_UNKNOWN_TYPE',
      type === 'configure'
        ? `Configure is not supported here; set the speed in the connection's query (speed=…) instead. The message types are ${TYPE_NAMES[version]}`
        : `Unknown message type ${named}; should be ${TYPE_NAMES[version]}`,
    );
  }
  switch (type) {
    case 'speak':
      return { kind: 'append', fields: { text: fields.text } };
    case 'flush':
      return { kind: 'flush', fields: {} };
    case 'close':
      return { kind: 'close' };
    case 'keepalive':
      return { kind: 'keep-alive' };
    default:
      return { kind: 'cancel', requestId: undefined };
  }
}
