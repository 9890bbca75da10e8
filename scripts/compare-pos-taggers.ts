/**
 * npm part-of-speech taggers side by side, for the English G2P port of misaki (whose lexicon picks a
 * heteronym's pronunciation by the spaCy Penn Treebank tag). Each candidate is installed with
 * `npm install --prefix` into a folder of its own, then run in a fresh process on the sentences of a
 * CoNLL-U file whose XPOS column holds Penn Treebank tags (UD English EWT), fed the file's own
 * tokens (its syntactic words: "ca" + "n't", not "can't"), so what is measured is tagging, not
 * tokenizing.
 *
 * Figures per candidate: token accuracy (all tokens; words, punctuation left out); the classes
 * misaki's lexicon keys on (VERB/NOUN/ADJ/ADV by tag prefix, as misaki's get_parent_tag) and the
 * exact tags it tests (VB, VBD, VBN, VBP, DT, IN, PRP, NNP, CD), recall and precision; on the tokens
 * that misaki's lexicon (us_gold.json) keys by tag, whether the parent tag is right and whether the
 * predicted tag selects the same lexicon entry as the gold tag; the tag-driven special cases (a/DT,
 * I/PRP, by/ADV, in/IN, used/VBD|JJ, am/NN*); the mean, median and p95 time per sentence after a
 * warm-up pass; load time and resident memory added by loading; install size (its node_modules tree, all
 * dependencies included, as du counts it) and licence.
 *
 * Usage: node dist/scripts/compare-pos-taggers.js --ud FILE [options]
 */
