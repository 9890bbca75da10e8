/**
 * The text front end of each language: what loading it costs (a fresh process per language: the
 * library and its dictionary, then the first sentence, cold), what a sentence costs once warm
 * (median and p95 over its corpus, normalization + phonemization + the vocabulary filter, the
 * worker's own steps), the memory it adds, and the share of symbols outside Kokoro's vocabulary.
 * Then the agreement with Kokoro's original front end (misaki) on the published samples of
 * test/fixtures/misaki-reference.json: compared as the model receives them, after the vocabulary
 * filter; exact matches and the mean character similarity (1 − edit distance ÷ longer length).
 *
 * Usage: node dist/scripts/bench-languages.js [--rounds N] [--readme]
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { cpus } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { LanguageCode } from '../model/kokoro/constants.ts';
import { LANGUAGES } from '../model/kokoro/constants.ts';
import { normalizeFor } from '../model/text/normalize-intl.ts';
import { loadLanguage, phonemize } from '../model/text/phonemes.ts';
import { filterToVocab } from '../model/text/tokens.ts';
import { UsageError, intFlag, parseFlags, runMain } from './lib/cli.ts';
import { CORPORA, corpus } from './lib/corpora.ts';
import { projectPath } from './lib/paths.ts';
import { markdownTable, quantile, replaceReadmeBlock, round } from './lib/stats.ts';

const USAGE = `Usage: node dist/scripts/bench-languages.js [options]

  --rounds N   warm passes over each corpus; the last one is timed (default 3)
  --out DIR    where languages.json goes (default docs/bench)
  --readme     also write the tables into README.md between <!-- bench:languages --> markers
  -h, --help   this text`;

/** English is measured on the benchmark texts, the others on their corpora. */
const RUNS: readonly (readonly [string, LanguageCode])[] = [['en', 'a'], ...Object.entries(CORPORA)];

interface LanguageFigures {
  readonly corpus: string;
  readonly lang: LanguageCode;
  readonly sentences: number;
  /** Loading the library and its dictionary in a fresh process. */
  readonly loadMs: number;
  /** The first sentence right after loading. */
  readonly firstSentenceMs: number;
  readonly medianMs: number;
  readonly p95Ms: number;
  /** Resident memory added by loading and running the language. */
  readonly memoryMb: number;
  readonly unknownShare: number;
}

/** Runs in a fresh process: one language, from load to the warm timings. */
async function child(name: string, lang: LanguageCode, rounds: number): Promise<LanguageFigures> {
  const sentences = corpus(name);
  const rssBefore = process.memoryUsage().rss;
  let t = performance.now();
  await loadLanguage(lang);
  const loadMs = performance.now() - t;
  const frontEnd = async (s: string) => filterToVocab(await phonemize(normalizeFor(s, lang), lang));
  t = performance.now();
  await frontEnd(sentences[0]!);
  const firstSentenceMs = performance.now() - t;
  let times: number[] = [];
  let total = 0;
  let unknown = 0;
  for (let r = 0; r < rounds; r++) {
    times = [];
    total = unknown = 0;
    for (const s of sentences) {
      t = performance.now();
      const result = await frontEnd(s);
      times.push(performance.now() - t);
      total += [...result.kept].length;
      for (const n of Object.values(result.unknown)) {
        total += n;
        unknown += n;
      }
    }
  }
  return {
    corpus: name,
    lang,
    sentences: sentences.length,
    loadMs,
    firstSentenceMs,
    medianMs: quantile(times, 0.5),
    p95Ms: quantile(times, 0.95),
    memoryMb: (process.memoryUsage().rss - rssBefore) / 2 ** 20,
    unknownShare: unknown / total,
  };
}

interface Sample {
  readonly lang: LanguageCode;
  readonly text: string;
  readonly phonemes: string;
  readonly source: string;
}

function editDistance(a: readonly string[], b: readonly string[]): number {
  let row = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const next = [i];
    for (let j = 1; j <= b.length; j++) {
      next[j] = Math.min(row[j]! + 1, next[j - 1]! + 1, row[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1));
    }
    row = next;
  }
  return row[b.length]!;
}

interface Agreement {
  readonly lang: LanguageCode;
  readonly samples: number;
  readonly exact: number;
  /** Identical once punctuation and spaces are set aside. */
  readonly exactSounds: number;
  readonly similarity: number;
  readonly worst?: { readonly text: string; readonly ours: string; readonly misaki: string };
}

