/**
 * The public-domain corpora of test/fixtures/corpora/ (one sentence a line, `#` comments naming
 * the sources): each language's module names its own (`corpus`); English, which has none, uses the
 * benchmark texts.
 */
import { readFileSync } from 'node:fs';
import type { LanguageCode } from '../../model/kokoro/constants.ts';
import { REGISTRY } from '../../model/text/languages/index.ts';
import { projectPath } from './paths.ts';
import { EIGHT_SENTENCES } from './bench-texts.ts';

/** Corpus file name → Kokoro's language letter, in Kokoro's order. */
export const CORPORA: Readonly<Record<string, LanguageCode>> = Object.fromEntries(
  REGISTRY.languages.flatMap(({ corpus, code }) => (corpus === undefined ? [] : [[corpus, code]])),
);

/** The sentences of one corpus (`en` gives the benchmark texts). */
export function corpus(name: string): string[] {
  if (name === 'en') return [...EIGHT_SENTENCES];
  return readFileSync(projectPath('test', 'fixtures', 'corpora', `${name}.txt`), 'utf8')
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line !== '' && !line.startsWith('#'));
}
