/**
 * The ONNX Runtime session: the only file that imports onnxruntime-node. It chooses the execution
 * provider, reads the model's input/output contract from the session (exports differ in names and
 * in the type of `speed`), and runs one inference.
 */
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
// First: the telemetry switch must be in the environment before the runtime loads.
import './ort-telemetry.ts';
import * as ort from 'onnxruntime-node';
import { STYLE_DIM } from '../kokoro/constants.ts';

export type Device = 'auto' | 'cuda' | 'cpu';
export type Provider = 'cuda' | 'cpu';

/** How the input and output tensors of this export are named and typed. */
export interface ModelContract {
  readonly ids: string;
  readonly style: string;
  readonly speed: string;
  readonly speedType: 'float32' | 'int32';
  readonly output: string;
  /**
   * The timestamped exports' per-token durations (frames of 600 samples, padding included):
   * `durations` (float32, onnx-community) or `duration` (int64, hexgrad's export script).
   */
  readonly durations?: string;
}

/** One inference's results. */
export interface Inference {
  readonly waveform: Float32Array;
  /** One duration per input id (padding included), in frames, when the export has them. */
  readonly durations?: Float64Array;
  /** What reached ONNX Runtime, when the model hands its inputs back (the echo stand-in only). */
  readonly echo?: ModelInput;
}

/** The three inputs of one run as the model received them. */
export interface ModelInput {
  readonly ids: readonly number[];
  readonly style: readonly number[];
  readonly speed: number;
}

/**
 * Outputs that hand the inputs back unchanged. Only the test stand-in has them
 * (`make-standin-model --echo`); a real export never does, and then nothing is read.
 */
const ECHO_OUTPUTS = { ids: 'echo_input_ids', style: 'echo_style', speed: 'echo_speed' } as const;

export class ModelContractError extends Error {
  override readonly name = 'ModelContractError';
}

/** Thrown when `KOKORO_DEVICE=cuda` and the CUDA provider cannot be used. */
export class ProviderError extends Error {
  override readonly name = 'ProviderError';
}

export interface ProviderPlan {
  /** Providers to try in order; each attempt is one session creation. */
  readonly attempts: readonly Provider[];
  /** When set, CUDA was skipped before trying, for this reason. */
  readonly skipped?: string;
}

/**
 * Decides which providers to try. Pure, so the selection logic is tested without a GPU.
 *
 * - `cpu`: CPU only.
 * - `cuda`: CUDA only; if its provider library is not installed, fail now with the reason.
 * - `auto`: CUDA first when its library is installed, then CPU. (Asking ORT for
 *   `['cuda', 'cpu']` on a machine without CUDA rejects session creation instead of falling back,
 *   so the fallback is a second session creation, done by the caller.)
 */
export function planProviders(device: Device, cudaLibraryPresent: boolean): ProviderPlan {
  const missing =
    'the CUDA execution provider library (libonnxruntime_providers_cuda.so) is not installed with onnxruntime-node; install it with `ONNXRUNTIME_NODE_INSTALL=1 node node_modules/onnxruntime-node/script/install.js` on a CUDA 13 machine (the GPU image does this)';
  switch (device) {
    case 'cpu':
      return { attempts: ['cpu'] };
    case 'cuda':
      if (!cudaLibraryPresent) throw new ProviderError(`KOKORO_DEVICE=cuda but ${missing}`);
      return { attempts: ['cuda'] };
    case 'auto':
      return cudaLibraryPresent ? { attempts: ['cuda', 'cpu'] } : { attempts: ['cpu'], skipped: missing };
  }
}

/** Where onnxruntime-node keeps its native libraries for this platform. */
export function ortBinaryDir(): string {
  const pkg = createRequire(import.meta.url).resolve('onnxruntime-node/package.json');
  return join(dirname(pkg), 'bin', 'napi-v6', process.platform, process.arch);
}

