/**
 * The client package as another project sees it: `npm pack` the workspace `packages/client`,
 * install the tarball alone into a fresh project, and with plain `node` (no TypeScript, no loader)
 * import `.` and `./sagemaker` and run a real session against a started server. The consumer gets
 * none of the server's dependencies, its `node_modules` stays small, and `.` links and runs with
 * no Node built-in at all, as in a browser.
 */
import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sharedServer, type TestServer } from './harness.ts';

const run = promisify(execFile);
const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const NAME = 'kokoro-stream-client';
/** The consumer's whole node_modules (the client and its dependencies), in bytes. */
const MAX_INSTALLED_BYTES = 2 * 1024 * 1024;

/** The environment without what `npm test` sets for this project, so npm treats the consumer as its own. */
function consumerEnv(): NodeJS.ProcessEnv {
  return Object.fromEntries(Object.entries(process.env).filter(([k]) => !/^npm_/i.test(k)));
}

const CONSUMER = `
const client = await import('${NAME}');
const sagemaker = await import('${NAME}/sagemaker');
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

/**
 * Links and evaluates the package's "." entry in a fresh V8 context that has the ECMAScript
 * built-ins and a few web APIs but no Node.js: no \`process\`, no \`Buffer\`, no \`require\`, and an
 * import of anything but a relative file (\`node:*\`, a bare package) fails the link. So a
 * Node-only import, or a Node global touched at load time, anywhere in its graph fails here.
 */
const BROWSER_LIKE = `
import { readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import vm from 'node:vm';

const dir = join('node_modules', '${NAME}');
const manifest = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8'));
const entry = resolve(dir, manifest.exports['.'].default);
const context = vm.createContext({
  TextEncoder, TextDecoder, atob, btoa, URL, URLSearchParams, AbortController, AbortSignal,
  crypto: globalThis.crypto, console, setTimeout, clearTimeout, queueMicrotask, structuredClone,
});
const modules = new Map();
function load(file) {
  let mod = modules.get(file);
  if (!mod) {
    mod = new vm.SourceTextModule(readFileSync(file, 'utf8'), { identifier: file, context });
    modules.set(file, mod);
  }
  return mod;
}
const root = load(entry);
await root.link((specifier, referrer) => {
  if (!specifier.startsWith('.')) {
    throw new Error(\`\${relative(dir, referrer.identifier)} imports '\${specifier}', which a browser lacks\`);
  }
  return load(resolve(dirname(referrer.identifier), specifier));
});
await root.evaluate();
const ns = root.namespace;
const chunker = new ns.IncrementalSentenceChunker();
console.log(JSON.stringify({
  modules: [...modules.keys()].map((f) => relative(dir, f)).sort(),
  exports: Object.keys(ns).sort(),
  sentences: [...chunker.feed('One. Two'), ...chunker.flush()],
  control: ns.decodeControlFrame(new TextEncoder().encode('{"type":"synthesis_start"}'))?.type,
}));
`;

/** A TypeScript consumer of both subpaths, written for a browser (its WebSocket, no Node types). */
const TYPES_CONSUMER = `
import { IncrementalSentenceChunker, TtsSession, type TtsEvent } from '${NAME}';
import { SageMakerTtsSession, invokeStreaming } from '${NAME}/sagemaker';

export async function speak(url: string): Promise<TtsEvent[]> {
  const session = await TtsSession.connect(url, { WebSocket });
  const chunker = new IncrementalSentenceChunker();
  for (const s of [...chunker.feed('Hello.'), ...chunker.flush()]) session.send(s);
  const closing = session.close();
  const events: TtsEvent[] = [];
  for await (const event of session.events()) events.push(event);
  await closing;
  return events;
}
export const sagemaker = [SageMakerTtsSession.connect, invokeStreaming] as const;
`;

/** Top-level packages in a node_modules folder (scoped ones as `@scope/name`). */
function packagesIn(modules: string): string[] {
  return readdirSync(modules, { withFileTypes: true })
    .filter((e) => e.isDirectory() && !e.name.startsWith('.'))
    .flatMap((e) =>
      e.name.startsWith('@') ? readdirSync(join(modules, e.name)).map((n) => `${e.name}/${n}`) : [e.name],
    );
}

/** Bytes of the files below `dir` (their sizes; folders and links not counted). */
function bytesIn(dir: string): number {
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile())
    .reduce((sum, e) => sum + statSync(join(e.parentPath, e.name)).size, 0);
}

describe('npm pack: the client package in another project', () => {
  let dir: string;
  let project: string;
  let server: TestServer;
  let tarball: string;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'kokoro-consumer-'));
    // The workspace's prepack script builds it (incrementally: npm test has built it already).
    const packed = await run(
      'npm',
      ['pack', '--json', '--workspace', 'packages/client', '--pack-destination', dir],
      { cwd: ROOT },
    );
    const [info] = JSON.parse(packed.stdout.slice(packed.stdout.indexOf('['))) as { filename: string }[];
    tarball = join(dir, info!.filename);
    project = join(dir, 'app');
    mkdirSync(project);
    writeFileSync(
      join(project, 'package.json'),
      JSON.stringify({ name: 'consumer', private: true, type: 'module' }),
    );
    writeFileSync(join(project, 'check.mjs'), CONSUMER);
    writeFileSync(join(project, 'browser-like.mjs'), BROWSER_LIKE);
    await run(
      'npm',
      ['install', tarball, '--no-audit', '--no-fund', '--prefer-offline', '--loglevel=error'],
      { cwd: project, env: consumerEnv(), maxBuffer: 16 * 1024 * 1024 },
    );
    server = await sharedServer();
  }, 300_000);

  afterAll(async () => {
    await server?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('ships its compiled JavaScript, declarations and README, and nothing else', async () => {
    const { stdout } = await run('tar', ['-tzf', tarball]);
    const files = stdout.split('\n').filter(Boolean);
    const manifest = JSON.parse(readFileSync(join(ROOT, 'packages/client/package.json'), 'utf8')) as {
      exports: Record<string, string | Record<string, string>>;
    };
    // Every target of the exports map is in the tarball.
    const targets = Object.values(manifest.exports).flatMap((t) =>
      typeof t === 'string' ? [t] : Object.values(t),
    );
    expect(files).toEqual(expect.arrayContaining(targets.map((t) => `package/${t.slice(2)}`)));
    expect(files).toEqual(
      expect.arrayContaining([
        'package/dist/packages/client/src/index.js',
        'package/dist/packages/client/src/sagemaker.d.ts',
        'package/dist/protocol/frames.js',
        'package/dist/model/text/sentences.js',
        'package/README.md',
      ]),
    );
    expect(
      files.filter((f) => !/^package\/(dist\/.*\.js|dist\/.*\.d\.ts|package\.json|README\.md)$/.test(f)),
    ).toEqual([]);
    // Of the model, only the sentence chunker.
    expect(files.filter((f) => f.startsWith('package/dist/model/')).sort()).toEqual([
      'package/dist/model/text/sentences.d.ts',
      'package/dist/model/text/sentences.js',
    ]);
  });

  it('installs none of the server: only the client and ws, and under 2 MB', () => {
    const modules = join(project, 'node_modules');
    const installed = packagesIn(modules);
    const root = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as {
      dependencies: Record<string, string>;
    };
    const serverOnly = Object.keys(root.dependencies).filter((d) => d !== 'ws' && d !== NAME);
    expect(serverOnly).toEqual(
      expect.arrayContaining(['onnxruntime-node', 'fastify', 'kuromoji', 'jieba-wasm', 'pino', 'kokoro-js']),
    );
    expect(installed.filter((p) => serverOnly.includes(p))).toEqual([]);
    expect(installed.sort()).toEqual([NAME, 'ws']);
    const bytes = bytesIn(modules);
    console.log(`consumer node_modules: ${(bytes / 1024).toFixed(0)} KiB (${installed.join(', ')})`);
    expect(bytes).toBeLessThan(MAX_INSTALLED_BYTES);
  });

  it('plain node imports both subpaths and a session yields audio', async () => {
    const { stdout } = await run(process.execPath, ['check.mjs', server.ws], {
      cwd: project,
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

  it('"." links and runs without Node: no Node built-in or package in its import graph', async () => {
    const { stdout } = await run(process.execPath, ['--experimental-vm-modules', 'browser-like.mjs'], {
      cwd: project,
      env: consumerEnv(),
    });
    const result = JSON.parse(stdout) as {
      modules: string[];
      exports: string[];
      sentences: string[];
      control: string;
    };
    expect(result.modules).toEqual(
      expect.arrayContaining(['dist/packages/client/src/index.js', 'dist/packages/client/src/session.js']),
    );
    expect(result.modules.filter((m) => m.includes('sagemaker'))).toEqual([]);
    expect(result.exports).toEqual(expect.arrayContaining(['TtsSession', 'IncrementalSentenceChunker']));
    expect(result.sentences).toEqual(['One.', 'Two']);
    expect(result.control).toBe('synthesis_start');
  });

  it('its declarations typecheck in a browser project: the DOM library, no Node types', async () => {
    writeFileSync(join(project, 'use.ts'), TYPES_CONSUMER);
    writeFileSync(
      join(project, 'tsconfig.json'),
      JSON.stringify({
        compilerOptions: {
          module: 'NodeNext',
          moduleResolution: 'NodeNext',
          target: 'ES2022',
          lib: ['ES2023', 'DOM'],
          types: [],
          strict: true,
          noEmit: true,
          skipLibCheck: false,
        },
        files: ['use.ts'],
      }),
    );
    // The repository's compiler; the consumer's node_modules hold only the client and ws.
    const tsc = join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc');
    await run(process.execPath, [tsc, '-p', project], { cwd: project }).catch((err: { stdout?: string }) => {
      throw new Error(`the declarations do not typecheck:\n${err.stdout ?? String(err)}`);
    });
  });

  it('declares the AWS SDK an optional peer and ws its one dependency', () => {
    const manifest = JSON.parse(
      readFileSync(join(project, 'node_modules', NAME, 'package.json'), 'utf8'),
    ) as {
      dependencies: Record<string, string>;
      peerDependenciesMeta: Record<string, unknown>;
    };
    expect(Object.keys(manifest.dependencies)).toEqual(['ws']);
    expect(manifest.peerDependenciesMeta['@aws-sdk/client-sagemaker-runtime']).toEqual({ optional: true });
  });
});
