/**
 * The project's own protocol on the WebSocket: what a client may send, classified on arrival into
 * the session's commands, and the frames the session's events become. Plain text (not starting with
 * `{`) is one complete request; a JSON object is a request unless its `type` (any case) says
 * otherwise.
 */
import { timedPhonemes, type ControlFrame } from '../../../protocol/frames.ts';
import type { Command, SessionDialect } from '../dialect.ts';
import { ttsError, withRequestId } from '../../http/errors.ts';
import { peekRequestId } from '../../http/request.ts';
import { contextIdOf, decodeText, describeType, parseJsonObject } from '../messages.ts';

const CANCEL_TYPES = new Set(['cancel', 'clear', 'interrupt']);

/**
 * Classifies one client message of the project's own protocol. `contexts`: the session was opened
 * with contexts, so messages name theirs (`context_id`) and `close_context` ends one.
 */
export function parseMessage(data: Buffer, contexts = false): Command {
  const text = decodeText(data);
  const trimmed = text.trimStart();
  if (!trimmed.startsWith('{')) {
    if (contexts) throw contextIdMissing();
    return { kind: 'request', fields: { text } };
  }
  const fields = parseJsonObject(trimmed);
  const type = typeof fields.type === 'string' ? fields.type.toLowerCase() : undefined;
  const inContext = <T extends object>(command: T, required = true): T & { context?: string } => {
    if (!contexts) return command;
    const context = contextIdOf(fields, required);
    return context === undefined ? command : { ...command, context };
  };
  if (fields.type === undefined || type === 'synthesize') return inContext({ kind: 'request', fields });
  if (type === 'close') return { kind: 'close' };
  if (type === 'append') return inContext({ kind: 'append', fields });
  if (type === 'flush') return inContext({ kind: 'flush', fields });
  if (type !== undefined && CANCEL_TYPES.has(type)) {
    if (fields.request_id !== undefined && peekRequestId(fields) === undefined) {
      throw ttsError(
        'TTS_ERR_INVALID_OPTION',
        'request_id on a cancel should be the id of a request of this session (a non-empty string of at most 128 characters); leave it out to cancel everything',
      );
    }
    return inContext({ kind: 'cancel', requestId: peekRequestId(fields) }, false);
  }
  if (contexts && type === 'close_context') {
    if (fields.drop !== undefined && typeof fields.drop !== 'boolean') {
      throw ttsError('TTS_ERR_INVALID_OPTION', 'drop on close_context should be true or false', {
        data: { param: 'drop' },
      });
    }
    return { kind: 'close-context', context: contextIdOf(fields, true)!, drop: fields.drop === true };
  }
  if (contexts && type === 'keep_alive') return inContext({ kind: 'keep-alive' }, false);
  throw withRequestId(
    ttsError(
      'TTS_ERR_UNKNOWN_TYPE',
      `Unknown message type ${describeType(fields.type)}; should be "synthesize" (or no type) for a text to speak, "append" and "flush" for text as it is written, "cancel" to stop, ${contexts ? '"close_context" to end a context, "keep_alive", ' : ''}or "close" to end the session`,
    ),
    peekRequestId(fields),
  );
}

const contextIdMissing = () =>
  ttsError(
    'TTS_ERR_INVALID_OPTION',
    'This session has contexts: send JSON messages that name their context, such as {"text": "Hello", "context_id": "a"}',
    { data: { param: 'context_id' } },
  );

/** An audio frame with its context id in front: one byte of length, the id's UTF-8 bytes, the audio. */
export function contextAudioFrame(context: string, bytes: Uint8Array): Uint8Array {
  const id = Buffer.from(context);
  const frame = new Uint8Array(1 + id.length + bytes.length);
  frame[0] = id.length;
  frame.set(id, 1);
  frame.set(bytes, 1 + id.length);
  return frame;
}

/**
 * The project's own protocol. With `contexts`, every control frame carries its `context_id` and
 * every audio frame its context id in front (see {@link contextAudioFrame}).
 */
export function nativeDialect({ contexts = false }: { contexts?: boolean } = {}): SessionDialect {
  const tag = (frame: ControlFrame, context: string | undefined): object =>
    context === undefined ? frame : { ...frame, context_id: context };
  return {
    parse: (data) => parseMessage(data, contexts),
    contexts,
    opening: () => [],
    start: ({ requestId, context }) => tag({ type: 'synthesis_start', request_id: requestId }, context),
    audio: ({ context }, bytes) => ({
      data: context === undefined ? bytes : contextAudioFrame(context, bytes),
      binary: true,
    }),
    complete: ({ requestId, context }, figures, warnings) =>
      tag(
        {
          type: 'synthesis_complete',
          request_id: requestId,
          total_duration_s: figures?.audioS ?? 0,
          elapsed_s: (figures?.elapsedMs ?? 0) / 1000,
          time_to_first_audio_s: (figures?.ttfaMs ?? 0) / 1000,
          inference_s: (figures?.inferenceMs ?? 0) / 1000,
          first_chunk_inference_s: (figures?.firstInferenceMs ?? 0) / 1000,
          first_chunk_frontend_s: (figures?.firstFrontEndMs ?? 0) / 1000,
          chunks: figures?.chunks ?? 0,
          ...(warnings && warnings.length > 0 ? { warnings: [...warnings] } : {}),
        },
        context,
      ),
    words: ({ requestId, context }, words) =>
      tag({ type: 'word_timestamps', request_id: requestId, words: [...words] }, context),
    phonemes: ({ requestId, context }, phonemes) =>
      tag({ type: 'phoneme_timestamps', request_id: requestId, phonemes: timedPhonemes(phonemes) }, context),
    mark: ({ requestId, context }, name, timeS) =>
      tag({ type: 'mark', request_id: requestId, name, time_s: timeS }, context),
    cancelled: (requestId, cancelled, heard, context) =>
      tag(
        {
          type: 'synthesis_cancelled',
          ...(requestId !== undefined ? { request_id: requestId } : {}),
          cancelled: [...cancelled],
          ...(heard ? { heard } : {}),
        },
        context,
      ),
    contextClosed: (context, cancelled, heard) =>
      ({
        type: 'context_closed',
        context_id: context,
        ...(cancelled ? { cancelled: [...cancelled] } : {}),
        ...(heard ? { heard } : {}),
      }) satisfies ControlFrame,
    error: (body, context) => (context === undefined ? body : { ...body, context_id: context }),
    defaults: {},
  };
}

export const NATIVE_DIALECT: SessionDialect = nativeDialect();
