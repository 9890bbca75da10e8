/**
 * scripts/gpu-check.ts: its parsers on real-looking text, and the compiled script as a user runs it.
 * Without a GPU here, the CUDA run must fail with its reason; the CPU run exercises every
 * measurement through the same engine path.
 */
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { CUDA_WARMUP_LENGTHS } from '../../dist/model/inference/warmup.js';
import {
  parseDriverVersion,
  parseLdd,
  versionFromFile,
  type GpuReport,
} from '../../dist/scripts/gpu-check.js';
import { STANDIN_MODEL_DIR } from './harness.ts';

const SCRIPT = fileURLToPath(new URL('../../dist/scripts/gpu-check.js', import.meta.url));

/** The compiled script as a user runs it; its exit status and output. */
function run(
  args: string[],
  env: Record<string, string> = {},
): Promise<{ status: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = execFile(
      process.execPath,
      [SCRIPT, ...args],
      { env: { ...process.env, KOKORO_MODEL_DIR: STANDIN_MODEL_DIR, LOG_LEVEL: 'error', ...env } },
      (_err, stdout, stderr) => resolve({ status: child.exitCode, stdout, stderr }),
    );
  });
}

describe('gpu-check parsers', () => {
  it('reads ldd output: resolved paths and what is not found', () => {
    const ldd = [
      '\tlinux-vdso.so.1 (0x00007ffd5a1f2000)',
      '\tlibcudart.so.13 => /usr/local/cuda/lib64/libcudart.so.13 (0x00007f3e1c000000)',
      '\tlibcudnn.so.9 => not found',
      '\tlibc.so.6 => /lib/x86_64-linux-gnu/libc.so.6 (0x00007f3e1be00000)',
      '\t/lib64/ld-linux-x86-64.so.2 (0x00007f3e1d5a0000)',
    ].join('\n');
    expect(parseLdd(ldd)).toEqual([
      { soname: 'libcudart.so.13', path: '/usr/local/cuda/lib64/libcudart.so.13' },
      { soname: 'libcudnn.so.9', path: undefined },
      { soname: 'libc.so.6', path: '/lib/x86_64-linux-gnu/libc.so.6' },
    ]);
  });

  it('takes versions from library file names and from the driver’s version file', () => {
    expect(versionFromFile('/usr/local/cuda/lib64/libcudart.so.13.0.96')).toBe('13.0.96');
    expect(versionFromFile('/usr/lib/x86_64-linux-gnu/libcudnn.so.9.13.0')).toBe('9.13.0');
    expect(versionFromFile('/usr/lib/libfoo.so')).toBeUndefined();
    const proc =
      'NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  580.65.06  Release Build  (dvs-builder@U16-I3-B05-1-2)  Sun Jul 27 06:54:38 UTC 2025\nGCC version:  gcc version 12.2.0';
    expect(parseDriverVersion(proc)).toBe('580.65.06');
    expect(parseDriverVersion('')).toBeUndefined();
  });
});

// Each run is a process of its own that measures nothing against the clock: they run side by side.
describe.concurrent('npm run gpu-check', () => {
  it('fails with exit 1 and the reason when CUDA cannot load (no GPU or CUDA provider here)', async () => {
    const { status, stdout } = await run([]);
    expect(stdout).toContain('checking the cuda provider');
    expect(stdout).toMatch(/FAIL: KOKORO_DEVICE=cuda but the CUDA execution provider library/);
    expect(status).toBe(1);
  });

  it('measures the ladder and time to first audio on the provider it checks (CPU here)', async () => {
    const { status, stdout, stderr } = await run(['--device', 'cpu', '--repeats', '2', '--json']);
    expect(status, stderr).toBe(0);
    const report = JSON.parse(stdout) as GpuReport;
    expect(report).toMatchObject({ ok: true, device: 'cpu', provider: 'cpu', onnxruntimeNode: '1.30.0' });
    expect(report.ladder!.map((s) => s.tokens)).toEqual(CUDA_WARMUP_LENGTHS);
    for (const step of report.ladder!) expect(step.firstMs).toBeGreaterThan(0);
    expect(report.ttfa!.paragraphMs).toBeGreaterThan(0);
    expect(report.ttfa!.paragraphTotalMs).toBeGreaterThan(report.ttfa!.paragraphMs);
  });

  it('keeps the ladder asked for in KOKORO_WARMUP_LENGTHS, and refuses bad flags with exit 2', async () => {
    const custom = await run(['--device', 'cpu', '--repeats', '1', '--json'], {
      KOKORO_WARMUP_LENGTHS: '32,256',
    });
    expect((JSON.parse(custom.stdout) as GpuReport).ladder!.map((s) => s.tokens)).toEqual([32, 256]);
    const bad = await run(['--device', 'tpu']);
    expect(bad.status).toBe(2);
    expect(bad.stderr).toContain('--device should be cuda or cpu, got "tpu"');
  });
});
