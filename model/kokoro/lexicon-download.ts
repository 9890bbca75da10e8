/**
 * misaki's English lexicons (Apache-2.0 data, hexgrad/misaki `misaki/data/`), fetched beside the
 * weights: pinned to one commit, each file's size and SHA-256 checked, resumable through the same
 * downloader as the weights. Never committed to this repository.
 */
import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { mkdir, rename, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { FetchModelError, downloadFile } from './download-file.ts';

/** The misaki commit the lexicons are taken from (the one misaki 0.9.4's data matches). */
export const MISAKI_COMMIT = 'fba1236595f2d2bf21d414ba6e57d25256afada3';
/** Where raw files of a GitHub repository are served; `--lexicon-base-url` names a mirror. */
export const DEFAULT_LEXICON_BASE_URL = 'https://raw.githubusercontent.com/hexgrad/misaki';

/** Each lexicon file with its size and SHA-256 at MISAKI_COMMIT. */
export const LEXICON_FILE_FACTS: readonly { name: string; bytes: number; sha256: string }[] = [
  {
    name: 'us_gold.json',
    bytes: 3000469,
    sha256: 'dc414872a49a28ae6c141463d502fd945f3b2fde040484fdc47d00cc4612686f',
  },
  {
    name: 'us_silver.json',
    bytes: 3099517,
    sha256: 'de8f67be911bb6c659187b4a65fd966b6a30e56350e0f790d763210b053ac475',
  },
  {
    name: 'gb_gold.json',
    bytes: 2838552,
    sha256: '29e62f4b60261c88f7f3c2c7811ca3825978948090b72d2b27d565b729282f71',
  },
  {
    name: 'gb_silver.json',
    bytes: 3663898,
    sha256: '48131e2d92ccc41655f4543e87e0f938e71463eb5a54be7f0693bb712ebb6bce',
  },
];

export interface FetchLexiconOptions {
  /** Folder to fill (the model directory's `misaki/` by default in fetch-model). */
  readonly outDir: string;
  readonly baseUrl?: string;
  readonly fetchImpl?: typeof fetch;
  readonly signal?: AbortSignal;
  readonly retries?: number;
  readonly retryDelayMs?: number;
  /** A line per file fetched or found. */
  readonly log?: (line: string) => void;
}

async function sha256(file: string): Promise<string> {
  const hash = createHash('sha256');
  for await (const chunk of createReadStream(file)) hash.update(chunk as Buffer);
  return hash.digest('hex');
}

async function intact(file: string, facts: { bytes: number; sha256: string }): Promise<boolean> {
  try {
    if ((await stat(file)).size !== facts.bytes) return false;
  } catch {
    return false;
  }
  return (await sha256(file)) === facts.sha256;
}

/** Fetches the four lexicon files that are missing or damaged; returns their paths. */
export async function fetchLexicon(options: FetchLexiconOptions): Promise<string[]> {
  const base = (options.baseUrl ?? DEFAULT_LEXICON_BASE_URL).replace(/\/+$/, '');
  const log = options.log ?? (() => {});
  await mkdir(options.outDir, { recursive: true });
  const paths: string[] = [];
  for (const facts of LEXICON_FILE_FACTS) {
    const dest = join(options.outDir, facts.name);
    paths.push(dest);
    if (await intact(dest, facts)) {
      log(`${facts.name}: present, checked`);
      continue;
    }
    const url = `${base}/${MISAKI_COMMIT}/misaki/data/${facts.name}`;
    const tmp = `${dest}.download`;
    await downloadFile({
      file: { rel: facts.name, kind: 'json', knownSize: facts.bytes },
      url,
      dest: tmp,
      fetchImpl: options.fetchImpl ?? fetch,
      signal: options.signal ?? new AbortController().signal,
      retries: options.retries ?? 3,
      retryDelayMs: options.retryDelayMs ?? 1000,
      onStart: () => {},
      onChunk: () => {},
    });
    if (!(await intact(tmp, facts))) {
      throw new FetchModelError(
        'content',
        `${facts.name} from ${url} is not misaki's file at ${MISAKI_COMMIT.slice(0, 7)} (expected ${facts.bytes} bytes, SHA-256 ${facts.sha256})`,
        { file: facts.name, url },
      );
    }
    await rename(tmp, dest);
    log(`${facts.name}: fetched (${facts.bytes} bytes, SHA-256 checked)`);
  }
  return paths;
}
