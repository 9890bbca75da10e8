/** A synthesis request as the engine takes it, and the sentence jobs it becomes. */
import type { ResolvedVoice } from '../kokoro/voices.ts';
import type { SentenceRequest } from '../inference/worker-pool.ts';

export interface SynthesisRequest {
  /**
   * The whole text, split into sentences here; or sentences as they are written (streamed text
   * input), each synthesized as soon as it arrives, until the iterable ends.
   */
  readonly text: string | AsyncIterable<string>;
  readonly voice: ResolvedVoice;
  readonly speed: number;
  /** Time the words (only when `info.capabilities.timestamps`). */
  readonly timestamps?: boolean;
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
}

/** One sentence of `request` as the pool runs it. */
export function sentenceJob(request: SynthesisRequest, text: string): SentenceRequest {
  return {
    text,
    lang: request.voice.lang,
    voice: request.voice,
    speed: request.speed,
    ...(request.timestamps ? { timestamps: true } : {}),
    ...(request.phonemes ? { phonemes: true } : {}),
  };
}
