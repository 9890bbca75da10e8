/**
 * The values markup's constructs carry (text/markup.ts): durations, strengths, rates, voice specs
 * and alphabets, each read or refused with an `invalid_markup` error that says what is valid and
 * where. Each reads one bounded value; none backtracks more than linearly.
 */
import { ttsError, type TtsError } from '../../protocol/errors.ts';

const MAX_VOICE_CHARS = 256;
const MAX_RATE = 10;
export const ALPHABETS = new Map(Object.entries({ ipa: 'ipa', kokoro: 'kokoro', misaki: 'kokoro' } as const));
/** SSML's break strengths in milliseconds. */
export const STRENGTHS = new Map(
  Object.entries({ none: 0, 'x-weak': 100, weak: 250, medium: 500, strong: 1000, 'x-strong': 2000 }),
);
/** SSML's named prosody rates, as multipliers of the request's speed. */
const RATES = new Map(
  Object.entries({ 'x-slow': 0.5, slow: 0.75, medium: 1, fast: 1.25, 'x-fast': 1.5, default: 1 }),
);
const DURATION = /^(-?)(\d+(?:\.\d+)?|\.\d+)\s*(ms|s)?$/i;
const NUMBER = /^(?:\d+(?:\.\d+)?|\.\d+)$/;
const VOICE_CHARS = /^[\w()+.,\s]+$/;

/** An `invalid_markup` error, with where it is. */
export const fail = (message: string, at: number): TtsError =>
  ttsError('TTS_ERR_INVALID_MARKUP', `${message} (at character ${at})`);
export const clip = (s: string): string => (s.length > 40 ? `${s.slice(0, 40)}…` : s);

/** `1.5s`, `500ms`, `2` (seconds) in milliseconds; negative, malformed or over `max`: an error. */
export function durationMs(what: string, raw: string, max: number, at: number): number {
  const m = DURATION.exec(raw.trim());
  const value = `${what} "${clip(raw.trim())}"`;
  const bound = `${max / 1000} s`;
  const forms = 'seconds (1.5s, 2) or milliseconds (500ms)';
  if (m === null) throw fail(`${value} is not a duration: should be ${forms}, from 0 to ${bound}`, at);
  if (m[1] === '-') throw fail(`${value} is negative: should be from 0 to ${bound}`, at);
  const ms = Number(m[2]) * (m[3]?.toLowerCase() === 'ms' ? 1 : 1000);
  if (ms > max) throw fail(`${value} is over the maximum of ${bound}`, at);
  return Math.round(ms);
}

/** A voice or a blend as written (the catalog checks it later); `default`: the request's voice. */
export function voiceSpec(what: string, raw: string, at: number): string | undefined {
  const spec = raw.trim();
  const valid = 'should name a voice (af_bella) or a blend (af_bella(2)+af_sky(1))';
  if (spec === '') throw fail(`${what} is empty: ${valid}`, at);
  if (spec.toLowerCase() === 'default') return undefined;
  if (spec.length > MAX_VOICE_CHARS) throw fail(`${what} is over ${MAX_VOICE_CHARS} characters`, at);
  if (!VOICE_CHARS.test(spec)) {
    throw fail(`${what} "${clip(spec)}" ${valid}, in letters, digits, spaces and _ ( ) + . ,`, at);
  }
  return spec;
}

/** A value of `table`; anything else is an error that lists them. */
export function oneOf<T>(what: string, raw: string, table: Map<string, T>, at: number): T {
  const value = table.get(raw.trim().toLowerCase());
  if (value !== undefined) return value;
  throw fail(`${what} "${clip(raw)}" is not one of: ${[...table.keys()].join(', ')}`, at);
}

export function rateOf(raw: string, at: number): number {
  const value = raw.trim();
  const digits = value.endsWith('%') ? value.slice(0, -1) : value;
  const rate =
    RATES.get(value) ?? (NUMBER.test(digits) ? Number(digits) / (digits === value ? 1 : 100) : NaN);
  if (rate > 0 && rate <= MAX_RATE) return rate;
  const valid = `one of ${[...RATES.keys()].join(', ')}, a percentage (80%) or a multiplier up to ${MAX_RATE}`;
  throw fail(`prosody rate "${clip(value)}" should be ${valid}`, at);
}
