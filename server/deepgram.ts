/**
 * Deepgram's text-to-speech WebSocket protocol (`/v1/speak`), so that a client written for it —
 * Pipecat's `DeepgramSageMakerTTSService` above all — drives a Kokoro session unchanged.
 *
 * Query: `model` (a Kokoro voice or blend, or a Deepgram model of the vendor-voice table; another
 * name falls back to the default voice with one `Warning`; one with a control character is
 * refused), `encoding` (`linear16`, `mulaw` or `alaw`), `sample_rate`, `speed`.
 * Client messages: `Speak` (text for the open utterance), `Flush` (speak it; answered by `Flushed`
 * after its audio), `Clear` (barge-in; answered by `Cleared`, and no audio from before it
 * follows), `KeepAlive` (only resets the idle clock), `Close` (finish, then close). The server sends `Metadata` first, audio as binary
 * frames, and problems as `Warning` frames ({@link deepgramWarning}); the session stays open.
 */
import { randomUUID } from 'node:crypto';
import type { Engine } from '../model/engine.ts';
import { FORMATS, type AudioFormat } from '../protocol/formats.ts';
import { SPEED_MAX, SPEED_MIN, refuseControlChars } from '../protocol/request.ts';
import type { Config } from './config.ts';
import { ttsError } from './errors.ts';
import { decodeText, parseJsonObject, type Command, type SessionDialect } from './session-messages.ts';
import { DEEPGRAM_VOICES, vendorVoice } from './vendor-voices.ts';

export const DEEPGRAM_PATH = '/v1/speak';

/** The invocation path a SageMaker client names for this protocol (Pipecat: `v1/speak`). */
export function isDeepgramPath(path: string | undefined): boolean {
  return path !== undefined && path.replace(/^\/+/, '').split('?')[0] === DEEPGRAM_PATH.slice(1);
}

/** Deepgram's warning frame. `warn_msg` repeats the description: LiveKit's plugin logs that field. */
export interface DeepgramWarning {
  readonly type: 'Warning';
  readonly description: string;
  readonly code: string;
  readonly warn_msg: string;
}

/** Every Warning this server sends on Deepgram's protocol is built here. */
export function deepgramWarning(code: string, description: string): DeepgramWarning {
  return { type: 'Warning', description, code, warn_msg: description };
}

const ENCODINGS = { linear16: 'pcm', mulaw: 'mulaw', alaw: 'alaw' } as const satisfies Record<
  string,
  AudioFormat
>;

/** A query the server cannot serve: refused at connection time, and the session closes with 1008. */
const badQuery = (message: string) => ttsError('TTS_ERR_INVALID_OPTION', message);

/** Same for every session of this process: Deepgram's `model_uuid` names the model loaded. */
const MODEL_UUID = randomUUID();

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
 * The dialect of one session opened with `query`.
 * @throws TtsError `invalid_option` for a model with a control character, or an encoding, sample
 * rate or speed the server cannot give.
 */
export function deepgramDialect(query: URLSearchParams, engine: Engine, config: Config): SessionDialect {
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
  const rates = FORMATS[format].rates as readonly number[];
  const rateText = query.get('sample_rate');
  const sampleRate = rateText === null ? FORMATS[format].defaultRate : Number(rateText);
  if (!rates.includes(sampleRate)) {
    throw badQuery(
      `sample_rate ${JSON.stringify(rateText)} is not supported for ${encoding}; use one of ${rates.join(', ')}`,
    );
  }
  const speedText = query.get('speed');
  const speed = speedText === null ? undefined : Number(speedText);
  if (speed !== undefined && !(speed >= SPEED_MIN && speed <= SPEED_MAX)) {
    throw badQuery(`speed ${JSON.stringify(speedText)} should be from ${SPEED_MIN} to ${SPEED_MAX}`);
  }

  let flushed = 0;
  let cleared = 0;
  return {
    parse: parseDeepgramMessage,
    contexts: false,
    opening: (sessionId) => [
      {
        type: 'Metadata',
        request_id: sessionId,
        model_name: voice,
        model_version: 'kokoro-82m-v1.0',
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
    error: (body) => deepgramWarning(body.code, body.message),
    defaults: { voice, format, sample_rate: sampleRate, ...(speed !== undefined ? { speed } : {}) },
  };
}

/** Deepgram's client messages as the session's commands. */
export function parseDeepgramMessage(data: Buffer): Command {
  const text = decodeText(data);
  if (!text.trimStart().startsWith('{')) {
    throw ttsError('TTS_ERR_INVALID_JSON', 'Send JSON messages such as {"type": "Speak", "text": "Hello"}');
  }
  const fields = parseJsonObject(text.trimStart());
  const type = typeof fields.type === 'string' ? fields.type.toLowerCase() : '';
  switch (type) {
    case 'speak':
      return { kind: 'append', fields: { text: fields.text } };
    case 'flush':
      return { kind: 'flush', fields: {} };
    case 'clear':
      return { kind: 'cancel', requestId: undefined };
    case 'close':
      return { kind: 'close' };
    case 'keepalive':
      return { kind: 'keep-alive' };
    default:
      throw ttsError(
        'TTS_ERR_UNKNOWN_TYPE',
        `Unknown message type ${JSON.stringify(String(fields.type).slice(0, 40))}; should be Speak, Flush, Clear, KeepAlive or Close`,
      );
  }
}
