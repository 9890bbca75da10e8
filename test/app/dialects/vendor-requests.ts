/**
 * Requests to the vendors' HTTP routes of an in-process app, and readers of their answers in each
 * vendor's shape, for the dialects' in-process tests.
 */
import type { LightMyRequestResponse } from 'fastify';
import { expect } from 'vitest';
import type { InProcessApp } from '../in-process.ts';

export const EL_PATH = '/v1/text-to-speech';

export function elevenLabs(
  app: InProcessApp,
  voice: string,
  body: unknown,
  options: { query?: string; route?: string } = {},
): Promise<LightMyRequestResponse> {
  return app.app.inject({
    method: 'POST',
    url: `${EL_PATH}/${encodeURIComponent(voice)}${options.route ?? '/stream'}?${options.query ?? 'output_format=pcm_24000'}`,
    headers: { 'content-type': 'application/json', 'xi-api-key': 'not-checked' },
    payload: JSON.stringify(body),
  });
}

/** An answer in ElevenLabs' error shape; its status, code and message. */
export function elevenLabsError(res: LightMyRequestResponse): {
  status: number;
  code: string;
  message: string;
} {
  expect(res.headers['content-type']).toMatch(/^application\/json/);
  const body = res.json() as { detail: { status: string; message: string } };
  expect(Object.keys(body)).toEqual(['detail']);
  expect(Object.keys(body.detail).sort()).toEqual(['message', 'status']);
  return { status: res.statusCode, code: body.detail.status, message: body.detail.message };
}

export const RAW = { container: 'raw', encoding: 'pcm_s16le', sample_rate: 24000 };
export const CARTESIA_OK = {
  model_id: 'sonic-3',
  transcript: 'Hello there.',
  voice: { mode: 'id', id: 'af_heart' },
  output_format: RAW,
};

export function cartesia(
  app: InProcessApp,
  route: 'bytes' | 'sse',
  body: unknown,
  headers: Record<string, string> = {
    'content-type': 'application/json',
    authorization: 'Bearer not-checked',
  },
): Promise<LightMyRequestResponse> {
  return app.app.inject({
    method: 'POST',
    url: `/tts/${route}`,
    headers: { 'cartesia-version': '2026-03-01', ...headers },
    payload: typeof body === 'string' ? body : JSON.stringify(body),
  });
}

/** An answer in Cartesia's error shape; its status, code and message. */
export function cartesiaError(res: LightMyRequestResponse): {
  status: number;
  code: string;
  message: string;
} {
  expect(res.headers['content-type']).toMatch(/^application\/json/);
  const body = res.json() as Record<string, string>;
  expect(Object.keys(body).sort()).toEqual(['error', 'error_code', 'message', 'request_id', 'title']);
  expect(body.error).toBe(body.message);
  expect(body.request_id!.length).toBeGreaterThan(0);
  expect(body.title).toBe(body.error_code!.replace(/_/g, ' '));
  return { status: res.statusCode, code: body.error_code!, message: body.message! };
}

/** The events of an SSE body, in order. */
export function events(res: LightMyRequestResponse): { event: string; data: Record<string, unknown> }[] {
  return res.body
    .split('\n\n')
    .filter((block) => block.trim() !== '')
    .map((block) => ({
      event: /^event: (.+)$/m.exec(block)?.[1] ?? '',
      data: JSON.parse(/^data: (.+)$/m.exec(block)?.[1] ?? 'null') as Record<string, unknown>,
    }));
}
