/**
 * Downloads the Kokoro-82M v1.0 ONNX model files from Hugging Face (or a mirror) into a local folder with
 * the onnx-community layout that the server reads. No console output: progress goes through a callback.
 */
import { setMaxListeners } from 'node:events';
import { readFile, rename, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import {
  DEFAULT_DTYPE,
  DTYPE_FILES,
  VOICE_FILE_BYTES,
  VOICE_IDS,
  isVoiceId,
  type Dtype,
} from './constants.ts';
import { FetchModelError, downloadFile, isRecord, type PlannedFile } from './download-file.ts';

export { FetchModelError, MIN_ONNX_BYTES, type FetchModelErrorCode } from './download-file.ts';

/**
 * The Hugging Face repository fetched by default: onnx-community's timestamped export of Kokoro-82M
 * v1.0, the same weights as the export kokoro-js loads (`onnx-community/Kokoro-82M-v1.0-ONNX`) in
 * the same layout, with a `durations` output as well, so that words and phonemes can be timed (the
 * Python agent frameworks' Cartesia clients always ask for timestamps).
 */
export const DEFAULT_REPO = 'onnx-community/Kokoro-82M-v1.0-ONNX-timestamped';
/** Branch, tag or commit used when none is given. */
export const DEFAULT_REVISION = 'main';
/** Hugging Face's own endpoint; mirrors use the same URL scheme. */
export const DEFAULT_BASE_URL = 'https://huggingface.co';
/** Files downloaded at once. */
export const DEFAULT_CONCURRENCY = 4;
/** A dropped connection is resumed this many times within one run before the run fails. */
export const DEFAULT_RETRIES = 3;
/** Wait before resuming a dropped download (doubled each time). */
export const DEFAULT_RETRY_DELAY_MS = 1000;
/**
 * Records the size of every file this module has completed, so a re-run can skip files whose size is not
 * known in advance (model and JSON files) without asking the server.
 */
export const MANIFEST_FILE = '.fetch-model.json';

/** Totals for the whole run, attached to every progress event. */
export interface OverallProgress {
  /** Bytes received so far in this run. Files that were skipped are not counted. Never decreases. */
  bytes: number;
  /** Bytes expected in this run, counting only files whose size is known so far. */
  totalBytes: number;
  /** True once every file still to download has a known size, i.e. `totalBytes` is final. */
  totalKnown: boolean;
  /** Files finished, downloaded or skipped. */
  filesDone: number;
  /** Files in this run, including skipped ones. */
  filesTotal: number;
}

/**
 * Progress of {@link fetchModel}. `path` is the file's path relative to the output folder, with `/`.
 * Per file the order is `start`, any number of `progress`, then `done`; or a single `skipped`.
 */
export type DownloadProgressEvent =
  | { type: 'start'; path: string; url: string; total: number | undefined; overall: OverallProgress }
  | { type: 'progress'; path: string; bytes: number; total: number | undefined; overall: OverallProgress }
  | { type: 'done'; path: string; bytes: number; overall: OverallProgress }
  | { type: 'skipped'; path: string; bytes: number; overall: OverallProgress };

/** Options for {@link fetchModel}. */
export interface FetchModelOptions {
  /** Folder to fill; created if missing. Files land at their repository paths below it. */
  outDir: string;
  /** Which ONNX export to fetch. Default `DEFAULT_DTYPE`. */
  dtype?: Dtype;
  /** Voice ids to fetch, or `'all'` (the default) for every id in `VOICE_IDS`. */
  voices?: readonly string[] | 'all';
  /** Hugging Face endpoint or mirror. Default `https://huggingface.co`. */
  baseUrl?: string;
  /** Repository `owner/name`. Default {@link DEFAULT_REPO}. */
  repo?: string;
  /** Branch, tag or commit. Default `main`. */
  revision?: string;
  /** Called synchronously for each event; keep it cheap (it runs once per received chunk). */
  onProgress?: (event: DownloadProgressEvent) => void;
  /** Aborting stops all downloads, removes partial files and rejects with the signal's reason. */
  signal?: AbortSignal;
  /** Files downloaded at once. Default 4. */
  concurrency?: number;
  /** Times a dropped connection is resumed (HTTP Range) within this run. Default 3. */
  retries?: number;
  /** Wait before the first resumption, doubled for each further one. Default 1000 ms. */
  retryDelayMs?: number;
  /** Replacement for the global `fetch` (tests, proxies). */
  fetchImpl?: typeof fetch;
}

/** One file of the result. */
export interface FetchedFile {
  /** Path relative to the output folder, with `/`. */
  path: string;
  /** Size on disk. */
  bytes: number;
  /** True when the file was already complete and not downloaded again. */
  skipped: boolean;
}

/** Result of {@link fetchModel}. */
export interface FetchModelResult {
  /** The output folder, resolved to an absolute path. */
  outDir: string;
  /** Every file of the model, in download order. */
  files: FetchedFile[];
}

interface ManifestEntry {
  bytes: number;
  repo: string;
  revision: string;
}

interface Manifest {
  files: Record<string, ManifestEntry>;
}

/**
 * The relative paths {@link fetchModel} downloads for a dtype and a list of voices, in download order
 * (largest first so its size is known early). Voice ids must already be valid.
 */
export function modelFilePaths(dtype: Dtype, voices: readonly string[]): string[] {
  return planFiles(dtype, voices).map((f) => f.rel);
}

/** The download URL of `filePath` in the Hugging Face `resolve` scheme. */
export function resolveUrl(baseUrl: string, repo: string, revision: string, filePath: string): string {
  const base = baseUrl.replace(/\/+$/, '');
  // Revisions such as `refs/pr/1` contain slashes; Hugging Face expects them percent-encoded.
  return `${base}/${repo}/resolve/${encodeURIComponent(revision)}/${filePath}`;
}

/**
 * Downloads config.json, tokenizer.json, `onnx/<model file for dtype>` and `voices/<id>.bin` for each voice
 * into `outDir`.
 *
 * Each file is written to `<file>.part` and renamed into place only after its checks pass, so a final
 * file is never half-written. A dropped connection is resumed where it stopped with an HTTP Range
 * request (`If-Range` makes the server send the whole file instead if it changed meanwhile), up to
 * `retries` times; a `.part` left by a failed or aborted run is resumed the same way by the next run.
 * A server that ignores Range sends the whole file, which then replaces the `.part`. Bytes proven
 * wrong (sizes, content) remove the `.part`. Files already complete are skipped without a request:
 * voices by their fixed size, the others by the size recorded in `.fetch-model.json` when this
 * function downloaded them. When one file fails the others are stopped and the first error is thrown.
 *
 * @throws {FetchModelError} for invalid options, HTTP errors, network failures and failed checks.
 * @throws the signal's reason when `signal` aborts.
 */
export async function fetchModel(options: FetchModelOptions): Promise<FetchModelResult> {
  const dtype = options.dtype ?? DEFAULT_DTYPE;
  const repo = options.repo ?? DEFAULT_REPO;
  const revision = options.revision ?? DEFAULT_REVISION;
  const baseUrl = checkBaseUrl(options.baseUrl ?? DEFAULT_BASE_URL);
  const concurrency = options.concurrency ?? DEFAULT_CONCURRENCY;
  const retries = options.retries ?? DEFAULT_RETRIES;
  const retryDelayMs = options.retryDelayMs ?? DEFAULT_RETRY_DELAY_MS;
  const fetchImpl = options.fetchImpl ?? fetch;
  const { signal, onProgress } = options;

  // Every check on the options happens before the first request or file-system change.
  if (!Object.hasOwn(DTYPE_FILES, dtype)) {
    throw new FetchModelError(
      'invalid-option',
      `Unknown dtype "${String(dtype)}". Valid dtypes: ${Object.keys(DTYPE_FILES).join(', ')}.`,
    );
  }
  if (!/^[\w.-]+\/[\w.-]+$/.test(repo) || repo.split('/').some((part) => /^\.+$/.test(part))) {
    throw new FetchModelError('invalid-option', `Invalid repository "${repo}": expected "owner/name".`);
  }
  if (revision === '') throw new FetchModelError('invalid-option', 'The revision must not be empty.');
  if (!Number.isInteger(concurrency) || concurrency < 1) {
    throw new FetchModelError(
      'invalid-option',
      `concurrency must be a positive integer, got ${concurrency}.`,
    );
  }
  if (!Number.isInteger(retries) || retries < 0) {
    throw new FetchModelError(
      'invalid-option',
      `retries must be a whole number of 0 or more, got ${retries}.`,
    );
  }
  if (!Number.isFinite(retryDelayMs) || retryDelayMs < 0) {
    throw new FetchModelError('invalid-option', `retryDelayMs must be 0 or more, got ${retryDelayMs}.`);
  }
  const voices = checkVoices(options.voices ?? 'all');
  signal?.throwIfAborted();

  const outDir = path.resolve(options.outDir);
  const plan = planFiles(dtype, voices);

  const manifest = await readManifest(outDir);
  let manifestWrite: Promise<void> = Promise.resolve();
  const recordInManifest = (rel: string, bytes: number): Promise<void> => {
    manifest.files[rel] = { bytes, repo, revision };
    // Chained so concurrent completions never write the manifest at the same time.
    manifestWrite = manifestWrite.then(() => writeManifest(outDir, manifest));
    return manifestWrite;
  };

  // Sizes per file for the overall totals: known up front, from Content-Length, or once complete.
  const expected = new Map<string, number | undefined>();
  let overallBytes = 0;
  let filesDone = 0;
  const overall = (): OverallProgress => {
    let totalBytes = 0;
    let totalKnown = true;
    for (const size of expected.values()) {
      if (size === undefined) totalKnown = false;
      else totalBytes += size;
    }
    return { bytes: overallBytes, totalBytes, totalKnown, filesDone, filesTotal: plan.length };
  };
  const emit = (event: DownloadProgressEvent): void => onProgress?.(event);

  const results = new Map<string, FetchedFile>();

  // Decide what to skip first, so totals cover only what is actually downloaded.
  const toDownload: PlannedFile[] = [];
  for (const file of plan) {
    const existing = await completeSize(outDir, file, manifest, repo, revision);
    if (existing === undefined) {
      toDownload.push(file);
      expected.set(file.rel, file.knownSize);
    } else {
      results.set(file.rel, { path: file.rel, bytes: existing, skipped: true });
    }
  }
  for (const file of plan) {
    const done = results.get(file.rel);
    if (done === undefined) continue;
    filesDone += 1;
    emit({ type: 'skipped', path: file.rel, bytes: done.bytes, overall: overall() });
  }

  // One controller for the whole run: the caller's abort and the first failure both stop every file.
  const controller = new AbortController();
  // Each download in flight holds a few listeners on it (fetch's and ours): not a leak.
  setMaxListeners(64, controller.signal);
  const onAbort = (): void => controller.abort(signal?.reason);
  signal?.addEventListener('abort', onAbort, { once: true });
  let firstError: { error: unknown } | undefined;

  const queue = [...toDownload];
  const worker = async (): Promise<void> => {
    for (let file = queue.shift(); file !== undefined; file = queue.shift()) {
      if (controller.signal.aborted) return;
      const current = file;
      try {
        const bytes = await downloadFile({
          file: current,
          url: resolveUrl(baseUrl, repo, revision, current.rel),
          dest: destination(outDir, current.rel),
          fetchImpl,
          signal: controller.signal,
          retries,
          retryDelayMs,
          onStart: (url, total) => {
            if (total !== undefined) expected.set(current.rel, total);
            emit({ type: 'start', path: current.rel, url, total, overall: overall() });
          },
          onChunk: (chunkBytes, fileBytes, total) => {
            overallBytes += chunkBytes;
            emit({ type: 'progress', path: current.rel, bytes: fileBytes, total, overall: overall() });
          },
        });
        expected.set(current.rel, bytes);
        if (current.kind !== 'voice') await recordInManifest(current.rel, bytes);
        results.set(current.rel, { path: current.rel, bytes, skipped: false });
        filesDone += 1;
        emit({ type: 'done', path: current.rel, bytes, overall: overall() });
      } catch (error) {
        if (firstError === undefined) {
          firstError = { error };
          controller.abort(error);
        }
        return;
      }
    }
  };

  try {
    const workers = Array.from({ length: Math.min(concurrency, toDownload.length) }, () => worker());
    await Promise.all(workers);
    await manifestWrite;
  } finally {
    signal?.removeEventListener('abort', onAbort);
  }
  if (firstError !== undefined) throw firstError.error;
  // Workers stop taking files once aborted, so an abort between two files ends here, not in an error.
  signal?.throwIfAborted();

  return { outDir, files: plan.map((f) => results.get(f.rel)!) };
}

function planFiles(dtype: Dtype, voices: readonly string[]): PlannedFile[] {
  return [
    { rel: `onnx/${DTYPE_FILES[dtype]}`, kind: 'onnx', knownSize: undefined },
    { rel: 'config.json', kind: 'json', knownSize: undefined },
    { rel: 'tokenizer.json', kind: 'json', knownSize: undefined },
    ...voices.map(
      (id): PlannedFile => ({ rel: `voices/${id}.bin`, kind: 'voice', knownSize: VOICE_FILE_BYTES }),
    ),
  ];
}

function checkVoices(voices: readonly string[] | 'all'): string[] {
  if (voices === 'all') return [...VOICE_IDS];
  if (!Array.isArray(voices)) {
    throw new FetchModelError('invalid-option', `voices must be 'all' or a list of voice ids.`);
  }
  const unknown = voices.filter((id) => typeof id !== 'string' || !isVoiceId(id));
  if (unknown.length > 0) {
    const shown = unknown.map((id) => JSON.stringify(id)).join(', ');
    throw new FetchModelError(
      'invalid-option',
      `Unknown voice id${unknown.length > 1 ? 's' : ''} ${shown}. Valid ids are listed by ` +
        '`npm run fetch-model -- --help` (VOICE_IDS in model/kokoro/constants.ts); ids are case-sensitive, e.g. af_heart.',
    );
  }
  if (voices.length === 0) {
    throw new FetchModelError('invalid-option', `No voices selected: give at least one voice id, or 'all'.`);
  }
  return [...new Set(voices)];
}

function checkBaseUrl(baseUrl: string): string {
  let url: URL;
  try {
    url = new URL(baseUrl);
  } catch {
    throw new FetchModelError('invalid-option', `Invalid base URL "${baseUrl}".`);
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') {
    throw new FetchModelError('invalid-option', `Base URL must be http(s), got "${baseUrl}".`);
  }
  return baseUrl.replace(/\/+$/, '');
}

/** The absolute destination of a planned path, refusing anything that would leave outDir. */
function destination(outDir: string, rel: string): string {
  const dest = path.resolve(outDir, ...rel.split('/'));
  if (!dest.startsWith(outDir + path.sep)) {
    throw new FetchModelError('invalid-option', `Refusing to write outside ${outDir}: ${rel}`, { file: rel });
  }
  return dest;
}

/** The size of `file` in outDir when it is already complete, otherwise undefined. */
async function completeSize(
  outDir: string,
  file: PlannedFile,
  manifest: Manifest,
  repo: string,
  revision: string,
): Promise<number | undefined> {
  let size: number;
  try {
    const info = await stat(destination(outDir, file.rel));
    if (!info.isFile()) return undefined;
    size = info.size;
  } catch {
    return undefined;
  }
  if (file.knownSize !== undefined) return size === file.knownSize ? size : undefined;
  const entry = manifest.files[file.rel];
  // Model and JSON sizes are only known from an earlier complete download of the same repo and revision.
  const matches =
    entry !== undefined && entry.bytes === size && entry.repo === repo && entry.revision === revision;
  return matches ? size : undefined;
}

async function readManifest(outDir: string): Promise<Manifest> {
  try {
    const parsed: unknown = JSON.parse(await readFile(path.join(outDir, MANIFEST_FILE), 'utf8'));
    if (isRecord(parsed) && isRecord(parsed.files)) {
      const files: Record<string, ManifestEntry> = {};
      for (const [rel, entry] of Object.entries(parsed.files)) {
        if (
          isRecord(entry) &&
          typeof entry.bytes === 'number' &&
          typeof entry.repo === 'string' &&
          typeof entry.revision === 'string'
        ) {
          files[rel] = { bytes: entry.bytes, repo: entry.repo, revision: entry.revision };
        }
      }
      return { files };
    }
  } catch {
    // Missing or damaged: the worst outcome is downloading some files again.
  }
  return { files: {} };
}

async function writeManifest(outDir: string, manifest: Manifest): Promise<void> {
  const file = path.join(outDir, MANIFEST_FILE);
  await writeFile(`${file}.part`, JSON.stringify(manifest, null, 2) + '\n');
  await rename(`${file}.part`, file);
}
