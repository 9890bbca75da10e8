/**
 * How closely the English front end agrees with misaki, in-process: recorded outputs of Python
 * misaki (`--recorded FILE`: rows `{text, lang, phonemes, kind, misaki_version, source}` third
 * parties published; rows from before misaki 0.9.2, whose flaps and articles differ, left out),
 * lexicon words read alone (every 40th gold word with one pronunciation) and the same words held out
 * of both lexicons; symbols outside misaki's set, cost per sentence, the lexicons' heap.
 */
import { readFileSync } from 'node:fs';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { loadEspeak } from '../../model/text/espeak.ts';
import { espeakFallback } from '../../model/text/en/espeak-fallback.ts';
import { createEnglish, tagTokens, type EnglishLang } from '../../model/text/en/english.ts';
import { G2P } from '../../model/text/en/g2p.ts';
import { GB_VOCAB, Lexicon, US_VOCAB, growDictionary, type Entry } from '../../model/text/en/lexicon.ts';
import { tokenize } from '../../model/text/en/tokenizer.ts';
import { samplesOf, stat, type Case } from '../lib/bench-runner.ts';
import { UsageError } from '../lib/cli.ts';
import { round } from '../lib/stats.ts';

interface Row {
  readonly text: string;
  readonly lang: EnglishLang;
  readonly phonemes: string;
  readonly kind: 'sentence' | 'word';
  readonly misaki_version: string;
}

const STALE = /^(pre-0\.9\.2|0\.1-era)/;
const PUNCTUATION = new Set(';:,.!?—…"“”()\' -');
const DIALECTS = { a: 'American', b: 'British' } as const;
const squash = (s: string) => s.replace(/\s+/g, ' ').trim();
/** A gold entry as G2P gives it for Kokoro v1.0: after misaki's final ɾ→T, ʔ→t. */
const v1 = (entry: string) => entry.replaceAll('ɾ', 'T').replaceAll('ʔ', 't');

