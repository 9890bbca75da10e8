/**
 * How closely the English front end agrees with misaki, and what it costs, side by side with the
 * front end it replaced (espeak-ng's IPA with kokoro-js's corrections, as kokoro-js feeds the
 * model): against recorded outputs of Python misaki (`--recorded FILE`: rows `{text, lang,
 * phonemes, kind, misaki_version, source}` that third parties published; rows from before misaki
 * 0.9.2, whose flaps and articles differ, are left out and counted), with the lexicons of
 * `KOKORO_LEXICON_DIR`; against lexicon words read alone (every 40th gold word with one
 * pronunciation, whose entry gives the answer: lookup, case and stress rules); the symbols outside
 * misaki's set; cost per sentence and the lexicons' heap per worker. Needs `npm run build`.
 *
 * Usage: KOKORO_LEXICON_DIR=DIR node dist/scripts/bench-g2p.js --recorded FILE [--show N]
 */
import { readFileSync } from 'node:fs';
import { loadEspeak } from '../model/text/espeak.ts';
import { createEnglish, type EnglishLang } from '../model/text/en/english.ts';
import { GB_VOCAB, Lexicon, US_VOCAB, growDictionary, type Entry } from '../model/text/en/lexicon.ts';
import { G2P } from '../model/text/en/g2p.ts';
import { espeakFallback } from '../model/text/en/espeak-fallback.ts';
import { tokenize } from '../model/text/en/tokenizer.ts';
import { tagTokens } from '../model/text/en/english.ts';
import { splitOnPunctuation } from '../model/text/phonemes.ts';
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

/**
 * The front end this one replaced, for comparison: espeak-ng per word run with punctuation kept,
 * then kokoro-js's corrections (kokoro-js `src/phonemize.js`).
 */
