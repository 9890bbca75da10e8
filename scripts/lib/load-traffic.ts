/** The load test's traffic: raw engine throughput, WebSocket sessions, POST clients, /ping, rounds. */
import { request } from 'node:http';
import WebSocket from 'ws';
import { createEngine } from '../../model/engine.ts';
import { SAMPLE_RATE } from '../../model/kokoro/constants.ts';
import { engineOptions, parseConfig } from '../../server/config.ts';
import { type ServerProcess } from './server-process.ts';
import { median, round } from './stats.ts';

import {
  type LoadOptions,
  type RawResult,
  type RequestSample,
  type RoundResult,
  SENTENCES,
  sentencesFor,
  summarizeRound,
} from './load-report.ts';

/** The engine in-process, configured as the server configures it: inference with no server in between. */
export interface RawEngine {
  /**
   * Both (all) workers saturated: one stream per worker over `jobs`, in order, until they are done
   * or the deadline passes. Run it only while the server is idle: the two must not share the cores.
   */
  saturate(jobs: readonly string[], deadline: number): Promise<RawResult>;
  dispose(): Promise<void>;
}

/**
 * Starts the engine in-process, warms it on `distinct` (each once) and times each of them alone
 * `aloneTrials` times; every saturated run reports those figures too.
 */
export async function openRawEngine(
  modelDir: string,
  workers: number,
  distinct: readonly string[],
  aloneTrials: number,
): Promise<RawEngine> {
  // The server's own defaults for this model and worker count (threads per worker, queue, voice).
  const config = parseConfig({ KOKORO_MODEL_DIR: modelDir, KOKORO_WORKERS: String(workers) });
  const engine = await createEngine(engineOptions(config));
  const voice = engine.voices.resolve(config.defaultVoice);
  const synthesize = async (text: string) => {
    const started = performance.now();
    let samples = 0;
    let modelMs = 0;
    let frontEndMs = 0;
    for await (const chunk of engine.stream({ text, voice, speed: 1 })) {
      samples += chunk.samples.length;
      modelMs += chunk.inferenceMs;
      frontEndMs += chunk.frontEndMs ?? 0;
    }
    return { ms: performance.now() - started, samples, modelMs, frontEndMs };
  };
  const alone: Awaited<ReturnType<typeof synthesize>>[] = [];
  try {
    for (const text of distinct) await synthesize(text); // warm caches and JIT
    for (let trial = 0; trial < aloneTrials; trial++)
      for (const text of distinct) alone.push(await synthesize(text));
  } catch (err) {
    await engine.dispose();
    throw err;
  }
  const sentence = {
    sentenceMs: round(median(alone.map((a) => a.ms)), 2),
    sentenceModelMs: round(median(alone.map((a) => a.modelMs)), 2),
    sentenceFrontEndMs: round(median(alone.map((a) => a.frontEndMs)), 2),
    sentenceAudioS: round(median(alone.map((a) => a.samples / SAMPLE_RATE)), 3),
  };

  return {
    async saturate(jobs, deadline) {
      let next = 0;
      let samples = 0;
      const cpu = process.cpuUsage();
      const started = performance.now();
      await Promise.all(
        Array.from({ length: engine.info.workers }, async () => {
          while (next < jobs.length && Date.now() < deadline) {
            // Not `samples += await …`: that reads `samples` before the await and loses the other lane's sums.
            const done = await synthesize(jobs[next++]!);
            samples += done.samples;
          }
        }),
      );
      const wallS = (performance.now() - started) / 1000;
      const cpuUsed = process.cpuUsage(cpu);
      const audioS = samples / SAMPLE_RATE;
      return {
        workers: engine.info.workers,
        jobs: next,
        audioS: round(audioS, 2),
        wallS: round(wallS, 3),
        audioPerWallS: round(audioS / wallS, 2),
        cpuPct: round((cpuUsed.user + cpuUsed.system) / 1e4 / wallS, 0),
        ...sentence,
      };
    },
    dispose: () => engine.dispose(),
  };
}

