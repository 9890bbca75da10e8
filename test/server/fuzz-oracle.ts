/**
 * The fuzzer's oracle (test/server/fuzz.test.ts), written from docs/protocol.md and not from the
 * server's code: what the contract says the server must answer to a message's bytes, the grouping
 * of a session's frames into one answer per message, and the problems with an answer.
 */
import type { Frame } from './harness.ts';

/** Contract figures (docs/protocol.md and the README's defaults) that the oracle needs. */
export const MAX_TEXT_CHARS = 4096;
const MAX_REQUEST_AGE_S = 56;
export const MAX_REQUEST_ID_CHARS = 128;
/** The contract promises an application-level answer to any message up to this size. */
export const ANSWERED_MESSAGE_BYTES = 1024 * 1024;
const ALL_RATES = [8000, 16000, 22050, 24000, 44100, 48000];
export const RATES: Record<string, readonly number[]> = {
  pcm: [8000, 16000, 22050, 24000, 32000, 44100, 48000],
  wav: ALL_RATES,
  mp3: ALL_RATES,
  aac: ALL_RATES,
  flac: ALL_RATES,
  opus: [8000, 16000, 24000, 48000],
  mulaw: [8000],
  alaw: [8000, 16000],
};
const ERROR_CODES = new Set([
  'bad_request',
  'invalid_json',
  'invalid_utf8',
  'unknown_type',
  'invalid_option',
  'empty_text',
  'voice_not_found',
  'language_unsupported',
  'text_too_long',
  'payload_too_large',
  'request_stale',
  'busy',
  'not_ready',
  'shutting_down',
  'inference_failed',
  'internal_error',
]);

/** Voice specs the contract calls valid (ids of American and British English voices). */
export const VALID_VOICES = [
  'af_heart',
  'af_bella',
  'af_sky',
  'am_adam',
  'bf_emma',
  'bm_george',
  'af_bella+af_sky',
  'af_bella(2)+af_sky(1)',
  'af_bella(0.5)+af_sky(1.5)+af_heart(1)',
  'af_alloy+af_aoede+af_bella+af_heart+af_jessica+af_kore+af_nicole+af_sky',
];

export type Expected =
  | { readonly outcome: 'audio'; readonly requestId?: string; readonly format: string }
  | { readonly outcome: 'error'; readonly requestId?: string }
  | { readonly outcome: 'close' };

const strictUtf8 = new TextDecoder('utf-8', { fatal: true });

function codePoints(text: string): number {
  // Lone surrogates count as one each, as the string iterator yields them.
  let n = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c >= 0xd800 && c <= 0xdbff) {
      const d = text.charCodeAt(i + 1);
      if (d >= 0xdc00 && d <= 0xdfff) i++;
    }
    n++;
  }
  return n;
}