export const g2p: Case = {
  name: 'g2p',
  summary: 'agreement of the English front end with recorded misaki outputs; its cost (in-process)',
  about:
    'How closely the English front end agrees with misaki, the G2P Kokoro was trained with: exact ' +
    'agreement with outputs of the real Python misaki that third parties published (--recorded FILE), with ' +
    'lexicon words read alone (every 40th gold word with one pronunciation), and with the same words held ' +
    'out of both lexicons (read by misaki’s rules and espeak-ng); symbols outside misaki’s set, the cost per ' +
    'sentence and the lexicons’ heap. Reads the lexicons of --lexicon-dir.',
  servers: [],
  models: [],
  trials: 1,
  measures: ['agreement', 'front end'],
  flags: {
    recorded: {
      kind: 'string',
      help: 'misaki’s recorded outputs: a JSON array of {text, lang, phonemes, kind, misaki_version}',
    },
    'lexicon-dir': { kind: 'string', help: 'the folder of misaki’s lexicons (default: $KOKORO_LEXICON_DIR)' },
    show: {
      kind: 'int',
      default: 0,
      min: 0,
      max: 10_000,
      help: 'disagreeing sentences to list in the notes',
    },
  },
  async run(ctx) {
    const { recorded, show } = ctx.settings.flags as { recorded?: string; show: number };
    const dir =
      (ctx.settings.flags['lexicon-dir'] as string | undefined) ?? process.env.KOKORO_LEXICON_DIR?.trim();
    if (!recorded || !dir)
      throw new UsageError('g2p needs --recorded FILE and --lexicon-dir DIR (or KOKORO_LEXICON_DIR)');
    setFlagsFromString('--expose-gc');
    const gc = runInNewContext('gc') as () => void;
    const espeak = await loadEspeak();
    const voice = (lang: EnglishLang) => (lang === 'a' ? 'en-us' : 'en');
    gc();
    const heap = process.memoryUsage().heapUsed;
    const english = {
      a: createEnglish('a', dir, (t) => espeak.phonemes(t, 'en-us', '^')),
      b: createEnglish('b', dir, (t) => espeak.phonemes(t, 'en', '^')),
    };
    gc();
    ctx.figure({
      measure: 'front end',
      what: 'heap per dialect',
      unit: 'MB',
      samples: [(process.memoryUsage().heapUsed - heap) / 2 / 2 ** 20],
    });

    const groups = new Map<string, number[]>();
    const agree = (group: string, got: string, want: string) => {
      groups.set(group, [...(groups.get(group) ?? []), squash(got) === squash(want) ? 1 : 0]);
      return squash(got) === squash(want);
    };
    const costs: number[] = [];
    const outside: number[] = [];
    const shown: string[] = [];
    const rows = JSON.parse(readFileSync(recorded, 'utf8')) as Row[];
    for (const row of rows.filter((r) => !STALE.test(r.misaki_version))) {
      const t = performance.now();
      const got = english[row.lang].phonemize(row.text).phonemes;
      const sentence = row.kind === 'sentence';
      if (
        !agree(`recorded ${sentence ? 'sentences' : 'words'}, ${DIALECTS[row.lang]}`, got, row.phonemes) &&
        sentence &&
        shown.length < show
      )
        shown.push(`${row.text} — misaki: \`${squash(row.phonemes)}\`, ours: \`${squash(got)}\``);
      if (!sentence) continue;
      costs.push(performance.now() - t);
      const vocab = row.lang === 'a' ? US_VOCAB : GB_VOCAB;
      outside.push([...got].filter((c) => !vocab.has(c) && !PUNCTUATION.has(c) && !'ɐTt'.includes(c)).length);
    }
    for (const lang of ['a', 'b'] as const) {
      const [goldFile, silverFile] =
        lang === 'a' ? ['us_gold.json', 'us_silver.json'] : ['gb_gold.json', 'gb_silver.json'];
      const read = (f: string) => JSON.parse(readFileSync(`${dir}/${f}`, 'utf8')) as Record<string, Entry>;
      const [gold, silver] = [read(goldFile), read(silverFile)];
      const held = Object.entries(gold)
        .filter(([k, v]) => typeof v === 'string' && /^[a-z]{2,}$/.test(k))
        .filter((_, i) => i % 40 === 0) as [string, string][];
      for (const [word, entry] of held)
        agree(`lexicon words, ${DIALECTS[lang]}`, english[lang].phonemize(word).phonemes, v1(entry));
      // Held out: the same words taken out of both lexicons, read by misaki's rules and espeak alone.
      for (const [word] of held)
        for (const d of [gold, silver]) {
          delete d[word];
          delete d[word[0]!.toUpperCase() + word.slice(1)];
        }
      const without = new G2P({
        lexicon: new Lexicon(growDictionary(gold), growDictionary(silver), lang === 'b'),
        tokenize,
        tag: tagTokens,
        fallback: espeakFallback((t) => espeak.phonemes(t, voice(lang), '^'), lang === 'b'),
        unk: '',
      });
      for (const [word, entry] of held)
        agree(`lexicon words held out of it, ${DIALECTS[lang]}`, without.phonemize(word).phonemes, v1(entry));
    }
    for (const [what, samples] of groups) ctx.figure({ measure: 'agreement', what, unit: 'share', samples });
    ctx.figure({ measure: 'front end', what: 'sentence', unit: 'ms', samples: costs });
    ctx.figure({
      measure: 'front end',
      what: 'symbols outside misaki’s set',
      unit: 'per sentence',
      samples: outside,
    });
    const stale = rows.filter((r) => STALE.test(r.misaki_version)).length;
    return { stale, shown };
  },
  report(figures, _settings, returned) {
    const { stale, shown } = (returned[0] ?? { stale: 0, shown: [] }) as { stale: number; shown: string[] };
    const groups = figures.filter((f) => f.measure === 'agreement');
    const outside = samplesOf(figures, { what: 'symbols outside misaki’s set' }).reduce((a, b) => a + b, 0);
    return {
      tables: [
        {
          title: 'Exact agreement with misaki',
          header: ['exact agreement with misaki', 'this server'],
          rows: groups.map((g) => {
            const n = g.samples.reduce((a, b) => a + b, 0);
            return [g.what, `${n} / ${g.samples.length} (${round((100 * n) / g.samples.length, 1)} %)`];
          }),
        },
      ],
      notes: [
        `${stale} recorded rows from before misaki 0.9.2 left out. Symbols outside misaki’s set in the recorded ` +
          `sentences: ${outside}. Cost per sentence, one thread: median ${stat(figures, { what: 'sentence' }, 0.5, 2)} ms, ` +
          `p95 ${stat(figures, { what: 'sentence' }, 0.95, 2)} ms. Heap per dialect’s lexicons and front end: ` +
          `${stat(figures, { what: 'heap per dialect' })} MB.`,
        ...(shown.length > 0 ? [`Disagreeing sentences:\n\n${shown.map((s) => `- ${s}`).join('\n')}`] : []),
      ],
    };
  },
};
