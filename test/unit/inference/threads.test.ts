import { describe, expect, it } from 'vitest';
import { restartDelayMs } from '../../../model/threads.ts';

describe('restartDelayMs', () => {
  it('replaces a dead worker at once, then waits 0.5 s doubling up to 30 s between failed tries', () => {
    expect([0, 1, 2, 3, 4, 5, 6, 7, 8, 20].map(restartDelayMs)).toEqual([
      0, 500, 1000, 2000, 4000, 8000, 16_000, 30_000, 30_000, 30_000,
    ]);
  });
});
