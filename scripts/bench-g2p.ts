/**
 * How closely the English front end agrees with misaki, and what it costs: against recorded
 * outputs of Python misaki (`--recorded FILE`: rows `{text, lang, phonemes, kind, misaki_version,
 * source}` that third parties published; rows from before misaki 0.9.2, whose flaps and articles
 * differ, are left out and counted), with the lexicons of `KOKORO_LEXICON_DIR`; the symbols outside
 * misaki's set; cost per sentence and the lexicons' heap per worker. Needs `npm run build`.
 *
 * Usage: KOKORO_LEXICON_DIR=DIR node dist/scripts/bench-g2p.js --recorded FILE [--show N]
 */
import { readFileSync } from 'node:fs';
import { loadEspeak } from '../model/text/espeak.ts';
import { createEnglish, type EnglishLang } from '../model/text/en/english.ts';
import { GB_VOCAB, US_VOCAB } from '../model/text/en/lexicon.ts';
import { UsageError, intFlag, parseFlags, runMain } from './lib/cli.ts';
import { markdownTable, median, quantile, round } from './lib/stats.ts';

const USAGE = `Usage: KOKORO_LEXICON_DIR=DIR node dist/scripts/bench-g2p.js --recorded FILE [--show N]

  --recorded FILE  misaki's recorded outputs (JSON array of {text, lang, phonemes, kind, misaki_version, source})
  --show N         print the first N disagreeing sentences (default 0)
  -h, --help       this text`;

interface Row {
  readonly text: string;
  readonly lang: EnglishLang;
  readonly phonemes: string;
  readonly kind: 'sentence' | 'word';
  readonly misaki_version: string;
  readonly source: string;
}

const STALE = /^(pre-0\.9\.2|0\.1-era)/;
const PUNCTUATION = new Set(';:,.!?—…"“”()\' -');
const squash = (s: string) => s.replace(/\s+/g, ' ').trim();

async function main(): Promise<number> {
  let recorded: string, show: number;
  try {
    const values = parseFlags(process.argv.slice(2), {
      recorded: { type: 'string' },
      show: { type: 'string' },
      help: { type: 'boolean', short: 'h', default: false },
    });
    if (values.help) {
      process.stdout.write(`${USAGE}\n`);
      return 0;
    }
    if (values.recorded === undefined) throw new UsageError('--recorded FILE is required');
    recorded = values.recorded;
    show = intFlag('show', values.show, 0, 0, 10_000);
  } catch (err) {
    if (!(err instanceof UsageError)) throw err;
    process.stderr.write(`${err.message}\n\n${USAGE}\n`);
    return 2;
  }
  const lexiconDir = process.env.KOKORO_LEXICON_DIR?.trim();
  if (!lexiconDir) {
    process.stderr.write('bench-g2p: set KOKORO_LEXICON_DIR to the folder of misaki’s lexicons\n');
    return 2;
  }
  const rows = JSON.parse(readFileSync(recorded, 'utf8')) as Row[];
  const espeak = await loadEspeak();
  const heap0 = process.memoryUsage().heapUsed;
  const english = {
    a: createEnglish('a', lexiconDir, (t) => espeak.phonemes(t, 'en-us', '^')),
    b: createEnglish('b', lexiconDir, (t) => espeak.phonemes(t, 'en', '^')),
  };
  globalThis.gc?.();
  const heapMb = (process.memoryUsage().heapUsed - heap0) / 2 / (1024 * 1024);
  const groups = new Map<string, { exact: number; total: number }>();
  const foreign = new Map<string, number>();
  const costs: number[] = [];
  const shown: string[] = [];
  let stale = 0;
  for (const row of rows) {
    if (STALE.test(row.misaki_version)) {
      stale++;
      continue;
    }
    const key = `${row.kind === 'sentence' ? 'sentences' : 'words'}, ${row.lang === 'a' ? 'American' : 'British'}`;
    const g = groups.get(key) ?? { exact: 0, total: 0 };
    groups.set(key, g);
    const t0 = performance.now();
    const got = squash(english[row.lang].phonemize(row.text).phonemes);
    if (row.kind === 'sentence') costs.push(performance.now() - t0);
    g.total++;
    if (got === squash(row.phonemes)) g.exact++;
    else if (row.kind === 'sentence' && shown.length < show)
      shown.push(`${row.source}\n  ${row.text}\n  misaki: ${squash(row.phonemes)}\n  ours:   ${got}`);
    const vocab = row.lang === 'a' ? US_VOCAB : GB_VOCAB;
    for (const c of got)
      if (!vocab.has(c) && !PUNCTUATION.has(c) && c !== 'ɐ' && c !== 'T' && c !== 't')
        foreign.set(c, (foreign.get(c) ?? 0) + 1);
  }
  const table = markdownTable(
    ['recorded misaki outputs', 'exact', 'of', 'agreement'],
    [...groups].map(([k, g]) => [
      k,
      String(g.exact),
      String(g.total),
      `${round((100 * g.exact) / g.total, 1)} %`,
    ]),
  );
  process.stdout.write(
    `${table}\n(${stale} rows from before misaki 0.9.2 left out.)\n\n` +
      `Symbols outside misaki's set: ${foreign.size === 0 ? 'none' : [...foreign].map(([c, n]) => `${c} ${n}`).join(', ')}\n` +
      `Cost per sentence (ms, ${costs.length} sentences, one thread): median ${round(median(costs), 2)}, p95 ${round(quantile(costs, 0.95), 2)}\n` +
      `Heap per dialect's lexicons and front end: ${round(heapMb, 1)} MB (run with node --expose-gc for an exact figure)\n` +
      (shown.length > 0 ? `\n${shown.join('\n\n')}\n` : ''),
  );
  return 0;
}

runMain(import.meta.url, 'bench-g2p', main);
