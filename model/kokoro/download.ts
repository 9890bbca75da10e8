/**
 * Downloads the Kokoro-82M v1.0 ONNX model files from Hugging Face (or a mirror) into a local folder with
 * the onnx-community layout that the server reads. No console output: progress goes through a callback.
 */
import { setMaxListeners } from 'node:events';
import { mkdir, open, readFile, rename, rm, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { DTYPE_FILES, VOICE_FILE_BYTES, VOICE_IDS, isVoiceId, type Dtype } from './constants.ts';

/** The Hugging Face repository with the ONNX exports kokoro-js loads. */
export const DEFAULT_REPO = 'onnx-community/Kokoro-82M-v1.0-ONNX';
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
/** Smallest plausible ONNX model; anything shorter is an error page or an LFS pointer, not a model. */
export const MIN_ONNX_BYTES = 1024 * 1024;

/**
 * Records the size of every file this module has completed, so a re-run can skip files whose size is not
 * known in advance (model and JSON files) without asking the server.
 */
export const MANIFEST_FILE = '.fetch-model.json';

/** What went wrong, for callers that react differently to each kind of failure. */
export type FetchModelErrorCode =
  | 'invalid-option' // bad dtype, voice id, URL, repo...
  | 'http' // the server answered with a non-2xx status
  | 'network' // the server could not be reached, or the connection dropped mid-file
  | 'size' // byte count differs from Content-Length or from the known file size
  | 'content'; // the bytes are not what the file should contain

/** Every failure of {@link fetchModel} except an abort (which rejects with the signal's reason). */
export class FetchModelError extends Error {
  override readonly name = 'FetchModelError';
  readonly code: FetchModelErrorCode;
  /** Relative path of the file concerned, if any. */
  readonly file: string | undefined;
  /** URL requested, if any. */
  readonly url: string | undefined;
  /** HTTP status for `code: 'http'`. */
  readonly status: number | undefined;
  /** A network failure after which the download can go on from the bytes already written. */
  readonly resumable: boolean;

  constructor(
    code: FetchModelErrorCode,
    message: string,
    details: { file?: string; url?: string; status?: number; cause?: unknown; resumable?: boolean } = {},
  ) {
    super(message, details.cause === undefined ? undefined : { cause: details.cause });
    this.code = code;
    this.file = details.file;
    this.url = details.url;
    this.status = details.status;
    this.resumable = details.resumable ?? false;
  }
}

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
  /** Which ONNX export to fetch. Default `fp32`. */
  dtype?: Dtype;
  /** Voice ids to fetch, or `'all'` (the default) for every id in `VOICE_IDS`. */
  voices?: readonly string[] | 'all';
  /** Hugging Face endpoint or mirror. Default `https://huggingface.co`. */
  baseUrl?: string;
  /** Repository `owner/name`. Default `onnx-community/Kokoro-82M-v1.0-ONNX`. */
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

type FileKind = 'json' | 'onnx' | 'voice';

interface PlannedFile {
  /** Relative path with `/`, the same in the repository and below outDir. */
  rel: string;
  kind: FileKind;
  /** Size known before any request (voices only). */
  knownSize: number | undefined;
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
  const dtype = options.dtype ?? 'fp32';
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

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

interface DownloadJob {
  file: PlannedFile;
  url: string;
  dest: string;
  fetchImpl: typeof fetch;
  signal: AbortSignal;
  retries: number;
  retryDelayMs: number;
  onStart: (url: string, total: number | undefined) => void;
  onChunk: (chunkBytes: number, fileBytes: number, total: number | undefined) => void;
}

/**
 * Downloads one file through `<dest>.part`; returns its size. A dropped connection is resumed from the
 * bytes already written, up to `job.retries` times. The `.part` stays behind only when the failure
 * was the network's or an abort, so that the next run can resume it.
 */
async function downloadFile(job: DownloadJob): Promise<number> {
  let started = false;
  for (let attempt = 0; ; attempt++) {
    try {
      return await downloadAttempt(job, () => {
        const first = !started;
        started = true;
        return first;
      });
    } catch (error) {
      const resumable = error instanceof FetchModelError && error.code === 'network' && error.resumable;
      if (!resumable || attempt >= job.retries || job.signal.aborted) throw error;
      await untilAborted(delay(job.retryDelayMs * 2 ** attempt), job.signal);
    }
  }
}

function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** What is known of a `.part` left by an earlier attempt: where it came from, and how to validate it. */
interface PartInfo {
  url: string;
  /** The ETag (or else Last-Modified) of the response it came from, for `If-Range`. */
  validator: string | undefined;
}

async function readPartInfo(part: string): Promise<{ bytes: number; info: PartInfo | undefined }> {
  let bytes = 0;
  try {
    bytes = (await stat(part)).size;
  } catch {
    return { bytes: 0, info: undefined };
  }
  try {
    const parsed: unknown = JSON.parse(await readFile(`${part}.json`, 'utf8'));
    if (isRecord(parsed) && typeof parsed.url === 'string') {
      const validator = typeof parsed.validator === 'string' ? parsed.validator : undefined;
      return { bytes, info: { url: parsed.url, validator } };
    }
  } catch {
    // No record of where the bytes came from: they cannot be resumed safely.
  }
  return { bytes, info: undefined };
}

async function removePart(part: string): Promise<void> {
  await Promise.all([rm(part, { force: true }), rm(`${part}.json`, { force: true })]);
}

/** `Content-Range: bytes START-END/TOTAL` → START and TOTAL (undefined for `*`). */
function parseContentRange(value: string | null): { start: number; total: number | undefined } | undefined {
  const match = /^bytes\s+(\d+)-(\d+)\/(\d+|\*)$/i.exec(value?.trim() ?? '');
  if (!match) return undefined;
  return { start: Number(match[1]), total: match[3] === '*' ? undefined : Number(match[3]) };
}

/** One request for the file, resuming a `.part` when there is one from the same URL. */
async function downloadAttempt(job: DownloadJob, firstStart: () => boolean): Promise<number> {
  const { file, url, signal } = job;
  const part = `${job.dest}.part`;
  const previous = await readPartInfo(part);
  const resumeFrom = previous.info?.url === url && previous.bytes > 0 ? previous.bytes : 0;
  const headers: Record<string, string> = {
    // Compressed transfer would make Content-Length describe other bytes than the ones written.
    'accept-encoding': 'identity',
  };
  if (resumeFrom > 0) {
    headers.range = `bytes=${resumeFrom}-`;
    if (previous.info?.validator !== undefined) headers['if-range'] = previous.info.validator;
  }
  let response: Response;
  const pending = job.fetchImpl(url, { signal, redirect: 'follow', headers });
  try {
    response = await untilAborted(pending, signal);
  } catch (error) {
    if (signal.aborted) {
      // A response that still arrives after the abort is dropped without reading it.
      pending
        .then(
          (late) => late.body?.cancel(),
          () => undefined,
        )
        .catch(() => undefined);
      throw signal.reason;
    }
    throw new FetchModelError(
      'network',
      `Could not download ${file.rel} from ${url}: ${describeCause(error)}. If huggingface.co cannot be ` +
        'reached from here, point to a mirror with --base-url or the HF_ENDPOINT environment variable.',
      { file: file.rel, url, cause: error, resumable: resumeFrom > 0 },
    );
  }

  if (resumeFrom > 0 && response.status === 416) {
    // The range no longer fits the file (it changed, or the part is damaged): start again.
    response.body?.cancel().catch(() => undefined);
    await removePart(part);
    return downloadAttempt(job, firstStart);
  }

  let keepPart = false;
  try {
    if (!response.ok) {
      const status = `${response.status}${response.statusText ? ` ${response.statusText}` : ''}`;
      const hint =
        response.status === 401 || response.status === 403 || response.status === 404
          ? ' Check the repository, revision and dtype, or the mirror given as base URL.'
          : '';
      throw new FetchModelError('http', `HTTP ${status} for ${file.rel}: ${response.url || url}.${hint}`, {
        file: file.rel,
        url: response.url || url,
        status: response.status,
      });
    }

    // 206 continues the part; anything else (200: Range ignored, or the file changed) is the whole file.
    const range =
      response.status === 206 ? parseContentRange(response.headers.get('content-range')) : undefined;
    const offset = range !== undefined && range.start === resumeFrom ? resumeFrom : 0;
    if (response.status === 206 && offset === 0) {
      response.body?.cancel().catch(() => undefined);
      await removePart(part);
      throw new FetchModelError(
        'network',
        `The server answered the resumption of ${file.rel} with an unusable Content-Range ` +
          `(${response.headers.get('content-range') ?? 'none'}); starting it again.`,
        { file: file.rel, url, resumable: true },
      );
    }
    const length = contentLength(response);
    const total =
      offset > 0 ? (range?.total ?? (length === undefined ? undefined : offset + length)) : length;
    checkAnnouncedSize(file, url, total);
    if (firstStart()) job.onStart(response.url || url, total ?? file.knownSize);

    // Created only once there is something to write, so a failed first request leaves no empty folders.
    await mkdir(path.dirname(job.dest), { recursive: true });
    const validator = response.headers.get('etag') ?? response.headers.get('last-modified') ?? undefined;
    await writeFile(`${part}.json`, JSON.stringify({ url, validator } satisfies PartInfo));
    const bytes = await writeBody(job, response, part, offset, total);
    await checkContent(file, part, bytes);
    await rename(part, job.dest);
    return bytes;
  } catch (error) {
    // Not awaited: on an aborted connection the cancel may never settle (see untilAborted).
    response.body?.cancel().catch(() => undefined);
    keepPart = signal.aborted || (error instanceof FetchModelError && error.code === 'network');
    if (signal.aborted && !(error instanceof FetchModelError)) throw signal.reason;
    throw error;
  } finally {
    // Kept only for a later resumption; bytes proven wrong (or a completed file) leave nothing behind.
    if (!keepPart) await removePart(part);
  }
}

/**
 * Streams the body into `part` from `offset` (appending to the bytes already there), checking sizes
 * as bytes arrive; returns the file's size.
 */
async function writeBody(
  job: DownloadJob,
  response: Response,
  part: string,
  offset: number,
  total: number | undefined,
): Promise<number> {
  const { file, url } = job;
  const limit = total ?? file.knownSize;
  let bytes = offset;
  const handle = await open(part, offset > 0 ? 'a' : 'w');
  try {
    if (response.body !== null) {
      const reader = (response.body as ReadableStream<Uint8Array>).getReader();
      let finished = false;
      try {
        for (;;) {
          let read: Awaited<ReturnType<typeof reader.read>>;
          try {
            read = await untilAborted(reader.read(), job.signal);
          } catch (error) {
            if (job.signal.aborted) throw error;
            // Only read errors are the network's fault; disk errors from the write below pass unchanged.
            throw new FetchModelError(
              'network',
              `Connection lost while downloading ${file.rel} after ${bytes}` +
                `${limit === undefined ? '' : ` of ${limit}`} bytes (${describeCause(error)}). ` +
                'Run again to resume from there; completed files are kept.',
              { file: file.rel, url, cause: error, resumable: true },
            );
          }
          if (read.done) {
            finished = true;
            break;
          }
          const chunk = read.value;
          if (bytes === 0 && file.kind === 'onnx' && !looksLikeProtobuf(chunk[0])) {
            throw contentError(file, url, 'an ONNX protobuf', describeStart(chunk));
          }
          bytes += chunk.byteLength;
          if (limit !== undefined && bytes > limit) {
            // Stop early instead of writing an arbitrarily long wrong body to disk.
            throw sizeError(file, url, limit, `more than ${limit}`, total !== undefined);
          }
          await handle.write(chunk);
          job.onChunk(chunk.byteLength, bytes, total ?? file.knownSize);
        }
      } finally {
        // Closes the connection of a body left unread; not awaited for the same reason as above.
        if (!finished) reader.cancel().catch(() => undefined);
      }
    }
    // Durable before the rename, so a crash cannot leave a complete-looking name with missing data.
    await handle.sync();
  } finally {
    await handle.close();
  }

  if (total !== undefined && bytes < total) {
    // The body ended cleanly but short: a connection that closed early. The bytes so far are good.
    throw new FetchModelError(
      'network',
      `The connection closed after ${bytes} of ${total} bytes of ${file.rel}. Run again to resume from there.`,
      { file: file.rel, url, resumable: true },
    );
  }
  if (total !== undefined && bytes !== total) {
    throw sizeError(file, url, total, bytes, true);
  }
  if (file.knownSize !== undefined && bytes !== file.knownSize) {
    throw sizeError(file, url, file.knownSize, bytes, false);
  }
  if (file.kind === 'onnx' && bytes < MIN_ONNX_BYTES) {
    throw new FetchModelError(
      'size',
      `${file.rel} is too small to be a model: expected at least ${MIN_ONNX_BYTES} bytes, got ${bytes}.`,
      { file: file.rel, url },
    );
  }
  return bytes;
}

/**
 * Settles like `promise`, or rejects with the signal's reason as soon as the signal aborts. Node 20's
 * fetch does not always error a response body when its signal aborts: a pending read can stay pending
 * forever, so every wait on the network goes through this.
 */
function untilAborted<T>(promise: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) {
    // The abandoned promise may still reject (with the same reason): that is expected, not unhandled.
    promise.catch(() => undefined);
    return Promise.reject(signal.reason as unknown);
  }
  return new Promise<T>((resolve, reject) => {
    const onAbort = (): void => reject(signal.reason as unknown);
    signal.addEventListener('abort', onAbort, { once: true });
    promise.then(
      (value) => {
        signal.removeEventListener('abort', onAbort);
        resolve(value);
      },
      (error: unknown) => {
        signal.removeEventListener('abort', onAbort);
        reject(error);
      },
    );
  });
}

/** Rejects a response whose Content-Length already shows it cannot be the right file. */
function checkAnnouncedSize(file: PlannedFile, url: string, total: number | undefined): void {
  if (total === undefined) return;
  if (file.knownSize !== undefined && total !== file.knownSize) {
    throw new FetchModelError(
      'size',
      `${file.rel} has the wrong size: expected ${file.knownSize} bytes, the server announces ${total} ` +
        '(Content-Length).',
      { file: file.rel, url },
    );
  }
  if (file.kind === 'onnx' && total < MIN_ONNX_BYTES) {
    throw new FetchModelError(
      'size',
      `${file.rel} is too small to be a model: expected at least ${MIN_ONNX_BYTES} bytes, the server ` +
        `announces ${total} (Content-Length).`,
      { file: file.rel, url },
    );
  }
}

/** Checks that need the whole file: JSON files must parse. */
async function checkContent(file: PlannedFile, part: string, bytes: number): Promise<void> {
  if (file.kind !== 'json') return;
  const text = await readFile(part, 'utf8');
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (error) {
    throw contentError(file, undefined, 'JSON', `${bytes} bytes that do not parse (${describeCause(error)})`);
  }
  if (!isRecord(parsed)) {
    throw contentError(
      file,
      undefined,
      'a JSON object',
      `JSON ${Array.isArray(parsed) ? 'array' : typeof parsed}`,
    );
  }
}

/**
 * ONNX models are protobuf `ModelProto` messages, whose fields are all varints or length-delimited, so
 * the first byte is a key with wire type 0 or 2. HTML, JSON, plain-text errors and Git LFS pointers all
 * start with bytes that fail this.
 */
function looksLikeProtobuf(firstByte: number | undefined): boolean {
  if (firstByte === undefined) return true; // an empty chunk decides nothing
  const wireType = firstByte & 0x07;
  const field = firstByte >> 3;
  return field >= 1 && (wireType === 0 || wireType === 2);
}

function describeStart(chunk: Uint8Array): string {
  const head = Buffer.from(chunk.subarray(0, 32));
  // Error pages and LFS pointers are text: show the readable start, which says more than hex.
  const text = /^[\x20-\x7e]*/.exec(head.toString('latin1'))?.[0] ?? '';
  return text.length >= 4
    ? `text starting ${JSON.stringify(text)}`
    : `bytes ${head.subarray(0, 16).toString('hex')}`;
}

function contentLength(response: Response): number | undefined {
  const encoding = response.headers.get('content-encoding');
  // With a content coding the header counts encoded bytes, not the ones the body stream yields.
  if (encoding !== null && encoding.toLowerCase() !== 'identity') return undefined;
  const value = response.headers.get('content-length');
  if (value === null || !/^\d+$/.test(value.trim())) return undefined;
  return Number(value.trim());
}

function sizeError(
  file: PlannedFile,
  url: string,
  expected: number,
  actual: number | string,
  fromHeader: boolean,
): FetchModelError {
  const source = fromHeader ? ' (Content-Length)' : '';
  return new FetchModelError(
    'size',
    `${file.rel} has the wrong size: expected ${expected} bytes${source}, received ${actual}.`,
    { file: file.rel, url },
  );
}

function contentError(
  file: PlannedFile,
  url: string | undefined,
  expected: string,
  actual: string,
): FetchModelError {
  return new FetchModelError('content', `${file.rel} is not valid: expected ${expected}, got ${actual}.`, {
    file: file.rel,
    ...(url === undefined ? {} : { url }),
  });
}

/** The most useful line of a fetch failure: undici hides the system error (ECONNREFUSED...) in `cause`. */
function describeCause(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  const cause: unknown = error.cause;
  if (cause instanceof Error) {
    const code = (cause as NodeJS.ErrnoException).code;
    return `${error.message}: ${code !== undefined ? `${code} ` : ''}${cause.message}`.trim();
  }
  return error.message;
}
