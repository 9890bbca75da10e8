/**
 * The text front end of each language, in-process: what loading it costs (a fresh process per
 * language, cold), a sentence once warm (normalization, phonemes, the vocabulary filter: the
 * inference worker's steps), the memory it adds and the share of symbols outside Kokoro's
 * vocabulary; then agreement with misaki's published outputs (test/fixtures/misaki-reference.json).
 */
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { LanguageCode } from '../../model/kokoro/constants.ts';
import { languageName, normalizeFor } from '../../model/text/languages/index.ts';
import { loadLanguage, phonemize } from '../../model/text/phonemes.ts';
import { filterToVocab } from '../../model/text/tokens.ts';
import { samplesOf, stat, type Case } from '../lib/bench-runner.ts';
import { isMain } from '../lib/cli.ts';
import { CORPORA, corpus } from '../lib/corpora.ts';
import { projectPath } from '../lib/paths.ts';
import { round } from '../lib/stats.ts';

/** English on the benchmark texts, the others on their corpora. */
const RUNS: Readonly<Record<string, LanguageCode>> = { en: 'a', ...CORPORA };
const frontEnd = async (text: string, lang: LanguageCode) =>
  filterToVocab(await phonemize(normalizeFor(text, lang), lang));

/** One language in this (fresh) process: figures as JSON on stdout. */
async function child(name: string, rounds: number) {
  const lang = RUNS[name]!;
  const sentences = corpus(name);
  const rss = process.memoryUsage().rss;
  let t = performance.now();
  await loadLanguage(lang);
  const loadMs = performance.now() - t;
  t = performance.now();
  await frontEnd(sentences[0]!, lang);
  const firstMs = performance.now() - t;
  let times: number[] = [];
  let symbols = 0;
  let outside = 0;
  for (let r = 0; r < rounds; r++) {
    times = [];
    symbols = outside = 0;
    for (const s of sentences) {
      t = performance.now();
      const { kept, unknown } = await frontEnd(s, lang);
      times.push(performance.now() - t);
      const unknowns = Object.values(unknown).reduce((a, b) => a + b, 0);
      symbols += [...kept].length + unknowns;
      outside += unknowns;
    }
  }
  const memoryMb = (process.memoryUsage().rss - rss) / 2 ** 20;
  return { loadMs, firstMs, times, memoryMb, outsidePct: (100 * outside) / symbols };
}

function editDistance(a: readonly string[], b: readonly string[]): number {
  let row = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const next = [i];
    for (let j = 1; j <= b.length; j++)
      next[j] = Math.min(row[j]! + 1, next[j - 1]! + 1, row[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1));
    row = next;
  }
  return row[b.length]!;
}

