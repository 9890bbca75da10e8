/**
 * What a client may send on the WebSocket route, classified on arrival into the session's
 * commands. Plain text (not starting with `{`) is one complete request; a JSON object is a request
 * unless its `type` (any case) says otherwise.
 */
import type { PhonemeTiming, RunFigures, WordTiming } from '../model/engine.ts';
import type { ErrorBody } from '../protocol/errors.ts';
import { timedPhonemes, type ControlFrame, type Heard } from '../protocol/frames.ts';
import { ttsError, withRequestId } from './http/errors.ts';
import { peekRequestId } from './http/request.ts';

export type Command =
  /** One complete text to speak. */
  | { readonly kind: 'request'; readonly fields: Record<string, unknown>; readonly context?: string }
  /** Text added to the open utterance (streamed text input), taken as {@link AppendOptions} say. */
  | ({
      readonly kind: 'append';
      readonly fields: Record<string, unknown>;
      readonly context?: string;
    } & AppendOptions)
  /** Speaks the rest of the open utterance and ends it. */
  | { readonly kind: 'flush'; readonly fields: Record<string, unknown>; readonly context?: string }
  /**
   * Stops the request in flight and drops the queued ones (or only the one named); in one context,
   * or in every context when none is named.
   */
  | { readonly kind: 'cancel'; readonly requestId: string | undefined; readonly context?: string }
  /**
   * Ends a context: `drop` cuts it as a cancel does, otherwise what it received is spoken first.
   * Its id may not be used again on this session. `tolerant`: the dialect's clients close a context
   * again when the listener interrupts it, whether its own close was sent or not (Pipecat's
   * ElevenLabs service); so a context still speaking after its close is cut (with `drop`), and one
   * already over is answered as one never opened, instead of refused.
   */
  | {
      readonly kind: 'close-context';
      readonly context: string;
      readonly drop: boolean;
      readonly tolerant?: boolean;
    }
  /**
   * A message that cannot be used, answered at once with its context's error (dialects whose
   * errors name a context); the session goes on.
   */
  | { readonly kind: 'refuse'; readonly error: unknown; readonly context?: string }
  /** Resets the idle clock (of the session, and of the context named) and nothing else. */
  | { readonly kind: 'keep-alive'; readonly context?: string }
  | { readonly kind: 'close' };

/** How a dialect's append is taken, besides its text. */
export interface AppendOptions {
  /** Speak what the utterance holds now, even a sentence not yet ended, and keep it open (ElevenLabs' `flush`). */
  readonly generate?: boolean;
  /**
   * The dialect repeats the utterance's options on every message (Cartesia's continuations):
   * they count on the first append and are ignored on the others, instead of being refused.
   */
  readonly repeatsOptions?: boolean;
  /**
   * How long text that ends no sentence is held after this append, waiting for more, before it is
   * spoken anyway (Cartesia's `max_buffer_delay_ms`); the server's UTTERANCE_IDLE_FLUSH_S otherwise.
   */
  readonly holdMs?: number;
  /**
   * The pieces are sentences written without the space between them (Pipecat sends its sentences
   * so): a piece that starts a sentence right after one ended is joined with a space.
   */
  readonly spaceSentences?: boolean;
  /**
   * A named point after this append's text, which is spoken now: the dialect's {@link
   * SessionDialect.mark} frame follows the audio before it (Cartesia's `flush_done`).
   */
  readonly mark?: string;
}

const CANCEL_TYPES = new Set(['cancel', 'clear', 'interrupt']);

const utf8 = new TextDecoder('utf-8', { fatal: true });

/** Decodes a frame's bytes as UTF-8 text, or throws the error the client is sent. */
export function decodeText(data: Buffer): string {
  try {
    return utf8.decode(data);
  } catch {
    throw ttsError(
      'TTS_ERR_INVALID_UTF8',
      'The message is not valid UTF-8 text; send UTF-8 encoded JSON or plain text',
    );
  }
}

/** Parses a JSON object message, or throws the error the client is sent. */
export function parseJsonObject(text: string): Record<string, unknown> {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    throw ttsError(
      'TTS_ERR_INVALID_JSON',
      `The message starts with "{" but is not valid JSON (${(err as Error).message}); send a JSON object such as {"text": "Hello"}, or plain text that does not start with "{"`,
    );
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    throw ttsError('TTS_ERR_INVALID_JSON', 'The message should be one JSON object such as {"text": "Hello"}');
  }
  return value as Record<string, unknown>;
}

/** The longest context id, in UTF-8 bytes (a binary frame's prefix names it in one byte). */
export const MAX_CONTEXT_ID_BYTES = 255;

/**
 * A message's context id in a session with contexts.
 * @throws TtsError `invalid_option` when it is missing (and `required`) or not a usable id.
 */
export function contextIdOf(fields: Record<string, unknown>, required: boolean): string | undefined {
  const value = fields.context_id;
  if (value === undefined && !required) return undefined;
  if (typeof value !== 'string' || value === '' || Buffer.byteLength(value) > MAX_CONTEXT_ID_BYTES) {
    throw withRequestId(
      ttsError(
        'TTS_ERR_INVALID_OPTION',
        value === undefined
          ? 'This session has contexts: name the context of every message with "context_id"'
          : `context_id should be a non-empty string of at most ${MAX_CONTEXT_ID_BYTES} UTF-8 bytes; got ${describeType(value)}`,
        { data: { param: 'context_id' } },
      ),
      peekRequestId(fields),
    );
  }
  return value;
}

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

