import { describe, expect, it } from 'vitest';
import { MMAP_THRESHOLD_BYTES, pinMmapThreshold, type Process as Proc } from '../../../server/allocator.ts';

function fakeProcess(overrides: Partial<Proc>): { proc: Proc; calls: unknown[][] } {
  const calls: unknown[][] = [];
  const proc: Proc = {
    env: { PATH: '/bin', UNSET: undefined },
    execPath: '/usr/bin/node',
    execArgv: ['--enable-source-maps'],
    argv: ['/usr/bin/node', '/opt/program/dist/server/main.js', '--fetch-model'],
    glibc: '2.36',
    execve: ((...args: unknown[]) => {
      calls.push(args);
      throw new Error('execve: the process image would be replaced here');
    }) as Proc['execve'],
    ...overrides,
  };
  return { proc, calls };
}

describe("glibc's mmap threshold", () => {
  it('re-executes the same program, arguments and environment, with the threshold added', () => {
    const { proc, calls } = fakeProcess({});
    expect(() => pinMmapThreshold(proc)).toThrow('replaced here');
    expect(calls).toEqual([
      [
        '/usr/bin/node',
        ['/usr/bin/node', '--enable-source-maps', '/opt/program/dist/server/main.js', '--fetch-model'],
        { PATH: '/bin', MALLOC_MMAP_THRESHOLD_: String(MMAP_THRESHOLD_BYTES) },
      ],
    ]);
  });

  it.each(['true', 'yes', '', 'maybe'])(
    'KOKORO_MALLOC_PIN=%j pins (a value that is not a boolean is left to the configuration to refuse)',
    (value) => {
      const { proc, calls } = fakeProcess({ env: { KOKORO_MALLOC_PIN: value } });
      expect(() => pinMmapThreshold(proc)).toThrow('replaced here');
      expect(calls).toHaveLength(1);
    },
  );

  it('once set (by itself or by the operator) it runs on; without glibc or execve it says why', () => {
    const cases = new Map<Partial<Proc>, ReturnType<typeof pinMmapThreshold>>([
      [{ env: { MALLOC_MMAP_THRESHOLD_: '1048576' } }, { mmapThreshold: '1048576', by: 'server' }],
      [{ env: { MALLOC_MMAP_THRESHOLD_: '65536' } }, { mmapThreshold: '65536', by: 'operator' }],
      [{ glibc: undefined }, { mmapThreshold: 'glibc default', reason: 'not glibc' }],
      [
        { env: { KOKORO_MALLOC_PIN: 'false' } },
        { mmapThreshold: 'glibc default', reason: 'KOKORO_MALLOC_PIN=false' },
      ],
      [
        { env: { KOKORO_MALLOC_PIN: ' OFF ' } },
        { mmapThreshold: 'glibc default', reason: 'KOKORO_MALLOC_PIN=OFF' },
      ],
      [
        { env: { KOKORO_MALLOC_PIN: '0' } },
        { mmapThreshold: 'glibc default', reason: 'KOKORO_MALLOC_PIN=0' },
      ],
      [
        { execve: undefined },
        {
          mmapThreshold: 'glibc default',
          reason: expect.stringContaining('set MALLOC_MMAP_THRESHOLD_=1048576') as unknown as string,
        },
      ],
    ]);
    for (const [overrides, expected] of cases) {
      const { proc, calls } = fakeProcess(overrides);
      expect(pinMmapThreshold(proc)).toEqual(expected);
      expect(calls).toEqual([]);
    }
  });
});
