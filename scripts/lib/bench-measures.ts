/**
 * The measures of the benchmarks, each defined once and only here, so that a figure means the same
 * in every case: time to first audio and total time (client side, from sending), playback stalls,
 * throughput and GET /ping under load, and cancel latency. Requests go through the product's client
 * (`kokoro-stream-client`) and ask for raw PCM, so bytes are audio from the first one.
 */
import { createHash } from 'node:crypto';
import { postSpeech, type SynthesisOptions, type TtsEvent, type TtsSession } from 'kokoro-stream-client';

/** What each measure is, for `--help` and the JSON results. */
export const MEASURES = {
  ttfa: 'time to first audio: sending a request → its first audio byte, on the client (ms)',
  total: 'total time: sending a request → its last audio byte, on the client (ms)',
  agent: 'first audio as a voice agent sees it: its simulated LLM asked → the first audio byte (ms)',
  stalls:
    'playback stalls: seconds a listener who starts playing at the first byte, in real time, waits for audio',
  throughput: 'audio seconds delivered per wall second, every stream of a closed loop together',
  ping: 'GET /ping every 20 ms while the streams of a closed loop run: latency (ms)',
  memory: 'the server’s resident memory (VmRSS) after a round of load (MB)',
  cancel:
    'cancel latency: cancel sent → synthesis_cancelled on the client; arrival → answer in the server log',
  capacity: 'Q_max: the most closed-loop streams whose p95 time to first audio is within the SLO',
  encoder: 'bytes, bitrate and encoder latency per format, in-process',
  agreement: 'share of phoneme strings identical to recorded outputs of misaki, in-process',
  'front end': 'text front end per sentence (normalization, phonemes, vocabulary filter), load and memory',
} as const;
export type MeasureName = keyof typeof MEASURES;

/** PCM16 mono at 24 kHz. */
export const PCM_BYTES_PER_S = 48_000;
const PING_EVERY_MS = 20;

/** A piece of an answer: when it arrived (ms after sending) and its size. */
export interface Arrival {
  readonly atMs: number;
  readonly bytes: number;
}

/** One request as the client saw it. */
export interface Timing {
  readonly ttfaMs: number;
  readonly totalMs: number;
  readonly audioS: number;
  readonly stallS: number;
  readonly bytes: number;
  /** SHA-256 of the audio, to tell whether two servers sent the same. */
  readonly digest: string;
  /** The server's error code, `network` or `closed`, for a request that did not complete. */
  readonly error?: string;
  /** The WebSocket answer's synthesis_complete frame, with the server's own figures. */
  readonly complete?: Readonly<Record<string, unknown>>;
}

/**
 * Seconds of silence after playback started, for a client that starts playing at the first byte
 * and plays in real time: whenever audio arrives after the playhead has run out, the wait counts.
 */
export function playbackStallS(arrivals: readonly Arrival[], bytesPerS = PCM_BYTES_PER_S): number {
  let stall = 0;
  let dryAt = NaN;
  for (const a of arrivals) {
    const t = a.atMs / 1000;
    if (Number.isNaN(dryAt)) dryAt = t;
    else if (t > dryAt) {
      stall += t - dryAt;
      dryAt = t;
    }
    dryAt += a.bytes / bytesPerS;
  }
  return stall;
}

/** Starts the clock at the send: the one place where a timing's figures are computed. */
function clock() {
  const started = performance.now();
  const arrivals: Arrival[] = [];
  const hash = createHash('sha256');
  return {
    audio(bytes: Uint8Array): void {
      arrivals.push({ atMs: performance.now() - started, bytes: bytes.byteLength });
      hash.update(bytes);
    },
    end(extra: Pick<Timing, 'error' | 'complete'> = {}): Timing {
      const bytes = arrivals.reduce((n, a) => n + a.bytes, 0);
      return {
        ttfaMs: arrivals[0]?.atMs ?? NaN,
        totalMs: performance.now() - started,
        audioS: bytes / PCM_BYTES_PER_S,
        stallS: playbackStallS(arrivals),
        bytes,
        digest: hash.digest('hex'),
        ...extra,
      };
    },
  };
}

const codeOf = (err: unknown): string => {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'string' ? code : 'network';
};

/** A byte stream whose request starts when it is first read (a POST, a SageMaker response stream). */
export async function timeStream(chunks: AsyncIterable<Uint8Array>): Promise<Timing> {
  const c = clock();
  try {
    for await (const chunk of chunks) if (chunk.byteLength > 0) c.audio(chunk);
  } catch (err) {
    return c.end({ error: codeOf(err) });
  }
  return c.end();
}

