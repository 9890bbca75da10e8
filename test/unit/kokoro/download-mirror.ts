/**
 * A fake Hugging Face and GitHub mirror for the download tests: an HTTP server on a free port that
 * serves fake model files, real misaki lexicons, and on request truncated, dropped or ranged
 * answers, with a log of the paths asked for; and the checks on what lands on disk.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtemp, readFile, readdir, rm, stat } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, expect } from 'vitest';
import { VOICE_FILE_BYTES } from '../../../model/kokoro/constants.ts';
import { DEFAULT_REPO, type FetchModelOptions } from '../../../model/kokoro/download.ts';
import { LEXICON_FILE_FACTS, MISAKI_COMMIT } from '../../../model/kokoro/lexicon-download.ts';

// misaki's real lexicon files (the test setup names them), served by the fake mirror below.
const LEXICON_DIR = process.env.KOKORO_LEXICON_DIR!;
export const LEXICON_PATH = `/lexicon/${MISAKI_COMMIT}/misaki/data/`;

export type Handler = (req: IncomingMessage, res: ServerResponse) => void;

export const PREFIX = `/${DEFAULT_REPO}/resolve/main/`;
export const VOICES = ['af_heart', 'bf_emma', 'jf_alpha'] as const;

/** Deterministic bytes, different per seed, so a mixed-up file would not compare equal. */
export function fakeBytes(length: number, seed: number, first?: number): Buffer {
  const buf = Buffer.alloc(length);
  for (let i = 0; i < length; i += 1) buf[i] = (i * 31 + seed * 7) & 0xff;
  if (first !== undefined) buf[0] = first;
  return buf;
}

// 0x08 is the key of ModelProto.ir_version, the first field of every real ONNX file.
export const ONNX = fakeBytes(1_500_000, 1, 0x08);
export const CONFIG = Buffer.from(JSON.stringify({ vocab: { a: 43, b: 44 }, n_token: 178 }));
export const TOKENIZER = Buffer.from(JSON.stringify({ model: { vocab: { $: 0 } } }));
export const VOICE_DATA = new Map(VOICES.map((id, i) => [id, fakeBytes(VOICE_FILE_BYTES, 10 + i)]));

export function serveBytes(body: Buffer): Handler {
  return (_req, res) => {
    res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': body.length });
    res.end(body);
  };
}

/** Sends part of the body, announcing the full length, then drops the connection. */
export function serveTruncated(body: Buffer, sent: number): Handler {
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
export function serveRanged(
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

export let server: Server;
export let baseUrl: string;
export let routes: Map<string, Handler>;
export let requests: string[];
export let tmp: string;

/**
 * Around each test of the calling file: a fresh mirror on a free port serving the routes above,
 * the request log emptied, and a temporary directory, all removed afterwards.
 */
export function useFakeMirror(): void {
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
}

export function options(extra: Partial<FetchModelOptions> = {}): FetchModelOptions {
  return { outDir: path.join(tmp, 'model'), baseUrl, voices: [...VOICES], ...extra };
}

/** Every file below `dir`, relative, with `/`. */
export async function listFiles(dir: string): Promise<string[]> {
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
export function expectBytes(actual: Buffer, expected: Buffer | undefined): void {
  expect(actual.length).toBe(expected?.length);
  expect(expected !== undefined && actual.equals(expected)).toBe(true);
}

export async function exists(file: string): Promise<boolean> {
  return stat(file).then(
    () => true,
    () => false,
  );
}

export async function rejection(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (error) {
    return error;
  }
  throw new Error('expected the promise to reject');
}

export const EXPECTED_FILES = [
  'config.json',
  'onnx/model.onnx',
  'tokenizer.json',
  'voices/af_heart.bin',
  'voices/bf_emma.bin',
  'voices/jf_alpha.bin',
];
