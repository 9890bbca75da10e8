/**
 * ElevenLabs' character alignment (`alignment` / `normalizedAlignment` on its audio messages, and
 * `alignment` on its HTTP stream with timestamps), built from the word timings the engine gives:
 * each word's characters share its time evenly, and the space after it lasts no time. Times are
 * whole milliseconds on the request's clock (from its first sample), which is what LiveKit's
 * ElevenLabs plugin reads (it adds no offset per chunk).
 */
import type { WordTiming } from '../model/engine.ts';

export interface CharAlignment {
  readonly chars: string[];
  readonly charStartTimesMs: number[];
  readonly charDurationsMs: number[];
}

export function charAlignment(words: readonly WordTiming[]): CharAlignment {
  const out: CharAlignment = { chars: [], charStartTimesMs: [], charDurationsMs: [] };
  for (const word of words) {
    const chars = [...word.word];
    const start = word.start_s * 1000;
    const each = ((word.end_s - word.start_s) * 1000) / Math.max(1, chars.length);
    chars.forEach((char, i) => {
      const from = Math.round(start + i * each);
      out.chars.push(char);
      out.charStartTimesMs.push(from);
      out.charDurationsMs.push(Math.max(0, Math.round(start + (i + 1) * each) - from));
    });
    out.chars.push(' ');
    out.charStartTimesMs.push(Math.round(word.end_s * 1000));
    out.charDurationsMs.push(0);
  }
  return out;
}
