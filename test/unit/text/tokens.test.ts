import { describe, expect, it } from 'vitest';
import { MAX_PHONEME_IDS } from '../../../model/kokoro/constants.ts';
import {
  KOKORO_VOCAB,
  keepKnownPhonemes,
  padIds,
  phonemesToIds,
  splitPhonemes,
} from '../../../model/text/tokens.ts';

describe('vocabulary', () => {
  it('is Kokoro v1.0 vocabulary: 114 symbols, ids from the config', () => {
    expect(KOKORO_VOCAB.size).toBe(114);
    expect(KOKORO_VOCAB.get(' ')).toBe(16);
    expect(KOKORO_VOCAB.get('ə')).toBe(83);
    expect(KOKORO_VOCAB.get('ˈ')).toBe(156);
  });

  it('maps phonemes to ids and skips unknown symbols', () => {
    expect(phonemesToIds('həlˈoʊ')).toEqual([50, 83, 54, 156, 57, 135]);
    expect(phonemesToIds('h#ə')).toEqual([50, 83]);
    expect(keepKnownPhonemes('h#ə€')).toBe('hə');
  });

  it('pads with a zero at both ends, as int64', () => {
    expect([...padIds([5, 6])]).toEqual([0n, 5n, 6n, 0n]);
    expect(padIds([]).length).toBe(2);
  });
});

describe('splitPhonemes', () => {
  const word = 'həlˈoʊ'; // 6 symbols

  it('leaves input within the limit whole', () => {
    expect(splitPhonemes('ab cd.', 510)).toEqual(['ab cd.']);
    expect(splitPhonemes('x'.repeat(MAX_PHONEME_IDS))).toHaveLength(1);
  });

  it('prefers a sentence stop, then a clause mark, then a space', () => {
    expect(splitPhonemes('aaa, bbb. ccc ddd', 12)).toEqual(['aaa, bbb.', 'ccc ddd']);
    expect(splitPhonemes('aaa bbb, ccc ddd', 12)).toEqual(['aaa bbb,', 'ccc ddd']);
    expect(splitPhonemes('aaa bbb ccc ddd', 12)).toEqual(['aaa bbb ccc', 'ddd']);
  });

  it('cuts inside a word only when there is no space at all', () => {
    expect(splitPhonemes('abcdefghij', 4)).toEqual(['abcd', 'efgh', 'ij']);
  });

  it('never exceeds the limit and loses nothing but spaces at the cuts', () => {
    const text = Array.from({ length: 400 }, (_, i) => (i % 17 === 16 ? `${word},` : word)).join(' ');
    const pieces = splitPhonemes(text);
    expect(pieces.length).toBeGreaterThan(1);
    for (const p of pieces) expect([...p].length).toBeLessThanOrEqual(MAX_PHONEME_IDS);
    expect(pieces.join(' ')).toBe(text);
  });
});
