/**
 * Downloading one file of the model: through `<file>.part`, resumed with HTTP Range after a dropped
 * connection, and checked (sizes, protobuf start, JSON) before it is renamed into place. The errors
 * of the whole download live here too, so that both layers throw the same kind.
 */
import { mkdir, open, readFile, rename, rm, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';

/** Smallest plausible ONNX model; anything shorter is an error page or an LFS pointer, not a model. */
export const MIN_ONNX_BYTES = 1024 * 1024;

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

export type FileKind = 'json' | 'onnx' | 'voice';

export interface PlannedFile {
  /** Relative path with `/`, the same in the repository and below outDir. */
  rel: string;
  kind: FileKind;
  /** Size known before any request (voices only). */
  knownSize: number | undefined;
}

export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

export interface DownloadJob {
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
export async function downloadFile(job: DownloadJob): Promise<number> {
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
