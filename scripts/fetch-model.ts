/**
 * Downloads the Kokoro-82M v1.0 ONNX model into a local folder for the server.
 *
 *   npm run fetch-model -- [--out DIR] [--dtype fp32|fp16|q8|q8f16|q4|q4f16] [--voices all|id,id,...]
 *                          [--base-url URL] [--revision REV] [--repo OWNER/NAME] [--retries N]
 *                          [--lexicon-base-url URL]
 *
 * misaki's English lexicons come too, into `<out>/misaki/` (model/kokoro/lexicon-download.ts).
 */
import path from 'node:path';
import { DEFAULT_DTYPE, DTYPE_FILES, VOICE_IDS, type Dtype } from '../model/kokoro/constants.ts';
import { LANGUAGE_FACTS } from '../model/text/languages/index.ts';
import {
  DEFAULT_BASE_URL,
  DEFAULT_REPO,
  DEFAULT_RETRIES,
  DEFAULT_REVISION,
  FetchModelError,
  fetchModel,
  type DownloadProgressEvent,
} from '../model/kokoro/download.ts';
import { DEFAULT_LEXICON_BASE_URL, MISAKI_COMMIT, fetchLexicon } from '../model/kokoro/lexicon-download.ts';
import { intFlag, isMain, parseFlags, UsageError } from './lib/cli.ts';
export { UsageError };

/** Where the model goes when `--out` is not given (ignored by git). */
export const DEFAULT_OUT_DIR = './models/kokoro-82m';

/** Options of one run, after parsing the command line and environment. */
export interface CliOptions {
  outDir: string;
  dtype: Dtype;
  voices: string[] | 'all';
  baseUrl: string;
  revision: string;
  repo: string;
  retries: number;
  /** Where misaki's lexicon files are fetched from (raw GitHub files or a mirror of them). */
  lexiconBaseUrl: string;
}

/** Result of {@link parseCli}: either options to run with, or a request for help. */
export type ParsedCli = { help: true } | { help: false; options: CliOptions };

/** Streams and environment the CLI uses, replaceable for tests. */
export interface CliIo {
  env: NodeJS.ProcessEnv;
  stdout: NodeJS.WritableStream;
  stderr: NodeJS.WritableStream & { isTTY?: boolean; columns?: number };
  signal?: AbortSignal;
}

/**
 * Parses the arguments after `fetch-model`. `HF_ENDPOINT` in `env` sets the default base URL, as it does
 * for the Hugging Face tools.
 *
 * @throws {UsageError} for unknown flags, missing values and invalid dtypes.
 */
export function parseCli(argv: readonly string[], env: NodeJS.ProcessEnv): ParsedCli {
  const values = parseFlags(argv, {
    out: { type: 'string' },
    dtype: { type: 'string' },
    voices: { type: 'string' },
    'base-url': { type: 'string' },
    revision: { type: 'string' },
    repo: { type: 'string' },
    retries: { type: 'string' },
    'lexicon-base-url': { type: 'string' },
    help: { type: 'boolean', short: 'h' },
  });
  if (values.help === true) return { help: true };

  const dtype = values.dtype ?? DEFAULT_DTYPE;
  if (!isDtype(dtype)) {
    throw new UsageError(
      `Unknown --dtype "${dtype}". Choose one of: ${Object.keys(DTYPE_FILES).join(', ')}.`,
    );
  }
  const voicesArg = (values.voices ?? 'all').trim();
  // Unknown ids are left to fetchModel, which rejects them before any request with the same message.
  const voices =
    voicesArg === 'all'
      ? 'all'
      : voicesArg
          .split(',')
          .map((id) => id.trim())
          .filter((id) => id !== '');
  if (voices !== 'all' && voices.length === 0) {
    throw new UsageError('--voices needs "all" or a comma-separated list of voice ids.');
  }
  const retries = intFlag('retries', values.retries, DEFAULT_RETRIES, 0);
  const endpoint = env.HF_ENDPOINT?.trim();
  return {
    help: false,
    options: {
      outDir: values.out ?? DEFAULT_OUT_DIR,
      dtype,
      voices,
      baseUrl: values['base-url'] ?? (endpoint ? endpoint : DEFAULT_BASE_URL),
      revision: values.revision ?? DEFAULT_REVISION,
      repo: values.repo ?? DEFAULT_REPO,
      retries,
      lexiconBaseUrl: values['lexicon-base-url'] ?? DEFAULT_LEXICON_BASE_URL,
    },
  };
}

function isDtype(value: string): value is Dtype {
  return Object.hasOwn(DTYPE_FILES, value);
}

