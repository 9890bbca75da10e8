/** A synthesis request as the engine takes it, and the sentence jobs it becomes. */
import type { ResolvedVoice } from '../kokoro/voices.ts';
import type { SentenceRequest } from '../inference/worker-pool.ts';
import type { NormalizationOptions } from '../text/normalization-options.ts';
import { displayText, isPlain, type SpeechPart } from '../text/parts.ts';
import type { PronunciationMatcher } from '../text/pronunciations/index.ts';
import { textParts, type Segment } from './script.ts';

export interface SynthesisRequest {
  /**
   * The whole text, split into sentences here; or its segments, when it held markup (see
   * script.ts: the server reads them first, so bad markup is refused before any audio); or
   * segments as they are written (streamed text input), each synthesized as soon as it arrives,
   * until the iterable ends.
   */
  readonly text: string | readonly Segment[] | AsyncIterable<Segment>;
  readonly voice: ResolvedVoice;
  readonly speed: number;
  /** Time the words (only when `info.capabilities.timestamps`). */
  readonly timestamps?: boolean;
  /** Time each chunk's sounds, with their visemes (only when `info.capabilities.timestamps`). */
  readonly phonemeTimestamps?: boolean;
  /**
   * `clause` (default): a whole text's first chunk may be released at a clause mark (see
   * `EngineOptions.firstChunkMinChars`); `sentence`: it ends at the first sentence end.
   */
  readonly firstChunk?: 'clause' | 'sentence';
  /**
   * `text` is Kokoro phonemes, every symbol in its vocabulary (the caller checks): no front end;
   * split after each `.`, `!`, `?` or `…` followed by a space, and at 510 ids.
   */
  readonly phonemes?: boolean;
  /** The request's own pronunciations, over the server's dictionary (segments carry their parts). */
  readonly pronunciations?: PronunciationMatcher;
  /** The normalizer's switches; absent: the defaults. */
  readonly normalization?: NormalizationOptions;
}

export type SpeechSegment = Extract<Segment, { kind: 'speech' }>;

/**
 * A plain sentence of `request` as a segment: the request's voice and speed, read through
 * `dictionary`; `at`: where it starts in the request's text.
 */
export function speechOf(
  request: SynthesisRequest,
  sentence: string,
  dictionary: PronunciationMatcher | undefined,
  at?: number,
): SpeechSegment {
  const parts: readonly SpeechPart[] = request.phonemes
    ? [{ text: sentence }]
    : textParts(sentence, dictionary, at);
  return { kind: 'speech', parts, voice: request.voice, speed: request.speed };
}

/** One sentence of `request` as the pool runs it. */
export function sentenceJob(request: SynthesisRequest, segment: SpeechSegment): SentenceRequest {
  const plain = isPlain(segment.parts);
  const at = segment.parts[0]?.at;
  return {
    text: displayText(segment.parts),
    lang: segment.voice.lang,
    voice: segment.voice,
    speed: segment.speed,
    ...(request.timestamps ? { timestamps: true } : {}),
    ...(request.phonemeTimestamps ? { phonemeTimestamps: true } : {}),
    ...(request.phonemes ? { phonemes: true } : {}),
    ...(plain ? (at !== undefined ? { at } : {}) : { parts: segment.parts }),
    ...(request.normalization ? { normalization: request.normalization } : {}),
  };
}