export const languages: Case = {
  name: 'languages',
  summary: 'the text front end per language: load, cost per sentence, memory, agreement with misaki',
  about:
    'Each language in a fresh process: loading its front end (library and dictionary), the first sentence ' +
    'right after, then passes over its corpus (test/fixtures/corpora/; English: the benchmark texts), the last ' +
    'one timed; the resident memory it added; the share of symbols outside Kokoro’s vocabulary. Then agreement ' +
    'with misaki’s published outputs (test/fixtures/misaki-reference.json), compared as the model receives ' +
    'them: identical, identical but for punctuation and spaces, and the mean similarity (1 − edit distance ÷ ' +
    'the longer length).',
  servers: [],
  models: [],
  trials: 1,
  measures: ['front end', 'agreement'],
  flags: {
    rounds: { kind: 'int', default: 3, min: 1, max: 100, help: 'passes over each corpus; the last is timed' },
  },
  async run(ctx) {
    const rounds = ctx.settings.flags.rounds as number;
    for (const name of Object.keys(RUNS)) {
      ctx.log(`${name}…`);
      const out = execFileSync(process.execPath, [fileURLToPath(import.meta.url), name, String(rounds)], {
        encoding: 'utf8',
        stdio: ['ignore', 'pipe', 'inherit'],
      });
      const f = JSON.parse(out.trim().split('\n').at(-1)!) as Awaited<ReturnType<typeof child>>;
      const fig = (what: string, unit: string, samples: number[]) =>
        ctx.figure({ measure: 'front end', what: `${name}: ${what}`, unit, samples });
      fig('load', 'ms', [f.loadMs]);
      fig('first sentence', 'ms', [f.firstMs]);
      fig('sentence', 'ms', f.times);
      fig('memory', 'MB', [f.memoryMb]);
      fig('outside the vocabulary', '% of symbols', [f.outsidePct]);
    }
    ctx.log('agreement with misaki…');
    const file = projectPath('test', 'fixtures', 'misaki-reference.json');
    const { samples } = JSON.parse(readFileSync(file, 'utf8')) as {
      samples: { lang: LanguageCode; text: string; phonemes: string }[];
    };
    const worst: Record<string, { score: number; line: string }> = {};
    const scores: Record<string, { exact: number[]; sounds: number[]; similarity: number[] }> = {};
    const sounds = (s: string) => s.replace(/[\s!"(),.:;?—“”…]/g, '');
    for (const sample of samples) {
      const ours = (await frontEnd(sample.text, sample.lang)).kept.trim();
      const misaki = filterToVocab(sample.phonemes).kept.trim();
      const [a, b] = [[...ours], [...misaki]];
      const score = 1 - editDistance(a, b) / Math.max(a.length, b.length, 1);
      const s = (scores[sample.lang] ??= { exact: [], sounds: [], similarity: [] });
      s.exact.push(ours === misaki ? 1 : 0);
      s.sounds.push(sounds(ours) === sounds(misaki) ? 1 : 0);
      s.similarity.push(score);
      if (score < (worst[sample.lang]?.score ?? 1))
        worst[sample.lang] = { score, line: `${sample.text} → \`${ours}\` / \`${misaki}\`` };
    }
    for (const [lang, s] of Object.entries(scores)) {
      const language = languageName(lang as LanguageCode);
      ctx.figure({ measure: 'agreement', what: `${language}: identical`, unit: 'share', samples: s.exact });
      ctx.figure({ measure: 'agreement', what: `${language}: sounds`, unit: 'share', samples: s.sounds });
      ctx.figure({
        measure: 'agreement',
        what: `${language}: similarity`,
        unit: 'share',
        samples: s.similarity,
      });
    }
    return Object.fromEntries(
      Object.entries(worst).map(([lang, w]) => [languageName(lang as LanguageCode), w.line]),
    );
  },
  report(figures, _settings, returned) {
    const worst = (returned[0] ?? {}) as Record<string, string>;
    const at = (what: string, q = 0.5, digits = 1) => stat(figures, { what }, q, digits);
    const share = (what: string) => {
      const s = samplesOf(figures, { what });
      const n = s.reduce((a, b) => a + b, 0);
      return `${round(n, 0)} (${round((100 * n) / s.length, 0)} %)`;
    };
    const agreed = [
      ...new Set(figures.filter((f) => f.measure === 'agreement').map((f) => f.what.split(':')[0]!)),
    ];
    return {
      tables: [
        {
          title: 'The front end per language (load and first sentence in a fresh process; then warm)',
          header: [
            'language',
            'sentences',
            'load (ms)',
            'first sentence (ms)',
            'median (ms)',
            'p95 (ms)',
            'memory (MB)',
            'outside the vocabulary',
          ],
          rows: Object.entries(RUNS).map(([name, lang]) => [
            `${languageName(lang)} (${name})`,
            samplesOf(figures, { what: `${name}: sentence` }).length,
            at(`${name}: load`, 0.5, 0),
            at(`${name}: first sentence`),
            at(`${name}: sentence`, 0.5, 2),
            at(`${name}: sentence`, 0.95, 2),
            at(`${name}: memory`, 0.5, 0),
            `${at(`${name}: outside the vocabulary`, 0.5, 2)} %`,
          ]),
        },
        {
          title: 'Agreement with misaki’s published outputs, as the model receives them',
          header: [
            'language',
            'samples',
            'identical',
            'identical but for punctuation and spaces',
            'mean similarity',
            'least similar: text → ours / misaki',
          ],
          rows: agreed.map((language) => {
            const similarity = samplesOf(figures, { what: `${language}: similarity` });
            return [
              language,
              similarity.length,
              share(`${language}: identical`),
              share(`${language}: sounds`),
              `${round((100 * similarity.reduce((a, b) => a + b, 0)) / similarity.length, 1)} %`,
              worst[language] ?? '—',
            ];
          }),
        },
      ],
    };
  },
};

if (isMain(import.meta.url)) {
  const [name, rounds] = process.argv.slice(2);
  process.stdout.write(`${JSON.stringify(await child(name!, Number(rounds)))}\n`);
}