import { Tag as EnPosTag } from 'en-pos';
import { tagTokens } from '../model/text/en/english.ts';
import { execFileSync } from 'node:child_process';
import { existsSync, lstatSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { cpus, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { UsageError, intFlag, parseFlags, runMain } from './lib/cli.ts';
import { markdownTable, quantile, round } from './lib/stats.ts';

const USAGE = `Usage: node dist/scripts/compare-pos-taggers.js --ud FILE [options]

  --ud FILE        CoNLL-U file with Penn Treebank tags in XPOS (e.g. UD English EWT's
                   en_ewt-ud-test.conllu); repeat it to read several, one after the other
  --lexicon FILE   misaki's us_gold.json (default: $MISAKI_DATA_DIR/us_gold.json)
  --dir DIR        install the candidates here, one npm prefix each, and keep them (default: a new
                   folder under the system's temp folder, removed afterwards)
  --only NAMES     comma-separated candidates (default: all of wink-pos-tagger,pos,en-pos,natural,compromise)
  --sentences N    the first N sentences only (default: all)
  --passes N       timed passes over the sentences after the warm-up pass (default: 3)
  -h, --help       this text`;

/** Tags one sentence, given as its tokens; returns one Penn Treebank tag a token. */
type Tagger = (words: readonly string[]) => string[];

interface Candidate {
  /** The package whose version and licence are reported. */
  readonly name: string;
  /** What `npm install` is given (versions pinned so that reruns measure the same code). */
  readonly install: readonly string[];
  /** How the gold tokens reach the tagger. */
  readonly input: string;
  load(req: NodeJS.Require): Promise<Tagger>;
}

const CANDIDATES: readonly Candidate[] = [
  {
    name: 'wink-pos-tagger',
    install: ['wink-pos-tagger@2.2.2'],
    input: '`tagRawTokens(words)`',
    async load(req) {
      const make = req('wink-pos-tagger') as () => {
        tagRawTokens(t: string[]): { pos: string }[];
      };
      const tagger = make();
      return (words) => tagger.tagRawTokens([...words]).map((t) => t.pos);
    },
  },
  {
    name: 'pos',
    install: ['pos@0.4.2'],
    input: '`new Tagger().tag(words)`',
    async load(req) {
      const mod = req('pos') as { Tagger: new () => { tag(w: string[]): [string, string][] } };
      const tagger = new mod.Tagger();
      return (words) => tagger.tag([...words]).map((t) => t[1]);
    },
  },
  {
    name: 'en-pos',
    install: ['en-pos@1.0.16'],
    input: '`new Tag(words).initial().smooth().tags`',
    async load(req) {
      const mod = req('en-pos') as {
        Tag: new (w: string[]) => { initial(): { smooth(): { tags: string[] } } };
      };
      return (words) => new mod.Tag([...words]).initial().smooth().tags;
    },
  },
  {
    name: 'natural',
    install: ['natural@8.1.1'],
    input:
      "`BrillPOSTagger(new Lexicon('EN', 'NN', 'NNP'), new RuleSet('EN')).tag(words)` (loaded from `natural/lib/natural/brill_pos_tagger` alone)",
    async load(req) {
      type Tagged = { taggedWords: { tag: string }[] };
      const mod = req('natural/lib/natural/brill_pos_tagger') as {
        Lexicon: new (lang: string, def: string, defCap: string) => object;
        RuleSet: new (lang: string) => object;
        BrillPOSTagger: new (l: object, r: object) => { tag(w: string[]): Tagged };
      };
      const tagger = new mod.BrillPOSTagger(new mod.Lexicon('EN', 'NN', 'NNP'), new mod.RuleSet('EN'));
      return (words) => tagger.tag([...words]).taggedWords.map((t) => t.tag);
    },
  },
  {
    name: 'compromise',
    install: ['compromise@14.17.0'],
    input:
      "`nlp([{ terms }])` (its JSON input, one term a token, `normal` lowercased); compromise's own tags mapped to Penn by this script",
    async load(req) {
      const mod = req('compromise') as CompromiseNlp | { default: CompromiseNlp };
      const nlp = typeof mod === 'function' ? mod : mod.default;
      return (words) => {
        const doc = nlp([
          {
            terms: words.map((text) => ({ text, normal: text.toLowerCase(), pre: '', post: ' ', tags: [] })),
          },
        ]);
        const terms = doc.document[0] ?? [];
        const out: string[] = [];
        words.forEach((w, i) => out.push(compromiseToPenn(w, terms[i]?.tags ?? new Set(), out[i - 1])));
        return out;
      };
    },
  },
];

type CompromiseNlp = (
  input: { terms: { text: string; normal: string; pre: string; post: string; tags: string[] }[] }[],
) => { document: { tags: Set<string> }[][] };

const BE: Record<string, string> = {
  is: 'VBZ',
  "'s": 'VBZ',
  are: 'VBP',
  "'re": 'VBP',
  am: 'VBP',
  "'m": 'VBP',
  was: 'VBD',
  were: 'VBD',
  be: 'VB',
  been: 'VBN',
  being: 'VBG',
  has: 'VBZ',
  had: 'VBD',
  having: 'VBG',
  does: 'VBZ',
  did: 'VBD',
  doing: 'VBG',
  done: 'VBN',
};
const WH: Record<string, string> = {
  who: 'WP',
  whom: 'WP',
  what: 'WP',
  whose: 'WP$',
  which: 'WDT',
  where: 'WRB',
  when: 'WRB',
  why: 'WRB',
  how: 'WRB',
};

/** A token of no letter or digit, by its characters (compromise tags none of them). */
function punctuationTag(w: string): string {
  if (/^[.!?]+$/.test(w)) return '.';
  if (w === ',') return ',';
  if (/^([:;]|-{2,}|[—–]|\.{3}|…)$/.test(w)) return ':';
  if (w === '-') return 'HYPH';
  if (/^[([{]$/.test(w)) return '-LRB-';
  if (/^[)\]}]$/.test(w)) return '-RRB-';
  if (/^(``|[“‘])$/.test(w)) return '``';
  if (/^(''|["”’'])$/.test(w)) return "''";
  if (/^[$£€¥]$/.test(w)) return '$';
  if (w === '#') return '#';
  if (w === '&') return 'CC';
  return 'NFP';
}

/**
 * compromise's tags for one term as one Penn Treebank tag: closed classes by their word where
 * compromise has no tag for them (be/have/do forms, wh-words, "to"), base verbs as VB after a modal,
 * "to" or a form of "do", VBP elsewhere.
 */
function compromiseToPenn(word: string, tags: ReadonlySet<string>, prev: string | undefined): string {
  const w = word.toLowerCase();
  const has = (t: string) => tags.has(t);
  if (!/[\p{L}\p{N}]/u.test(word)) return punctuationTag(word);
  if (has('Url') || has('Email')) return 'ADD';
  if (has('Emoticon') || has('Emoji')) return 'NFP';
  if (has('Possessive') && (w === "'s" || w === "'")) return 'POS';
  if (has('Negative')) return 'RB';
  if (WH[w] !== undefined && (has('QuestionWord') || has('Pronoun') || has('Determiner') || has('Adverb')))
    return WH[w];
  if (has('Ordinal')) return 'JJ';
  if (has('Value') || has('Cardinal')) return 'CD';
  if (has('Pronoun')) return has('Possessive') ? 'PRP$' : 'PRP';
  if (has('Determiner')) return 'DT';
  if (has('Preposition')) return w === 'to' ? 'TO' : 'IN';
  if (has('Conjunction')) return 'CC';
  if (has('Modal')) return 'MD';
  if (has('Particle')) return 'RP';
  if (has('Verb')) {
    if (BE[w] !== undefined) return BE[w];
    if (has('Gerund')) return 'VBG';
    if (has('Participle')) return 'VBN';
    if (has('PastTense')) return 'VBD';
    if (has('Infinitive') || has('Imperative'))
      return prev === 'MD' || prev === 'TO' || prev === 'VBD' || prev === 'VBZ' ? 'VB' : 'VBP';
    return 'VBZ';
  }
  if (has('Adjective')) return has('Superlative') ? 'JJS' : has('Comparative') ? 'JJR' : 'JJ';
  if (has('Adverb')) return 'RB';
  if (has('Expression')) return 'UH';
  if (has('ProperNoun')) return has('Plural') ? 'NNPS' : 'NNP';
  if (has('Plural')) return 'NNS';
  return 'NN';
}

// ---------------------------------------------------------------------------------------------
// Data

interface Sentence {
  readonly words: readonly string[];
  readonly tags: readonly string[];
}

/** The sentences of a CoNLL-U file: its syntactic words (integer ids) and their XPOS. */
function readConllu(file: string, limit: number): Sentence[] {
  const out: Sentence[] = [];
  let words: string[] = [];
  let tags: string[] = [];
  for (const line of readFileSync(file, 'utf8').split(/\r?\n/)) {
    if (line === '') {
      if (words.length > 0) out.push({ words, tags });
      words = [];
      tags = [];
      if (out.length >= limit) break;
      continue;
    }
    if (line.startsWith('#')) continue;
    const cols = line.split('\t');
    if (!/^\d+$/.test(cols[0] ?? '') || cols.length < 5) continue; // multiword ranges, empty nodes
    words.push(cols[1]!);
    tags.push(cols[4]!);
  }
  if (words.length > 0 && out.length < limit) out.push({ words, tags });
  return out;
}

type Entry = Readonly<Record<string, string | null>>;

/** misaki's gold lexicon as misaki loads it (Lexicon.grow_dictionary: Capitalized copies). */
function readLexicon(file: string): ReadonlyMap<string, string | Entry> {
  const d = JSON.parse(readFileSync(file, 'utf8')) as Record<string, string | Entry>;
  const cap = (s: string) => s.charAt(0).toUpperCase() + s.slice(1).toLowerCase();
  const grown = new Map<string, string | Entry>();
  for (const [k, v] of Object.entries(d)) {
    if (k.length < 2) continue;
    if (k === k.toLowerCase()) {
      if (k !== cap(k)) grown.set(cap(k), v);
    } else if (k === cap(k.toLowerCase())) grown.set(k.toLowerCase(), v);
  }
  for (const [k, v] of Object.entries(d)) grown.set(k, v);
  return grown;
}

/**
 * The key and entry misaki would look `word` up in, where that entry is keyed by tag: by more than
 * DEFAULT and 'None' (the stressed form before no vowel, a matter of context, not of tag).
 */
function heteronymEntry(
  lexicon: ReadonlyMap<string, string | Entry>,
  word: string,
): { key: string; entry: Entry } | undefined {
  const key = lexicon.has(word) ? word : word.toLowerCase();
  const v = lexicon.get(key);
  if (typeof v !== 'object' || v === null) return undefined;
  return Object.keys(v).some((k) => k !== 'DEFAULT' && k !== 'None') ? { key, entry: v } : undefined;
}

/** misaki's Lexicon.get_parent_tag. */
function parentTag(tag: string): string {
  if (tag.startsWith('VB')) return 'VERB';
  if (tag.startsWith('NN')) return 'NOUN';
  if (tag.startsWith('ADV') || tag.startsWith('RB')) return 'ADV';
  if (tag.startsWith('ADJ') || tag.startsWith('JJ')) return 'ADJ';
  return tag;
}

/** The pronunciation misaki's Lexicon.lookup takes from a tag-keyed entry (its 'None' key aside). */
function entryFor(entry: Entry, tag: string): string | null {
  const key = tag in entry ? tag : parentTag(tag);
  const v = key in entry ? entry[key] : entry['DEFAULT'];
  return v ?? null;
}

/** The decisions misaki's get_special_case takes on a tag, for the words it names. */
const SPECIAL: Readonly<Record<string, (tag: string) => boolean>> = {
  a: (t) => t === 'DT',
  A: (t) => t === 'DT',
  I: (t) => t === 'PRP',
  by: (t) => parentTag(t) === 'ADV',
  By: (t) => parentTag(t) === 'ADV',
  in: (t) => t === 'IN',
  In: (t) => t === 'IN',
  used: (t) => t === 'VBD' || t === 'JJ',
  Used: (t) => t === 'VBD' || t === 'JJ',
  am: (t) => t.startsWith('NN'),
  Am: (t) => t.startsWith('NN'),
  AM: (t) => t.startsWith('NN'),
};

const PUNCT_TAGS = new Set(['.', ',', ':', '``', "''", '-LRB-', '-RRB-', 'HYPH', 'NFP']);

/** The labels of spaCy en_core_web_sm's tagger (its model card's label scheme; _SP left out). */
const SPACY_TAGS = new Set(
  "$ '' , -LRB- -RRB- . : ADD AFX CC CD DT EX FW HYPH IN JJ JJR JJS LS MD NFP NN NNP NNPS NNS PDT POS PRP PRP$ RB RBR RBS RP SYM TO UH VB VBD VBG VBN VBP VBZ WDT WP WP$ WRB XX ``".split(
    ' ',
  ),
);

// ---------------------------------------------------------------------------------------------
// Measuring

interface ChildFigures {
  readonly tags: string[][];
  readonly loadMs: number;
  readonly rssMb: number;
  readonly heapMb: number;
  readonly meanMs: number;
  readonly medianMs: number;
  readonly p95Ms: number;
}

const gc = (): void => (globalThis as { gc?: () => void }).gc?.();

async function child(candidate: Candidate, prefix: string, sentences: readonly Sentence[], passes: number) {
  const req = createRequire(join(prefix, 'package.json'));
  gc();
  const rss0 = process.memoryUsage().rss;
  const heap0 = process.memoryUsage().heapUsed;
  const started = performance.now();
  const tag = await candidate.load(req);
  tag(['Hello', 'world', '.']);
  const loadMs = performance.now() - started;
  gc();
  const rssMb = (process.memoryUsage().rss - rss0) / 2 ** 20;
  const heapMb = (process.memoryUsage().heapUsed - heap0) / 2 ** 20;
  // The warm-up pass is the one whose tags are scored.
  const tags = sentences.map((s) => {
    const t = tag(s.words);
    if (t.length !== s.words.length)
      throw new Error(`${candidate.name}: ${t.length} tags for ${s.words.length} words`);
    return t;
  });
  const times: number[] = [];
  for (let p = 0; p < passes; p++) {
    for (const s of sentences) {
      const t0 = performance.now();
      tag(s.words);
      times.push(performance.now() - t0);
    }
  }
  const meanMs = times.reduce((a, b) => a + b, 0) / times.length;
  const medianMs = quantile(times, 0.5);
  return {
    tags,
    loadMs,
    rssMb,
    heapMb,
    meanMs,
    medianMs,
    p95Ms: quantile(times, 0.95),
  } satisfies ChildFigures;
}

/** Disk use of a folder tree as du counts it (allocated blocks), in bytes. */
function diskUse(dir: string): number {
  let total = 0;
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    const st = lstatSync(path);
    total += st.blocks !== undefined ? st.blocks * 512 : st.size;
    if (st.isDirectory()) total += diskUse(path);
  }
  return total;
}

interface Installed {
  readonly version: string;
  readonly licence: string;
  readonly packages: string[];
  readonly mb: number;
}

function install(candidate: Candidate, prefix: string): Installed {
  const main = join(prefix, 'node_modules', candidate.name, 'package.json');
  const want = candidate.install[0]!.slice(candidate.name.length + 1);
  const have = existsSync(main)
    ? (JSON.parse(readFileSync(main, 'utf8')) as { version: string }).version
    : undefined;
  if (have !== want) {
    mkdirSync(prefix, { recursive: true });
    process.stderr.write(`npm install --prefix ${prefix} ${candidate.install.join(' ')}\n`);
    execFileSync(
      'npm',
      ['install', '--prefix', prefix, '--no-audit', '--no-fund', '--loglevel=error', ...candidate.install],
      {
        stdio: ['ignore', 2, 2],
      },
    );
  }
  const pkg = JSON.parse(readFileSync(main, 'utf8')) as {
    version: string;
    license?: string;
    licenses?: { type: string }[];
  };
  const lock = JSON.parse(readFileSync(join(prefix, 'node_modules', '.package-lock.json'), 'utf8')) as {
    packages: Record<string, { version?: string }>;
  };
  const packages = Object.entries(lock.packages).map(
    ([p, v]) => `${p.replace(/^.*node_modules\//, '')}@${v.version}`,
  );
  return {
    version: pkg.version,
    licence: pkg.license ?? pkg.licenses?.map((l) => l.type).join(', ') ?? 'none given',
    packages,
    mb: diskUse(join(prefix, 'node_modules')) / 1e6,
  };
}

interface Score {
  n: number;
  ok: number;
}
const score = (): Score => ({ n: 0, ok: 0 });
const add = (s: Score, ok: boolean) => {
  s.n++;
  if (ok) s.ok++;
};
const pct = (s: Score) => (s.n === 0 ? '–' : `${round((100 * s.ok) / s.n, 1)}`);

const PARENTS: readonly string[] = ['VERB', 'NOUN', 'ADJ', 'ADV'];
const CLASSES = [
  'VERB',
  'NOUN',
  'ADJ',
  'ADV',
  'VB',
  'VBD',
  'VBN',
  'VBP',
  'DT',
  'IN',
  'PRP',
  'NNP',
  'CD',
] as const;

interface Scores {
  all: Score;
  words: Score;
  coarse: Score;
  verbForm: Score;
  heteronymParent: Score;
  heteronymEntry: Score;
  /** Same entry, by kind: "that" (DT or not), the all-caps acronym entries (US, AM, IT…), the rest. */
  heteronymEntryBy: Record<'that' | 'acronym' | 'other', Score>;
  special: Score;
  classes: Record<string, { gold: number; pred: number; both: number }>;
  emitted: Map<string, number>;
  heteronymWords: Map<string, Score>;
}

function scoreTags(
  sentences: readonly Sentence[],
  predicted: readonly string[][],
  lexicon: ReadonlyMap<string, string | Entry>,
): Scores {
  const s: Scores = {
    all: score(),
    words: score(),
    coarse: score(),
    verbForm: score(),
    heteronymParent: score(),
    heteronymEntry: score(),
    heteronymEntryBy: { that: score(), acronym: score(), other: score() },
    special: score(),
    classes: Object.fromEntries(CLASSES.map((c) => [c, { gold: 0, pred: 0, both: 0 }])),
    emitted: new Map(),
    heteronymWords: new Map(),
  };
  const inClass = (c: string, tag: string) => (PARENTS.includes(c) ? parentTag(tag) === c : tag === c);
  const coarse = (tag: string) => (PARENTS.includes(parentTag(tag)) ? parentTag(tag) : 'other');
  sentences.forEach((sentence, i) => {
    sentence.words.forEach((word, j) => {
      const gold = sentence.tags[j]!;
      const pred = predicted[i]![j]!;
      s.emitted.set(pred, (s.emitted.get(pred) ?? 0) + 1);
      add(s.all, gold === pred);
      if (!PUNCT_TAGS.has(gold)) {
        add(s.words, gold === pred);
        add(s.coarse, coarse(gold) === coarse(pred));
      }
      if (['VB', 'VBD', 'VBN', 'VBP'].includes(gold)) add(s.verbForm, gold === pred);
      for (const c of CLASSES) {
        const g = inClass(c, gold);
        const p = inClass(c, pred);
        const k = s.classes[c]!;
        if (g) k.gold++;
        if (p) k.pred++;
        if (g && p) k.both++;
      }
      const het = heteronymEntry(lexicon, word);
      if (het) {
        const ok = parentTag(gold) === parentTag(pred);
        add(s.heteronymParent, ok);
        const same = entryFor(het.entry, gold) === entryFor(het.entry, pred);
        add(s.heteronymEntry, same);
        const kind =
          word.toLowerCase() === 'that' ? 'that' : het.key === het.key.toUpperCase() ? 'acronym' : 'other';
        add(s.heteronymEntryBy[kind], same);
        // "That" is "that" (one entry, the capitalized copy); "US" is not "us".
        const label = lexicon.get(word.toLowerCase()) === het.entry ? word.toLowerCase() : het.key;
        const w = s.heteronymWords.get(label) ?? score();
        add(w, ok);
        s.heteronymWords.set(label, w);
      }
      const special = SPECIAL[word];
      if (special) add(s.special, special(gold) === special(pred));
    });
  });
  return s;
}

// ---------------------------------------------------------------------------------------------
// Command line

async function main(): Promise<number> {
  let values;
  try {
    values = parseFlags(process.argv.slice(2), {
      ud: { type: 'string', multiple: true },
      lexicon: { type: 'string' },
      dir: { type: 'string' },
      only: { type: 'string' },
      sentences: { type: 'string' },
      passes: { type: 'string' },
      child: { type: 'string' },
      help: { type: 'boolean', short: 'h', default: false },
    });
    if (values.help) {
      process.stdout.write(`${USAGE}\n`);
      return 0;
    }
    if (values.ud === undefined) throw new UsageError('--ud FILE is required');
    for (const f of values.ud) if (!existsSync(f)) throw new UsageError(`--ud ${f}: no such file`);
  } catch (err) {
    if (!(err instanceof UsageError)) throw err;
    process.stderr.write(`${err.message}\n\n${USAGE}\n`);
    return 2;
  }
  let sentencesLimit: number, passes: number, lexiconFile: string, chosen: Candidate[];
  try {
    sentencesLimit = intFlag('sentences', values.sentences, Number.MAX_SAFE_INTEGER, 1);
    passes = intFlag('passes', values.passes, 3, 1, 100);
    const dataDir = process.env['MISAKI_DATA_DIR'];
    lexiconFile = values.lexicon ?? (dataDir !== undefined ? join(dataDir, 'us_gold.json') : '');
    if (values.child === undefined && !existsSync(lexiconFile))
      throw new UsageError(`misaki's us_gold.json not found: give --lexicon FILE or set MISAKI_DATA_DIR`);
    const names = values.only?.split(',').map((n) => n.trim()) ?? CANDIDATES.map((c) => c.name);
    chosen = names.map((n) => {
      const c = CANDIDATES.find((k) => k.name === n);
      if (!c)
        throw new UsageError(`--only: "${n}" is not one of ${CANDIDATES.map((k) => k.name).join(', ')}`);
      return c;
    });
  } catch (err) {
    if (!(err instanceof UsageError)) throw err;
    process.stderr.write(`${err.message}\n\n${USAGE}\n`);
    return 2;
  }
  const udFiles = values.ud;
  const sentences = udFiles.flatMap((f) => readConllu(f, sentencesLimit)).slice(0, sentencesLimit);

  if (values.child !== undefined) {
    // --child NAME --dir PREFIX: one candidate, already installed in PREFIX.
    const figures = await child(chosen[0]!, values.dir!, sentences, passes);
    process.stdout.write(`${JSON.stringify(figures)}\n`);
    return 0;
  }

  const lexicon = readLexicon(lexiconFile);
  const root = values.dir !== undefined ? resolve(values.dir) : mkdtempSync(join(tmpdir(), 'pos-taggers-'));
  const tokens = sentences.reduce((a, s) => a + s.words.length, 0);
  const rows: { c: Candidate; inst: Installed; fig: ChildFigures; sc: Scores }[] = [];
  try {
    for (const c of chosen) {
      const prefix = join(root, c.name);
      const inst = install(c, prefix);
      process.stderr.write(`${c.name}@${inst.version}: tagging ${sentences.length} sentences…\n`);
      const out = execFileSync(
        process.execPath,
        [
          '--expose-gc',
          fileURLToPath(import.meta.url),
          '--child',
          c.name,
          '--only',
          c.name,
          '--dir',
          prefix,
          ...udFiles.flatMap((f) => ['--ud', f]),
          '--passes',
          String(passes),
          ...(values.sentences !== undefined ? ['--sentences', values.sentences] : []),
        ],
        { encoding: 'utf8', maxBuffer: 256 * 2 ** 20, stdio: ['ignore', 'pipe', 'inherit'] },
      );
      const fig = JSON.parse(out.trim().split('\n').at(-1)!) as ChildFigures;
      rows.push({ c, inst, fig, sc: scoreTags(sentences, fig.tags, lexicon) });
    }
  } finally {
    if (values.dir === undefined) rmSync(root, { recursive: true, force: true });
  }

  const heteronymTokens = rows[0]?.sc.heteronymParent.n ?? 0;
  const heteronymTypes = rows[0]?.sc.heteronymWords.size ?? 0;
  const name = (r: (typeof rows)[number]) => `\`${r.c.name}\` ${r.inst.version}`;
  const pr = (k: { gold: number; pred: number; both: number }) =>
    `${k.gold ? round((100 * k.both) / k.gold, 1) : '–'} / ${k.pred ? round((100 * k.both) / k.pred, 1) : '–'}`;
  const md = [
    `Sample: ${sentences.length} sentences, ${tokens} tokens (${udFiles.map((f) => `\`${f}\``).join(', ')}), gold tokens fed as they are. ` +
      `Heteronyms: ${heteronymTokens} tokens of ${heteronymTypes} words whose misaki gold entry is keyed by tag. ` +
      `Machine: ${cpus()[0]?.model ?? 'unknown CPU'}, ${cpus().length} cores, Node ${process.version}; each tagger alone in a fresh process.`,
    '',
    '**Accuracy (%)**',
    '',
    markdownTable(
      [
        'tagger',
        'all tokens',
        'words (no punctuation)',
        'VERB/NOUN/ADJ/ADV/other',
        'VB·VBD·VBN·VBP exact',
        'heteronyms: parent tag',
        'heteronyms: same lexicon entry',
        'same entry: "that"',
        'same entry: all-caps acronyms',
        'same entry: other words',
        'special cases',
      ],
      rows.map((r) => [
        name(r),
        pct(r.sc.all),
        pct(r.sc.words),
        pct(r.sc.coarse),
        pct(r.sc.verbForm),
        pct(r.sc.heteronymParent),
        pct(r.sc.heteronymEntry),
        ...(['that', 'acronym', 'other'] as const).map(
          (k) => `${pct(r.sc.heteronymEntryBy[k])} (${r.sc.heteronymEntryBy[k].n})`,
        ),
        `${pct(r.sc.special)} (${r.sc.special.n})`,
      ]),
    ),
    '',
    '**Per tag, recall / precision (%)** (VERB, NOUN, ADJ, ADV: any tag of that prefix)',
    '',
    markdownTable(
      ['tagger', ...CLASSES],
      rows.map((r) => [name(r), ...CLASSES.map((c) => pr(r.sc.classes[c]!))]),
    ),
    '',
    '**Cost**',
    '',
    markdownTable(
      [
        'tagger',
        'licence',
        'ms / sentence: mean, median, p95',
        'load (ms)',
        'RSS added (MB)',
        'heap added (MB)',
        'install (MB)',
        'packages',
      ],
      rows.map((r) => [
        name(r),
        r.inst.licence,
        `${round(r.fig.meanMs, 3)}, ${round(r.fig.medianMs, 3)}, ${round(r.fig.p95Ms, 3)}`,
        String(round(r.fig.loadMs, 0)),
        String(round(r.fig.rssMb, 0)),
        String(round(r.fig.heapMb, 0)),
        String(round(r.inst.mb, 1)),
        String(r.inst.packages.length),
      ]),
    ),
    '',
    '**Tags emitted that spaCy en_core_web_sm never emits**, and gold tags in the sample the tagger never emits',
    '',
    markdownTable(
      ['tagger', 'not spaCy tags (count)', 'never emitted'],
      rows.map((r) => {
        const gold = new Set(sentences.flatMap((s) => s.tags));
        return [
          name(r),
          [...r.sc.emitted]
            .filter(([t]) => !SPACY_TAGS.has(t))
            .map(([t, n]) => `\`${t}\` ${n}`)
            .join(', ') || '–',
          [...gold]
            .filter((t) => !r.sc.emitted.has(t))
            .sort()
            .map((t) => `\`${t}\``)
            .join(' ') || '–',
        ];
      }),
    ),
    '',
    '**The most frequent heteronyms: parent-tag accuracy (%)**',
    '',
    (() => {
      const words = [...(rows[0]?.sc.heteronymWords ?? new Map<string, Score>())]
        .sort((a, b) => b[1].n - a[1].n)
        .slice(0, 15);
      return markdownTable(
        ['word (tokens)', ...rows.map((r) => `\`${r.c.name}\``)],
        words.map(([w, s]) => [`${w} (${s.n})`, ...rows.map((r) => pct(r.sc.heteronymWords.get(w)!))]),
      );
    })(),
    '',
    '**"that" as a determiner or not** (what misaki\'s lexicon tells apart: `ðˈæt` / `ðæt`), en-pos alone and with the server\'s rules for it (model/text/en/english.ts)',
    '',
    thatAgreement(sentences),
    '',
    '**Installed**',
    '',
    ...rows.map((r) => `- \`${r.c.name}\`, input ${r.c.input}: ${r.inst.packages.sort().join(', ')}`),
  ].join('\n');
  process.stdout.write(`${md}\n`);
  return 0;
}

/** Agreement on "that" being DT, for en-pos as installed here and for the server's tagTokens. */
function thatAgreement(sentences: readonly Sentence[]): string {
  let n = 0;
  let alone = 0;
  let server = 0;
  for (const s of sentences) {
    if (!s.words.some((w) => w === 'that' || w === 'That')) continue;
    const raw = new EnPosTag([...s.words]).initial().smooth().tags;
    const ours = tagTokens(s.words);
    s.words.forEach((w, i) => {
      if (w !== 'that' && w !== 'That') return;
      n++;
      const gold = s.tags[i] === 'DT';
      if ((raw[i] === 'DT') === gold) alone++;
      if ((ours[i] === 'DT') === gold) server++;
    });
  }
  const p = (k: number) => `${round((100 * k) / n, 1)} %`;
  return markdownTable(
    ['"that" tokens', 'en-pos alone', "en-pos with the server's rules"],
    [[String(n), p(alone), p(server)]],
  );
}

runMain(import.meta.url, 'compare-pos-taggers', main);