async function agreement(): Promise<Agreement[]> {
  const file = projectPath('test', 'fixtures', 'misaki-reference.json');
  const { samples } = JSON.parse(readFileSync(file, 'utf8')) as { samples: Sample[] };
  const byLang = new Map<LanguageCode, Sample[]>();
  for (const s of samples) byLang.set(s.lang, [...(byLang.get(s.lang) ?? []), s]);
  const out: Agreement[] = [];
  for (const [lang, list] of byLang) {
    let exact = 0;
    let exactSounds = 0;
    let similarity = 0;
    let worst: { score: number; text: string; ours: string; misaki: string } | undefined;
    for (const sample of list) {
      const ours = filterToVocab(await phonemize(normalizeFor(sample.text, lang), lang)).kept.trim();
      const misaki = filterToVocab(sample.phonemes).kept.trim();
      const a = [...ours];
      const b = [...misaki];
      const sounds = (s: string) => s.replace(/[\s!"(),.:;?—“”…]/g, '');
      if (sounds(ours) === sounds(misaki)) exactSounds++;
      const score = 1 - editDistance(a, b) / Math.max(a.length, b.length, 1);
      if (a.join('') === b.join('')) exact++;
      similarity += score;
      if (!worst || score < worst.score) worst = { score, text: sample.text, ours, misaki };
    }
    out.push({
      lang,
      samples: list.length,
      exact,
      exactSounds,
      similarity: similarity / list.length,
      ...(worst && worst.score < 1
        ? { worst: { text: worst.text, ours: worst.ours, misaki: worst.misaki } }
        : {}),
    });
  }
  return out.sort((x, y) => x.lang.localeCompare(y.lang));
}

function render(figures: readonly LanguageFigures[], agree: readonly Agreement[], rounds: number): string {
  const cpu = cpus()[0]?.model ?? 'unknown CPU';
  const lines = [
    `Machine: ${cpu}, ${cpus().length} cores, Node ${process.version}. Each language in a fresh process: load (library and dictionary), the first sentence right after, then ${rounds} passes over its corpus, the last one timed (normalization + phonemization + the vocabulary filter, as the inference worker runs them). Memory: resident memory the language added. English: the benchmark texts; the others: test/fixtures/corpora/.`,
    '',
    markdownTable(
      [
        'language',
        'sentences',
        'load (ms)',
        'first sentence (ms)',
        'median (ms)',
        'p95 (ms)',
        'memory (MB)',
        'outside the vocabulary',
      ],
      figures.map((f) => [
        `${LANGUAGES[f.lang]} (${f.corpus})`,
        String(f.sentences),
        String(round(f.loadMs, 0)),
        String(round(f.firstSentenceMs, 1)),
        String(round(f.medianMs, 2)),
        String(round(f.p95Ms, 2)),
        String(round(f.memoryMb, 0)),
        `${round(f.unknownShare * 100, 2)} %`,
      ]),
    ),
    '',
    'Agreement with misaki (Kokoro’s own front end) on its published outputs (test/fixtures/misaki-reference.json, each sample with its source), compared as the model receives them (after the vocabulary filter):',
    '',
    markdownTable(
      [
        'language',
        'samples',
        'identical',
        'identical but for punctuation and spaces',
        'mean similarity',
        'least similar: text → ours / misaki',
      ],
      agree.map((a) => [
        LANGUAGES[a.lang],
        String(a.samples),
        `${a.exact} (${round((a.exact / a.samples) * 100, 0)} %)`,
        `${a.exactSounds} (${round((a.exactSounds / a.samples) * 100, 0)} %)`,
        `${round(a.similarity * 100, 1)} %`,
        a.worst ? `${a.worst.text} → \`${a.worst.ours}\` / \`${a.worst.misaki}\`` : '—',
      ]),
    ),
  ];
  return lines.join('\n');
}

async function main(): Promise<number> {
  let values, rounds;
  try {
    values = parseFlags(process.argv.slice(2), {
      rounds: { type: 'string' },
      out: { type: 'string', default: 'docs/bench' },
      readme: { type: 'boolean', default: false },
      child: { type: 'string' },
      help: { type: 'boolean', short: 'h', default: false },
    });
    rounds = intFlag('rounds', values.rounds, 3, 1, 100);
  } catch (err) {
    if (!(err instanceof UsageError)) throw err;
    process.stderr.write(`${err.message}\n\n${USAGE}`);
    return 2;
  }
  if (values.help) {
    process.stdout.write(`${USAGE}\n`);
    return 0;
  }
  if (values.child !== undefined) {
    const run = RUNS.find(([name]) => name === values.child);
    if (!run) throw new UsageError(`--child ${values.child}: no such corpus`);
    process.stdout.write(`${JSON.stringify(await child(run[0], run[1], rounds))}\n`);
    return 0;
  }
  const figures: LanguageFigures[] = [];
  for (const [name] of RUNS) {
    process.stderr.write(`${name}…\n`);
    const out = execFileSync(
      process.execPath,
      [fileURLToPath(import.meta.url), '--child', name, '--rounds', String(rounds)],
      { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] },
    );
    figures.push(JSON.parse(out.trim().split('\n').at(-1)!) as LanguageFigures);
  }
  process.stderr.write('agreement with misaki…\n');
  const agree = await agreement();
  const md = render(figures, agree, rounds);
  mkdirSync(values.out, { recursive: true });
  writeFileSync(
    join(values.out, 'languages.json'),
    `${JSON.stringify({ figures, agreement: agree }, null, 2)}\n`,
  );
  process.stdout.write(`${md}\n`);
  if (values.readme) replaceReadmeBlock('bench:languages', md);
  return 0;
}

runMain(import.meta.url, 'bench-languages', main);
