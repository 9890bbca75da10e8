/**
 * Vitest's global setup: misaki's English lexicons for every test and every server the tests start
 * (they inherit this environment). `KOKORO_LEXICON_DIR` names them when set (CI points it at a
 * local copy); otherwise they are fetched once into `.cache/misaki/` (pinned commit, hashes
 * checked), as `npm run fetch-model` fetches them for users. No lexicon, no test run: English
 * would otherwise be tested on the fallback alone.
 */
import { join } from 'node:path';
import { LEXICON_FILE_FACTS, fetchLexicon } from '../model/kokoro/lexicon-download.ts';
import { existsSync } from 'node:fs';

export default async function setup(): Promise<void> {
  const named = process.env.KOKORO_LEXICON_DIR?.trim();
  if (named) {
    const missing = LEXICON_FILE_FACTS.filter((f) => !existsSync(join(named, f.name)));
    if (missing.length > 0)
      throw new Error(
        `KOKORO_LEXICON_DIR=${named} lacks ${missing.map((f) => f.name).join(', ')} (npm run fetch-model fetches them)`,
      );
    return;
  }
  const dir = join(import.meta.dirname, '..', '.cache', 'misaki');
  try {
    await fetchLexicon({ outDir: dir, log: (line) => process.stderr.write(`lexicon: ${line}\n`) });
  } catch (err) {
    throw new Error(
      `The tests need misaki's English lexicons: fetching them into ${dir} failed (${(err as Error).message}). ` +
        'Set KOKORO_LEXICON_DIR to a folder holding us_gold.json, us_silver.json, gb_gold.json and gb_silver.json.',
      { cause: err },
    );
  }
  process.env.KOKORO_LEXICON_DIR = dir;
}
