/**
 * The smoke test's pure parts: its command line, the endpoints it derives from a URL, how it
 * classifies frames (by the contract's rule) and judges durations, and its result table.
 */
import { decodeControlFrame } from '../../protocol/frames.ts';
import { UsageError, intFlag, parseFlags } from './cli.ts';

/** Path of the bidirectional streaming route, per the wire contract. */
export const WS_PATH = '/invocations-bidirectional-stream';
/** URL used when `--url` is not given. */
export const DEFAULT_URL = `ws://127.0.0.1:8080${WS_PATH}`;
/** Output rate of PCM on the WebSocket route when no `sample_rate` is requested. */
export const PCM_SAMPLE_RATE = 24_000;
/**
 * One Kokoro duration frame (600 samples at 24 kHz). Used as the absolute floor of the duration
 * tolerance so that very short clips are not failed over rounding of a single frame.
 */
export const FRAME_TOLERANCE_S = 600 / PCM_SAMPLE_RATE;
/** Relative tolerance between the received audio length and the server's `total_duration_s`. */
export const DURATION_TOLERANCE = 0.05;

/** Sentences used when no `--text` is given: plain prose, a number, a question, punctuation. */
export const DEFAULT_TEXTS: readonly string[] = [
  'Hello! This is a quick check of the streaming speech server.',
  'The quick brown fox jumps over the lazy dog beside the quiet river.',
  'Your table for 4 is ready at 7:30, and the bill comes to 23 dollars and 50 cents.',
  'Can you hear every word clearly, or should I speak a little more slowly?',
  'Thanks for listening; that is all for now.',
];
export const FOLLOW_UP_TEXT = 'Still here after the error.';

export const USAGE = `Smoke test for a running Kokoro streaming server.

Usage: npm run smoke -- [options]

Options:
  --url URL         WebSocket URL, or http://host:port to derive it
                    (default ${DEFAULT_URL})
  --voice ID        voice id or blend (default af_heart)
  --out DIR         directory for one WAV per sentence (default ./out/smoke)
  --text "..."      a sentence to synthesize; repeat for several (default: ${DEFAULT_TEXTS.length} sentences)
  --format pcm      audio format; only pcm is supported (default pcm)
  --timeout-ms N    overall time limit in milliseconds (default 60000)
  --help            show this help

Exit code 0 when every check passed, 1 when any failed, 2 on bad options.`;

// ---------------------------------------------------------------------------------------------
// Pure pieces (exported for the unit tests)
// ---------------------------------------------------------------------------------------------

/** Options of one smoke run, as parsed from the command line. */
export interface SmokeOptions {
  readonly url: string;
  readonly voice: string;
  readonly outDir: string;
  readonly texts: readonly string[];
  readonly format: 'pcm';
  readonly timeoutMs: number;
  readonly help: boolean;
}

/** The flags both smoke tests take: the time limit, the texts and the voice. */
export function sessionFlags(
  values: { 'timeout-ms'?: string | undefined; text?: string[] | undefined; voice?: string | undefined },
  defaultTimeoutMs: number,
): { timeoutMs: number; texts: string[]; voice: string } {
  const timeoutMs = intFlag('timeout-ms', values['timeout-ms'], defaultTimeoutMs, 1);
  const texts = values.text ?? [...DEFAULT_TEXTS];
  const blank = texts.findIndex((t) => t.trim() === '');
  if (blank >= 0) throw new UsageError(`--text number ${blank + 1} is empty`);
  const voice = values.voice ?? 'af_heart';
  if (voice.trim() === '') throw new UsageError('--voice must not be empty');
  return { timeoutMs, texts, voice };
}

/**
 * Parses command-line arguments (without the node and script entries).
 * @throws UsageError on unknown flags or invalid values.
 */
export function parseCliArgs(argv: readonly string[]): SmokeOptions {
  const values = parseFlags(argv, {
    url: { type: 'string' },
    voice: { type: 'string' },
    out: { type: 'string' },
    text: { type: 'string', multiple: true },
    format: { type: 'string' },
    'timeout-ms': { type: 'string' },
    help: { type: 'boolean', short: 'h' },
  });

  const format = values.format ?? 'pcm';
  if (format !== 'pcm') throw new UsageError(`--format ${format} is not supported; use --format pcm`);

  const { timeoutMs, texts, voice } = sessionFlags(values, 60_000);

  return {
    url: values.url ?? DEFAULT_URL,
    voice,
    outDir: values.out ?? './out/smoke',
    texts,
    format,
    timeoutMs,
    help: values.help ?? false,
  };
}

/** The two URLs a run talks to. */
export interface Endpoints {
  /** `ws:`/`wss:` URL of the streaming route. */
  readonly wsUrl: string;
  /** `http:`/`https:` URL of the health check on the same host. */
  readonly pingUrl: string;
}

/**
 * Derives the WebSocket and `/ping` URLs from what the user typed: a `ws(s)://` URL, an
 * `http(s)://host:port` base, or a bare `host:port`. A URL without a path gets the streaming route;
 * `/ping` sits next to the route, so a proxy prefix in front of it is kept.
 * @throws Error for unsupported schemes or unparsable input.
 */
