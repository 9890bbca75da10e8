/**
 * Checks that the CUDA execution provider really loads on this machine, and measures it.
 *
 *   npm run gpu-check [-- --json] [--device cuda|cpu] [--repeats N]     any machine with the model
 *   docker run --gpus all -v MODEL:/opt/ml/model:ro IMAGE gpu-check     inside the GPU image
 *
 * It reports the NVIDIA driver, the CUDA runtime, cuBLAS and cuDNN libraries that the provider
 * resolves to (ldd), then loads the model exactly as the server does (KOKORO_* settings apply) and
 * measures one worker's inference over a ladder of input lengths (the first call at each length,
 * which pays cuDNN's algorithm search, and a repeated one), and the time to first audio of a
 * four-sentence text against its first sentence alone. When CUDA cannot load it says why and exits 1.
 * `--device cpu` runs the same measurements on the CPU provider, for comparison.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, realpathSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { createEngine, type Engine } from '../model/engine.ts';
import { ortBinaryDir } from '../model/inference/ort-session.ts';
import { CUDA_WARMUP_LENGTHS, type WarmupStep } from '../model/inference/warmup.ts';
import { ConfigError, engineOptions, parseConfig } from '../server/config/config.ts';
import { intFlag, parseFlags, runMain, UsageError } from './lib/cli.ts';
import { median } from './lib/stats.ts';

const HELP = `Usage: npm run gpu-check -- [--device cuda|cpu] [--repeats N] [--json]

Checks that onnxruntime-node's CUDA provider loads here and measures it. The model comes from
KOKORO_MODEL_DIR (default /opt/ml/model) with KOKORO_DTYPE, as for the server.

  --device cuda|cpu   provider to check (default cuda; cpu measures the CPU provider instead)
  --repeats N         runs of each timed request (default 5)
  --json              print the report as JSON
  -h, --help          show this help

Exit codes: 0 loaded and measured; 1 the provider cannot load (the reason is printed); 2 usage.`;

/** The four sentences whose time to first audio is measured, and the first alone. */
export const PARAGRAPH =
  'The quick brown fox jumps over the lazy dog. ' +
  'Streaming speech starts with the first sentence, not the last. ' +
  'Every later sentence is synthesized while the first one plays. ' +
  'That is how a voice agent avoids silence.';
const FIRST_SENTENCE = PARAGRAPH.slice(0, PARAGRAPH.indexOf('.') + 1);

/** A shared library dependency as ldd resolved it. */
export interface LinkedLibrary {
  readonly soname: string;
  /** Absolute path, or undefined when ldd reports "not found". */
  readonly path: string | undefined;
}

/** Parses `ldd` output into its dependencies (the vDSO and the loader itself are left out). */
export function parseLdd(output: string): LinkedLibrary[] {
  const libraries: LinkedLibrary[] = [];
  for (const line of output.split('\n')) {
    const match = /^\s*(\S+)\s+=>\s+(not found|(\/\S+))/.exec(line);
    if (match) libraries.push({ soname: match[1]!, path: match[3] });
  }
  return libraries;
}

/** `libcudart.so.13.0.96` → `13.0.96`: the version in a library's file name. */
export function versionFromFile(file: string): string | undefined {
  return /\.so\.(\d+(?:\.\d+)*)$/.exec(file)?.[1];
}

/** The driver version from /proc/driver/nvidia/version ("... Kernel Module  580.65.06  Release ..."). */
export function parseDriverVersion(text: string): string | undefined {
  const line = text.split('\n').find((l) => l.startsWith('NVRM version'));
  return line?.split(/\s+/).find((word) => /^\d+\.\d+(\.\d+)*$/.test(word));
}

