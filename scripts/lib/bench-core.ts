/**
 * The core benchmark's measurements against one running server: POSTs timed byte by byte (time to
 * first audio, completion, playback stalls), each chunk of a text alone over WebSocket (its model
 * time, as the server reports it, next to the completion of the whole text), the server's own overhead, and GET /ping while every worker is
 * busy. `bench.ts` runs them on each model and puts the figures together.
 */
import { request } from 'node:http';
import WebSocket from 'ws';
import { SAMPLE_RATE } from '../../model/kokoro/constants.ts';
import { splitSentences } from '../../model/text/sentences.ts';
import { EIGHT_SENTENCES, LONG_FIRST_SENTENCE, OVERHEAD_SENTENCES, PARAGRAPH } from './bench-texts.ts';
import {
  playbackStallS,
  type Arrival,
  type ChunkAlone,
  type OverheadSample,
  type PingSample,
  type PostSample,
  type ServerRaw,
} from './bench-core-report.ts';
import { RawWsSession, type RawFrame } from './raw-ws.ts';

/** Raw PCM16 mono at 24 kHz: bytes per second of audio. */
const PCM_BYTES_PER_S = SAMPLE_RATE * 2;

/**
 * One POST /invocations as raw PCM, timed by the client: the first body byte, the last, and when
 * each piece of audio arrived (for the playback simulation). Resolves when the whole answer is in,
 * so the next request never competes with this one's remaining sentences. Non-200 rejects.
 */
export function timePostPcm(http: string, body: Record<string, unknown>): Promise<PostSample> {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const arrivals: Arrival[] = [];
    const req = request(`${http}/invocations`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
    });
    req.on('response', (res) => {
      if (res.statusCode !== 200) {
        res.resume();
        reject(new Error(`HTTP ${res.statusCode}`));
        return;
      }
      res.on('data', (chunk: Buffer) =>
        arrivals.push({ atMs: performance.now() - started, bytes: chunk.length }),
      );
      res.on('end', () => {
        const bytes = arrivals.reduce((n, a) => n + a.bytes, 0);
        resolve({
          ttfaMs: arrivals[0]?.atMs ?? NaN,
          totalMs: performance.now() - started,
          audioS: bytes / PCM_BYTES_PER_S,
          stallS: playbackStallS(arrivals, PCM_BYTES_PER_S),
        });
      });
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(JSON.stringify({ ...body, format: 'pcm' }));
  });
}

/** Sends one request over a session and returns its synthesis_complete (an error frame rejects). */
async function complete(
  session: RawWsSession,
  message: Record<string, unknown> & { request_id: string },
): Promise<Record<string, unknown>> {
  const end = session.next(
    (f: RawFrame) =>
      f.message?.request_id === message.request_id &&
      (f.message.type === 'synthesis_complete' || f.message.type === 'error'),
    600_000,
    `synthesis_complete of ${message.request_id}`,
  );
  session.send({ ...message, request_timestamp: Date.now() / 1000 });
  const m = (await end).message!;
  if (m.type === 'error') throw new Error(`request ${message.request_id} failed: ${String(m.message)}`);
  return m;
}

/**
 * Each chunk in `alone` gets one more sample: the chunk sent alone (`first_chunk: sentence`, so it
 * is not cut again) on an otherwise idle server, one at a time, its model and front-end time and its
 * audio read from synthesis_complete. Returns the sum of this round's model times.
 */
async function chunksAloneOnce(
  session: RawWsSession,
  chunks: readonly string[],
  alone: ChunkAlone[],
  tag: string,
): Promise<number> {
  let sumMs = 0;
  for (const [i, chunk] of chunks.entries()) {
    const m = await complete(session, { text: chunk, first_chunk: 'sentence', request_id: `${tag}-${i}` });
    const modelMs = Number(m.inference_s) * 1000;
    sumMs += modelMs;
    alone[i]!.modelMs.push(modelMs);
    alone[i]!.frontEndMs.push(Number(m.first_chunk_frontend_s) * 1000);
    alone[i]!.audioS = Number(m.total_duration_s);
  }
  return sumMs;
}

/** One request at a time over one session: arrival → first audio frame sent, and what it was made of. */
export async function serverOverhead(ws: string, rounds: number): Promise<OverheadSample[]> {
  const session = await RawWsSession.open(ws);
  try {
    const samples: OverheadSample[] = [];
    for (let r = 0; r < rounds; r++) {
      for (const [i, text] of OVERHEAD_SENTENCES.entries()) {
        const m = await complete(session, { text, request_id: `o${r}-${i}` });
        samples.push({
          serverTtfaMs: Number(m.time_to_first_audio_s) * 1000,
          firstInferenceMs: Number(m.first_chunk_inference_s) * 1000,
          firstFrontEndMs: Number(m.first_chunk_frontend_s) * 1000,
        });
      }
    }
    return samples;
  } finally {
    await session.close();
  }
}

function openSocket(url: string): Promise<WebSocket> {
  return new Promise((resolve, reject) => {
    const s = new WebSocket(url);
    s.once('open', () => resolve(s));
    s.once('error', reject);
  });
}

