import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtemp, readFile, readdir, rm, stat, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { PassThrough } from 'node:stream';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { VOICE_FILE_BYTES } from '../../model/kokoro/constants.ts';
import {
  DEFAULT_REPO,
  FetchModelError,
  MANIFEST_FILE,
  fetchModel,
  type DownloadProgressEvent,
  type FetchModelOptions,
} from '../../model/kokoro/download.ts';
import { main, parseCli } from '../../scripts/fetch-model.ts';
import {
  DEFAULT_LEXICON_BASE_URL,
  LEXICON_FILE_FACTS,
  MISAKI_COMMIT,
  fetchLexicon,
} from '../../model/kokoro/lexicon-download.ts';

// misaki's real lexicon files (the test setup names them), served by the fake mirror below.
const LEXICON_DIR = process.env.KOKORO_LEXICON_DIR!;
const LEXICON_PATH = `/lexicon/${MISAKI_COMMIT}/misaki/data/`;

type Handler = (req: IncomingMessage, res: ServerResponse) => void;

const PREFIX = `/${DEFAULT_REPO}/resolve/main/`;
const VOICES = ['af_heart', 'bf_emma', 'jf_alpha'] as const;

/** Deterministic bytes, different per seed, so a mixed-up file would not compare equal. */
function fakeBytes(length: number, seed: number, first?: number): Buffer {
  const buf = Buffer.alloc(length);
  for (let i = 0; i < length; i += 1) buf[i] = (i * 31 + seed * 7) & 0xff;
  if (first !== undefined) buf[0] = first;
  return buf;
}

// 0x08 is the key of ModelProto.ir_version, the first field of every real ONNX file.
const ONNX = fakeBytes(1_500_000, 1, 0x08);
const CONFIG = Buffer.from(JSON.stringify({ vocab: { a: 43, b: 44 }, n_token: 178 }));
const TOKENIZER = Buffer.from(JSON.stringify({ model: { vocab: { $: 0 } } }));
const VOICE_DATA = new Map(VOICES.map((id, i) => [id, fakeBytes(VOICE_FILE_BYTES, 10 + i)]));

function serveBytes(body: Buffer): Handler {
  return (_req, res) => {
    res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': body.length });
    res.end(body);
  };
}

/** Sends part of the body, announcing the full length, then drops the connection. */
function serveTruncated(body: Buffer, sent: number): Handler {
  return (_req, res) => {
    res.writeHead(200, { 'content-length': body.length });
    res.write(body.subarray(0, sent), () => setTimeout(() => res.socket?.destroy(), 20));
  };
}

/**
 * Serves `body` with Range support (206 and Content-Range for `Range: bytes=N-`) and an ETag. The
 * first `drops` answers send only `dropAfter` more bytes, then drop the connection. `ignoreRange`
 * answers every request with the whole body, as a server without Range support does.
 */
function serveRanged(
  body: Buffer,
  options: { drops?: number; dropAfter?: number; ignoreRange?: boolean; etag?: string } = {},
): Handler & { ranges: (string | undefined)[]; ifRanges: (string | undefined)[] } {
  let drops = options.drops ?? 0;
  const ranges: (string | undefined)[] = [];
  const ifRanges: (string | undefined)[] = [];
  const etag = options.etag ?? '"v1"';
  const handler = (req: IncomingMessage, res: ServerResponse) => {
    ranges.push(req.headers.range);
    ifRanges.push(req.headers['if-range'] as string | undefined);
    const match = /^bytes=(\d+)-$/.exec(req.headers.range ?? '');
    const validatorOk = req.headers['if-range'] === undefined || req.headers['if-range'] === etag;
    const start = match && !options.ignoreRange && validatorOk ? Number(match[1]) : 0;
    if (start >= body.length && start > 0) {
      res.writeHead(416, { 'content-range': `bytes */${body.length}` });
      res.end();
      return;
    }
    const headers: Record<string, string | number> = { etag, 'content-length': body.length - start };
    if (start > 0) headers['content-range'] = `bytes ${start}-${body.length - 1}/${body.length}`;
    res.writeHead(start > 0 ? 206 : 200, headers);
    if (drops > 0) {
      drops -= 1;
      const end = Math.min(body.length, start + (options.dropAfter ?? 100_000));
      res.write(body.subarray(start, end), () => setTimeout(() => res.socket?.destroy(), 20));
      return;
    }
    res.end(body.subarray(start));
  };
  return Object.assign(handler, { ranges, ifRanges });
}

