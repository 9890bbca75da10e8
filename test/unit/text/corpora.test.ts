/**
 * Vocabulary coverage per language: every sentence of a public-domain corpus (at least 50 per
 * language, test/fixtures/corpora/) through the text front end, the worker's own steps
 * (normalize → phonemize → filter to Kokoro's vocabulary); at most 1 % of the symbols produced may
 * fall outside the vocabulary.
 */
import { describe, expect, it } from 'vitest';
import { normalizeFor } from '../../../model/text/languages/index.ts';
import { phonemize } from '../../../model/text/phonemes.ts';
import { filterToVocab } from '../../../model/text/tokens.ts';
import { CORPORA, corpus } from '../../../scripts/lib/corpora.ts';

describe.each(Object.entries(CORPORA))('the %s corpus', (name, lang) => {
  it('has at least 50 sentences, and at most 1 % of its symbols are outside Kokoro’s vocabulary', async () => {
    const sentences = corpus(name);
    expect(sentences.length).toBeGreaterThanOrEqual(50);
    let total = 0;
    const unknown: Record<string, number> = {};
    for (const sentence of sentences) {
      const result = filterToVocab(await phonemize(normalizeFor(sentence, lang), lang));
      total += [...result.kept].length;
      for (const [symbol, n] of Object.entries(result.unknown)) {
        unknown[symbol] = (unknown[symbol] ?? 0) + n;
        total += n;
      }
    }
    const count = Object.values(unknown).reduce((a, b) => a + b, 0);
    expect(total).toBeGreaterThan(sentences.length * 10);
    expect(count / total, JSON.stringify(unknown)).toBeLessThanOrEqual(0.01);
  }, 60_000);
});