export interface GpuReport {
  readonly ok: boolean;
  readonly device: 'cuda' | 'cpu';
  readonly failure?: string;
  readonly onnxruntimeNode: string;
  readonly driver?: string;
  /** cudart, cublas, cublasLt, cudnn → version (from the file ldd resolved). */
  readonly libraries: Record<string, string>;
  readonly missingLibraries: readonly string[];
  readonly provider?: string;
  readonly model?: string;
  readonly ladder?: readonly WarmupStep[];
  readonly ttfa?: {
    /** The very first request after startup (first sentence of the paragraph). */
    readonly firstRequestMs: number;
    readonly paragraphMs: number;
    readonly sentenceMs: number;
    readonly paragraphTotalMs: number;
  };
}

/** The CUDA libraries the provider links, with the versions of the files they resolve to. */
function inspectProvider(): { libraries: Record<string, string>; missing: string[] } {
  const file = join(ortBinaryDir(), 'libonnxruntime_providers_cuda.so');
  if (!existsSync(file)) return { libraries: {}, missing: [] };
  const ldd = spawnSync('ldd', [file], {
    encoding: 'utf8',
    env: {
      ...process.env,
      LD_LIBRARY_PATH: [ortBinaryDir(), process.env.LD_LIBRARY_PATH].filter(Boolean).join(':'),
    },
  });
  const linked = parseLdd(ldd.stdout ?? '');
  const libraries: Record<string, string> = {};
  for (const lib of linked) {
    const name = /^(libcudart|libcublasLt|libcublas|libcudnn)\.so/.exec(lib.soname)?.[1];
    if (!name || !lib.path) continue;
    const version = versionFromFile(realpathSync(lib.path));
    if (version) libraries[name.slice(3)] = version;
  }
  // The driver's libcuda comes from the host at run time, and is reported apart.
  const missing = linked.filter((l) => !l.path && l.soname !== 'libcuda.so.1').map((l) => l.soname);
  return { libraries, missing };
}

function driverVersion(): string | undefined {
  try {
    return parseDriverVersion(readFileSync('/proc/driver/nvidia/version', 'utf8'));
  } catch {
    return undefined;
  }
}

/** Milliseconds to the first chunk of `text`, and to the last. */
async function timeRequest(engine: Engine, text: string): Promise<{ firstMs: number; totalMs: number }> {
  const voice = engine.voices.resolve('af_heart');
  const start = performance.now();
  let firstMs: number | undefined;
  for await (const chunk of engine.stream({ text, voice, speed: 1 })) {
    void chunk;
    firstMs ??= performance.now() - start;
  }
  return { firstMs: firstMs ?? Number.NaN, totalMs: performance.now() - start };
}

/** Loads the model on `device` as the server would, and measures it. Never throws for a CUDA failure. */
export async function gpuCheck(
  env: NodeJS.ProcessEnv,
  device: 'cuda' | 'cpu',
  repeats: number,
): Promise<GpuReport> {
  const onnxruntimeNode = (
    JSON.parse(
      readFileSync(createRequire(import.meta.url).resolve('onnxruntime-node/package.json'), 'utf8'),
    ) as {
      version: string;
    }
  ).version;
  const driver = driverVersion();
  const { libraries, missing } = inspectProvider();
  const base = {
    device,
    onnxruntimeNode,
    ...(driver ? { driver } : {}),
    libraries,
    missingLibraries: missing,
  };
  if (device === 'cuda' && missing.length > 0) {
    return {
      ...base,
      ok: false,
      failure: `the CUDA provider cannot load: ${missing.join(', ')} not found (the CUDA or cuDNN installed here does not match onnxruntime-node ${onnxruntimeNode}'s provider)`,
    };
  }

  // Explicit ladder lengths from KOKORO_WARMUP_LENGTHS are kept; otherwise the CUDA default ladder.
  const config = parseConfig({ ...env, KOKORO_DEVICE: device });
  const ladder = config.warmupLengths === 'auto' ? CUDA_WARMUP_LENGTHS : config.warmupLengths;
  let engine: Engine;
  try {
    engine = await createEngine({ ...engineOptions(config), workers: 1, warmupLengths: ladder });
  } catch (err) {
    return { ...base, ok: false, failure: (err as Error).message };
  }
  try {
    const first = await timeRequest(engine, FIRST_SENTENCE);
    const paragraph: number[] = [];
    const sentence: number[] = [];
    const totals: number[] = [];
    for (let i = 0; i < repeats; i++) {
      const p = await timeRequest(engine, PARAGRAPH);
      paragraph.push(p.firstMs);
      totals.push(p.totalMs);
      sentence.push((await timeRequest(engine, FIRST_SENTENCE)).firstMs);
    }
    return {
      ...base,
      ok: true,
      provider: engine.info.provider,
      model: engine.info.modelFile,
      ladder: engine.info.warmupLadder,
      ttfa: {
        firstRequestMs: first.firstMs,
        paragraphMs: median(paragraph),
        sentenceMs: median(sentence),
        paragraphTotalMs: median(totals),
      },
    };
  } finally {
    await engine.dispose();
  }
}

