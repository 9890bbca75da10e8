/**
 * Audio frames of a session with contexts (`?contexts=true`): each binary frame starts with its
 * context's id, one byte that gives the id's length n in bytes, then the n bytes of the id in UTF-8,
 * then the audio.
 */

// Fatal, so that a frame that is not of this shape fails instead of naming a mangled context.
const utf8 = new TextDecoder('utf-8', { fatal: true });

/** An audio frame of a session with contexts, split: its context and its audio bytes. */
export interface ContextAudio {
  readonly contextId: string;
  /** The audio after the id: a view of the frame's bytes, not a copy (may be empty). */
  readonly audio: Uint8Array;
}

/**
 * Splits an audio frame of a session with contexts into its context id and its audio.
 *
 * @example
 * const { contextId, audio } = splitContextFrame(frame);
 * players.get(contextId)?.write(audio);
 *
 * @throws RangeError when the frame is shorter than its first byte says or names an empty id;
 * TypeError when the id is not UTF-8.
 */
export function splitContextFrame(bytes: Uint8Array): ContextAudio {
  const length = bytes[0];
  if (length === undefined || length === 0 || bytes.length < 1 + length) {
    throw new RangeError(
      `not an audio frame of a session with contexts: it should start with the context id's length ` +
        `(1 to 255) and that many bytes of id; got ${bytes.length} bytes, starting with ${length ?? 'nothing'}`,
    );
  }
  return { contextId: utf8.decode(bytes.subarray(1, 1 + length)), audio: bytes.subarray(1 + length) };
}
