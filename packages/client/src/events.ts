/**
 * What a client session reports, the same for a WebSocket session and a SageMaker stream: the
 * start, audio, word timings and completion of each request, errors, answers to cancels, and the
 * end of the session.
 */

/** A synthesis request started: its audio frames follow. */
export interface TtsStartEvent {
  readonly type: 'start';
  readonly requestId: string;
}

/** One audio frame: whole samples (and whole codec frames), in the request's format. */
export interface TtsAudioEvent {
  readonly type: 'audio';
  /** The request it belongs to; `''` only if audio came while no request of ours was open. */
  readonly requestId: string;
  readonly bytes: Uint8Array;
}

/** One word of a request's text, timed on the request's audio clock. */
export interface TtsWord {
  readonly word: string;
  /** Seconds from the request's first audio sample (continuing across its chunks). */
  readonly startS: number;
  readonly endS: number;
  /** Where the word is in the request's text (UTF-16 offsets, end exclusive), when the server says. */
  readonly charStart?: number;
  readonly charEnd?: number;
}

/**
 * The words of the chunk whose audio follows (requests with `timestamps: true`): the words of the
 * original text (split at white space) that end in that chunk, in text order.
 */
export interface TtsWordsEvent {
  readonly type: 'words';
  readonly requestId: string;
  readonly words: readonly TtsWord[];
}

/** One sound of a chunk, timed on the request's audio clock, with the lip shape it makes. */
export interface TtsPhoneme {
  /** Kokoro's symbol with the stress and length marks that belong to it (`ˈɛ`, `ɑː`); `" "` between words. */
  readonly phoneme: string;
  /** One of the 15 Oculus Lipsync visemes (`sil`, `PP`, `FF`, `TH`, `DD`, `kk`, `CH`, `SS`, `nn`, `RR`, `aa`, `E`, `ih`, `oh`, `ou`, as `protocol/frames.ts` lists them). */
  readonly viseme: string;
  /** Seconds from the request's first audio sample. */
  readonly startS: number;
  readonly durationS: number;
}

/**
 * The sounds of the chunk whose audio follows (requests with `phoneme_timestamps: true`), in
 * order: what an avatar needs to move its lips with the audio.
 */
export interface TtsPhonemesEvent {
  readonly type: 'phonemes';
  readonly requestId: string;
  readonly phonemes: readonly TtsPhoneme[];
}

/** An SSML `<mark>` of the request: before the audio after it, with its time on the request's audio. */
export interface TtsMarkEvent {
  readonly type: 'mark';
  readonly requestId: string;
  readonly name: string;
  /** Seconds of the request's audio before the mark. */
  readonly timeS: number;
}

/** The last audio of a request has been received. */
export interface TtsCompleteEvent {
  readonly type: 'complete';
  readonly requestId: string;
  /** Seconds of synthesized audio. */
  readonly totalDurationS: number;
  /** Server time from the message's arrival to its completion, in seconds. */
  readonly elapsedS: number;
  /** Server time from the message's arrival to its first audio frame, when the server reports it. */
  readonly timeToFirstAudioS?: number;
  /** The whole `synthesis_complete` frame, with any further figures the server adds. */
  readonly raw: Readonly<Record<string, unknown>>;
}

/** The server refused or failed a request (or a message it could not parse); the session stays open. */
export interface TtsErrorEvent {
  readonly type: 'error';
  /** Absent when the server could not tell which request it was. */
  readonly requestId?: string;
  /** A code from the server's error table, e.g. `invalid_option`, `voice_not_found`, `busy`. */
  readonly code: string;
  readonly message: string;
}

/**
 * What the listener received of a request that a cancel cut: the audio that left the server before
 * the cut, and the words of its text that this audio covers whole, so that an agent can cut its
 * transcript to what was heard. Audio still in the network or the player counts as received.
 */
export interface TtsHeard {
  readonly requestId: string;
  /** Samples at `sampleRate` (the request's output rate); exact for PCM and μ-law. */
  readonly samples: number;
  readonly sampleRate: number;
  readonly ms: number;
  /** Words whose audio was sent whole, in text order; absent when the server's model cannot time words. */
  readonly words?: readonly TtsWord[];
}

/**
 * The server's answer to a cancel, after the last audio of what it cut: no event of a request in
 * `cancelled` follows it (neither audio nor `complete`). The session stays open.
 */
export interface TtsCancelledEvent {
  readonly type: 'cancelled';
  /** The cancel's own request id when it named one, else the request in flight that it cut. */
  readonly requestId?: string;
  /** Requests cut or dropped: the one in flight first, then the queued ones in order; may be empty. */
  readonly cancelled: readonly string[];
  /** What was heard of the request in flight that it cut; absent when it cut none. */
  readonly heard?: TtsHeard;
}

/** The session has ended (its last event). */
export interface TtsClosedEvent {
  readonly type: 'closed';
  /**
   * The WebSocket close code: 1000 after `close()`, 1001 at server shutdown, 1006 when the
   * connection dropped. Absent for a SageMaker stream, which has none.
   */
  readonly code?: number;
  readonly reason: string;
}

/** Everything a session's `events()` yields, in arrival order; `closed` is always the last. */
export type TtsEvent =
  | TtsStartEvent
  | TtsWordsEvent
  | TtsPhonemesEvent
  | TtsMarkEvent
  | TtsAudioEvent
  | TtsCompleteEvent
  | TtsErrorEvent
  | TtsCancelledEvent
  | TtsClosedEvent;