const ms = (n: number) => `${n.toFixed(1)} ms`;

/** The report as text for a person. */
export function formatReport(report: GpuReport): string {
  const lines = [
    `onnxruntime-node ${report.onnxruntimeNode}, checking the ${report.device} provider`,
    `NVIDIA driver: ${report.driver ?? 'none found (/proc/driver/nvidia/version)'}`,
    `CUDA libraries the provider resolves: ${
      Object.entries(report.libraries)
        .map(([name, version]) => `${name} ${version}`)
        .join(', ') || 'none (no CUDA provider installed, or ldd found none)'
    }`,
  ];
  if (!report.ok) return [...lines, `FAIL: ${report.failure}`].join('\n');
  lines.push(`provider in use: ${report.provider}; model ${report.model}`);
  lines.push(
    '',
    '| input (phoneme ids) | first call | repeated | first / repeated |',
    '| --- | --- | --- | --- |',
  );
  for (const step of report.ladder ?? []) {
    lines.push(
      `| ${step.tokens} | ${ms(step.firstMs)} | ${ms(step.repeatMs)} | ${(step.firstMs / step.repeatMs).toFixed(2)} |`,
    );
  }
  const t = report.ttfa!;
  lines.push(
    '',
    `time to first audio, very first request: ${ms(t.firstRequestMs)}`,
    `time to first audio, first sentence alone (median): ${ms(t.sentenceMs)}`,
    `time to first audio, four-sentence text (median): ${ms(t.paragraphMs)} (ratio ${(t.paragraphMs / t.sentenceMs).toFixed(2)}); all four: ${ms(t.paragraphTotalMs)}`,
    `OK: the ${report.provider} provider loads and runs`,
  );
  return lines.join('\n');
}

export async function main(argv: readonly string[], env: NodeJS.ProcessEnv): Promise<number> {
  let values;
  let repeats: number;
  try {
    values = parseFlags(argv, {
      device: { type: 'string' },
      repeats: { type: 'string' },
      json: { type: 'boolean' },
      help: { type: 'boolean', short: 'h' },
    });
    if (values.device !== undefined && values.device !== 'cuda' && values.device !== 'cpu') {
      throw new UsageError(`--device should be cuda or cpu, got "${values.device}"`);
    }
    repeats = intFlag('repeats', values.repeats, 5, 1);
  } catch (err) {
    process.stderr.write(`gpu-check: ${(err as Error).message}\nRun with --help for usage.\n`);
    return 2;
  }
  if (values.help) {
    process.stdout.write(`${HELP}\n`);
    return 0;
  }
  let report: GpuReport;
  try {
    report = await gpuCheck(env, (values.device ?? 'cuda') as 'cuda' | 'cpu', repeats);
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
    process.stderr.write(`gpu-check: ${err.message}\n`);
    return 2;
  }
  process.stdout.write(`${values.json ? JSON.stringify(report, null, 2) : formatReport(report)}\n`);
  return report.ok ? 0 : 1;
}

runMain(import.meta.url, 'gpu-check', () => main(process.argv.slice(2), process.env));
