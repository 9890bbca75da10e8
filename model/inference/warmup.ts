/**
 * The warm-up ladder: inferences at several input lengths before a worker says it is ready.
 *
 * On CUDA, cuDNN picks each convolution's algorithm by trying them all (ONNX Runtime's default
 * `cudnn_conv_algo_search` is EXHAUSTIVE, and onnxruntime-node cannot change it), once per new input
 * shape. Kokoro's shapes change with every sentence length, so without a warm-up the first users pay
 * that search on their sentences. Running a ladder of lengths at startup moves it before `/ping`
 * says 200. On CPU there is no such search, and the ladder only costs startup time.
 */
import { MAX_PHONEME_IDS } from '../kokoro/constants.ts';
import type { Provider } from './ort-session.ts';
import { phonemesToIds } from '../text/tokens.ts';

/** `auto`: the default ladder on CUDA, none on CPU; or explicit lengths, run on any provider. */
export type WarmupSetting = 'auto' | readonly number[];

/** Phoneme-id counts warmed on CUDA by default: short clauses to the 510-id maximum. */
export const CUDA_WARMUP_LENGTHS: readonly number[] = [
  8,
  16,
  32,
  64,
  96,
  128,
  192,
  256,
  384,
  MAX_PHONEME_IDS,
];

/** The lengths to warm for this setting on this provider. */
export function warmupLengths(setting: WarmupSetting, provider: Provider): readonly number[] {
  if (setting === 'auto') return provider === 'cuda' ? CUDA_WARMUP_LENGTHS : [];
  return setting;
}

/**
 * Parses `KOKORO_WARMUP_LENGTHS`: `auto`, `none`, or comma-separated phoneme-id counts from 1 to 510.
 * Returns the setting, or a problem description.
 */
export function parseWarmupSetting(raw: string): WarmupSetting | { problem: string } {
  const value = raw.trim().toLowerCase();
  if (value === '' || value === 'auto') return 'auto';
  if (value === 'none' || value === 'off') return [];
  const lengths = value.split(',').map((p) => Number(p.trim()));
  if (lengths.some((n) => !Number.isInteger(n) || n < 1 || n > MAX_PHONEME_IDS)) {
    return { problem: `should be auto, none, or comma-separated whole numbers from 1 to ${MAX_PHONEME_IDS}` };
  }
  return [...new Set(lengths)].sort((a, b) => a - b);
}

// Real phonemes ("hello world, this is a test"), repeated: the ids stay within Kokoro's vocabulary.
const SAMPLE_IDS = phonemesToIds('həlˈoʊ wˈɜːld, ðɪs ɪz ɐ tˈɛst ');

/** `n` phoneme ids (without the padding zeros) of ordinary speech, for a warm-up inference. */
export function warmupIds(n: number): number[] {
  return Array.from({ length: n }, (_, i) => SAMPLE_IDS[i % SAMPLE_IDS.length]!);
}

/** One rung of the ladder: the first inference at a length, and a second one at the same length. */
export interface WarmupStep {
  readonly tokens: number;
  readonly firstMs: number;
  readonly repeatMs: number;
}
