/**
 * What a wire dialect is to the session: the commands a client message stands for, the frames the
 * session's events become ({@link SessionDialect}), and the registry entry that serves a dialect
 * ({@link Dialect}: its socket paths, its refusal of a connection, its HTTP routes).
 */
import type { FastifyPluginAsync } from 'fastify';
import type { PhonemeTiming, RunFigures, WordTiming } from '../../model/engine.ts';
import type { ErrorBody } from '../../protocol/errors.ts';
import type { Heard } from '../../protocol/frames.ts';
import type { Config } from '../config/config.ts';
import type { Lifecycle } from '../http/lifecycle.ts';

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
 * events become. The project's own protocol is `nativeDialect` (native/messages.ts); each
 * vendor's is `socket.ts` in its folder (deepgram/, elevenlabs/, cartesia/). A frame builder that
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

/** What a dialect's HTTP routes and socket are given. */
export interface DialectDeps {
  readonly config: Config;
  readonly lifecycle: Lifecycle;
}

/** One plugin of a dialect's HTTP routes, and the prefix it is registered under. */
export interface DialectRoutes {
  readonly plugin: FastifyPluginAsync<DialectDeps>;
  readonly prefix?: string;
}

/** A dialect's WebSocket: the paths it is served on, and how a connection on them is opened. */
export interface DialectSocket {
  /** Route URLs as Fastify writes them (`:name` for one path segment). */
  readonly paths: readonly string[];
  /**
   * This dialect speaks on `path`: the connection's own, or the path a SageMaker client names in
   * `X-Amzn-SageMaker-Model-Invocation-Path` (so given with or without its leading slash).
   */
  accepts(path: string): boolean;
  /**
   * The session's dialect for a connection on `path` with `query`; undefined for the native
   * protocol without contexts.
   * @throws what to tell the client (an unknown voice, a format it cannot have, not ready).
   */
  open(path: string, query: URLSearchParams, deps: DialectDeps): SessionDialect | undefined;
  /** How the dialect words a refusal of the connection, sent before the close. */
  refusal(body: ErrorBody, status: number): object;
  /**
   * A vendor key may travel in the query (`api_key`, `xi_api_key`, `authorization`): the vendor's
   * clients send it there, since a browser's socket cannot carry headers.
   */
  readonly keyInQuery?: boolean;
  /**
   * Connections on these paths honour SageMaker's invocation-path and query-string headers: the
   * dialect that accepts the path named there serves them, this one when none does.
   */
  readonly forwardsInvocationPath?: boolean;
}

/** A wire dialect as the app serves it: one entry of the registry (registry.ts). */
export interface Dialect {
  readonly name: string;
  readonly socket?: DialectSocket;
  readonly routes?: readonly DialectRoutes[];
  /** Its routes as the not-found answer lists them. */
  readonly listing: string;
}
