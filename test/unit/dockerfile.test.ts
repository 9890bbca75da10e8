/**
 * The Dockerfile read as text (no Docker engine here): the SageMaker container contract, both
 * targets, the CUDA checks; and docker/prune-modules.sh run on a fake node_modules.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { GPU_AMIS, GPU_AMI_VERSION } from '../../scripts/deploy.ts';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const text = readFileSync(join(ROOT, 'Dockerfile'), 'utf8');

interface Instruction {
  readonly keyword: string;
  readonly args: string;
}
interface Stage {
  readonly platform: string | undefined;
  readonly name: string;
  readonly base: string;
  readonly instructions: Instruction[];
}

/** Splits the Dockerfile into stages of instructions (continuation lines joined, comments dropped). */
function parse(source: string): { directives: string[]; globalArgs: Map<string, string>; stages: Stage[] } {
  const lines = source.split('\n');
  const directives: string[] = [];
  while (lines.length > 0 && /^#\s*\w+=/.test(lines[0]!)) directives.push(lines.shift()!);
  const logical: string[] = [];
  let current = '';
  for (const raw of lines) {
    if (/^\s*#/.test(raw)) continue;
    if (raw.endsWith('\\')) {
      current += `${raw.slice(0, -1).trim()} `;
      continue;
    }
    current += raw.trim();
    if (current.trim() !== '') logical.push(current.trim());
    current = '';
  }
  const globalArgs = new Map<string, string>();
  const stages: Stage[] = [];
  for (const line of logical) {
    const [, keyword = '', args = ''] = /^(\S+)\s*(.*)$/.exec(line) ?? [];
    const upper = keyword.toUpperCase();
    if (upper === 'FROM') {
      const m = /^(?:--platform=(\S+)\s+)?(\S+)(?:\s+AS\s+(\S+))?$/i.exec(args);
      stages.push({ platform: m?.[1], base: m?.[2] ?? '', name: m?.[3] ?? '', instructions: [] });
    } else if (stages.length === 0) {
      if (upper === 'ARG') {
        const [name, value = ''] = args.split('=');
        globalArgs.set(name!, value);
      }
    } else {
      stages.at(-1)!.instructions.push({ keyword: upper, args });
    }
  }
  return { directives, globalArgs, stages };
}

const { directives, globalArgs, stages } = parse(text);
const stage = (name: string): Stage => {
  const found = stages.find((s) => s.name === name);
  if (!found) throw new Error(`no stage ${name}`);
  return found;
};
const all = (s: Stage, keyword: string) =>
  s.instructions.filter((i) => i.keyword === keyword).map((i) => i.args);
const resolveBase = (base: string) =>
  base.replace(/^\$\{(\w+)\}$/, (_, name: string) => globalArgs.get(name) ?? '');
const TARGETS = ['gpu', 'cpu'] as const;

describe('Dockerfile', () => {
  it('starts with the BuildKit syntax line and is multi-stage with gpu and cpu targets', () => {
    expect(directives[0]).toMatch(/^# syntax=docker\/dockerfile:1/);
    expect(stages.map((s) => s.name)).toEqual(expect.arrayContaining(['gpu', 'cpu']));
    // The cpu target comes last, so a plain `docker build .` gives the image that runs anywhere.
    expect(stages.at(-1)!.name).toBe('cpu');
  });

  it.each(TARGETS)(
    '%s: carries the SageMaker labels, exposes 8080, starts `serve` through the entrypoint',
    (t) => {
      const s = stage(t);
      const labels = all(s, 'LABEL').join(' ');
      expect(labels).toContain('com.amazonaws.sagemaker.capabilities.bidirectional-streaming=true');
      expect(labels).toContain('com.amazonaws.sagemaker.capabilities.accept-bind-to-port=true');
      expect(all(s, 'EXPOSE')).toEqual(['8080']);
      // Exec form (a JSON array): no shell in between, so signals reach the entrypoint, which execs Node.
      expect(all(s, 'ENTRYPOINT').map((a) => JSON.parse(a))).toEqual([['/opt/program/docker/entrypoint.sh']]);
      expect(all(s, 'CMD').map((a) => JSON.parse(a))).toEqual([['serve']]);
      expect(all(s, 'COPY').some((c) => /^--chmod=0755 docker\/entrypoint\.sh .*\.\/docker\/$/.test(c))).toBe(
        true,
      );
      expect(all(s, 'WORKDIR')).toEqual(['/opt/program']);
      // SageMaker runs containers as root.
      expect(all(s, 'USER')).toEqual([]);
    },
  );

  it.each(TARGETS)('%s: reads the model from /opt/ml/model, with baked weights beside it', (t) => {
    const env = all(stage(t), 'ENV').join(' ');
    expect(env).toMatch(/KOKORO_MODEL_DIR=\/opt\/ml\/model\b/);
    expect(env).toMatch(/KOKORO_BAKED_MODEL_DIR=\/opt\/kokoro-model\b/);
    expect(env).toMatch(/KOKORO_DTYPE=\$\{KOKORO_DTYPE\}/);
    expect(all(stage(t), 'COPY')).toContain('--from=model /opt/kokoro-model /opt/kokoro-model');
  });

  it.each(TARGETS)('%s: carries the browser page but turns it off (WEB_PAGE=false); EMF metrics on', (t) => {
    expect(all(stage(t), 'ENV').join(' ')).toMatch(/WEB_PAGE=false\b/);
    expect(all(stage(t), 'ENV').join(' ')).toMatch(/METRICS_EMF=true\b/);
    expect(all(stage(t), 'COPY')).toContain('web ./web');
  });

  it('sets KOKORO_DEVICE=cuda on the gpu target and cpu on the cpu target', () => {
    expect(all(stage('gpu'), 'ENV').join(' ')).toMatch(/KOKORO_DEVICE=cuda\b/);
    expect(all(stage('cpu'), 'ENV').join(' ')).toMatch(/KOKORO_DEVICE=cpu\b/);
  });

  it.each(TARGETS)(
    '%s: takes only docker/ scripts and the page’s static web/ from the build context, the app from build stages',
    (t) => {
      const s = stage(t);
      const copies = all(s, 'COPY');
      const earlier = stages.slice(0, stages.indexOf(s)).map((x) => x.name);
      const fromStages = copies.flatMap((c) => /--from=(\S+)/.exec(c)?.[1] ?? []);
      expect(fromStages.filter((name) => !earlier.includes(name))).toEqual([]);
      // No sources, tests or dev files from the context: the app comes compiled and pruned.
      const fromContext = copies
        .filter((c) => !c.includes('--from='))
        .flatMap((c) =>
          c
            .replace(/--\S+\s+/g, '')
            .split(/\s+/)
            .slice(0, -1),
        );
      expect(fromContext.filter((source) => !source.startsWith('docker/') && source !== 'web')).toEqual([]);
      // What the entrypoint runs is there: the manifest (for "type": "module"), modules, dist/.
      const destinations = copies.map((c) => c.split(/\s+/).at(-1));
      expect(destinations).toEqual(expect.arrayContaining(['./', './node_modules', './dist', './docker/']));
      expect(all(s, 'RUN').join(' ')).toMatch(/apt-get install -y --no-install-recommends ffmpeg/);
    },
  );

  it('gpu: a CUDA runtime with cuDNN whose major the deploy tooling’s host AMI supports; Node from the build image', () => {
    const gpu = stage('gpu');
    const base = resolveBase(gpu.base);
    const m = /^nvidia\/cuda:(\d+)\.(\d+)\.\d+-cudnn-runtime-ubuntu\d\d\.04$/.exec(base);
    expect(m, base).not.toBeNull();
    // The host's driver must run the image's CUDA: same major, and at least its minor.
    const host = GPU_AMIS[GPU_AMI_VERSION];
    const [major, minor] = host.cuda.split('.').map(Number);
    expect(Number(m![1])).toBe(major);
    expect(Number(m![2])).toBeGreaterThanOrEqual(minor!);
    expect(all(gpu, 'COPY')).toContain('--from=node /usr/local/bin/node /usr/local/bin/node');
    expect(resolveBase(stage('node').base)).toMatch(/^node:22[.-]/);
    expect(stage('cpu').base).toBe('node');
  });

  it('builds every image for linux/amd64, the architecture of SageMaker instances', () => {
    const images = stages.filter((s) => !stages.some((t) => t.name === s.base));
    expect(images.map((s) => s.name).sort()).toEqual(['gpu', 'node']);
    for (const s of images) expect(s.platform, s.name).toBe('linux/amd64');
  });

  it('gpu: installs no NVIDIA driver (the host provides it)', () => {
    const runs = stages.flatMap((s) => all(s, 'RUN')).join('\n');
    expect(runs).not.toMatch(/nvidia-driver|cuda-drivers|libnvidia-|nvidia-utils|nvidia-container/);
  });

  it('gpu: installs the CUDA provider explicitly and proves its dependencies resolve in the final image', () => {
    const install = all(stage('deps-gpu'), 'RUN').join(' ');
    expect(install).toMatch(
      /ONNXRUNTIME_NODE_INSTALL=1 node node_modules\/onnxruntime-node\/script\/install\.js/,
    );
    expect(all(stage('deps-cpu'), 'RUN').join(' ')).not.toMatch(/ONNXRUNTIME_NODE_INSTALL/);
    // The ldd guard runs where the CUDA libraries are: in the gpu target itself.
    expect(all(stage('gpu'), 'RUN').join(' ')).toContain(
      'sh docker/check-cuda-deps.sh node_modules/onnxruntime-node/bin/napi-v6/linux/x64',
    );
    expect(stage('gpu').instructions.some((i) => i.args.includes('prod-gpu'))).toBe(true);
    expect(stage('cpu').instructions.some((i) => i.args.includes('prod-gpu'))).toBe(false);
  });

  it.each(TARGETS)('prod-%s: prunes dev dependencies, then unused binaries and packages', (t) => {
    expect(all(stage(`prod-${t}`), 'RUN').join(' ')).toMatch(
      /npm prune --omit=dev .*&& sh docker\/prune-modules\.sh node_modules/,
    );
  });

  it('compiles TypeScript with the build config and checks the JSON the code imports is there', () => {
    const run = all(stage('compile'), 'RUN').join(' ');
    expect(run).toContain('npm run build');
    expect(run).toContain('test -f dist/model/kokoro/config.json');
    const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as {
      scripts: Record<string, string>;
    };
    expect(pkg.scripts.build).toBe('tsc -b tsconfig.build.json');
  });

  it('bakes the weights only on request, outside /opt/ml/model', () => {
    const model = stage('model');
    expect(all(model, 'ARG')).toEqual(expect.arrayContaining(['BAKE_MODEL=0', 'KOKORO_DTYPE=fp32']));
    const run = all(model, 'RUN').join(' ');
    expect(run).toMatch(/if \[ "\$BAKE_MODEL" = 1 \]; then node dist\/scripts\/fetch-model\.js/);
    expect(run).toContain('/opt/kokoro-model');
    expect(run).not.toContain('/opt/ml/model');
  });

  it('copies from the build context only files that exist and that .dockerignore lets through', () => {
    const allowed = readFileSync(join(ROOT, '.dockerignore'), 'utf8')
      .split('\n')
      .filter((l) => l.startsWith('!'))
      .map((l) => l.slice(1).replace(/\/$/, ''));
    const sources = stages
      .flatMap((s) => all(s, 'COPY'))
      .filter((c) => !c.includes('--from='))
      .flatMap((c) =>
        c
          .replace(/--\S+\s+/g, '')
          .split(/\s+/)
          .slice(0, -1),
      );
    expect(sources.length).toBeGreaterThan(5);
    for (const source of sources) {
      expect(existsSync(join(ROOT, source)), source).toBe(true);
      expect(
        allowed.some((a) => source === a || source.startsWith(`${a}/`)),
        `${source} is excluded by .dockerignore`,
      ).toBe(true);
    }
    // Never in the context: installed modules, build output, downloaded weights, tests.
    for (const excluded of ['node_modules', 'dist', 'models', 'out', '.git', 'test']) {
      expect(allowed).not.toContain(excluded);
    }
  });
});

describe('docker/*.sh', () => {
  const SCRIPTS = ['docker/entrypoint.sh', 'docker/prune-modules.sh', 'docker/check-cuda-deps.sh'];

  it('are executable POSIX sh scripts', () => {
    for (const script of SCRIPTS) {
      const path = join(ROOT, script);
      expect(statSync(path).mode & 0o111, `${script} is not executable`).not.toBe(0);
      expect(readFileSync(path, 'utf8').split('\n')[0]).toBe('#!/bin/sh');
      // `sh -n`: syntax only, by the shell that runs it here (dash on Debian, as in both images).
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

describe('docker/prune-modules.sh', () => {
  const dirs: string[] = [];
  afterAll(() => {
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  });

  /** A node_modules with onnxruntime-node for every platform and kokoro-js with its dependencies. */
  function fakeModules(extra: string[] = []): string {
    const dir = mkdtempSync(join(tmpdir(), 'prune-'));
    dirs.push(dir);
    const files = [
      'onnxruntime-node/package.json',
      'onnxruntime-node/dist/index.js',
      ...['linux/x64', 'linux/arm64', 'darwin/arm64', 'win32/x64', 'win32/arm64'].map(
        (p) => `onnxruntime-node/bin/napi-v6/${p}/onnxruntime_binding.node`,
      ),
      'onnxruntime-node/bin/napi-v6/linux/x64/libonnxruntime.so.1',
      'onnxruntime-node/bin/napi-v6/linux/arm64/libonnxruntime.so.1',
      'kokoro-js/package.json',
      'kokoro-js/dist/kokoro.js',
      'kokoro-js/voices/af_heart.bin',
      '@huggingface/transformers/package.json',
      '@huggingface/jinja/package.json',
      'onnxruntime-web/package.json',
      'sharp/package.json',
      '@img/sharp-linux-x64/package.json',
      'fastify/package.json',
      ...extra,
    ];
    for (const f of files) {
      mkdirSync(join(dir, f, '..'), { recursive: true });
      writeFileSync(join(dir, f), 'x');
    }
    return dir;
  }
  const run = (dir: string) =>
    spawnSync('sh', [join(ROOT, 'docker/prune-modules.sh'), dir], { encoding: 'utf8' });
  const here = `${process.platform}/${process.arch}`;

  it.runIf(here === 'linux/x64')(
    'keeps only this platform’s onnxruntime binaries and drops kokoro-js’s unused dependencies',
    () => {
      const dir = fakeModules([
        'onnxruntime-node/bin/napi-v6/linux/x64/libonnxruntime_providers_cuda.so',
        'onnxruntime-node/bin/napi-v6/linux/x64/libonnxruntime_providers_shared.so',
        'onnxruntime-node/bin/napi-v6/linux/x64/libonnxruntime_providers_tensorrt.so',
      ]);
      const result = run(dir);
      expect(result.status, result.stderr).toBe(0);
      const left = execFileSync('find', [dir, '-type', 'f'], { encoding: 'utf8' })
        .split('\n')
        .filter(Boolean)
        .map((f) => f.slice(dir.length + 1))
        .sort();
      expect(left).toEqual([
        'fastify/package.json',
        'kokoro-js/dist/kokoro.js',
        'kokoro-js/package.json',
        'kokoro-js/voices/af_heart.bin',
        'onnxruntime-node/bin/napi-v6/linux/x64/libonnxruntime.so.1',
        'onnxruntime-node/bin/napi-v6/linux/x64/libonnxruntime_providers_cuda.so',
        'onnxruntime-node/bin/napi-v6/linux/x64/libonnxruntime_providers_shared.so',
        'onnxruntime-node/bin/napi-v6/linux/x64/onnxruntime_binding.node',
        'onnxruntime-node/dist/index.js',
        'onnxruntime-node/package.json',
      ]);
      expect(existsSync(join(dir, '@huggingface'))).toBe(false);
      expect(result.stdout).toContain('libonnxruntime_providers_cuda.so');
    },
  );

  it('fails when kokoro-js’s voices would be missing, or the platform has no binaries', () => {
    const noVoices = fakeModules();
    rmSync(join(noVoices, 'kokoro-js/voices'), { recursive: true });
    expect(run(noVoices).stderr).toMatch(/kokoro-js\/voices is missing/);

    const noPlatform = fakeModules();
    rmSync(join(noPlatform, `onnxruntime-node/bin/napi-v6/${here}`), { recursive: true, force: true });
    const result = run(noPlatform);
    expect(result.status).not.toBe(0);
    expect(result.stderr).toContain(`no binaries for ${here}`);
    // Nothing was removed before the check failed.
    expect(existsSync(join(noPlatform, 'onnxruntime-node/bin/napi-v6/win32/x64'))).toBe(true);
  });
});
