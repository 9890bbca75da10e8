import { describe, expect, it } from 'vitest';
import { applyOrtTelemetry, optedIn, switchesOff } from '../../../model/inference/ort-telemetry.ts';

describe("ONNX Runtime's telemetry switch", () => {
  it('reads ORT_DISABLE_TELEMETRY as the runtime does (trimmed, any case)', () => {
    const cases = new Map<string | undefined, boolean>([
      [undefined, false],
      ['', false],
      ['0', false],
      ['false', false],
      ['off', false],
      ['2', false],
      ['1', true],
      [' TRUE ', true],
      ['yes', true],
      ['On', true],
      ['y', true],
    ]);
    for (const [value, off] of cases) expect(switchesOff(value), String(value)).toBe(off);
  });

  it('sets the switch unless the operator opted in; a switch of their own wins over the opt-in', () => {
    const fresh: Record<string, string | undefined> = { ORT_DISABLE_TELEMETRY: '0' };
    expect(applyOrtTelemetry(false, fresh)).toBe('off');
    expect(fresh.ORT_DISABLE_TELEMETRY).toBe('1');
    expect(applyOrtTelemetry(true, {})).toBe('on');
    expect(applyOrtTelemetry(true, { ORT_DISABLE_TELEMETRY: 'yes' })).toBe('off');
  });

  it('takes only an explicit opt-in', () => {
    expect([undefined, '', '0', 'false', 'maybe'].map(optedIn)).toEqual([false, false, false, false, false]);
    expect(['1', 'true', 'YES', 'on'].map(optedIn)).toEqual([true, true, true, true]);
  });
});
