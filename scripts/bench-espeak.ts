/**
 * The espeak-ng builds for Node.js side by side, each in a fresh process: what loading costs, the
 * resident memory it adds, and the time per sentence once warm (median and p95) in English (the
 * benchmark texts) and Spanish (the first 30 sentences of its corpus), with each package's
 * licence. The candidates: @echogarden/espeak-ng-emscripten (the server's, through
 * espeak_TextToPhonemes), the `phonemizer` package kokoro-js uses (espeak's synthesizer run into
 * a file; English dictionaries only) and the `espeak-ng` package (the command line, one new
 * WebAssembly instance a call).
 *
 * Usage: node dist/scripts/bench-espeak.js [--readme]
 */
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { cpus } from 'node:os';
import { fileURLToPath } from 'node:url';
import { loadEspeak } from '../model/text/espeak.ts';
import { UsageError, parseFlags, runMain } from './lib/cli.ts';
import { corpus } from './lib/corpora.ts';
import { projectPath } from './lib/paths.ts';
import { markdownTable, quantile, replaceReadmeBlock, round } from './lib/stats.ts';

const USAGE = `Usage: node dist/scripts/bench-espeak.js [options]

  --readme     also write the table into README.md between <!-- bench:espeak --> markers
  -h, --help   this text`;

const CANDIDATES = ['@echogarden/espeak-ng-emscripten', 'phonemizer', 'espeak-ng'] as const;
type Candidate = (typeof CANDIDATES)[number];

/** Text → IPA with one candidate; `undefined` when it has no dictionary for the language. */
type Phonemize = (text: string, voice: 'en-us' | 'es') => Promise<string | undefined>;

async function load(candidate: Candidate): Promise<Phonemize> {
  switch (candidate) {
    case '@echogarden/espeak-ng-emscripten': {
      const espeak = await loadEspeak();
      return async (text, voice) => espeak.phonemes(text, voice);
    }
    case 'phonemizer': {
      const mod = (await import('phonemizer')) as {
        phonemize(text: string, lang: string): Promise<string[]>;
      };
      return async (text, voice) =>
        voice === 'es' ? undefined : (await mod.phonemize(text, voice)).join(' ');
    }
    case 'espeak-ng': {
      const name = 'espeak-ng';
      const mod = (await import(name)) as {
        default(o: { arguments: string[] }): Promise<{ FS: { readFile(p: string, o: object): string } }>;
      };
      return async (text, voice) => {
        const run = await mod.default({ arguments: ['--phonout', 'out', '-q', '--ipa', '-v', voice, text] });
        return run.FS.readFile('out', { encoding: 'utf8' });
      };
    }
  }
}

interface Figures {
  readonly candidate: Candidate;
  readonly licence: string;
  readonly loadMs: number;
  readonly memoryMb: number;
  readonly english: { readonly medianMs: number; readonly p95Ms: number };
  readonly spanish?: { readonly medianMs: number; readonly p95Ms: number };
}

async function timeAll(phonemize: Phonemize, texts: readonly string[], voice: 'en-us' | 'es') {
  for (const t of texts.slice(0, 3)) if ((await phonemize(t, voice)) === undefined) return undefined;
  const times: number[] = [];
  for (const t of texts) {
    const started = performance.now();
    await phonemize(t, voice);
    times.push(performance.now() - started);
  }
  return { medianMs: quantile(times, 0.5), p95Ms: quantile(times, 0.95) };
}

async function child(candidate: Candidate): Promise<Figures> {
  const pkg = JSON.parse(readFileSync(projectPath('node_modules', candidate, 'package.json'), 'utf8')) as {
    license?: string;
  };
  const rss = process.memoryUsage().rss;
  const started = performance.now();
  const phonemize = await load(candidate);
  await phonemize('Hello.', 'en-us');
  const loadMs = performance.now() - started;
  const english = (await timeAll(phonemize, corpus('en'), 'en-us'))!;
  const spanish = await timeAll(phonemize, corpus('es').slice(0, 30), 'es');
  return {
    candidate,
    licence: pkg.license ?? 'unknown',
    loadMs,
    memoryMb: (process.memoryUsage().rss - rss) / 2 ** 20,
    english,
    ...(spanish ? { spanish } : {}),
  };
}

async function main(): Promise<number> {
  let values;
  try {
    values = parseFlags(process.argv.slice(2), {
      readme: { type: 'boolean', default: false },
      child: { type: 'string' },
      help: { type: 'boolean', short: 'h', default: false },
    });
  } catch (err) {
    if (!(err instanceof UsageError)) throw err;
    process.stderr.write(`${err.message}\n\n${USAGE}\n`);
    return 2;
  }
  if (values.help) {
    process.stdout.write(`${USAGE}\n`);
    return 0;
  }
  if (values.child !== undefined) {
    const candidate = CANDIDATES.find((c) => c === values.child);
    if (!candidate) throw new UsageError(`--child ${values.child}: not a candidate`);
    process.stdout.write(`${JSON.stringify(await child(candidate))}\n`);
    return 0;
  }
  const figures: Figures[] = [];
  for (const candidate of CANDIDATES) {
    process.stderr.write(`${candidate}…\n`);
    const out = execFileSync(process.execPath, [fileURLToPath(import.meta.url), '--child', candidate], {
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    figures.push(JSON.parse(out.trim().split('\n').at(-1)!) as Figures);
  }
  const ms = (t: { medianMs: number; p95Ms: number } | undefined) =>
    t ? `${round(t.medianMs, 2)} / ${round(t.p95Ms, 2)}` : 'no Spanish dictionary';
  const md = [
    `Machine: ${cpus()[0]?.model ?? 'unknown CPU'}, ${cpus().length} cores, Node ${process.version}; each package in a fresh process. Load: import and set-up until a first word is phonemized; memory: resident memory that added.`,
    '',
    markdownTable(
      [
        'package',
        'licence',
        'load (ms)',
        'memory (MB)',
        'English sentence, median / p95 (ms)',
        'Spanish sentence, median / p95 (ms)',
      ],
      figures.map((f) => [
        `\`${f.candidate}\``,
        f.licence,
        String(round(f.loadMs, 0)),
        String(round(f.memoryMb, 0)),
        ms(f.english),
        ms(f.spanish),
      ]),
    ),
  ].join('\n');
  process.stdout.write(`${md}\n`);
  if (values.readme) replaceReadmeBlock('bench:espeak', md);
  return 0;
}

runMain(import.meta.url, 'bench-espeak', main);
