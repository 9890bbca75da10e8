import { describe, expect, it } from 'vitest';
import { MMAP_THRESHOLD_BYTES, pinMmapThreshold, type Process as Proc } from '../../server/allocator.ts';

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