function kokoroJsStyle(phonemes: (text: string) => string, lang: EnglishLang, text: string): string {
  const pieces = splitOnPunctuation(text).map((p) => {
    if (p.punctuation || p.text.trim() === '') return p.text;
    return `${/^\s/.test(p.text) ? ' ' : ''}${phonemes(p.text.trim())}${/\s$/.test(p.text) ? ' ' : ''}`;
  });
  let out = pieces
    .join('')
    .replace(/ {2,}/g, ' ')
    .replace(/kəkˈ[oɔ]ːɹoʊ/g, 'kˈoʊkəɹoʊ')
    .replace(/kəkˈɔːɹəʊ/g, 'kˈəʊkəɹəʊ')
    .replace(/ʲ/g, 'j')
    .replace(/r/g, 'ɹ')
    .replace(/x/g, 'k')
    .replace(/ɬ/g, 'l')
    .replace(/(?<=[a-zɹː])(?=hˈʌndɹɪd)/g, ' ')
    .replace(/ z(?=[;:,.!?¡¿—…"«»“” ]|$)/g, 'z');
  if (lang === 'a') out = out.replace(/(?<=nˈaɪn)ti(?!ː)/g, 'di');
  return out.trim();
}
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
  const before = {
    a: (t: string) => kokoroJsStyle((w) => espeak.phonemes(w, 'en-us'), 'a', t),
    b: (t: string) => kokoroJsStyle((w) => espeak.phonemes(w, 'en'), 'b', t),
  };
  const FRONT_ENDS = ['misaki (this server)', 'espeak-ng + kokoro-js fixes (before)'] as const;
  type Counts = { exact: number; total: number };
  const groups = new Map<string, Counts[]>();
  const foreign = [new Map<string, number>(), new Map<string, number>()];
  const symbols = [0, 0];
  const costs: number[][] = [[], []];
  const shown: string[] = [];
  let stale = 0;
  const count = (
    key: string,
    row: { lang: EnglishLang; phonemes: string; text: string },
    isSentence: boolean,
  ) => {
    const g = groups.get(key) ?? [
      { exact: 0, total: 0 },
      { exact: 0, total: 0 },
    ];
    groups.set(key, g);
    const vocab = row.lang === 'a' ? US_VOCAB : GB_VOCAB;
    for (const k of [0, 1]) {
      const t0 = performance.now();
      const got = squash(
        k === 0 ? english[row.lang].phonemize(row.text).phonemes : before[row.lang](row.text),
      );
      if (isSentence) costs[k]!.push(performance.now() - t0);
      g[k]!.total++;
      if (got === squash(row.phonemes)) g[k]!.exact++;
      else if (k === 0 && isSentence && shown.length < show)
        shown.push(`  ${row.text}\n  misaki: ${squash(row.phonemes)}\n  ours:   ${got}`);
      if (!isSentence) continue;
      for (const c of got) {
        symbols[k]!++;
        if (!vocab.has(c) && !PUNCTUATION.has(c) && c !== 'ɐ' && c !== 'T' && c !== 't')
          foreign[k]!.set(c, (foreign[k]!.get(c) ?? 0) + 1);
      }
    }
  };
  for (const row of rows) {
    if (STALE.test(row.misaki_version)) {
      stale++;
      continue;
    }
    const kind = row.kind === 'sentence' ? 'recorded sentences' : 'recorded words';
    count(`${kind}, ${row.lang === 'a' ? 'American' : 'British'}`, row, row.kind === 'sentence');
  }
  // Lexicon words read alone: every 40th gold word with a single pronunciation.
  for (const lang of ['a', 'b'] as const) {
    const file = lang === 'a' ? 'us_gold.json' : 'gb_gold.json';
    const gold = JSON.parse(readFileSync(`${lexiconDir}/${file}`, 'utf8')) as Record<string, unknown>;
    const words = Object.entries(gold).filter(([k, v]) => typeof v === 'string' && /^[a-z]{2,}$/.test(k));
    for (let i = 0; i < words.length; i += 40) {
      const [text, entry] = words[i] as [string, string];
      // What G2P gives for Kokoro v1.0: the entry after misaki's final ɾ→T, ʔ→t.
      const phonemes = entry.replaceAll('ɾ', 'T').replaceAll('ʔ', 't');
      count(`lexicon words, ${lang === 'a' ? 'American' : 'British'}`, { lang, text, phonemes }, false);
    }
  }
  // Held out: the same words taken out of both lexicons, read by misaki's rules and espeak alone.
  for (const lang of ['a', 'b'] as const) {
    const [goldFile, silverFile] =
      lang === 'a' ? ['us_gold.json', 'us_silver.json'] : ['gb_gold.json', 'gb_silver.json'];
    const gold = JSON.parse(readFileSync(`${lexiconDir}/${goldFile}`, 'utf8')) as Record<string, Entry>;
    const silver = JSON.parse(readFileSync(`${lexiconDir}/${silverFile}`, 'utf8')) as Record<string, Entry>;
    const words = Object.entries(gold).filter(([k, v]) => typeof v === 'string' && /^[a-z]{2,}$/.test(k));
    const held = words.filter((_, i) => i % 40 === 0) as [string, string][];
    for (const [w] of held) {
      for (const d of [gold, silver]) {
        delete d[w];
        delete d[w[0]!.toUpperCase() + w.slice(1)];
      }
    }
    const voice = lang === 'a' ? 'en-us' : 'en';
    const g2p = new G2P({
      lexicon: new Lexicon(growDictionary(gold), growDictionary(silver), lang === 'b'),
      tokenize,
      tag: tagTokens,
      fallback: espeakFallback((t) => espeak.phonemes(t, voice, '^'), lang === 'b'),
      unk: '',
    });
    const key = `lexicon words held out of it, ${lang === 'a' ? 'American' : 'British'}`;
    const c: Counts = { exact: 0, total: 0 };
    for (const [text, entry] of held) {
      c.total++;
      if (squash(g2p.phonemize(text).phonemes) === entry.replaceAll('ɾ', 'T').replaceAll('ʔ', 't')) c.exact++;
    }
    // Only this server's front end reads with a lexicon; the one before had none to hold out.
    groups.set(key, [c, groups.get(`lexicon words, ${lang === 'a' ? 'American' : 'British'}`)![1]!]);
  }
  const pct = (c: Counts) => `${c.exact} / ${c.total} (${round((100 * c.exact) / c.total, 1)} %)`;
  const table = markdownTable(
    ['exact agreement with misaki', ...FRONT_ENDS],
    [...groups].map(([k, g]) => [k, pct(g[0]!), pct(g[1]!)]),
  );
  const outside = (k: number) =>
    foreign[k]!.size === 0
      ? 'none'
      : `${[...foreign[k]!.values()].reduce((a, b) => a + b, 0)} of ${symbols[k]} (${[...foreign[k]!]
          .toSorted((x, y) => y[1] - x[1])
          .map(([c, n]) => `${c} ${n}`)
          .join(', ')})`;
  const cost = (k: number) =>
    `median ${round(median(costs[k]!), 2)} ms, p95 ${round(quantile(costs[k]!, 0.95), 2)} ms`;
  process.stdout.write(
    `${table}\n(${stale} recorded rows from before misaki 0.9.2 left out.)\n\n` +
      `Symbols outside misaki's set in the recorded sentences: ${FRONT_ENDS[0]}: ${outside(0)}; ${FRONT_ENDS[1]}: ${outside(1)}\n` +
      `Cost per sentence (${costs[0]!.length} sentences, one thread, side by side): ${FRONT_ENDS[0]} ${cost(0)}; ${FRONT_ENDS[1]} ${cost(1)}\n` +
      `Heap per dialect's lexicons and front end: ${round(heapMb, 1)} MB\n` +
      (shown.length > 0 ? `\nDisagreeing sentences:\n${shown.join('\n\n')}\n` : ''),
  );
  return 0;
}

runMain(import.meta.url, 'bench-g2p', main);
