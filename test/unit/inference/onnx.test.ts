import { describe, expect, it } from 'vitest';
import {
  ModelContractError,
  ProviderError,
  planProviders,
  readContract,
} from '../../../model/inference/ort-session.ts';

describe('planProviders (execution provider selection)', () => {
  it('cpu: CPU only, whatever is installed', () => {
    expect(planProviders('cpu', true)).toEqual({ attempts: ['cpu'] });
    expect(planProviders('cpu', false)).toEqual({ attempts: ['cpu'] });
  });

  it('cuda: CUDA only; fails clearly when its library is missing', () => {
    expect(planProviders('cuda', true)).toEqual({ attempts: ['cuda'] });
    expect(() => planProviders('cuda', false)).toThrow(ProviderError);
    expect(() => planProviders('cuda', false)).toThrow(
      /KOKORO_DEVICE=cuda.*ONNXRUNTIME_NODE_INSTALL=1 node node_modules\/onnxruntime-node\/script\/install\.js/,
    );
  });

  it('auto: CUDA then CPU when CUDA is installed, else CPU with the reason', () => {
    expect(planProviders('auto', true)).toEqual({ attempts: ['cuda', 'cpu'] });
    const plan = planProviders('auto', false);
    expect(plan.attempts).toEqual(['cpu']);
    expect(plan.skipped).toMatch(/libonnxruntime_providers_cuda\.so/);
  });
});

describe('readContract', () => {
  const t = (name: string, type: string) => ({
    name,
    isTensor: true as const,
    type: type as 'int64',
    shape: [],
  });
  it('reads the onnx-community naming', () => {
    expect(
      readContract(
        [t('input_ids', 'int64'), t('style', 'float32'), t('speed', 'float32')],
        [t('waveform', 'float32')],
      ),
    ).toEqual({
      ids: 'input_ids',
      style: 'style',
      speed: 'speed',
      speedType: 'float32',
      output: 'waveform',
    });
  });

  it('reads the kokoro-onnx naming with an int32 speed', () => {
    expect(
      readContract(
        [t('tokens', 'int64'), t('style', 'float32'), t('speed', 'int32')],
        [t('audio', 'float32')],
      ),
    ).toMatchObject({
      ids: 'tokens',
      speedType: 'int32',
      output: 'audio',
    });
  });

  it('refuses other models, naming what they declare', () => {
    expect(() => readContract([t('pixel_values', 'float32')], [t('logits', 'float32')])).toThrow(
      ModelContractError,
    );
    expect(() => readContract([t('pixel_values', 'float32')], [t('logits', 'float32')])).toThrow(
      /declares inputs \[pixel_values\]/,
    );
    expect(() =>
      readContract(
        [t('input_ids', 'int32'), t('style', 'float32'), t('speed', 'float32')],
        [t('waveform', 'float32')],
      ),
    ).toThrow(/input_ids should be int64/);
    expect(() =>
      readContract(
        [t('input_ids', 'int64'), t('style', 'float32'), t('speed', 'float64')],
        [t('waveform', 'float32')],
      ),
    ).toThrow(/speed should be float32 or int32/);
  });
});