export function cudaLibraryPresent(): boolean {
  return process.platform === 'linux' && existsSync(join(ortBinaryDir(), 'libonnxruntime_providers_cuda.so'));
}

/**
 * Reads the contract from the session's declared inputs and outputs, and refuses anything that is
 * not a Kokoro export.
 */
export function readContract(
  inputs: readonly ort.InferenceSession.ValueMetadata[],
  outputs: readonly ort.InferenceSession.ValueMetadata[],
): ModelContract {
  const find = (names: readonly string[]) => inputs.find((m) => names.includes(m.name));
  const describe = () =>
    `inputs [${inputs.map((m) => m.name).join(', ')}], outputs [${outputs.map((m) => m.name).join(', ')}]`;
  const ids = find(['input_ids', 'tokens']);
  const style = find(['style', 'ref_s']);
  const speed = find(['speed']);
  const durations = outputs.find((m) => ['durations', 'duration'].includes(m.name));
  const audioOutputs = outputs.filter((m) => m !== durations);
  const output =
    audioOutputs.find((m) => ['waveform', 'audio'].includes(m.name)) ??
    (audioOutputs.length === 1 ? audioOutputs[0] : undefined);
  if (!ids || !style || !speed || !output || inputs.length !== 3) {
    throw new ModelContractError(
      `This is not a Kokoro model export: expected inputs input_ids|tokens (int64), style (float32) and speed, and a waveform|audio output; the model declares ${describe()}`,
    );
  }
  const typeOf = (m: ort.InferenceSession.ValueMetadata) => (m.isTensor ? m.type : 'non-tensor');
  if (typeOf(ids) !== 'int64')
    throw new ModelContractError(`Input ${ids.name} should be int64; it is ${typeOf(ids)}`);
  if (typeOf(style) !== 'float32')
    throw new ModelContractError(`Input ${style.name} should be float32; it is ${typeOf(style)}`);
  const speedType = typeOf(speed);
  if (speedType !== 'float32' && speedType !== 'int32') {
    throw new ModelContractError(`Input speed should be float32 or int32; it is ${speedType}`);
  }
  if (typeOf(output) !== 'float32')
    throw new ModelContractError(`Output ${output.name} should be float32; it is ${typeOf(output)}`);
  if (durations && !['float32', 'int64', 'int32'].includes(typeOf(durations)))
    throw new ModelContractError(
      `Output ${durations.name} should be float32 or int64; it is ${typeOf(durations)}`,
    );
  return {
    ids: ids.name,
    style: style.name,
    speed: speed.name,
    speedType,
    output: output.name,
    ...(durations ? { durations: durations.name } : {}),
  };
}

export interface SessionOptions {
  readonly device: Device;
  readonly intraOpThreads: number;
  /**
   * Let ONNX Runtime's pool threads spin after each run (its default). Off by default here: the
   * spinning threads take the cores that the server's other threads need right then, delaying each
   * chunk's hand-off (docs/experiments.md, "Look-ahead, early release and the server's overhead").
   */
  readonly allowSpinning?: boolean;
  /**
   * ONNX Runtime's CPU memory arena (its default). Off by default here: the arena grows to the
   * largest input a session has run and never gives that memory back (microsoft/onnxruntime#11627),
   * so one long sentence or a burst of them leaves each worker holding that memory for good; its
   * shrink option is a run option the Node binding does not pass. Off, each tensor is a malloc
   * that goes back when freed, at a cost docs/experiments.md records ("Memory after a burst").
   */
  readonly cpuArena?: boolean;
  /** ORT's own log severity: 0 verbose … 4 fatal. ORT is noisy at session creation. */
  readonly logSeverity: 0 | 1 | 2 | 3 | 4;
  /** Called when `auto` falls back to CPU, with the reason. */
  readonly onFallback?: (reason: string) => void;
}

/** One loaded Kokoro model with its provider and contract. */
export class KokoroSession {
  readonly #session: ort.InferenceSession;
  readonly provider: Provider;
  readonly contract: ModelContract;

