/**
 * The client as another project sees it: `npm pack`, install the tarball into a fresh project, and
 * with plain `node` (no TypeScript, no loader) import both client subpaths and run a real session
 * against a started server.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServer, type TestServer } from './harness.ts';

const run = promisify(execFile);
const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const NAME = 'kokoro-stream-server';

/** The environment without what `npm test` sets for this project, so npm treats the consumer as its own. */
function consumerEnv(): NodeJS.ProcessEnv {
  return Object.fromEntries(Object.entries(process.env).filter(([k]) => !/^npm_/i.test(k)));
}

const CONSUMER = `
const client = await import('${NAME}/client');
const sagemaker = await import('${NAME}/client/sagemaker');
const session = await client.TtsSession.connect(process.argv[2]);
const chunker = new client.IncrementalSentenceChunker();
const pieces = [...chunker.feed('Hello from another project. And a second'), ...chunker.flush()];
const results = [];
for (const text of pieces) results.push(await session.request(text, { format: 'pcm' }));
await session.close();
console.log(JSON.stringify({
  client: Object.keys(client).sort(),
  sagemaker: Object.keys(sagemaker).sort(),
  pieces,
  audioBytes: results.map((r) => r.audio.byteLength),
  durations: results.map((r) => r.complete.totalDurationS),
}));
`;

describe('npm pack: the client in another project', () => {
  let dir: string;
  let server: TestServer;
  let tarball: string;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'kokoro-consumer-'));
    const packed = await run('npm', ['pack', '--json', '--ignore-scripts', '--pack-destination', dir], {
      cwd: ROOT,
    });
    const [info] = JSON.parse(packed.stdout.slice(packed.stdout.indexOf('['))) as { filename: string }[];
    tarball = join(dir, info!.filename);
    const project = join(dir, 'app');
    await run('mkdir', ['-p', project]);
    writeFileSync(
      join(project, 'package.json'),
      JSON.stringify({ name: 'consumer', private: true, type: 'module' }),
    );
    writeFileSync(join(project, 'check.mjs'), CONSUMER);
    // --ignore-scripts: the client needs none, and onnxruntime-node's would try to download CUDA.
    await run(
      'npm',
      [
        'install',
        tarball,
        '--ignore-scripts',
        '--no-audit',
        '--no-fund',
        '--prefer-offline',
        '--loglevel=error',
      ],
      { cwd: project, env: consumerEnv(), maxBuffer: 16 * 1024 * 1024 },
    );
    server = await startServer();
  }, 300_000);

  afterAll(async () => {
    await server?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('ships compiled JavaScript with type declarations, and no TypeScript sources or tests', async () => {
    const { stdout } = await run('tar', ['-tzf', tarball]);
    const files = stdout.split('\n').filter(Boolean);
    expect(files).toEqual(
      expect.arrayContaining([
        'package/dist/client/index.js',
        'package/dist/client/index.d.ts',
        'package/dist/client/sagemaker.js',
        'package/dist/client/sagemaker.d.ts',
        'package/dist/server/main.js',
        'package/docs/protocol.md',
      ]),
    );
    expect(files.filter((f) => /\.ts$/.test(f) && !f.endsWith('.d.ts'))).toEqual([]);
    expect(files.filter((f) => f.startsWith('package/test/') || f.includes('tsbuildinfo'))).toEqual([]);
  });

  it('plain node imports both subpaths and a session yields audio', async () => {
    const { stdout } = await run(process.execPath, ['check.mjs', server.ws], {
      cwd: join(dir, 'app'),
      env: consumerEnv(),
    });
    const result = JSON.parse(stdout) as {
      client: string[];
      sagemaker: string[];
      pieces: string[];
      audioBytes: number[];
      durations: number[];
    };
    expect(result.client).toEqual(
      expect.arrayContaining(['TtsSession', 'IncrementalSentenceChunker', 'decodeControlFrame', 'readSse']),
    );
    expect(result.client).not.toContain('SageMakerTtsSession');
    expect(result.sagemaker).toEqual(expect.arrayContaining(['SageMakerTtsSession', 'invokeStreaming']));
    expect(result.pieces).toEqual(['Hello from another project.', 'And a second']);
    expect(result.audioBytes).toHaveLength(2);
    for (const [i, bytes] of result.audioBytes.entries()) {
      // s16le mono at 24 kHz: two bytes a sample, as many as the reported duration says.
      expect(bytes).toBeGreaterThan(0);
      expect(bytes % 2).toBe(0);
      expect(bytes / 2 / 24_000).toBeCloseTo(result.durations[i]!, 2);
    }
  });

  it('installs with the AWS SDK left out: it is an optional peer dependency', () => {
    const manifest = JSON.parse(
      readFileSync(join(dir, 'app', 'node_modules', NAME, 'package.json'), 'utf8'),
    ) as Record<string, Record<string, unknown>>;
    expect(Object.keys(manifest.dependencies!).filter((d) => d.startsWith('@aws-sdk/'))).toEqual([]);
    expect(manifest.peerDependenciesMeta!['@aws-sdk/client-sagemaker-runtime']).toEqual({ optional: true });
    expect(Object.keys(manifest.dependencies!)).not.toContain('tsx');
  });
});