let server: Server;
let baseUrl: string;
let routes: Map<string, Handler>;
let requests: string[];
let tmp: string;

beforeEach(async () => {
  routes = new Map<string, Handler>([
    ['onnx/model.onnx', serveBytes(ONNX)],
    ['config.json', serveBytes(CONFIG)],
    ['tokenizer.json', serveBytes(TOKENIZER)],
    ...VOICES.map((id): [string, Handler] => [`voices/${id}.bin`, serveBytes(VOICE_DATA.get(id)!)]),
    ...LEXICON_FILE_FACTS.map((f): [string, Handler] => [
      `lexicon:${f.name}`,
      (req, res) => void readFile(path.join(LEXICON_DIR, f.name)).then((b) => serveBytes(b)(req, res)),
    ]),
  ]);
  requests = [];
  server = createServer((req, res) => {
    const url = req.url ?? '';
    requests.push(url);
    const handler = url.startsWith(PREFIX)
      ? routes.get(url.slice(PREFIX.length))
      : url.startsWith(LEXICON_PATH)
        ? routes.get(`lexicon:${url.slice(LEXICON_PATH.length)}`)
        : undefined;
    if (handler === undefined) {
      res.writeHead(404, { 'content-type': 'text/plain' });
      res.end('Entry not found');
      return;
    }
    handler(req, res);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  tmp = await mkdtemp(path.join(os.tmpdir(), 'fetch-model-test-'));
});

afterEach(async () => {
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  await rm(tmp, { recursive: true, force: true });
});

function options(extra: Partial<FetchModelOptions> = {}): FetchModelOptions {
  return { outDir: path.join(tmp, 'model'), baseUrl, voices: [...VOICES], ...extra };
}

/** Every file below `dir`, relative, with `/`. */
async function listFiles(dir: string): Promise<string[]> {
  try {
    const entries = await readdir(dir, { recursive: true, withFileTypes: true });
    return entries
      .filter((e) => e.isFile())
      .map((e) => path.relative(dir, path.join(e.parentPath, e.name)).split(path.sep).join('/'))
      .sort();
  } catch {
    return [];
  }
}

/** Byte comparison; toEqual on megabyte buffers spends seconds building a diff. */
function expectBytes(actual: Buffer, expected: Buffer | undefined): void {
  expect(actual.length).toBe(expected?.length);
  expect(expected !== undefined && actual.equals(expected)).toBe(true);
}

async function exists(file: string): Promise<boolean> {
  return stat(file).then(
    () => true,
    () => false,
  );
}

async function rejection(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (error) {
    return error;
  }
  throw new Error('expected the promise to reject');
}

const EXPECTED_FILES = [
  'config.json',
  'onnx/model.onnx',
  'tokenizer.json',
  'voices/af_heart.bin',
  'voices/bf_emma.bin',
  'voices/jf_alpha.bin',
];

describe('fetchModel', () => {
  it('downloads every file to the onnx-community layout with the served bytes', async () => {
    const result = await fetchModel(options());
    const outDir = path.join(tmp, 'model');

    expect(result.outDir).toBe(outDir);
    expect(result.files.map((f) => f.path).sort()).toEqual(EXPECTED_FILES);
    expect(result.files.every((f) => !f.skipped)).toBe(true);
    expect(await listFiles(outDir)).toEqual([MANIFEST_FILE, ...EXPECTED_FILES].sort());

    expectBytes(await readFile(path.join(outDir, 'onnx/model.onnx')), ONNX);
    expectBytes(await readFile(path.join(outDir, 'config.json')), CONFIG);
    expectBytes(await readFile(path.join(outDir, 'tokenizer.json')), TOKENIZER);
    for (const id of VOICES) {
      const voice = await readFile(path.join(outDir, `voices/${id}.bin`));
      expect(voice.length).toBe(VOICE_FILE_BYTES);
      expectBytes(voice, VOICE_DATA.get(id));
    }
    const sizes = Object.fromEntries(result.files.map((f) => [f.path, f.bytes]));
    expect(sizes['onnx/model.onnx']).toBe(ONNX.length);
    expect(sizes['voices/af_heart.bin']).toBe(VOICE_FILE_BYTES);
    expect(requests.sort()).toEqual(EXPECTED_FILES.map((f) => PREFIX + f).sort());
  });

  it('uses the dtype file name and fetches all 54 voices by default', async () => {
    // Only the URL list matters here: a 404 for the model stops the run, so no voice has to be served.
    const seen: string[] = [];
    const fetchImpl: typeof fetch = async (input) => {
      seen.push(String(input));
      return new Response('nope', { status: 404 });
    };
    const opts = options({ dtype: 'q8', revision: 'refs/pr/1', fetchImpl, concurrency: 100 });
    delete opts.voices;
    await expect(fetchModel(opts)).rejects.toBeInstanceOf(FetchModelError);
    expect(seen).toContain(
      `${baseUrl}${PREFIX.replace('/main/', '/refs%2Fpr%2F1/')}onnx/model_quantized.onnx`,
    );
    expect(seen.filter((u) => u.includes('/voices/'))).toHaveLength(54);
  });

  it('skips complete files on a re-run without requesting them again', async () => {
    await fetchModel(options());
    const firstRun = requests.length;
    const outDir = path.join(tmp, 'model');

    const again = await fetchModel(options());
    expect(requests.length).toBe(firstRun);
    expect(again.files.every((f) => f.skipped)).toBe(true);
    expect(again.files.find((f) => f.path === 'onnx/model.onnx')?.bytes).toBe(ONNX.length);

    // A missing voice and a voice of the wrong size are fetched again; everything else is still skipped.
    await rm(path.join(outDir, 'voices/bf_emma.bin'));
    await writeFile(path.join(outDir, 'voices/jf_alpha.bin'), 'short');
    requests = [];
    const third = await fetchModel(options());
    expect(requests.sort()).toEqual([`${PREFIX}voices/bf_emma.bin`, `${PREFIX}voices/jf_alpha.bin`]);
    expect(third.files.filter((f) => !f.skipped).map((f) => f.path)).toEqual([
      'voices/bf_emma.bin',
      'voices/jf_alpha.bin',
    ]);
    expectBytes(await readFile(path.join(outDir, 'voices/jf_alpha.bin')), VOICE_DATA.get('jf_alpha'));
  });

  it('downloads model and JSON files again when the manifest does not vouch for them', async () => {
    await fetchModel(options());
    const outDir = path.join(tmp, 'model');
    await writeFile(path.join(outDir, 'onnx/model.onnx'), ONNX.subarray(0, 1000));
    await rm(path.join(outDir, MANIFEST_FILE));
    requests = [];
    await fetchModel(options());
    expect(requests.sort()).toEqual([
      `${PREFIX}config.json`,
      `${PREFIX}onnx/model.onnx`,
      `${PREFIX}tokenizer.json`,
    ]);
    expectBytes(await readFile(path.join(outDir, 'onnx/model.onnx')), ONNX);

    // A different revision does not reuse files recorded for another one.
    requests = [];
    const other = await rejection(fetchModel(options({ revision: 'v2' })));
    expect(other).toMatchObject({ code: 'http', status: 404 });
    expect(requests.some((r) => r.includes('/resolve/v2/'))).toBe(true);
  });

  it('keeps the .part when the connection drops mid-body, and the next run resumes it with Range', async () => {
    routes.set('onnx/model.onnx', serveTruncated(ONNX, 300_000));
    const outDir = path.join(tmp, 'model');

    const error = await rejection(fetchModel(options({ retries: 0 })));
    expect(error).toBeInstanceOf(FetchModelError);
    expect(error).toMatchObject({ code: 'network', file: 'onnx/model.onnx', resumable: true });
    expect((error as Error).message).toContain('onnx/model.onnx');
    expect((error as Error).message).toContain('resume');
    expect(await exists(path.join(outDir, 'onnx/model.onnx'))).toBe(false);
    const kept = (await stat(path.join(outDir, 'onnx/model.onnx.part'))).size;
    expect(kept).toBeGreaterThan(0);
    expect(kept).toBeLessThanOrEqual(300_000);

    const ranged = serveRanged(ONNX);
    routes.set('onnx/model.onnx', ranged);
    const received: number[] = [];
    await fetchModel(
      options({
        onProgress: (e) => {
          if (e.type === 'progress' && e.path === 'onnx/model.onnx') received.push(e.bytes);
        },
      }),
    );
    expect(ranged.ranges).toEqual([`bytes=${kept}-`]);
    expect(ranged.ifRanges).toEqual([undefined]); // the first server sent no validator
    expectBytes(await readFile(path.join(outDir, 'onnx/model.onnx')), ONNX);
    // Progress counts the whole file, starting after the bytes that were already there.
    expect(received[0]).toBeGreaterThan(kept);
    expect(received.at(-1)).toBe(ONNX.length);
    expect((await listFiles(outDir)).filter((f) => f.includes('.part'))).toEqual([]);
  });

  it('resumes a dropped connection within the same run, sending If-Range with the ETag', async () => {
    const ranged = serveRanged(ONNX, { drops: 2, dropAfter: 400_000 });
    routes.set('onnx/model.onnx', ranged);
    const result = await fetchModel(options({ retryDelayMs: 1 }));
    expectBytes(await readFile(path.join(tmp, 'model/onnx/model.onnx')), ONNX);
    expect(result.files.find((f) => f.path === 'onnx/model.onnx')).toMatchObject({ bytes: ONNX.length });
    expect(ranged.ranges).toHaveLength(3);
    expect(ranged.ranges[0]).toBeUndefined();
    const offsets = ranged.ranges.slice(1).map((r) => Number(/^bytes=(\d+)-$/.exec(r!)![1]));
    expect(offsets[0]).toBeGreaterThan(0);
    expect(offsets[1]).toBeGreaterThan(offsets[0]!);
    expect(ranged.ifRanges.slice(1)).toEqual(['"v1"', '"v1"']);
  });

  it('gives up after the configured number of resumptions and keeps the .part', async () => {
    const ranged = serveRanged(ONNX, { drops: 10, dropAfter: 100_000 });
    routes.set('onnx/model.onnx', ranged);
    const error = await rejection(fetchModel(options({ retries: 2, retryDelayMs: 1 })));
    expect(error).toMatchObject({ code: 'network', file: 'onnx/model.onnx' });
    expect(ranged.ranges).toHaveLength(3);
    expect((await stat(path.join(tmp, 'model/onnx/model.onnx.part'))).size).toBeGreaterThan(200_000);
  });

  it('downloads the whole file again when the server ignores Range, or the file changed', async () => {
    const outDir = path.join(tmp, 'model');
    routes.set('onnx/model.onnx', serveRanged(ONNX, { drops: 1, dropAfter: 300_000 }));
    await rejection(fetchModel(options({ retries: 0 })));

    // A server without Range support answers 200 with everything: it replaces the part.
    const ignoring = serveRanged(ONNX, { ignoreRange: true });
    routes.set('onnx/model.onnx', ignoring);
    await fetchModel(options());
    expect(ignoring.ranges[0]).toMatch(/^bytes=\d+-$/);
    expectBytes(await readFile(path.join(outDir, 'onnx/model.onnx')), ONNX);

    // The file changed upstream (another ETag): If-Range makes the server send the new one whole.
    const other = fakeBytes(ONNX.length, 9, 0x08);
    await rm(path.join(outDir, 'onnx/model.onnx'));
    await rm(path.join(outDir, MANIFEST_FILE));
    routes.set('onnx/model.onnx', serveRanged(ONNX, { drops: 1, dropAfter: 300_000 }));
    await rejection(fetchModel(options({ retries: 0 })));
    const changed = serveRanged(other, { etag: '"v2"' });
    routes.set('onnx/model.onnx', changed);
    await fetchModel(options());
    expect(changed.ifRanges[0]).toBe('"v1"');
    expectBytes(await readFile(path.join(outDir, 'onnx/model.onnx')), other);
  });

  it('starts again when the server says the range does not fit (416)', async () => {
    const outDir = path.join(tmp, 'model');
    routes.set('onnx/model.onnx', serveRanged(ONNX, { drops: 1, dropAfter: 300_000 }));
    await rejection(fetchModel(options({ retries: 0 })));
    // The part grew past the file (damaged): the server refuses the range.
    await writeFile(path.join(outDir, 'onnx/model.onnx.part'), fakeBytes(ONNX.length + 10, 4, 0x08));
    const ranged = serveRanged(ONNX);
    routes.set('onnx/model.onnx', ranged);
    await fetchModel(options());
    expect(ranged.ranges).toEqual([`bytes=${ONNX.length + 10}-`, undefined]);
    expectBytes(await readFile(path.join(outDir, 'onnx/model.onnx')), ONNX);
  });

  it('takes a body that ends short of Content-Length as a dropped connection, keeping its bytes', async () => {
    // A fetch that ends the body cleanly but short, which undici itself would report as a dropped connection.
    const fetchImpl: typeof fetch = async (input, init) => {
      const response = await fetch(input, init);
      if (!String(input).endsWith('config.json')) return response;
      return new Response(CONFIG.subarray(0, 10), {
        status: 200,
        headers: { 'content-length': String(CONFIG.length) },
      });
    };
    const error = await rejection(fetchModel(options({ fetchImpl, retries: 0 })));
    expect(error).toMatchObject({ code: 'network', file: 'config.json', resumable: true });
    expect((error as Error).message).toMatch(/closed after 10 of \d+ bytes of config\.json/);
    expect(await exists(path.join(tmp, 'model/config.json'))).toBe(false);
    expect((await stat(path.join(tmp, 'model/config.json.part'))).size).toBe(10);
  });

  it('rejects a voice file of the wrong size, naming the file and both sizes', async () => {
    routes.set('voices/bf_emma.bin', serveBytes(fakeBytes(1000, 3)));
    const error = await rejection(fetchModel(options()));
    expect(error).toBeInstanceOf(FetchModelError);
    expect(error).toMatchObject({ code: 'size', file: 'voices/bf_emma.bin' });
    const message = (error as Error).message;
    expect(message).toContain('voices/bf_emma.bin');
    expect(message).toContain(String(VOICE_FILE_BYTES));
    expect(message).toContain('1000');
    expect(await exists(path.join(tmp, 'model/voices/bf_emma.bin'))).toBe(false);
    // Bytes proven wrong leave no .part (files stopped by the failure keep theirs, to be resumed).
    expect(await exists(path.join(tmp, 'model/voices/bf_emma.bin.part'))).toBe(false);
  });

  it('rejects a short voice file sent without Content-Length', async () => {
    routes.set('voices/af_heart.bin', (_req, res) => {
      res.writeHead(200); // chunked: the size is only known at the end
      res.write(fakeBytes(4096, 4));
      res.end();
    });
    const error = await rejection(fetchModel(options()));
    expect(error).toMatchObject({ code: 'size', file: 'voices/af_heart.bin' });
    expect((error as Error).message).toContain(`expected ${VOICE_FILE_BYTES} bytes, received 4096`);
    expect(await exists(path.join(tmp, 'model/voices/af_heart.bin'))).toBe(false);
  });

  it('rejects a model file that is not protobuf or too small, and JSON that does not parse', async () => {
    routes.set('onnx/model.onnx', serveBytes(Buffer.concat([Buffer.from('<!DOCTYPE html>'), ONNX])));
    let error = await rejection(fetchModel(options()));
    expect(error).toMatchObject({ code: 'content', file: 'onnx/model.onnx' });
    expect((error as Error).message).toContain('<!DOCTYPE html>');

    routes.set('onnx/model.onnx', serveBytes(ONNX.subarray(0, 5000)));
    error = await rejection(fetchModel(options()));
    expect(error).toMatchObject({ code: 'size', file: 'onnx/model.onnx' });
    expect((error as Error).message).toMatch(/at least 1048576 bytes.*5000/);

    routes.set('onnx/model.onnx', serveBytes(ONNX));
    routes.set('tokenizer.json', serveBytes(Buffer.from('{"model": ')));
    // A fresh folder: the runs above already completed tokenizer.json, so it would rightly be skipped.
    const jsonDir = path.join(tmp, 'json');
    error = await rejection(fetchModel(options({ outDir: jsonDir })));
    expect(error).toMatchObject({ code: 'content', file: 'tokenizer.json' });
    expect((error as Error).message).toMatch(/tokenizer\.json is not valid: expected JSON/);
    expect(await exists(path.join(jsonDir, 'tokenizer.json'))).toBe(false);
    expect(await exists(path.join(jsonDir, 'tokenizer.json.part'))).toBe(false);
  });

  it('reports an HTTP error with the status and the URL', async () => {
    routes.delete('tokenizer.json');
    const error = await rejection(fetchModel(options()));
    const url = `${baseUrl}${PREFIX}tokenizer.json`;
    expect(error).toBeInstanceOf(FetchModelError);
    expect(error).toMatchObject({ code: 'http', status: 404, url, file: 'tokenizer.json' });
    expect((error as Error).message).toContain('404');
    expect((error as Error).message).toContain(url);
  });

  it('follows redirects', async () => {
    routes.set('config.json', (_req, res) => {
      res.writeHead(302, { location: '/cdn/config.json' });
      res.end();
    });
    const original = server.listeners('request')[0] as Handler;
    server.removeAllListeners('request');
    server.on('request', (req: IncomingMessage, res: ServerResponse) => {
      if (req.url === '/cdn/config.json') serveBytes(CONFIG)(req, res);
      else original(req, res);
    });
    await fetchModel(options());
    expectBytes(await readFile(path.join(tmp, 'model/config.json')), CONFIG);
  });

  it('reports an unreachable server as a network error that mentions mirrors', async () => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const port = (closed.address() as AddressInfo).port;
    await new Promise<void>((resolve) => closed.close(() => resolve()));

    const error = await rejection(fetchModel(options({ baseUrl: `http://127.0.0.1:${port}` })));
    expect(error).toMatchObject({ code: 'network' });
    expect((error as Error).message).toContain('HF_ENDPOINT');
    expect((error as Error).message).toContain('--base-url');
    // Folders are created only once a response arrives, so nothing is left behind.
    expect(await exists(path.join(tmp, 'model'))).toBe(false);
  });

  it('rejects unknown voice ids and bad options before any request or file', async () => {
    const error = await rejection(
      fetchModel(options({ voices: ['af_heart', '../../etc/passwd', 'AF_BELLA'] })),
    );
    expect(error).toMatchObject({ code: 'invalid-option' });
    expect((error as Error).message).toContain('"../../etc/passwd"');
    expect((error as Error).message).toContain('"AF_BELLA"');
    expect((error as Error).message).toContain('--help');
    expect((error as Error).message).not.toContain('"af_heart"');

    await expect(fetchModel(options({ voices: [] }))).rejects.toMatchObject({ code: 'invalid-option' });
    await expect(fetchModel(options({ dtype: 'int3' as 'q8' }))).rejects.toThrow(/Unknown dtype "int3"/);
    await expect(fetchModel(options({ repo: '../x' }))).rejects.toMatchObject({ code: 'invalid-option' });
    await expect(fetchModel(options({ baseUrl: 'ftp://mirror' }))).rejects.toMatchObject({
      code: 'invalid-option',
    });
    expect(requests).toEqual([]);
    expect(await exists(path.join(tmp, 'model'))).toBe(false);
  });

  it('stops on abort and keeps the partial file for the next run', async () => {
    // The model arrives in part and then stalls, so the abort always lands mid-file.
    routes.set('onnx/model.onnx', (_req, res) => {
      res.writeHead(200, { 'content-length': ONNX.length });
      res.write(ONNX.subarray(0, 200_000));
    });
    const controller = new AbortController();
    const outDir = path.join(tmp, 'model');
    const promise = fetchModel(
      options({
        signal: controller.signal,
        onProgress: (e) => {
          if (e.type === 'progress' && e.path === 'onnx/model.onnx') controller.abort();
        },
      }),
    );
    const error = await rejection(promise);
    expect(error).toBe(controller.signal.reason);
    expect((error as Error).name).toBe('AbortError');
    expect(await exists(path.join(outDir, 'onnx/model.onnx'))).toBe(false);
    expect((await stat(path.join(outDir, 'onnx/model.onnx.part'))).size).toBeGreaterThan(0);
  });

  it('does nothing when the signal is already aborted', async () => {
    const controller = new AbortController();
    controller.abort();
    await expect(fetchModel(options({ signal: controller.signal }))).rejects.toMatchObject({
      name: 'AbortError',
    });
    expect(requests).toEqual([]);
  });

  it('reports monotonic progress per file and overall', async () => {
    const events: DownloadProgressEvent[] = [];
    const result = await fetchModel(options({ onProgress: (e) => events.push(e) }));

    let overall = 0;
    const perFile = new Map<string, number>();
    const states = new Map<string, string>();
    for (const e of events) {
      expect(e.overall.bytes).toBeGreaterThanOrEqual(overall);
      overall = e.overall.bytes;
      const previous = states.get(e.path);
      if (e.type === 'start') expect(previous).toBeUndefined();
      if (e.type === 'progress' || e.type === 'done') expect(['start', 'progress']).toContain(previous);
      if (e.type === 'progress') {
        expect(e.bytes).toBeGreaterThanOrEqual(perFile.get(e.path) ?? 0);
        expect(e.bytes).toBeLessThanOrEqual(e.total ?? Infinity);
        perFile.set(e.path, e.bytes);
      }
      states.set(e.path, e.type);
    }
    const total = ONNX.length + CONFIG.length + TOKENIZER.length + VOICES.length * VOICE_FILE_BYTES;
    const last = events.at(-1)!;
    expect(last.overall).toEqual({
      bytes: total,
      totalBytes: total,
      totalKnown: true,
      filesDone: 6,
      filesTotal: 6,
    });
    expect([...states.values()].every((s) => s === 'done')).toBe(true);
    expect(result.files.reduce((sum, f) => sum + f.bytes, 0)).toBe(total);

    // A re-run reports every file as skipped and counts no bytes.
    const rerun: DownloadProgressEvent[] = [];
    await fetchModel(options({ onProgress: (e) => rerun.push(e) }));
    expect(rerun.map((e) => e.type)).toEqual(Array(6).fill('skipped'));
    expect(rerun.at(-1)!.overall).toMatchObject({ bytes: 0, filesDone: 6, filesTotal: 6 });
  });
});

describe('fetch-model CLI', () => {
  it('parses flags with defaults and HF_ENDPOINT', () => {
    expect(parseCli([], {})).toEqual({
      help: false,
      options: {
        outDir: './models/kokoro-82m',
        dtype: 'fp32',
        voices: 'all',
        baseUrl: 'https://huggingface.co',
        revision: 'main',
        repo: DEFAULT_REPO,
        retries: 3,
        lexiconBaseUrl: DEFAULT_LEXICON_BASE_URL,
      },
    });
    expect(parseCli(['--lexicon-base-url', 'http://m/misaki'], {})).toMatchObject({
      options: { lexiconBaseUrl: 'http://m/misaki' },
    });
    expect(parseCli(['--retries', '0'], {})).toMatchObject({ options: { retries: 0 } });
    expect(() => parseCli(['--retries=-1'], {})).toThrow(/--retries should be a whole number of 0 or more/);
    const parsed = parseCli(['--dtype', 'q8', '--voices', 'af_heart, bf_emma', '--out', 'x'], {
      HF_ENDPOINT: 'https://hf-mirror.com',
    });
    expect(parsed).toMatchObject({
      options: {
        dtype: 'q8',
        voices: ['af_heart', 'bf_emma'],
        outDir: 'x',
        baseUrl: 'https://hf-mirror.com',
      },
    });
    expect(
      parseCli(['--base-url', 'http://m', '--revision', 'abc'], { HF_ENDPOINT: 'https://e' }),
    ).toMatchObject({
      options: { baseUrl: 'http://m', revision: 'abc' },
    });
    expect(parseCli(['--help'], {})).toEqual({ help: true });
    expect(() => parseCli(['--dtype', 'int8'], {})).toThrow(/Unknown --dtype "int8"/);
    expect(() => parseCli(['--bogus'], {})).toThrow();
  });

  it('downloads, prints the start command, and fails with a readable message', async () => {
    const capture = (): { stream: PassThrough; text: () => string } => {
      const stream = new PassThrough();
      const chunks: Buffer[] = [];
      stream.on('data', (c: Buffer) => chunks.push(c));
      return { stream, text: () => Buffer.concat(chunks).toString('utf8') };
    };
    const outDir = path.join(tmp, 'cli model');
    const args = [
      ...['--out', outDir, '--base-url', baseUrl, '--voices', VOICES.join(',')],
      ...['--lexicon-base-url', `${baseUrl}/lexicon`],
    ];

    let stdout = capture();
    let stderr = capture();
    expect(await main(args, { env: {}, stdout: stdout.stream, stderr: stderr.stream })).toBe(0);
    expect(stdout.text()).toContain(`KOKORO_MODEL_DIR='${outDir}' npm start`);
    expect(stderr.text()).toMatch(/^\[6\/6\] downloaded \S+ \(/m);
    expect(await listFiles(outDir)).toEqual(
      [MANIFEST_FILE, ...EXPECTED_FILES, ...LEXICON_FILE_FACTS.map((f) => `misaki/${f.name}`)].sort(),
    );
    expect(stderr.text()).toMatch(/us_gold\.json: fetched \(3000469 bytes, SHA-256 checked\)/);

    stdout = capture();
    stderr = capture();
    expect(
      await main([...args, '--voices', 'zz_nobody'], {
        env: {},
        stdout: stdout.stream,
        stderr: stderr.stream,
      }),
    ).toBe(2);
    expect(stderr.text()).toMatch(/^fetch-model: Unknown voice id "zz_nobody"/m);

    // Another dtype: the start command tells the server which model file to load.
    routes.set('onnx/model_q4.onnx', serveBytes(ONNX));
    stdout = capture();
    expect(
      await main([...args, '--dtype', 'q4'], { env: {}, stdout: stdout.stream, stderr: capture().stream }),
    ).toBe(0);
    expect(stdout.text()).toContain(`KOKORO_MODEL_DIR='${outDir}' KOKORO_DTYPE=q4 npm start`);
    expect(stdout.text()).toContain('5 already complete');

    routes.delete('config.json');
    await rm(outDir, { recursive: true });
    stderr = capture();
    expect(await main(args, { env: {}, stdout: stdout.stream, stderr: stderr.stream })).toBe(1);
    expect(stderr.text()).toContain('fetch-model: HTTP 404');
  });
});

describe("misaki's lexicons", () => {
  it('fetches the four files, checks them, and keeps intact ones on the next run', async () => {
    const lines: string[] = [];
    const dir = path.join(tmp, 'misaki');
    const paths = await fetchLexicon({
      outDir: dir,
      baseUrl: `${baseUrl}/lexicon/`,
      log: (l) => lines.push(l),
    });
    expect(paths.map((p) => path.basename(p))).toEqual(LEXICON_FILE_FACTS.map((f) => f.name));
    for (const f of LEXICON_FILE_FACTS) expect((await stat(path.join(dir, f.name))).size).toBe(f.bytes);
    expect(requests.filter((u) => u.startsWith(LEXICON_PATH))).toHaveLength(4);
    await fetchLexicon({ outDir: dir, baseUrl: `${baseUrl}/lexicon`, log: (l) => lines.push(l) });
    expect(requests.filter((u) => u.startsWith(LEXICON_PATH))).toHaveLength(4);
    expect(lines.at(-1)).toBe('gb_silver.json: present, checked');
  });

  it("refuses a file that is not misaki's at the pinned commit, and keeps nothing of it", async () => {
    routes.set('lexicon:us_silver.json', serveBytes(Buffer.from(JSON.stringify({ hello: 'hˈɛlO' }))));
    const dir = path.join(tmp, 'misaki');
    await expect(fetchLexicon({ outDir: dir, baseUrl: `${baseUrl}/lexicon` })).rejects.toThrow(
      /us_silver\.json has the wrong size/,
    );
    expect(await listFiles(dir)).not.toContain('us_silver.json');
  });
});