/** A short, safe rendering of a client's `type` value (it may be huge or deeply nested). */
function describeType(value: unknown): string {
  if (typeof value === 'string') return JSON.stringify(value.length > 40 ? `${value.slice(0, 40)}…` : value);
  if (value === null || typeof value !== 'object') return String(value);
  return Array.isArray(value) ? 'an array' : 'an object';
}

/** Which of a session's requests a frame is about, and the context it belongs to (if any). */
export interface Turn {
  readonly requestId: string;
  readonly context?: string;
}

/** A frame to send: control (JSON) or audio. */
export type OutgoingFrame = { readonly data: Uint8Array | string; readonly binary: boolean };

/** Where a piece of a request's audio lies on the request's clock (from its first sample), in seconds. */
export interface AudioSpan {
  readonly startS: number;
  readonly endS: number;
}

/**
 * A session's wire dialect: how client messages become commands, and what frames the session's
 * events become. The project's own protocol is {@link nativeDialect}; Deepgram's is in
 * deepgram.ts, ElevenLabs' in elevenlabs.ts, Cartesia's in cartesia.ts. A frame builder that
 * returns undefined sends nothing for that event. One dialect object serves one session (it may
 * keep state, as ElevenLabs' does to put a chunk's words beside its audio).
 */
export interface SessionDialect {
  /** One message as the commands it stands for, in order (most messages are one). */
  parse(data: Buffer): Command | readonly Command[];
  /** Messages name their context (`context` on commands), so the session keeps one queue per context. */
  readonly contexts: boolean;
  /** Frames sent as soon as the session opens. */
  opening(sessionId: string): readonly object[];
  start(turn: Turn): object | undefined;
  /**
   * One piece of a request's encoded audio, lying at `span`: one frame, or several (ElevenLabs'
   * pieces stay under 64 KB, each with the characters of its words).
   */
  audio(turn: Turn, bytes: Uint8Array, span: AudioSpan): OutgoingFrame | readonly OutgoingFrame[];
  /**
   * The most bytes of a request's audio one {@link audio} frame may carry (whole samples): longer
   * chunks go in several frames, so that a long sentence's audio never makes one huge message
   * (base64 in JSON is a third larger). Unbounded when absent.
   */
  maxAudioBytes?(turn: Turn): number;
  /**
   * After the last audio of a request; `figures` is undefined for a flush that had nothing to
   * speak. `warnings`: what it asked for and did not get (timestamps from a model that cannot
   * time, markup that was dropped). Several frames go in order.
   */
  complete(
    turn: Turn,
    figures: RunFigures | undefined,
    warnings?: readonly string[],
  ): object | readonly object[] | undefined;
  /**
   * A chunk's words, before that chunk's audio: for requests with timestamps, and for every
   * request when {@link alwaysWords} (the dialect puts them beside its audio).
   */
  words(turn: Turn, words: readonly WordTiming[]): object | undefined;
  /**
   * A chunk's sounds, before that chunk's audio (and after its words), for requests with phoneme
   * timestamps; absent: the dialect has no such message.
   */
  phonemes?(turn: Turn, phonemes: readonly PhonemeTiming[]): object | undefined;
  /** A request has ended, however (completed, cut, failed): the dialect lets go of its state. */
  ended?(turn: Turn): void;
  /** Words are wanted for every request the engine can time, whatever `timestamps` says. */
  readonly alwaysWords?: boolean;
  /**
   * An SSML `<mark>` or an append's {@link AppendOptions.mark}, before the audio after it; `timeS`
   * on the request's audio clock.
   */
  mark(turn: Turn, name: string, timeS: number): object | undefined;
  /**
   * After the last audio of what a cancel cut. `target`: the cancel's own request id, else the
   * request it cut; `heard`: what the listener received of the request it cut, if one was running.
   */
  cancelled(
    target: string | undefined,
    cancelled: readonly string[],
    heard: Heard | undefined,
    context?: string,
  ): object | undefined;
  /**
   * A context has ended (`close_context`): after the last audio of what it spoke, or of what a drop
   * cut. `cancelled` and `heard` as for a cancel, when it was dropped.
   */
  contextClosed(
    context: string,
    cancelled: readonly string[] | undefined,
    heard: Heard | undefined,
  ): object | undefined;
  error(body: ErrorBody, context?: string): object | undefined;
  /** Sent when the client's close is carried out, just before the session closes. */
  closing?(): object | undefined;
  /** Fields every request and first append of the session starts from (its own fields win). */
  readonly defaults: Readonly<Record<string, unknown>>;
  /**
   * A context's lane is let go once it has nothing open or queued (Cartesia's contexts end with
   * their last input; their ids may start new turns); otherwise contexts last until closed.
   */
  readonly releaseIdleContexts?: boolean;
  /** A shorter idle limit the client asked for (seconds), within the server's. */
  readonly idleTimeoutS?: number;
}

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