/** GET /ping every 10 ms while 2 × workers sessions keep every worker busy; only pings taken then count. */
export async function pingUnderLoad(http: string, ws: string, workers: number): Promise<PingSample> {
  const long = Array.from({ length: 3 }, () => PARAGRAPH.join(' ')).join(' ');
  const sockets = await Promise.all(Array.from({ length: workers * 2 }, () => openSocket(ws)));
  let remaining = sockets.length * 2;
  const done = new Promise<void>((resolve) => {
    for (const s of sockets) {
      s.on('message', (data: Buffer, isBinary: boolean) => {
        if (
          !isBinary &&
          (JSON.parse(data.toString()) as { type: string }).type === 'synthesis_complete' &&
          --remaining === 0
        )
          resolve();
      });
      for (let i = 0; i < 2; i++) s.send(Buffer.from(JSON.stringify({ text: long })));
    }
  });
  const latencies: number[] = [];
  let finished = false;
  void done.then(() => (finished = true));
  while (!finished) {
    const t = performance.now();
    const res = await fetch(`${http}/ping`);
    const body = (await res.json()) as { busy: number };
    const ms = performance.now() - t;
    if (body.busy >= workers) latencies.push(ms);
    await new Promise((r) => setTimeout(r, 10));
  }
  for (const s of sockets) s.close();
  return { latencies };
}

export interface MeasurePlan {
  /** Trials of each POST, interleaved so that every kind sees the same machine. */
  readonly trials: number;
  /** The server's FIRST_CHUNK_MIN_CHARS, to cut the texts as it does. */
  readonly firstChunkMinChars: number;
  /** Everything (the server with the default look-ahead), or only what a baseline is compared on. */
  readonly full: boolean;
  /** Rounds of the overhead requests (full only). */
  readonly overheadRounds: number;
  /** Also GET /ping under load (full only), with this many workers; 0: not measured. */
  readonly pingWorkers: number;
  readonly log: (line: string) => void;
}

/**
 * Everything the core benchmark measures on one server. Each trial sends every kind of POST once,
 * and before the 8-sentence POST each of its chunks alone: the machine's speed drifts over minutes,
 * so the ideal is measured next to the completion it is compared with.
 */
export async function measureServer(
  server: { http: string; ws: string },
  lookahead: number,
  plan: MeasurePlan,
): Promise<ServerRaw> {
  const eight = EIGHT_SENTENCES.join(' ');
  const paragraph = PARAGRAPH.join(' ');
  const clause = splitSentences(LONG_FIRST_SENTENCE, { firstChunkMinChars: plan.firstChunkMinChars })[0]!;
  const eightChunks = splitSentences(eight, { firstChunkMinChars: plan.firstChunkMinChars });
  const post = (body: Record<string, unknown>) => timePostPcm(server.http, body);

  // Warm every path once (JIT, the session's buffers for each length).
  await post({ text: eight });
  await post({ text: LONG_FIRST_SENTENCE });

  const raw: ServerRaw = {
    lookahead,
    clauseChars: clause.length,
    longEarly: [],
    eight: [],
    alone: eightChunks.map((chunk) => ({ chars: chunk.length, modelMs: [], frontEndMs: [], audioS: 0 })),
    eightAloneSumMs: [],
    clauseAlone: [],
    firstSentence: [],
    paragraph: [],
    ...(plan.full ? { longSentence: [], eightWs: [] } : {}),
  };
  plan.log(`  ${plan.trials} trials: each kind of POST once, the 8-sentence text's chunks alone…`);
  const session = await RawWsSession.open(server.ws);
  try {
    for (let i = 0; i < plan.trials; i++) {
      raw.clauseAlone.push(await post({ text: clause }));
      raw.longEarly.push(await post({ text: LONG_FIRST_SENTENCE }));
      if (plan.full)
        raw.longSentence!.push(await post({ text: LONG_FIRST_SENTENCE, first_chunk: 'sentence' }));
      raw.firstSentence.push(await post({ text: PARAGRAPH[0]! }));
      raw.paragraph.push(await post({ text: paragraph }));
      raw.eightAloneSumMs.push(await chunksAloneOnce(session, eightChunks, raw.alone, `a${i}`));
      raw.eight.push(await post({ text: eight }));
      if (plan.full) {
        // The same text once more over WS, for the server's own sum of model times as they ran.
        const m = await complete(session, { text: eight, request_id: `e${i}` });
        raw.eightWs!.push({
          inferenceMs: Number(m.inference_s) * 1000,
          elapsedMs: Number(m.elapsed_s) * 1000,
        });
      }
    }
  } finally {
    await session.close();
  }
  if (plan.full) {
    plan.log(`  server overhead, ${plan.overheadRounds} round(s) of one request at a time…`);
    raw.overhead = await serverOverhead(server.ws, plan.overheadRounds);
    if (plan.pingWorkers > 0) {
      plan.log('  GET /ping while every worker is busy…');
      raw.ping = await pingUnderLoad(server.http, server.ws, plan.pingWorkers);
    }
  }
  return raw;
}
