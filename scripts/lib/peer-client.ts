/**
 * The client of the side-by-side benchmarks (bench-peer: ours against a kokoro-js server;
 * bench-solo: ours with and without the solo session): POSTs asking for raw PCM, timed from sending
 * to the first and the last body byte, concurrent clients, and /ping while streams run.
 */
import { createHash } from 'node:crypto';
import { request } from 'node:http';
import { loadavg } from 'node:os';
import { PARAGRAPH } from './bench-texts.ts';

export const VOICE = 'af_heart';
export const PARAGRAPH_TEXT = PARAGRAPH.join(' ');
export const CONCURRENT_CLIENTS = 8;
export const PARAGRAPHS_PER_CLIENT = 3;
export const PING_STREAMS = 4;
const PING_EVERY_MS = 20;
/** Rounds of the 4 streams are repeated until this many pings were taken, or PING_MAX_MS passed. */
const PING_MIN_SAMPLES = 100;
const PING_MAX_MS = 20_000;

export interface PostResult {
  /** Sending → first body byte. */
  readonly ttfaMs: number;
  /** Sending → last body byte. */
  readonly totalMs: number;
  readonly bytes: number;
  /** Of the whole body, to tell whether two servers sent the same audio. */
  readonly sha256: string;
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
/** The machine's 1-minute load average. */
export const load1 = (): number => loadavg()[0]!;

/**
 * One POST /invocations asking for raw PCM, timed by the client as scripts/lib/bench-core.ts's
 * `timePostPcm` does; resolves when the whole answer is in. Non-200 rejects.
 */
export function postPcm(http: string, text: string, onFirstByte?: () => void): Promise<PostResult> {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const hash = createHash('sha256');
    let first = NaN;
    let bytes = 0;
    const req = request(`${http}/invocations`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
    });
    req.on('response', (res) => {
      if (res.statusCode !== 200) {
        res.resume();
        reject(new Error(`HTTP ${res.statusCode} from ${http}`));
        return;
      }
      res.on('data', (chunk: Buffer) => {
        if (bytes === 0) {
          first = performance.now() - started;
          onFirstByte?.();
        }
        bytes += chunk.length;
        hash.update(chunk);
      });
      res.on('end', () =>
        resolve({ ttfaMs: first, totalMs: performance.now() - started, bytes, sha256: hash.digest('hex') }),
      );
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(JSON.stringify({ text, voice: VOICE, format: 'pcm' }));
  });
}

/**
 * 8 clients at once, each sending the paragraph 3 times in a row: every request's first audio, and
 * the audio seconds delivered per wall second (PCM16 at 24 kHz).
 */
export async function concurrentClients(http: string): Promise<{ ttfaMs: number[]; audioPerWallS: number }> {
  const ttfa: number[] = [];
  let bytes = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: CONCURRENT_CLIENTS }, async () => {
      for (let i = 0; i < PARAGRAPHS_PER_CLIENT; i++) {
        const result = await postPcm(http, PARAGRAPH_TEXT);
        ttfa.push(result.ttfaMs);
        bytes += result.bytes;
      }
    }),
  );
  const wallS = (performance.now() - started) / 1000;
  return { ttfaMs: ttfa, audioPerWallS: bytes / 2 / 24_000 / wallS };
}

/**
 * GET /ping every 20 ms while 4 paragraph POSTs stream: a ping counts if it is sent after all 4 have
 * sent audio and before the first of them has finished. Rounds repeat until there are enough pings
 * (the fast model's streams are short).
 */
export async function pingWhileStreaming(http: string): Promise<{ latencies: number[]; rounds: number }> {
  const latencies: number[] = [];
  const started = performance.now();
  let rounds = 0;
  do {
    rounds++;
    let streaming = 0;
    let allStreaming!: () => void;
    const streamingNow = new Promise<void>((resolve) => (allStreaming = resolve));
    const posts = Array.from({ length: PING_STREAMS }, () =>
      postPcm(http, PARAGRAPH_TEXT, () => {
        if (++streaming === PING_STREAMS) allStreaming();
      }),
    );
    let running = true;
    const stop = () => (running = false);
    const firstDone = Promise.race(posts).then(stop, stop);
    await Promise.race([streamingNow, firstDone]);
    while (running) {
      const t = performance.now();
      const res = await fetch(`${http}/ping`);
      await res.arrayBuffer();
      if (res.status !== 200) throw new Error(`GET /ping answered ${res.status}`);
      latencies.push(performance.now() - t);
      await sleep(PING_EVERY_MS);
    }
    await Promise.all(posts);
  } while (latencies.length < PING_MIN_SAMPLES && performance.now() - started < PING_MAX_MS);
  return { latencies, rounds };
}