/** The `--help` text, including every valid voice id grouped by language. */
export function helpText(): string {
  const dtypes = Object.entries(DTYPE_FILES)
    .map(([dtype, file]) => `    ${dtype.padEnd(6)} onnx/${file}`)
    .join('\n');
  const voices = LANGUAGE_FACTS.map(({ code, name: language }) => {
    const ids = VOICE_IDS.filter((id) => id.startsWith(code));
    return `    ${`${language}:`.padEnd(22)} ${ids.join(' ')}`;
  }).join('\n');
  return `Download the Kokoro-82M v1.0 ONNX model (${DEFAULT_REPO}) for the server.

Usage: npm run fetch-model -- [options]

Options:
  --out DIR            Output folder (default ${DEFAULT_OUT_DIR})
  --dtype DTYPE        Model precision (default ${DEFAULT_DTYPE}):
${dtypes}
  --voices LIST        "all" (default) or comma-separated voice ids, e.g. af_heart,bf_emma
  --base-url URL       Hugging Face endpoint or mirror (default $HF_ENDPOINT, else ${DEFAULT_BASE_URL})
  --revision REV       Branch, tag or commit (default ${DEFAULT_REVISION})
  --repo OWNER/NAME    Repository (default ${DEFAULT_REPO})
  --retries N          Resume a dropped download up to N times (default ${DEFAULT_RETRIES})
  --lexicon-base-url URL  Where misaki's English lexicons come from (default ${DEFAULT_LEXICON_BASE_URL};
                       files at <URL>/${MISAKI_COMMIT.slice(0, 7)}…/misaki/data/*.json)
  -h, --help           Show this help

Files already complete in the output folder are skipped, and a file cut off midway is resumed from
where it stopped (HTTP Range), so an interrupted run can simply be repeated.

Voice ids:
${voices}
`;
}

/** Runs the CLI; returns the process exit code. Never throws. */
export async function main(argv: readonly string[], io: CliIo): Promise<number> {
  let parsed: ParsedCli;
  try {
    parsed = parseCli(argv, io.env);
  } catch (error) {
    io.stderr.write(`fetch-model: ${errorMessage(error)}\nRun with --help for usage.\n`);
    return 2;
  }
  if (parsed.help) {
    io.stdout.write(helpText());
    return 0;
  }
  const { options } = parsed;
  const display = io.stderr.isTTY === true ? new ProgressBar(io.stderr) : new ProgressLines(io.stderr);

  const voiceCount = options.voices === 'all' ? VOICE_IDS.length : new Set(options.voices).size;
  let announced = false;
  try {
    const result = await fetchModel({
      ...options,
      onProgress: (event) => {
        // Announced on the first event, so option errors are not preceded by a misleading banner.
        if (!announced) {
          announced = true;
          io.stderr.write(
            `Fetching ${options.repo}@${options.revision} (${options.dtype}, ${voiceCount} ` +
              `voice${voiceCount === 1 ? '' : 's'}) from ${options.baseUrl}\n`,
          );
        }
        display.update(event);
      },
      ...(io.signal === undefined ? {} : { signal: io.signal }),
    });
    display.finish();
    io.stderr.write(
      `Fetching misaki's English lexicons (hexgrad/misaki@${MISAKI_COMMIT.slice(0, 7)}) into misaki/\n`,
    );
    await fetchLexicon({
      outDir: path.join(result.outDir, 'misaki'),
      baseUrl: options.lexiconBaseUrl,
      retries: options.retries,
      log: (line) => io.stderr.write(`  ${line}\n`),
      ...(io.signal === undefined ? {} : { signal: io.signal }),
    });
    const downloaded = result.files.filter((f) => !f.skipped);
    const bytes = downloaded.reduce((sum, f) => sum + f.bytes, 0);
    const skipped = result.files.length - downloaded.length;
    // Relative when inside the working directory (shorter, and still right for `npm start` from here).
    const relative = path.relative(process.cwd(), result.outDir);
    const inside = relative !== '' && !relative.startsWith('..') && !path.isAbsolute(relative);
    const dir = shellQuote(inside ? relative : result.outDir);
    // The server loads the default dtype unless told otherwise (KOKORO_DTYPE).
    const dtypeEnv = options.dtype === DEFAULT_DTYPE ? '' : ` KOKORO_DTYPE=${options.dtype}`;
    const summary =
      downloaded.length === 0
        ? `all ${skipped} files were already complete`
        : `${downloaded.length} file${downloaded.length === 1 ? '' : 's'} downloaded (${formatSize(bytes)})` +
          `${skipped > 0 ? `, ${skipped} already complete` : ''}`;
    io.stdout.write(
      `Model ready in ${result.outDir}: ${summary}.\n` +
        `Model file: onnx/${DTYPE_FILES[options.dtype]}\n` +
        `Start the server with:\n  KOKORO_MODEL_DIR=${dir}${dtypeEnv} npm start\n`,
    );
    return 0;
  } catch (error) {
    display.finish();
    if (io.signal?.aborted === true) {
      io.stderr.write('fetch-model: interrupted; partial files removed. Run again to resume.\n');
      return 130;
    }
    io.stderr.write(`fetch-model: ${errorMessage(error)}\n`);
    return error instanceof FetchModelError && error.code === 'invalid-option' ? 2 : 1;
  }
}

