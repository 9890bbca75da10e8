/**
 * fetchModel (model/kokoro/download.ts) against a fake mirror: the layout on disk, skipping and
 * resuming, the checks on what arrives, errors, abort and progress.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { readFile, rm, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { VOICE_FILE_BYTES } from '../../../model/kokoro/constants.ts';
import {
  FetchModelError,
  MANIFEST_FILE,
  fetchModel,
  type DownloadProgressEvent,
} from '../../../model/kokoro/download.ts';
import {
  PREFIX,
  VOICES,
  fakeBytes,
  ONNX,
  CONFIG,
  TOKENIZER,
  VOICE_DATA,
  serveBytes,
  serveTruncated,
  serveRanged,
  server,
  baseUrl,
  routes,
  requests,
  tmp,
  useFakeMirror,
  options,
  listFiles,
  expectBytes,
  exists,
  rejection,
  EXPECTED_FILES,
  type Handler,
} from './download-mirror.ts';

useFakeMirror();

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
    requests.length = 0;
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
    requests.length = 0;
    await fetchModel(options());
    expect(requests.sort()).toEqual([
      `${PREFIX}config.json`,
      `${PREFIX}onnx/model.onnx`,
      `${PREFIX}tokenizer.json`,
    ]);
    expectBytes(await readFile(path.join(outDir, 'onnx/model.onnx')), ONNX);

    // A different revision does not reuse files recorded for another one.
    requests.length = 0;
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