  private constructor(session: ort.InferenceSession, provider: Provider, contract: ModelContract) {
    this.#session = session;
    this.provider = provider;
    this.contract = contract;
  }

  /** Creates the session on the best provider the plan allows. */
  static async create(modelFile: string, options: SessionOptions): Promise<KokoroSession> {
    const plan = planProviders(options.device, cudaLibraryPresent());
    if (plan.skipped) options.onFallback?.(plan.skipped);
    let lastError: unknown;
    for (const provider of plan.attempts) {
      try {
        const session = await ort.InferenceSession.create(modelFile, {
          executionProviders: [provider],
          intraOpNumThreads: options.intraOpThreads,
          extra: {
            session: {
              intra_op: { allow_spinning: options.allowSpinning ? '1' : '0' },
              inter_op: { allow_spinning: options.allowSpinning ? '1' : '0' },
            },
          },
          interOpNumThreads: 1,
          enableCpuMemArena: options.cpuArena ?? false,
          graphOptimizationLevel: 'all',
          logSeverityLevel: options.logSeverity,
        });
        const contract = readContract(session.inputMetadata, session.outputMetadata);
        return new KokoroSession(session, provider, contract);
      } catch (err) {
        if (err instanceof ModelContractError) throw err;
        lastError = err;
        if (provider === 'cuda' && plan.attempts.includes('cpu')) {
          options.onFallback?.(`the CUDA execution provider failed to start: ${(err as Error).message}`);
        }
      }
    }
    const reason = (lastError as Error | undefined)?.message ?? 'unknown error';
    if (options.device === 'cuda')
      throw new ProviderError(`KOKORO_DEVICE=cuda but the CUDA session failed: ${reason}`);
    throw new Error(`Could not load the model ${modelFile}: ${reason}`);
  }

  /** Runs one inference: ids already padded `[0, …, 0]`, one style row, a speed. */
  async run(ids: BigInt64Array, style: Float32Array, speed: number): Promise<Inference> {
    if (style.length !== STYLE_DIM) throw new Error(`style must have ${STYLE_DIM} values`);
    const c = this.contract;
    const feeds: Record<string, ort.Tensor> = {
      [c.ids]: new ort.Tensor('int64', ids, [1, ids.length]),
      [c.style]: new ort.Tensor('float32', style, [1, STYLE_DIM]),
      [c.speed]:
        c.speedType === 'int32'
          ? new ort.Tensor('int32', Int32Array.of(Math.round(speed)), [1])
          : new ort.Tensor('float32', Float32Array.of(speed), [1]),
    };
    const result = await this.#session.run(feeds);
    const out = result[c.output]!;
    // Copy out of ORT's buffers so the tensors can be released.
    const waveform = new Float32Array(out.data as Float32Array);
    out.dispose();
    const echo = readEcho(result);
    const frames = c.durations ? result[c.durations] : undefined;
    if (!frames) return echo ? { waveform, echo } : { waveform };
    const durations = Float64Array.from(frames.data as ArrayLike<number | bigint>, Number);
    frames.dispose();
    return echo ? { waveform, durations, echo } : { waveform, durations };
  }

  async release(): Promise<void> {
    await this.#session.release();
  }
}

function readEcho(result: ort.InferenceSession.OnnxValueMapType): ModelInput | undefined {
  const ids = result[ECHO_OUTPUTS.ids];
  const style = result[ECHO_OUTPUTS.style];
  const speed = result[ECHO_OUTPUTS.speed];
  if (!ids || !style || !speed) return undefined;
  const input: ModelInput = {
    ids: Array.from(ids.data as ArrayLike<number | bigint>, Number),
    style: Array.from(style.data as Float32Array),
    speed: Number((speed.data as ArrayLike<number>)[0]),
  };
  for (const t of [ids, style, speed]) t.dispose();
  return input;
}