// ---------------------------------------------------------------------------------------------
// Load clients

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export function openSocket(url: string, deadline: number): Promise<WebSocket> {
  return new Promise((resolve, reject) => {
    const socket = new WebSocket(url, { handshakeTimeout: Math.max(1, deadline - Date.now()) });
    socket.once('open', () => {
      // Later errors end in 'close', where pending requests are counted as failed.
      socket.on('error', () => {});
      resolve(socket);
    });
    socket.once('error', reject);
  });
}

/**
 * One WebSocket session: sends its sentences one after another (or all at once) and times each
 * request from its send to its first audio frame. Answers arrive strictly in order, so the audio
 * between a request's synthesis_start and synthesis_complete is its own.
 */
export async function wsSession(
  socket: WebSocket,
  texts: readonly string[],
  pipelined: boolean,
  idPrefix: string,
  deadline: number,
): Promise<RequestSample[]> {
  interface Pending {
    sentAt: number;
    firstAt?: number;
    resolve(sample: RequestSample): void;
  }
  const pending = new Map<string, Pending>();
  let current: string | undefined;
  const finish = (id: string, sample: Omit<RequestSample, 'route' | 'ttfaMs'>) => {
    const p = pending.get(id);
    if (!p) return;
    pending.delete(id);
    p.resolve({ route: 'ws', ttfaMs: p.firstAt === undefined ? NaN : p.firstAt - p.sentAt, ...sample });
  };
  socket.on('message', (data: Buffer, isBinary: boolean) => {
    if (isBinary) {
      const p = current === undefined ? undefined : pending.get(current);
      if (p && p.firstAt === undefined) p.firstAt = performance.now();
      return;
    }
    const m = JSON.parse(data.toString()) as Record<string, unknown>;
    const id = String(m.request_id);
    if (m.type === 'synthesis_start') current = id;
    else if (m.type === 'synthesis_complete') finish(id, { audioS: Number(m.total_duration_s) || 0 });
    else if (m.type === 'error') finish(id, { audioS: 0, error: String(m.code) });
  });
  socket.once('close', () => {
    for (const id of [...pending.keys()]) finish(id, { audioS: 0, error: 'closed' });
  });

  const send = (text: string, k: number): Promise<RequestSample> => {
    const id = `${idPrefix}-${k}`;
    const done = new Promise<RequestSample>((resolve) => {
      pending.set(id, { sentAt: performance.now(), resolve });
    });
    socket.send(Buffer.from(JSON.stringify({ text, request_id: id, request_timestamp: Date.now() / 1000 })));
    return done;
  };
  const timeout = new Promise<'timeout'>((resolve) => {
    const timer = setTimeout(() => resolve('timeout'), Math.max(0, deadline - Date.now()));
    timer.unref();
  });
  const timedOut = (): RequestSample => ({ route: 'ws', ttfaMs: NaN, audioS: 0, error: 'timeout' });

  if (pipelined) {
    const all = Promise.all(texts.map((t, k) => send(t, k)));
    const result = await Promise.race([all, timeout]);
    return result === 'timeout' ? texts.map(timedOut) : result;
  }
  const samples: RequestSample[] = [];
  for (const [k, text] of texts.entries()) {
    const result = await Promise.race([send(text, k), timeout]);
    if (result === 'timeout') return [...samples, ...texts.slice(k).map(timedOut)];
    samples.push(result);
  }
  return samples;
}

/** One POST: time to the first body byte; audio seconds from the raw PCM length. */
export function postOnce(http: string, text: string, deadline: number): Promise<RequestSample> {
  return new Promise((resolve) => {
    const started = performance.now();
    let first: number | undefined;
    let bytes = 0;
    const fail = (error: string) => resolve({ route: 'post', ttfaMs: NaN, audioS: 0, error });
    const req = request(`${http}/invocations`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      timeout: Math.max(1, deadline - Date.now()),
    });
    req.on('timeout', () => req.destroy(new Error('timeout')));
    req.on('error', (err) => fail(err.message === 'timeout' ? 'timeout' : 'network'));
    req.on('response', (res) => {
      if (res.statusCode !== 200) {
        res.resume();
        fail(`http_${res.statusCode}`);
        return;
      }
      res.on('data', (chunk: Buffer) => {
        first ??= performance.now();
        bytes += chunk.length;
      });
      res.on('end', () =>
        resolve({
          route: 'post',
          ttfaMs: first === undefined ? NaN : first - started,
          audioS: bytes / (SAMPLE_RATE * 2),
        }),
      );
      res.on('error', () => fail('network'));
    });
    req.end(JSON.stringify({ text, format: 'pcm' }));
  });
}

