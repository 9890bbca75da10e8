/**
 * docker/check-cuda-deps.sh, the GPU image's build-time proof that the CUDA provider can load. No
 * Docker and no CUDA here, so it runs on stub shared libraries built with the C compiler: a
 * "provider" that needs a fake CUDA runtime, cuBLAS and cuDNN with versioned file names.
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const SCRIPT = fileURLToPath(new URL('../../../docker/check-cuda-deps.sh', import.meta.url));
const CC = ['cc', 'gcc', 'clang'].find((c) => spawnSync(c, ['--version']).status === 0);
const LDD = spawnSync('sh', ['-c', 'command -v ldd']).status === 0;
const missingTool = !CC ? 'no C compiler (cc, gcc or clang)' : !LDD ? 'no ldd' : undefined;

const tmp = mkdtempSync(join(tmpdir(), 'cuda-deps-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

function cc(args: string[]): void {
  const result = spawnSync(CC!, args, { encoding: 'utf8' });
  if (result.status !== 0) throw new Error(`${CC} ${args.join(' ')}: ${result.stderr}`);
}

/** A shared library whose soname is `soname`, in file `dir/file`, with `soname` linked to it. */
function stubLibrary(dir: string, soname: string, file: string): void {
  const source = join(tmp, `${file}.c`);
  writeFileSync(source, `int stub_${file.replace(/\W/g, '_')}(void) { return 1; }\n`);
  cc(['-shared', '-fPIC', `-Wl,-soname,${soname}`, '-o', join(dir, file), source]);
  if (soname !== file) symlinkSync(file, join(dir, soname));
}

/** The provider folder (as onnxruntime-node lays it out) and a CUDA library folder beside it. */
function layout(options: { cudnnParts?: string[] } = {}): { ort: string; cuda: string } {
  const root = mkdtempSync(join(tmp, 'layout-'));
  const ort = join(root, 'ort');
  const cuda = join(root, 'cuda');
  mkdirSync(ort);
  mkdirSync(cuda);
  stubLibrary(cuda, 'libcudart.so.13', 'libcudart.so.13.0.96');
  stubLibrary(cuda, 'libcublas.so.13', 'libcublas.so.13.1.0.3');
  stubLibrary(cuda, 'libcublasLt.so.13', 'libcublasLt.so.13.1.0.3');
  stubLibrary(cuda, 'libcudnn.so.9', 'libcudnn.so.9.13.0');
  for (const part of options.cudnnParts ?? ['graph', 'ops', 'cnn', 'engines_precompiled']) {
    stubLibrary(cuda, `libcudnn_${part}.so.9`, `libcudnn_${part}.so.9.13.0`);
  }
  stubLibrary(ort, 'libonnxruntime_providers_shared.so', 'libonnxruntime_providers_shared.so');
  const source = join(tmp, 'provider.c');
  writeFileSync(source, 'int provider(void) { return 0; }\n');
  const needs = [
    'cudart.so.13',
    'cublas.so.13',
    'cublasLt.so.13',
    'cudnn.so.9',
    'onnxruntime_providers_shared.so',
  ];
  cc([
    '-shared',
    '-fPIC',
    '-o',
    join(ort, 'libonnxruntime_providers_cuda.so'),
    source,
    `-L${cuda}`,
    `-L${ort}`,
    '-Wl,--no-as-needed',
    ...needs.map((n) => `-l:lib${n}`),
  ]);
  return { ort, cuda };
}

function check(dir: string, ldPath: string, env: Record<string, string> = {}) {
  const result = spawnSync('sh', [SCRIPT, dir], {
    encoding: 'utf8',
    env: { PATH: process.env.PATH, LD_LIBRARY_PATH: ldPath, ...env },
  });
  return { status: result.status, output: `${result.stdout}${result.stderr}` };
}

describe.skipIf(missingTool !== undefined)(
  `docker/check-cuda-deps.sh${missingTool ? ` (skipped: ${missingTool})` : ''}`,
  () => {
    let good: { ort: string; cuda: string };
    beforeAll(() => {
      good = layout();
    });

    it('passes when every dependency resolves, and prints the CUDA runtime, cuBLAS and cuDNN versions', () => {
      const { status, output } = check(good.ort, good.cuda);
      expect(output).toContain('ok: every dependency of 2 libraries');
      expect(status).toBe(0);
      expect(output).toContain(`libcudart 13.0.96 (${good.cuda}/libcudart.so.13.0.96)`);
      expect(output).toContain('libcublas 13.1.0.3');
      expect(output).toContain('libcudnn 9.13.0');
    });

    it('fails, naming the library and what it needs, when a dependency is not found', () => {
      // The image's CUDA libraries are not where the provider looks: the CUDA 12 base vs CUDA 13 case.
      const { status, output } = check(good.ort, '');
      expect(status).toBe(1);
      expect(output).toContain('missing libraries');
      // (libcudart may resolve from a CUDA toolkit installed on the machine; cuDNN and cuBLAS do not.)
      expect(output).toContain('libonnxruntime_providers_cuda.so needs libcublasLt.so.13: not found');
      expect(output).toContain('libonnxruntime_providers_cuda.so needs libcudnn.so.9: not found');
    });

    it('fails when cuDNN lacks a sub-library that it would only load at run time', () => {
      const partial = layout({ cudnnParts: ['graph', 'ops'] });
      const { status, output } = check(partial.ort, partial.cuda);
      expect(status).toBe(1);
      expect(output).toMatch(/cuDNN is incomplete: .* has no libcudnn_cnn\.so\.9/);
    });

    it('fails when the CUDA provider is not installed at all', () => {
      const empty = mkdtempSync(join(tmp, 'empty-'));
      const { status, output } = check(empty, good.cuda);
      expect(status).toBe(1);
      expect(output).toContain('has no libonnxruntime_providers_cuda.so');
    });

    it('lets the host driver (libcuda.so.1) be missing at build time, but nothing else', () => {
      const withDriver = layout();
      const driverDir = mkdtempSync(join(tmp, 'driver-'));
      stubLibrary(driverDir, 'libcuda.so.1', 'libcuda.so.580.65.06');
      const source = join(tmp, 'driver-user.c');
      writeFileSync(source, 'int user(void) { return 0; }\n');
      cc([
        '-shared',
        '-fPIC',
        '-o',
        join(withDriver.ort, 'libonnxruntime_providers_tensorrt.so'),
        source,
        `-L${driverDir}`,
        '-Wl,--no-as-needed',
        '-l:libcuda.so.1',
      ]);
      const allowed = check(withDriver.ort, withDriver.cuda);
      expect(allowed.output).toContain('needs libcuda.so.1, which the host provides at run time');
      expect(allowed.status).toBe(0);
      const strict = check(withDriver.ort, withDriver.cuda, { CUDA_DEPS_ALLOW_MISSING: '' });
      expect(strict.status).toBe(1);
      expect(strict.output).toContain('libonnxruntime_providers_tensorrt.so needs libcuda.so.1: not found');
    });
  },
);
