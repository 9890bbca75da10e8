/**
 * What the image test (npm run image:test, a real build and run) cannot see from here: the gpu
 * target, which is not built on a machine without CUDA; the docker/ scripts' lint; the pruning of
 * node_modules on a small tree; and the image test's own pure parts.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { GPU_AMIS, GPU_AMI_VERSION } from '../../../scripts/deploy.ts';
import { dockerfileNodeImage, parseNodeImage } from '../../../scripts/lib/image-base.ts';
import {
  devDependenciesIn,
  EXPECTED,
  imageConfigProblems,
  type ImageInspect,
} from '../../../scripts/lib/image-checks.ts';
import { parseLimits, ulimitArgs } from '../../../scripts/lib/image-engine.ts';

const ROOT = fileURLToPath(new URL('../../..', import.meta.url));
const dockerfile = readFileSync(join(ROOT, 'Dockerfile'), 'utf8');

describe('the gpu target (not built here)', () => {
  it('runs the ldd guard on the CUDA provider in the final image', () => {
    const gpu = dockerfile.slice(dockerfile.indexOf(' AS gpu'), dockerfile.indexOf(' AS cpu'));
    expect(gpu).toContain(
      'RUN sh docker/check-cuda-deps.sh node_modules/onnxruntime-node/bin/napi-v6/linux/x64',
    );
  });

  it('uses a CUDA runtime whose version the deploy tooling’s host AMI supports', () => {
    const m = /^ARG CUDA_IMAGE=nvidia\/cuda:(\d+)\.(\d+)\.\d+-cudnn-runtime-ubuntu\d\d\.04$/m.exec(
      dockerfile,
    );
    expect(m).not.toBeNull();
    const [major, minor] = GPU_AMIS[GPU_AMI_VERSION].cuda.split('.').map(Number);
    expect(Number(m![1])).toBe(major);
    expect(Number(m![2])).toBeGreaterThanOrEqual(minor!);
  });
});

describe('image test parts', () => {
  it('reads the Node major and Debian suite from the Dockerfile’s NODE_IMAGE', () => {
    expect(parseNodeImage(dockerfileNodeImage(dockerfile) ?? '')).toEqual({ major: 26, suite: 'bookworm' });
    const cases = new Map<string, ReturnType<typeof parseNodeImage>>([
      ['node:26-bookworm-slim', { major: 26, suite: 'bookworm' }],
      ['docker.io/library/node:22.11.0-trixie-slim', { major: 22, suite: 'trixie' }],
      [`node:26-bookworm-slim@sha256:${'a'.repeat(64)}`, { major: 26, suite: 'bookworm' }],
      ['node:lts', undefined],
      ['debian:bookworm', undefined],
    ]);
    for (const [image, expected] of cases) expect(parseNodeImage(image), image).toEqual(expected);
  });

  const good: ImageInspect = {
    Architecture: 'amd64',
    Config: {
      Labels: { ...EXPECTED.labels },
      Entrypoint: [...EXPECTED.entrypoint],
      Cmd: [...EXPECTED.cmd],
      ExposedPorts: { '8080/tcp': {} },
      Env: ['PATH=/usr/bin', ...EXPECTED.env],
    },
  };

  it('accepts the SageMaker contract and names every departure from it', () => {
    expect(imageConfigProblems(good)).toEqual([]);
    const cases = new Map<ImageInspect, string>([
      [
        { ...good, Config: { ...good.Config, Labels: {} } },
        'bidirectional-streaming should be true, is missing',
      ],
      [{ ...good, Config: { ...good.Config, Cmd: ['bash'] } }, 'cmd should be ["serve"], is ["bash"]'],
      [{ ...good, Config: { ...good.Config, Entrypoint: null } }, 'entrypoint should be'],
      [{ ...good, Config: { ...good.Config, ExposedPorts: {} } }, 'should expose 8080/tcp'],
      [{ ...good, Config: { ...good.Config, User: 'node' } }, 'should run as root'],
      [{ ...good, Architecture: 'arm64' }, 'architecture should be amd64'],
    ]);
    for (const [image, problem] of cases) expect(imageConfigProblems(image).join('; ')).toContain(problem);
  });

  it('finds devDependencies among the packages listed from the image', () => {
    expect(
      devDependenciesIn(['fastify', '@types/ws', 'vitest', ''], ['vitest', '@types/ws', 'eslint']),
    ).toEqual(['vitest', '@types/ws']);
  });

  it('passes the host’s limits to the container, nproc no higher than pid_max', () => {
    const limits = parseLimits(
      'Limit                     Soft Limit           Hard Limit           Units\n' +
        'Max processes             96364                96364                processes\n' +
        'Max open files            1024                 20000                files\n',
    );
    expect(limits).toEqual({ nofile: { soft: 1024, hard: 20000 }, nproc: { soft: 96364, hard: 96364 } });
    expect(ulimitArgs(limits, 32768)).toEqual([
      '--ulimit',
      'nofile=1024:20000',
      '--ulimit',
      'nproc=32768:32768',
    ]);
    expect(ulimitArgs({ nofile: { soft: Infinity, hard: Infinity } }, 32768)).toEqual([]);
  });
});

describe('docker/*.sh', () => {
  const SCRIPTS = ['docker/entrypoint.sh', 'docker/check-cuda-deps.sh'];

  it('are executable POSIX sh scripts', () => {
    for (const script of SCRIPTS) {
      const path = join(ROOT, script);
      expect(statSync(path).mode & 0o111, `${script} is not executable`).not.toBe(0);
      expect(readFileSync(path, 'utf8').split('\n')[0]).toBe('#!/bin/sh');
      expect(spawnSync('sh', ['-n', path]).status, script).toBe(0);
    }
  });

  // shellcheck is a Debian package (scripts/test-deps.sh installs it), not an npm one.
  const shellcheck = spawnSync('shellcheck', ['--version']).status === 0;
  it.skipIf(!shellcheck)(
    `pass shellcheck${shellcheck ? '' : ' (skipped: shellcheck is not installed; sh scripts/test-deps.sh installs it)'}`,
    () => {
      const result = spawnSync('shellcheck', ['-s', 'sh', ...SCRIPTS.map((s) => join(ROOT, s))], {
        encoding: 'utf8',
      });
      expect(result.stdout).toBe('');
      expect(result.status).toBe(0);
    },
  );
});

describe('docker/prune-modules.mjs', () => {
  const dirs: string[] = [];
  afterAll(() => {
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  });

  /** An app whose dependencies include fastify (needing avvio) and kokoro-js (needing transformers). */
  function fakeApp(omit: string[] = []): string {
    const app = mkdtempSync(join(tmpdir(), 'prune-'));
    dirs.push(app);
    const here = `${process.platform}/${process.arch}`;
    const json = (deps: Record<string, string> = {}, extra = {}) =>
      JSON.stringify({ dependencies: deps, ...extra });
    const files: Record<string, string> = {
      'package.json': json({ fastify: '1', 'kokoro-js': '1', kuromoji: '1', 'onnxruntime-node': '1' }),
      'node_modules/fastify/package.json': json({ avvio: '1' }),
      'node_modules/fastify/README.md': '#',
      'node_modules/fastify/LICENSE.md': 'MIT',
      'node_modules/fastify/index.js': '',
      'node_modules/fastify/index.d.ts': '',
      'node_modules/avvio/package.json': json(),
      'node_modules/kokoro-js/package.json': json({ '@huggingface/transformers': '1' }),
      'node_modules/kokoro-js/dist/kokoro.cjs': '',
      'node_modules/kokoro-js/dist/kokoro.web.js': '',
      'node_modules/kokoro-js/voices/af_heart.bin': '',
      'node_modules/@huggingface/transformers/package.json': json({ sharp: '1' }),
      'node_modules/sharp/package.json': json(),
      'node_modules/onnxruntime-node/package.json': json(),
      [`node_modules/onnxruntime-node/bin/napi-v6/${here}/onnxruntime_binding.node`]: '',
      [`node_modules/onnxruntime-node/bin/napi-v6/${here}/libonnxruntime_providers_tensorrt.so`]: '',
      'node_modules/onnxruntime-node/bin/napi-v6/win32/arm64/onnxruntime_binding.node': '',
      'node_modules/kuromoji/package.json': json(),
      'node_modules/kuromoji/src/kuromoji.js': '',
      'node_modules/kuromoji/test/big.json': '',
      'node_modules/kuromoji/dict/base.dat.gz': '',
      'node_modules/left-over/package.json': json(),
    };
    for (const [file, text] of Object.entries(files)) {
      if (omit.includes(file)) continue;
      mkdirSync(dirname(join(app, file)), { recursive: true });
      writeFileSync(join(app, file), text);
    }
    return app;
  }
  const prune = (app: string) =>
    spawnSync(process.execPath, [join(ROOT, 'docker/prune-modules.mjs'), join(app, 'node_modules')], {
      encoding: 'utf8',
    });
  const left = (app: string) =>
    execFileSync('find', ['node_modules', '-type', 'f'], { cwd: app, encoding: 'utf8' })
      .split('\n')
      .filter(Boolean)
      .sort();

  it('keeps what the app can load and removes the rest', () => {
    const app = fakeApp();
    const result = prune(app);
    expect(result.status, result.stderr).toBe(0);
    const here = `${process.platform}/${process.arch}`;
    expect(left(app)).toEqual([
      'node_modules/avvio/package.json',
      'node_modules/fastify/LICENSE.md',
      'node_modules/fastify/index.js',
      'node_modules/fastify/package.json',
      'node_modules/kokoro-js/dist/kokoro.cjs',
      'node_modules/kokoro-js/package.json',
      'node_modules/kokoro-js/voices/af_heart.bin',
      'node_modules/kuromoji/dict/base.dat.gz',
      'node_modules/kuromoji/package.json',
      'node_modules/kuromoji/src/kuromoji.js',
      `node_modules/onnxruntime-node/bin/napi-v6/${here}/onnxruntime_binding.node`,
      'node_modules/onnxruntime-node/package.json',
    ]);
    expect(result.stdout).toContain(
      'removed 3 unreachable packages (@huggingface/transformers, left-over, sharp)',
    );
  });

  it('removes nothing when a file the server needs is missing', () => {
    const app = fakeApp(['node_modules/kokoro-js/voices/af_heart.bin']);
    const result = prune(app);
    expect(result.status).toBe(1);
    expect(result.stderr).toContain('kokoro-js/voices is missing');
    expect(left(app)).toContain('node_modules/sharp/package.json');
  });
});