/** What the contract says the server must answer to these bytes, `now` being epoch ms. */
export function expectedOutcome(bytes: Buffer, formats: readonly string[], now: number): Expected {
  let text: string;
  try {
    text = strictUtf8.decode(bytes);
  } catch {
    return { outcome: 'error' };
  }
  if (!text.trimStart().startsWith('{')) {
    const ok = text.trim() !== '' && codePoints(text) <= MAX_TEXT_CHARS;
    return ok ? { outcome: 'audio', format: 'pcm' } : { outcome: 'error' };
  }
  let value: unknown;
  try {
    // Whatever counts as leading whitespace for the `{` rule is not part of the JSON.
    value = JSON.parse(text.trimStart());
  } catch {
    return { outcome: 'error' };
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return { outcome: 'error' };
  const f = value as Record<string, unknown>;
  const id = f.request_id;
  const requestId =
    typeof id === 'string' && id.length > 0 && id.length <= MAX_REQUEST_ID_CHARS ? id : undefined;
  const error: Expected = requestId === undefined ? { outcome: 'error' } : { outcome: 'error', requestId };
  if (f.type !== undefined) {
    const type = typeof f.type === 'string' ? f.type.toLowerCase() : undefined;
    if (type === 'close') return { outcome: 'close' };
    if (type !== 'synthesize') return error;
  }
  if (f.request_id !== undefined && requestId === undefined) return error;
  if (f.request_timestamp !== undefined) {
    const ts = f.request_timestamp;
    if (typeof ts !== 'number' || !Number.isFinite(ts) || ts < 0) return error;
    if ((now - (ts > 1e11 ? ts : ts * 1000)) / 1000 > MAX_REQUEST_AGE_S) return error;
  }
  if (typeof f.text !== 'string' || f.text.trim() === '' || codePoints(f.text) > MAX_TEXT_CHARS) return error;
  if (f.voice !== undefined && !(typeof f.voice === 'string' && VALID_VOICES.includes(f.voice))) return error;
  if (f.speed !== undefined && !(typeof f.speed === 'number' && f.speed >= 0.5 && f.speed <= 2)) return error;
  const format = f.format === undefined ? 'pcm' : f.format;
  if (typeof format !== 'string' || !formats.includes(format)) return error;
  const rate = f.sample_rate;
  if (rate !== undefined && !(typeof rate === 'number' && (RATES[format] ?? []).includes(rate))) return error;
  // stream and transport are POST-only and ignored here, whatever their value; unknown keys too.
  return requestId === undefined ? { outcome: 'audio', format } : { outcome: 'audio', format, requestId };
}

// ---------------------------------------------------------------------------------------------
// Reading answers: one per message, in order

export type Answer =
  | { readonly kind: 'error'; readonly error: Record<string, unknown> }
  | {
      readonly kind: 'synthesis';
      readonly start: Record<string, unknown>;
      readonly audio: Buffer[];
      complete?: Record<string, unknown>;
      error?: Record<string, unknown>;
    };

/** Groups a session's frames into answers: an error frame, or start … audio … complete (or error). */
export class AnswerReader {
  readonly answers: Answer[] = [];
  readonly violations: string[] = [];
  #cursor = 0;
  #open: Extract<Answer, { kind: 'synthesis' }> | undefined;

  update(frames: readonly Frame[]): number {
    for (; this.#cursor < frames.length; this.#cursor++) {
      const f = frames[this.#cursor]!;
      if (f.kind === 'audio') {
        if (this.#open) this.#open.audio.push(f.bytes);
        else this.violations.push(`audio frame (${f.bytes.length} bytes) outside a synthesis`);
        continue;
      }
      const m = f.message;
      if (m.type === 'synthesis_start') {
        if (this.#open) this.violations.push('synthesis_start inside another synthesis');
        this.#open = { kind: 'synthesis', start: m, audio: [] };
      } else if (m.type === 'synthesis_complete' || m.type === 'error') {
        if (this.#open) {
          if (m.type === 'error') this.#open.error = m;
          else this.#open.complete = m;
          this.answers.push(this.#open);
          this.#open = undefined;
        } else if (m.type === 'error') this.answers.push({ kind: 'error', error: m });
        else this.violations.push(`synthesis_complete without synthesis_start: ${JSON.stringify(m)}`);
      }
    }
    return this.answers.length;
  }
}

/** Problems with an error frame: a code, and a message in words that leaks nothing. */
export function errorFrameProblems(error: Record<string, unknown>): string[] {
  const problems: string[] = [];
  if (typeof error.code !== 'string' || !ERROR_CODES.has(error.code))
    problems.push(`code ${JSON.stringify(error.code)} is not a documented error code`);
  const message = error.message;
  if (typeof message !== 'string' || message.trim() === '') problems.push('no message');
  else {
    if (!/\S\s+\S/.test(message)) problems.push(`message ${JSON.stringify(message)} is not in words`);
    if (message.includes('    at ')) problems.push('message holds a stack trace');
    if (/\/work\/|node_modules|file:\/\//.test(message)) problems.push('message holds a file path');
  }
  return problems;
}

/** Compares one answer with what the contract expects for its message. */
export function answerProblems(expected: Expected, answer: Answer): string[] {
  if (expected.outcome === 'close') return ['the generator made a close message'];
  if (expected.outcome === 'error') {
    if (answer.kind !== 'error') return ['expected one error frame'];
    const problems = errorFrameProblems(answer.error);
    if (answer.error.code === 'busy') problems.push('busy although the batch stayed under the cap');
    if (expected.requestId !== undefined && answer.error.request_id !== expected.requestId)
      problems.push(`error does not echo request_id ${JSON.stringify(expected.requestId)}`);
    return problems;
  }
  if (answer.kind !== 'synthesis' || !answer.complete) return ['expected audio and synthesis_complete'];
  const problems: string[] = [];
  const id = expected.requestId;
  if (id !== undefined && (answer.start.request_id !== id || answer.complete.request_id !== id))
    problems.push(`request_id ${JSON.stringify(id)} not echoed on synthesis_start/complete`);
  if (typeof answer.complete.request_id !== 'string' || answer.complete.request_id === '')
    problems.push('synthesis_complete without a request_id');
  if (typeof answer.complete.total_duration_s !== 'number') problems.push('no total_duration_s');
  if (expected.format === 'pcm' || expected.format === 'wav') {
    const odd = answer.audio.find((b) => b.length % 2 !== 0);
    if (odd) problems.push(`an s16le audio frame of ${odd.length} bytes (odd)`);
  }
  return problems;
}