interface ProgressDisplay {
  update(event: DownloadProgressEvent): void;
  finish(): void;
}

/** One line per finished file, for logs and pipes. */
class ProgressLines implements ProgressDisplay {
  constructor(private readonly out: NodeJS.WritableStream) {}

  update(event: DownloadProgressEvent): void {
    const count = `[${event.overall.filesDone}/${event.overall.filesTotal}]`;
    if (event.type === 'done')
      this.out.write(`${count} downloaded ${event.path} (${formatSize(event.bytes)})\n`);
    if (event.type === 'skipped') this.out.write(`${count} already complete ${event.path}\n`);
  }

  finish(): void {}
}

/** A single redrawn status line for terminals. */
class ProgressBar implements ProgressDisplay {
  private readonly active: string[] = [];
  private last: DownloadProgressEvent | undefined;
  private lastDraw = 0;
  private drawn = false;

  constructor(private readonly out: NodeJS.WritableStream & { columns?: number }) {}

  update(event: DownloadProgressEvent): void {
    this.last = event;
    if (event.type === 'start') this.active.push(event.path);
    if (event.type === 'done' && this.active.includes(event.path)) {
      this.active.splice(this.active.indexOf(event.path), 1);
    }
    // Redrawing on every chunk would cost more than the download; ten times a second is smooth enough.
    const now = Date.now();
    if (event.type === 'progress' && now - this.lastDraw < 100) return;
    this.lastDraw = now;
    this.draw();
  }

  private draw(): void {
    const event = this.last;
    if (event === undefined) return;
    const { bytes, totalBytes, totalKnown, filesDone, filesTotal } = event.overall;
    const width = 20;
    const fraction = totalBytes > 0 ? Math.min(bytes / totalBytes, 1) : 0;
    const bar = totalKnown
      ? `[${'#'.repeat(Math.round(fraction * width)).padEnd(width, '-')}] ${String(Math.floor(fraction * 100)).padStart(3)}%`
      : `[${'?'.repeat(width)}]    `;
    const size = `${formatMb(bytes)}/${totalKnown ? formatMb(totalBytes) : '?'} MB`;
    const current =
      this.active.length === 0
        ? ''
        : `${this.active[0]}${this.active.length > 1 ? ` +${this.active.length - 1}` : ''}`;
    let line = `${bar} ${size}  ${filesDone}/${filesTotal} files  ${current}`;
    // Some terminals (and pseudo-terminals) report 0 columns: treat that as unknown.
    const columns = this.out.columns !== undefined && this.out.columns > 0 ? this.out.columns : 80;
    if (line.length > columns - 1) line = line.slice(0, columns - 1);
    this.out.write(`\r${line}\x1b[K`);
    this.drawn = true;
  }

  finish(): void {
    if (!this.drawn) return;
    this.draw();
    this.out.write('\n');
    this.drawn = false;
  }
}

function formatMb(bytes: number): string {
  return (bytes / 1e6).toFixed(1);
}

function formatSize(bytes: number): string {
  if (bytes >= 1e6) return `${formatMb(bytes)} MB`;
  return bytes >= 1e3 ? `${(bytes / 1e3).toFixed(1)} kB` : `${bytes} B`;
}

function errorMessage(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/** Quotes a path for a POSIX shell when it contains anything beyond plain path characters. */
function shellQuote(value: string): string {
  return /^[\w./-]+$/.test(value) ? value : `'${value.replace(/'/g, `'\\''`)}'`;
}

/** True when this file is the program being run, not a module imported by another file (or a test). */
if (isMain(import.meta.url)) {
  const controller = new AbortController();
  // First Ctrl-C stops cleanly (partial files removed); a second one kills at once.
  process.once('SIGINT', () => controller.abort(new Error('interrupted')));
  const code = await main(process.argv.slice(2), {
    env: process.env,
    stdout: process.stdout,
    stderr: process.stderr,
    signal: controller.signal,
  });
  process.exitCode = code;
}
