/**
 * The public-domain corpora of test/fixtures/corpora/ (one sentence a line, `#` comments naming
 * the sources), one per language of Kokoro's besides English, which uses the benchmark texts.
 */
import { readFileSync } from 'node:fs';
import type { LanguageCode } from '../../model/kokoro/constants.ts';
import { projectPath } from './paths.ts';
import { EIGHT_SENTENCES } from './bench-texts.ts';

/** Corpus file name → Kokoro's language letter. */
export const CORPORA: Readonly<Record<string, LanguageCode>> = {
  es: 'e',
  fr: 'f',
  it: 'i',
  'pt-br': 'p',
  hi: 'h',
  ja: 'j',
  zh: 'z',
};

/** The sentences of one corpus (`en` gives the benchmark texts). */
export function corpus(name: string): string[] {
  if (name === 'en') return [...EIGHT_SENTENCES];
  return readFileSync(projectPath('test', 'fixtures', 'corpora', `${name}.txt`), 'utf8')
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line !== '' && !line.startsWith('#'));
}
