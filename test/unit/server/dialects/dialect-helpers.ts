/**
 * What the dialects' unit tests share: the engine whose voice catalog they read, message and
 * error builders, and readers of the frames a dialect makes.
 */
import { expect } from 'vitest';
import type { RunFigures } from '../../../../dist/model/synthesis/run.js';
import type { ErrorBody } from '../../../../dist/protocol/errors.js';
import type { Heard } from '../../../../dist/protocol/frames.js';
import { TtsError } from '../../../../dist/server/http/errors.js';
import type { Command, OutgoingFrame } from '../../../../dist/server/dialects/dialect.js';
import { fakeEngine } from '../../../app/fake-engine.ts';

export const engine = fakeEngine();

export const bytes = (text: string) => Buffer.from(text);
export const json = (value: unknown) => Buffer.from(JSON.stringify(value));

/** What `run` throws (the test fails when it throws nothing). */
export function thrown(run: () => unknown): unknown {
  try {
    run();
  } catch (err) {
    return err;
  }
  throw new Error('nothing was thrown');
}

/** `err` is our error with this code, a message that names the problem, and this `param`. */
export function expectError(err: unknown, code: string, message: RegExp, param: string | undefined): void {
  expect(err).toBeInstanceOf(TtsError);
  const known = err as TtsError;
  expect(known.code).toBe(code);
  expect(known.message).toMatch(message);
  expect(known.data.param).toBe(param);
}

/** The refusal command a dialect's parse answered with: its error and its context. */
export function refusal(result: Command | readonly Command[]): { error: unknown; context?: string } {
  expect(result).toMatchObject({ kind: 'refuse' });
  return result as { error: unknown; context?: string };
}

/** Where a piece of audio lies on its request's clock, for dialects that do not read it. */
export const SPAN = { startS: 0, endS: 0 };

/** The one frame a dialect made of a piece of audio. */
export function oneFrame(frames: OutgoingFrame | readonly OutgoingFrame[]): OutgoingFrame {
  const list: readonly OutgoingFrame[] = Array.isArray(frames) ? frames : [frames as OutgoingFrame];
  expect(list).toHaveLength(1);
  return list[0]!;
}

/** A frame's JSON text as an object. */
export function sentJson(frame: { data: Uint8Array | string; binary: boolean }): Record<string, unknown> {
  expect(frame.binary).toBe(false);
  return JSON.parse(frame.data as string) as Record<string, unknown>;
}

/** Little-endian PCM16 bytes of these samples. */
export function pcm16(samples: readonly number[]): Uint8Array {
  const view = new DataView(new ArrayBuffer(samples.length * 2));
  samples.forEach((s, i) => view.setInt16(i * 2, s, true));
  return new Uint8Array(view.buffer);
}

/** The samples of little-endian float32 bytes. */
export function floats(data: Uint8Array): number[] {
  const view = new DataView(data.buffer, data.byteOffset, data.length);
  return Array.from({ length: data.length / 4 }, (_, i) => view.getFloat32(i * 4, true));
}

export const body = (
  code: ErrorBody['code'],
  message = `${code} happened`,
  requestId?: string,
): ErrorBody => ({
  type: 'error',
  code,
  message,
  ...(requestId !== undefined ? { request_id: requestId } : {}),
});

export const HEARD: Heard = {
  request_id: 'r1',
  samples: 2400,
  sample_rate: 24000,
  ms: 100,
  words: [{ word: 'Hello', start_s: 0, end_s: 0.1 }],
};

export const FIGURES: RunFigures = {
  audioS: 1.5,
  elapsedMs: 900,
  ttfaMs: 120,
  inferenceMs: 600,
  rtf: 0.6,
  chunks: 3,
  firstInferenceMs: 80,
  firstFrontEndMs: 20,
  firstQueueMs: 5,
};

/** A context id of exactly `n` UTF-8 bytes, made of two-byte characters (and one `a` if odd). */
export const idOfBytes = (n: number) => 'é'.repeat(n >> 1) + (n % 2 ? 'a' : '');
