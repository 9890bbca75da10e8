/**
 * Time to first audio from the agent's side, with the client toolkit (`kokoro-stream-client`):
 *
 *  1. Transport isolation: one 4-sentence text as one message vs its first sentence alone, over
 *     POST and over one WebSocket session (medians of several trials, side by side).
 *  2. Agent simulation: a simulated LLM streams tokens; "bidi" feeds them through the sentence
 *     chunker into one WebSocket session (sentence 1 is synthesized while sentence 2 is being
 *     generated); "append" sends every token as it comes as an `append` to one utterance and a
 *     `flush` at the end (the server finds the sentences); "batch" waits for the whole answer,
 *     then makes one POST. Time from the agent's start to the first audio chunk, for a few LLM
 *     speeds. With --slow-repeat N, the same again on a second server whose stand-in has
 *     `--repeat N` (1000: about a second per sentence on two cores; it adds minutes).
 *  3. Bytes on the wire: binary vs SSE (base64) for the same answer.
 *
 * Usage: npm run bench:ttfa -- [--trials 5] [--repeat 30] [--slow-repeat 0] [--url http://host:port] [--out docs/bench]
 */
import { mkdtempSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { IncrementalSentenceChunker, TtsSession, readSse } from 'kokoro-stream-client';
import { writeStandinModelDir } from './lib/standin-model.ts';
import { timePost } from './lib/http-timing.ts';
import { RawWsSession } from './lib/raw-ws.ts';
import { startServerProcess } from './lib/server-process.ts';
import { markdownTable, median, replaceReadmeBlock, round } from './lib/stats.ts';
import { isMain } from './lib/cli.ts';

/** 270 characters, 4 sentences: the shape of a typical agent answer. */
export const ANSWER =
  'I checked your calendar and you are free on Thursday afternoon. ' +
  'The dentist has two openings, one at two fifteen and one at four. ' +
  'The later slot is closer to when you leave work, so it may suit you a bit better. ' +
  'Shall I book four o’clock and add a reminder for you, too?';

/** Splits text into LLM-like tokens: words with their leading space, punctuation apart. */
export function tokenize(text: string): string[] {
  return text.match(/\s*[\w’']+|\s*[^\s\w]/g) ?? [];
}

/** Streams tokens like an LLM: a first-token delay, then a steady rate. */
export async function* simulateLlm(
  text: string,
  firstTokenMs: number,
  tokensPerSecond: number,
): AsyncGenerator<string> {
  const tokens = tokenize(text);
  await sleep(firstTokenMs);
  const started = performance.now();
  for (const [i, token] of tokens.entries()) {
    const due = started + (i * 1000) / tokensPerSecond;
    const wait = due - performance.now();
    if (wait > 0) await sleep(wait);
    yield token;
  }
}

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/** One request over an open session: ms from send to its first audio event; waits for completion. */
async function wsRequest(session: TtsSession, text: string): Promise<number> {
  const started = performance.now();
  const id = session.send(text);
  let first: number | undefined;
  for await (const event of session.events()) {
    if (event.type === 'audio' && event.requestId === id) first ??= performance.now() - started;
    if ((event.type === 'complete' || event.type === 'error') && event.requestId === id) break;
  }
  return first ?? NaN;
}

/** Bidi agent: tokens → chunker → one session; returns ms from agent start to first audio. */
async function bidiAgent(ws: string, firstTokenMs: number, tps: number): Promise<number> {
  const session = await TtsSession.connect(ws);
  const started = performance.now();
  const chunker = new IncrementalSentenceChunker();
  let firstAudio: number | undefined;
  let pending = 0;
  let generationDone = false;
  const reader = (async () => {
    for await (const event of session.events()) {
      if (event.type === 'audio') firstAudio ??= performance.now() - started;
      if (event.type === 'complete' || event.type === 'error') pending--;
      if (generationDone && pending === 0) break;
    }
  })();
  for await (const token of simulateLlm(ANSWER, firstTokenMs, tps)) {
    for (const sentence of chunker.feed(token)) {
      pending++;
      session.send(sentence);
    }
  }
  for (const sentence of chunker.flush()) {
    pending++;
    session.send(sentence);
  }
  generationDone = true;
  await reader;
  await session.close();
  return firstAudio ?? NaN;
}

/**
 * Append agent: every token goes out as it comes, as an `append` to one utterance (the first
 * names it), then a `flush` when the LLM ends; the server cuts the sentences. Raw messages over
 * `ws`, no client toolkit.
 */
async function appendAgent(ws: string, firstTokenMs: number, tps: number): Promise<number> {
  const session = await RawWsSession.open(ws);
  const id = 'answer';
  const started = performance.now();
  let firstAudio: number | undefined;
  const stop = session.onFrame((f) => {
    if (f.binary) firstAudio ??= f.at - started;
  });
  const end = session.next(
    (f) =>
      f.message?.request_id === id && (f.message.type === 'synthesis_complete' || f.message.type === 'error'),
    300_000,
    'the end of the utterance',
  );
  end.catch(() => {}); // awaited below, after the tokens
  let first = true;
  for await (const token of simulateLlm(ANSWER, firstTokenMs, tps)) {
    session.send(first ? { type: 'append', text: token, request_id: id } : { type: 'append', text: token });
    first = false;
  }
  session.send({ type: 'flush' });
  const last = await end;
  stop();
  await session.close();
  if (last.message?.type === 'error') throw new Error(`append agent: ${String(last.message.message)}`);
  return firstAudio ?? NaN;
}

/** Batch agent: the whole answer first, then one synthesis call. */
async function batchAgent(http: string, firstTokenMs: number, tps: number): Promise<number> {
  const started = performance.now();
  let text = '';
  for await (const token of simulateLlm(ANSWER, firstTokenMs, tps)) text += token;
  const generatedMs = performance.now() - started;
  const { ttfaMs } = await timePost(http, { text, format: 'pcm' });
  return generatedMs + ttfaMs;
}

const SPEEDS = [
  { label: 'fast LLM (100 tok/s, 200 ms first token)', first: 200, tps: 100 },
  { label: 'typical LLM (40 tok/s, 400 ms first token)', first: 400, tps: 40 },
  { label: 'slow LLM (15 tok/s, 600 ms first token)', first: 600, tps: 15 },
];

/** The agent simulation on one server: each variant in turn, `rounds` times per LLM speed. */
async function agentSimulation(http: string, ws: string, rounds: number) {
  const agents = [];
  for (const s of SPEEDS) {
    const bidi: number[] = [];
    const append: number[] = [];
    const batch: number[] = [];
    for (let i = 0; i < rounds; i++) {
      bidi.push(await bidiAgent(ws, s.first, s.tps));
      append.push(await appendAgent(ws, s.first, s.tps));
      batch.push(await batchAgent(http, s.first, s.tps));
    }
    agents.push({
      ...s,
      bidiMs: round(median(bidi)),
      appendMs: round(median(append)),
      batchMs: round(median(batch)),
      ratio: round(median(batch) / median(bidi), 2),
      appendRatio: round(median(batch) / median(append), 2),
    });
  }
  return agents;
}

function agentTable(agents: Awaited<ReturnType<typeof agentSimulation>>): string {
  return markdownTable(
    [
      'simulated LLM',
      'bidi: chunker → WS, first audio (ms)',
      'append: tokens → WS append + flush, first audio (ms)',
      'batch: whole answer → POST, first audio (ms)',
      'batch / bidi',
      'batch / append',
    ],
    agents.map((a) => [a.label, a.bidiMs, a.appendMs, a.batchMs, `${a.ratio}×`, `${a.appendRatio}×`]),
  );
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      trials: { type: 'string', default: '5' },
      repeat: { type: 'string', default: '30' },
      'slow-repeat': { type: 'string', default: '0' },
      url: { type: 'string' },
      out: { type: 'string', default: 'docs/bench' },
      readme: { type: 'boolean', default: false },
    },
  });
  const trials = Number(values.trials);
  const slowRepeat = Number(values['slow-repeat']);
  const rounds = Math.max(2, Math.ceil(trials / 2));
  let http = values.url;
  let tmp: string | undefined;
  let slowTmp: string | undefined;
  let stop: (() => Promise<unknown>) | undefined;
  if (!http) {
    tmp = mkdtempSync(join(tmpdir(), 'kokoro-ttfa-'));
    await writeStandinModelDir(tmp, { repeat: Number(values.repeat), log: () => {} });
    process.stderr.write('starting the server…\n');
    const server = await startServerProcess({ KOKORO_MODEL_DIR: tmp, LOG_LEVEL: 'warn' });
    http = server.http;
    stop = () => server.stop();
  }
  const ws = `${http.replace(/^http/, 'ws')}/invocations-bidirectional-stream`;
  try {
    const first = ANSWER.split(/(?<=[.?!])\s+/)[0]!;
    process.stderr.write(`1/3 transport isolation, ${trials} trials…\n`);
    await timePost(http, { text: ANSWER, format: 'pcm' }); // warm
    const postWhole: number[] = [];
    const postFirst: number[] = [];
    const wsWhole: number[] = [];
    const wsFirst: number[] = [];
    const session = await TtsSession.connect(ws);
    for (let i = 0; i < trials; i++) {
      postFirst.push((await timePost(http, { text: first, format: 'pcm' })).ttfaMs);
      postWhole.push((await timePost(http, { text: ANSWER, format: 'pcm' })).ttfaMs);
      wsFirst.push(await wsRequest(session, first));
      wsWhole.push(await wsRequest(session, ANSWER));
    }
    await session.close();

    process.stderr.write('2/3 agent simulation…\n');
    const agents = await agentSimulation(http, ws, rounds);

    process.stderr.write('3/3 bytes on the wire…\n');
    const wire = [];
    for (const format of ['pcm', 'mp3', 'opus']) {
      const binary = await timePost(http, { text: ANSWER, format });
      const res = await fetch(`${http}/invocations`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ text: ANSWER, format, transport: 'sse' }),
      });
      let sseBytes = 0;
      let audioBytes = 0;
      async function* counted() {
        for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
          sseBytes += chunk.length;
          yield chunk;
        }
      }
      for await (const event of readSse(counted())) {
        if (event.event === 'audio_chunk')
          audioBytes += Buffer.from((JSON.parse(event.data) as { data: string }).data, 'base64').length;
      }
      wire.push({
        format,
        binaryBytes: binary.bytes,
        sseBytes,
        sseAudioBytes: audioBytes,
        overhead: round(sseBytes / binary.bytes - 1, 3),
      });
    }

    let slow: { model: string; agents: Awaited<ReturnType<typeof agentSimulation>> } | undefined;
    if (slowRepeat > 0) {
      // Its own server, with the first one stopped so that the two never share the cores.
      await stop?.();
      stop = undefined;
      slowTmp = mkdtempSync(join(tmpdir(), 'kokoro-ttfa-slow-'));
      await writeStandinModelDir(slowTmp, { repeat: slowRepeat, log: () => {} });
      process.stderr.write(`agent simulation again on a stand-in with --repeat ${slowRepeat}…\n`);
      const server = await startServerProcess({ KOKORO_MODEL_DIR: slowTmp, LOG_LEVEL: 'warn' });
      stop = () => server.stop();
      const slowWs = `${server.http.replace(/^http/, 'ws')}/invocations-bidirectional-stream`;
      slow = {
        model: `stand-in (--repeat ${slowRepeat})`,
        agents: await agentSimulation(server.http, slowWs, rounds),
      };
    }

    const result = {
      machine: { cpu: cpus()[0]?.model ?? 'unknown', cores: cpus().length, node: process.version },
      model: tmp ? `stand-in (--repeat ${values.repeat})` : http,
      answerChars: ANSWER.length,
      isolation: {
        postFirstMs: round(median(postFirst)),
        postWholeMs: round(median(postWhole)),
        postRatio: round(median(postWhole) / median(postFirst), 3),
        wsFirstMs: round(median(wsFirst)),
        wsWholeMs: round(median(wsWhole)),
        wsRatio: round(median(wsWhole) / median(wsFirst), 3),
      },
      agents,
      ...(slow ? { slowAgents: slow } : {}),
      wire,
    };
    const md = [
      `Machine: ${result.machine.cpu}, ${result.machine.cores} cores, Node ${result.machine.node}. Model: ${result.model}. Answer: ${ANSWER.length} characters, 4 sentences.`,
      '',
      markdownTable(
        ['transport', 'first sentence alone (median ms)', 'whole 4-sentence text (median ms)', 'ratio'],
        [
          ['POST', result.isolation.postFirstMs, result.isolation.postWholeMs, result.isolation.postRatio],
          ['WebSocket', result.isolation.wsFirstMs, result.isolation.wsWholeMs, result.isolation.wsRatio],
        ],
      ),
      '',
      agentTable(agents),
      ...(slow
        ? ['', `The agent simulation on a slower model, ${slow.model}:`, '', agentTable(slow.agents)]
        : []),
      '',
      markdownTable(
        ['format', 'binary bytes', 'SSE bytes', 'SSE overhead'],
        wire.map((w) => [w.format, w.binaryBytes, w.sseBytes, `${Math.round(w.overhead * 100)} %`]),
      ),
    ].join('\n');
    mkdirSync(values.out!, { recursive: true });
    writeFileSync(join(values.out!, 'ttfa.json'), `${JSON.stringify(result, null, 2)}\n`);
    writeFileSync(join(values.out!, 'ttfa.md'), `${md}\n\nCommand: \`npm run bench:ttfa\`\n`);
    process.stdout.write(`${md}\n`);
    if (values.readme) replaceReadmeBlock('bench:ttfa', md);
  } finally {
    await stop?.();
    if (tmp) rmSync(tmp, { recursive: true, force: true });
    if (slowTmp) rmSync(slowTmp, { recursive: true, force: true });
  }
}

if (isMain(import.meta.url)) {
  main().catch((err: unknown) => {
    process.stderr.write(`bench failed: ${err instanceof Error ? err.stack : String(err)}\n`);
    process.exit(1);
  });
}
