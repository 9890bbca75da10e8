/**
 * scripts/fetch-model.ts against a fake mirror: its flags and defaults, and a run end to end.
 */
import { rm } from 'node:fs/promises';
import path from 'node:path';
import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { MANIFEST_FILE } from '../../../model/kokoro/download.ts';
import { main, parseCli } from '../../../scripts/fetch-model.ts';
import { DEFAULT_LEXICON_BASE_URL, LEXICON_FILE_FACTS } from '../../../model/kokoro/lexicon-download.ts';
import {
  VOICES,
  ONNX,
  serveBytes,
  baseUrl,
  routes,
  tmp,
  useFakeMirror,
  listFiles,
  EXPECTED_FILES,
} from '../kokoro/download-mirror.ts';

useFakeMirror();

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
        // The timestamped export: the agent frameworks' clients ask for timestamps.
        repo: 'onnx-community/Kokoro-82M-v1.0-ONNX-timestamped',
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