export function deriveEndpoints(input: string): Endpoints {
  const raw = input.trim();
  // `new URL('localhost:8080')` would read "localhost:" as the scheme, so add one when missing.
  const withScheme = /^[a-z][a-z0-9+.-]*:\/\//i.test(raw) ? raw : `http://${raw}`;
  let url: URL;
  try {
    url = new URL(withScheme);
  } catch {
    throw new Error(`cannot parse --url "${input}"; expected e.g. ${DEFAULT_URL} or http://127.0.0.1:8080`);
  }

  const secure = url.protocol === 'https:' || url.protocol === 'wss:';
  if (!['http:', 'https:', 'ws:', 'wss:'].includes(url.protocol)) {
    throw new Error(`--url must use ws://, wss://, http:// or https://, got "${url.protocol}//"`);
  }

  const path = url.pathname === '' || url.pathname === '/' ? WS_PATH : url.pathname.replace(/\/+$/, '');
  const prefix = path.endsWith(WS_PATH) ? path.slice(0, -WS_PATH.length) : '';

  const ws = new URL(url.href);
  ws.protocol = secure ? 'wss:' : 'ws:';
  ws.pathname = path;
  ws.hash = '';

  const ping = new URL(url.href);
  ping.protocol = secure ? 'https:' : 'http:';
  ping.pathname = `${prefix}/ping`;
  ping.search = '';
  ping.hash = '';

  return { wsUrl: ws.href, pingUrl: ping.href };
}

/** A parsed control frame: one JSON object; fields are checked where they are used. */
export type ControlMessage = Record<string, unknown>;

/** What a received frame is, by the contract's rule. */
export type FrameClass =
  | { readonly kind: 'control'; readonly message: ControlMessage }
  | { readonly kind: 'audio' }
  /** A text frame that is not a JSON object: control by transport, but unreadable. */
  | { readonly kind: 'malformed-control'; readonly text: string };

/**
 * Classifies one server frame. Text frames are always control; a binary frame is control only when
 * its whole payload parses as a JSON object, anything else is audio.
 */
export function classifyFrame(payload: Uint8Array | string, isBinary: boolean): FrameClass {
  const message = decodeControlFrame(payload);
  if (message) return { kind: 'control', message };
  if (!isBinary) {
    const text = typeof payload === 'string' ? payload : Buffer.from(payload).toString('utf8');
    return { kind: 'malformed-control', text };
  }
  return { kind: 'audio' };
}

/** Seconds of audio in s16le mono PCM of the given length. */
export function pcmSeconds(bytes: number, sampleRate = PCM_SAMPLE_RATE): number {
  return bytes / 2 / sampleRate;
}

/**
 * True when the received audio length agrees with the server's `total_duration_s`: within 5 % of
 * it, or within one Kokoro frame for clips so short that 5 % is less than a frame.
 */
export function durationMatches(audioSeconds: number, totalDurationS: number): boolean {
  const tolerance = Math.max(DURATION_TOLERANCE * Math.abs(totalDurationS), FRAME_TOLERANCE_S);
  return Math.abs(audioSeconds - totalDurationS) <= tolerance + 1e-9;
}

/** One line of the result table. `null` figures are shown as `-`. */
export interface ResultRow {
  readonly request: string;
  readonly chars: number;
  readonly bytes: number;
  readonly audioSeconds: number | null;
  readonly ttfaFromSendMs: number | null;
  readonly ttfaOwnTurnMs: number | null;
  readonly status: string;
}

/** A plain-text table: columns padded to their widest cell, numbers right-aligned, a rule below the headers. */
export function textTable(
  headers: readonly string[],
  rightAligned: readonly boolean[],
  cells: readonly (readonly string[])[],
): string {
  const widths = headers.map((h, i) => Math.max(h.length, ...cells.map((c) => c[i]?.length ?? 0)));
  const line = (values: readonly string[]): string =>
    values
      .map((v, i) => (rightAligned[i] ? v.padStart(widths[i] ?? 0) : v.padEnd(widths[i] ?? 0)))
      .join('  ')
      .trimEnd();
  return [line(headers), widths.map((w) => '-'.repeat(w)).join('  '), ...cells.map(line)].join('\n');
}

/** Formats the per-request results as an aligned plain-text table (numbers right-aligned). */
export function formatResultTable(rows: readonly ResultRow[]): string {
  const headers = ['request', 'chars', 'bytes', 'audio s', 'TTFA from send ms', 'TTFA own turn ms', 'status'];
  const rightAligned = [false, true, true, true, true, true, false];
  const fixed = (value: number | null, digits: number): string =>
    value === null ? '-' : value.toFixed(digits);
  const cells = rows.map((r) => [
    r.request,
    String(r.chars),
    String(r.bytes),
    fixed(r.audioSeconds, 2),
    fixed(r.ttfaFromSendMs, 0),
    fixed(r.ttfaOwnTurnMs, 0),
    r.status,
  ]);
  return textTable(headers, rightAligned, cells);
}

/** File name of a sentence's WAV: its position and its first words. */
export function wavName(index: number, text: string): string {
  const words = text
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, ' ')
    .trim()
    .split(' ')
    .filter(Boolean)
    .slice(0, 5);
  return `${String(index + 1).padStart(2, '0')}-${words.join('-').slice(0, 40) || 'audio'}.wav`;
}