/** One streaming POST /invocations for raw PCM, of a text or of phonemes. */
export const timePost = (
  http: string,
  input: string | { readonly phonemes: string },
  options: SynthesisOptions = {},
): Promise<Timing> => timeStream(postSpeech(http, input, { ...options, format: 'pcm' }));

/** What timeWs needs of a session: a WebSocket `TtsSession` or a SageMaker one. */
export interface EventSession {
  send(text: string, options?: SynthesisOptions): string;
  events(): AsyncIterator<TtsEvent>;
}

/**
 * One request over a session that has nothing else in flight, for raw PCM. A session whose
 * events() may be taken only once (SageMaker's) passes its iterator as `events`.
 */
export async function timeWs(
  session: EventSession,
  text: string,
  options: SynthesisOptions = {},
  events: AsyncIterator<TtsEvent> = session.events(),
): Promise<Timing> {
  const c = clock();
  const id = session.send(text, { ...options, format: 'pcm' });
  for (let next = await events.next(); !next.done; next = await events.next()) {
    const e = next.value;
    if (e.type === 'closed') break;
    if (!('requestId' in e) || e.requestId !== id) continue;
    if (e.type === 'audio') c.audio(e.bytes);
    else if (e.type === 'complete') return c.end({ complete: e.raw });
    else if (e.type === 'error') return c.end({ error: e.code });
  }
  return c.end({ error: 'closed' });
}

/** A closed loop's requests, /ping latencies and throughput. */
export interface LoadRun {
  readonly timings: readonly (Timing & { readonly stream: number })[];
  readonly pings: readonly number[];
  readonly pingFailures: number;
  readonly wallS: number;
  /** Audio seconds of the completed requests per wall second. */
  readonly throughput: number;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * Runs `streams` in a closed loop (each sends its next request as soon as its last one ended, the
 * request number as argument) until `stop(requestsDone)` says so after one, and polls GET /ping
 * every 20 ms for as long as any stream runs.
 */
export async function underLoad(
  http: string,
  streams: readonly ((n: number) => Promise<Timing>)[],
  stop: (requestsDone: number) => boolean,
): Promise<LoadRun> {
  const timings: (Timing & { stream: number })[] = [];
  const started = performance.now();
  let running = true;
  const loops = Promise.all(
    streams.map(async (request, stream) => {
      for (let n = 0; ; ) {
        timings.push({ ...(await request(n)), stream });
        if (stop(++n)) return;
      }
    }),
  ).finally(() => (running = false));
  const pings: number[] = [];
  let pingFailures = 0;
  while (running) {
    const t = performance.now();
    try {
      const res = await fetch(`${http}/ping`, { signal: AbortSignal.timeout(5000) });
      await res.arrayBuffer();
      if (res.ok) pings.push(performance.now() - t);
      else pingFailures++;
    } catch {
      pingFailures++;
    }
    await sleep(Math.max(0, PING_EVERY_MS - (performance.now() - t)));
  }
  await loops;
  const wallS = (performance.now() - started) / 1000;
  const audioS = timings.reduce((n, t) => n + (t.error ? 0 : t.audioS), 0);
  return { timings, pings, pingFailures, wallS, throughput: audioS / wallS };
}

/** One barge-in: a request, a cancel as its first audio arrives, the answer. */
export interface CancelTrial {
  readonly requestId: string;
  /** Cancel sent → synthesis_cancelled received. */
  readonly clientMs: number;
  /** The request was still running: the answer lists it and it never completed. */
  readonly cut: boolean;
}

export async function cancelTrial(session: TtsSession, text: string): Promise<CancelTrial> {
  const id = session.send(text, { format: 'pcm' });
  for await (const e of session.events()) {
    if (e.type === 'audio' && e.requestId === id) break;
    if ((e.type === 'complete' || e.type === 'error') && e.requestId === id)
      throw new Error(`request ${id} ended before its first audio`);
  }
  const sentAt = performance.now();
  const answered = session.cancel().then((c) => ({ c, at: performance.now() }));
  let completed = false;
  for await (const e of session.events()) {
    if (e.type === 'complete' && e.requestId === id) completed = true;
    if (e.type === 'cancelled') break;
  }
  const { c, at } = await answered;
  return { requestId: id, clientMs: at - sentAt, cut: c.cancelled.includes(id) && !completed };
}