/** A POST client: loops over its sentences until the sessions are done (bounded by count and time). */
export async function postClient(
  http: string,
  texts: readonly string[],
  stop: () => boolean,
  maxRequests: number,
  deadline: number,
): Promise<RequestSample[]> {
  const samples: RequestSample[] = [];
  for (let k = 0; k < maxRequests && !stop() && Date.now() < deadline; k++)
    samples.push(await postOnce(http, texts[k % texts.length]!, deadline));
  return samples;
}

/** GET /ping every `intervalMs` until stopped (bounded by count and time). */
export async function pingLoop(
  http: string,
  intervalMs: number,
  stop: () => boolean,
  deadline: number,
): Promise<{ latencies: number[]; failures: number }> {
  const latencies: number[] = [];
  let failures = 0;
  const maxPings = Math.ceil((deadline - Date.now()) / intervalMs) + 1;
  for (let n = 0; n < maxPings && !stop() && Date.now() < deadline; n++) {
    const started = performance.now();
    try {
      const res = await fetch(`${http}/ping`, { signal: AbortSignal.timeout(5000) });
      await res.arrayBuffer();
      if (res.status === 200) latencies.push(performance.now() - started);
      else failures++;
    } catch {
      failures++;
    }
    await sleep(Math.max(0, intervalMs - (performance.now() - started)));
  }
  return { latencies, failures };
}

export interface Target {
  readonly http: string;
  readonly ws: string;
  rss(): Promise<number | null>;
  /** The server's CPU seconds so far, when it is our child process. */
  cpuSeconds(): number | null;
}

export async function runRound(
  target: Target,
  options: LoadOptions,
  roundNumber: number,
  label: string,
): Promise<RoundResult> {
  const deadline = Date.now() + options.roundTimeoutS * 1000;
  const sockets = await Promise.all(
    Array.from({ length: options.sessions }, () => openSocket(target.ws, deadline)),
  );
  let sessionsDone = false;
  const clientCpu = process.cpuUsage();
  const serverCpu = target.cpuSeconds();
  const ping = pingLoop(target.http, options.pingMs, () => sessionsDone, deadline);
  const started = performance.now();
  const sessions = Promise.all(
    sockets.map((socket, i) =>
      wsSession(socket, sentencesFor(i, options.sentences), options.pipelined, `${label}-s${i}`, deadline),
    ),
  ).finally(() => (sessionsDone = true));
  const posts = Promise.all(
    Array.from({ length: options.posts }, (_, j) =>
      postClient(
        target.http,
        sentencesFor(options.sessions + j, SENTENCES.length),
        () => sessionsDone,
        options.sessions * options.sentences,
        deadline,
      ),
    ),
  );
  const samples = [...(await sessions).flat(), ...(await posts).flat()];
  const wallS = (performance.now() - started) / 1000;
  const serverCpuNow = target.cpuSeconds();
  const clientCpuS = (({ user, system }) => (user + system) / 1e6)(process.cpuUsage(clientCpu));
  const { latencies, failures } = await ping;
  for (const s of sockets) s.close();
  return summarizeRound(roundNumber, samples, latencies, failures, wallS, await target.rss(), {
    client: clientCpuS,
    server: serverCpu === null || serverCpuNow === null ? null : serverCpuNow - serverCpu,
  });
}

export async function stopServer(server: ServerProcess): Promise<void> {
  const timer = setTimeout(() => server.child.kill('SIGKILL'), 40_000);
  await server.stop();
  clearTimeout(timer);
}
