import { describe, expect, it } from 'vitest';
import { MAX_PHONEME_IDS } from '../../../model/kokoro/constants.ts';
import { KOKORO_VOCAB } from '../../../model/text/tokens.ts';
import {
  CUDA_WARMUP_LENGTHS,
  parseWarmupSetting,
  warmupIds,
  warmupLengths,
  type WarmupSetting,
} from '../../../model/inference/warmup.ts';

describe('warm-up ladder', () => {
  it('is a ladder up to the 510-id maximum on CUDA by default, and nothing on CPU', () => {
    expect(warmupLengths('auto', 'cuda')).toBe(CUDA_WARMUP_LENGTHS);
    expect(CUDA_WARMUP_LENGTHS.at(-1)).toBe(MAX_PHONEME_IDS);
    expect([...CUDA_WARMUP_LENGTHS].sort((a, b) => a - b)).toEqual(CUDA_WARMUP_LENGTHS);
    expect(warmupLengths('auto', 'cpu')).toEqual([]);
    // Explicit lengths run on either provider.
    expect(warmupLengths([16, 64], 'cpu')).toEqual([16, 64]);
    expect(warmupLengths([], 'cuda')).toEqual([]);
  });

  const valid = new Map<string, WarmupSetting>([
    ['', 'auto'],
    ['auto', 'auto'],
    [' AUTO ', 'auto'],
    ['none', []],
    ['off', []],
    ['64', [64]],
    ['510, 16,64,16', [16, 64, 510]],
  ]);
  it.each([...valid])('KOKORO_WARMUP_LENGTHS=%j is %j', (raw, expected) => {
    expect(parseWarmupSetting(raw)).toEqual(expected);
  });

  const invalid = new Map<string, RegExp>([
    ['0', /from 1 to 510/],
    ['511', /from 1 to 510/],
    ['16,abc', /auto, none, or comma-separated whole numbers/],
    ['1.5', /whole numbers/],
  ]);
  it.each([...invalid])('KOKORO_WARMUP_LENGTHS=%j is refused, saying what is valid', (raw, message) => {
    expect(parseWarmupSetting(raw)).toEqual({ problem: expect.stringMatching(message) });
  });

  it('feeds ids of real phonemes, of exactly the asked length', () => {
    const known = new Set(KOKORO_VOCAB.values());
    for (const n of [1, 7, 64, MAX_PHONEME_IDS]) {
      const ids = warmupIds(n);
      expect(ids).toHaveLength(n);
      expect(ids.every((id) => known.has(id))).toBe(true);
    }
  });
});
