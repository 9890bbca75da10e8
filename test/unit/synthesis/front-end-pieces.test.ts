/**
 * A plain text's pieces for the front end alone (POST /v1/phonemize): its sentences as synthesis
 * splits them, consecutive ones joined up to the chunker's limit of 400 characters, so that no
 * piece (one job of the inference pool) is longer than a sentence may be.
 */
import { describe, expect, it } from 'vitest';
import { frontEndPieces } from '../../../model/synthesis/sentences.ts';

const sentence = (chars: number, word = 'word') => {
  const words = `${word} `.repeat(Math.ceil(chars / (word.length + 1))).slice(0, chars - 1);
  return `${words.charAt(0).toUpperCase()}${words.slice(1).trimEnd()}.`;
};
const [a, b, c] = [sentence(150, 'alpha'), sentence(150, 'beta'), sentence(150, 'gamma')];

describe('frontEndPieces', () => {
  const cases = new Map<string, string[]>([
    ['', []],
    ['One. Two.', ['One. Two.']],
    ['First line\nSecond line', ['First line Second line']],
    [`${a} ${b} ${c}`, [`${a} ${b}`, c]],
    [`${a}\n\n${b}`, [`${a} ${b}`]],
    [sentence(400), [sentence(400)]],
  ]);
  it.each([...cases])('%j → %j', (text, pieces) => {
    expect(frontEndPieces(text)).toEqual(pieces);
  });

  it('cuts a sentence past the limit as the chunker does, and keeps every word in order', () => {
    const text = `${sentence(900)} ${a} ${sentence(30, 'tail')}`;
    const pieces = frontEndPieces(text);
    expect(pieces.length).toBeGreaterThan(2);
    expect(Math.max(...pieces.map((p) => p.length))).toBeLessThanOrEqual(400);
    expect(pieces.join(' ').split(/\s+/)).toEqual(text.split(/\s+/));
  });
});
