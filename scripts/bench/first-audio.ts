/**
 * Time to first audio, as a client and as a voice agent see it: texts of a typical answer's shapes
 * over POST and over one WebSocket session, and a simulated LLM streaming its tokens through the
 * client's sentence chunker (bidi), through the server's own (append), or all at once (batch).
 */
import { IncrementalSentenceChunker, TtsSession } from 'kokoro-stream-client';
import { timePost, timeWs, type Timing } from '../lib/bench-measures.ts';
import { stat, type Case, type Context } from '../lib/bench-runner.ts';
import { EIGHT_SENTENCES, LONG_FIRST_SENTENCE, PARAGRAPH } from '../lib/bench-texts.ts';
import { round } from '../lib/stats.ts';

const TEXTS: Readonly<Record<string, string>> = {
  'first sentence alone': PARAGRAPH[0]!,
  '4-sentence paragraph': PARAGRAPH.join(' '),
  [`long first sentence (${LONG_FIRST_SENTENCE.length} characters, 5 commas)`]: LONG_FIRST_SENTENCE,
  '8 sentences': EIGHT_SENTENCES.join(' '),
};

/** 270 characters, 4 sentences: the shape of a typical agent answer. */
const ANSWER =
  'I checked your calendar and you are free on Thursday afternoon. ' +
  'The dentist has two openings, one at two fifteen and one at four. ' +
  'The later slot is closer to when you leave work, so it may suit you a bit better. ' +
  'Shall I book four o’clock and add a reminder for you, too?';

const SPEEDS = [
  { label: 'fast LLM (100 tok/s, 200 ms first token)', firstMs: 200, tps: 100 },
  { label: 'typical LLM (40 tok/s, 400 ms first token)', firstMs: 400, tps: 40 },
  { label: 'slow LLM (15 tok/s, 600 ms first token)', firstMs: 600, tps: 15 },
];
const AGENTS = ['bidi', 'append', 'batch'] as const;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** The answer as an LLM streams it: words with their leading space and punctuation, at a steady rate. */
async function* llm(firstMs: number, tps: number): AsyncGenerator<string> {
  await sleep(firstMs);
  const started = performance.now();
  for (const [i, token] of (ANSWER.match(/\s*[\w’']+|\s*[^\s\w]/g) ?? []).entries()) {
    await sleep(started + (i * 1000) / tps - performance.now());
    yield token;
  }
}

/** Milliseconds from the agent's start (its LLM asked) to the first audio byte. */
async function agent(kind: (typeof AGENTS)[number], ctx: Context, speed: (typeof SPEEDS)[number]) {
  const { http, ws } = ctx.server!;
  if (kind === 'batch') {
    const started = performance.now();
    let text = '';
    for await (const token of llm(speed.firstMs, speed.tps)) text += token;
    const generatedMs = performance.now() - started;
    return generatedMs + (await timePost(http, text)).ttfaMs;
  }
  const session = await TtsSession.connect(ws, { defaults: { format: 'pcm' } });
  const started = performance.now();
  const firstAudio = (async () => {
    for await (const e of session.events()) {
      if (e.type === 'audio') return performance.now() - started;
      if (e.type === 'error') throw new Error(`${kind} agent: ${e.code}: ${e.message}`);
    }
    return NaN;
  })();
  const chunker = new IncrementalSentenceChunker();
  for await (const token of llm(speed.firstMs, speed.tps)) {
    if (kind === 'append') session.append(token);
    else for (const s of chunker.feed(token)) session.send(s);
  }
  if (kind === 'append') void session.flush();
  else for (const s of chunker.flush()) session.send(s);
  const ms = await firstAudio;
  await session.close(60_000); // the rest of the answer is spoken before the next agent starts
  return ms;
}

export const firstAudio: Case = {
  name: 'first-audio',
  summary: 'time to first audio and total time over POST and WebSocket; a voice agent’s first audio',
  about:
    'How soon audio starts: a sentence alone, a paragraph, a long first sentence and 8 sentences, each ' +
    'over POST and over one WebSocket session (time to first audio, total time, stalls of a real-time ' +
    'listener); then a simulated LLM at three speeds feeding one session sentence by sentence through the ' +
    'client’s chunker (bidi), token by token through append and flush (append), or the whole answer in ' +
    'one POST (batch): first audio from the moment the agent asks its LLM.',
  servers: [{ name: 'ours' }],
  models: ['fast', 'real'],
  trials: 2,
  measures: ['ttfa', 'total', 'stalls', 'agent'],
  flags: {
    requests: {
      kind: 'int',
      default: 3,
      min: 1,
      max: 1000,
      help: 'requests of each text and transport per trial',
    },
    agents: {
      kind: 'int',
      default: 1,
      min: 0,
      max: 100,
      help: 'runs of each agent at each LLM speed per trial; 0 skips them',
    },
  },
  async run(ctx) {
    const requests = ctx.settings.flags.requests as number;
    const session = await TtsSession.connect(ctx.server!.ws);
    const timings: Record<string, Timing[]> = {};
    try {
      for (let i = 0; i < requests; i++) {
        for (const [what, text] of Object.entries(TEXTS)) {
          (timings[`${what}|POST`] ??= []).push(await timePost(ctx.server!.http, text));
          (timings[`${what}|WebSocket`] ??= []).push(await timeWs(session, text));
        }
      }
    } finally {
      await session.close();
    }
    for (const [key, list] of Object.entries(timings)) {
      const failed = list.find((t) => t.error);
      if (failed) throw new Error(`${key}: ${failed.error}`);
      const what = key.replace('|', ', ');
      ctx.figure({ measure: 'ttfa', what, unit: 'ms', samples: list.map((t) => t.ttfaMs) });
      ctx.figure({ measure: 'total', what, unit: 'ms', samples: list.map((t) => t.totalMs) });
      ctx.figure({ measure: 'stalls', what, unit: 's', samples: list.map((t) => t.stallS) });
    }
    for (let i = 0; i < (ctx.settings.flags.agents as number); i++) {
      for (const speed of SPEEDS) {
        for (const kind of AGENTS) {
          const samples = [await agent(kind, ctx, speed)];
          ctx.figure({ measure: 'agent', what: `${kind}, ${speed.label}`, unit: 'ms', samples });
        }
      }
    }
  },
  report(figures) {
    const models = [...new Set(figures.map((f) => f.model!))];
    const p50 = (measure: 'ttfa' | 'total' | 'agent', what: string, model: string) =>
      stat(figures, { measure, what, model });
    const worst = (what: string, model: string) => stat(figures, { measure: 'stalls', what, model }, 1, 3);
    const alone = Object.keys(TEXTS)[0]!;
    return {
      tables: [
        {
          title: 'Texts over POST and WebSocket (medians; stalls: the worst request)',
          header: [
            'model',
            'text',
            'first audio, POST / WS (ms)',
            'POST first audio ÷ first sentence alone',
            'total, POST / WS (ms)',
            'stalls, POST / WS (s)',
          ],
          rows: models.flatMap((m) =>
            Object.keys(TEXTS).map((t) => [
              m,
              t,
              `${p50('ttfa', `${t}, POST`, m)} / ${p50('ttfa', `${t}, WebSocket`, m)}`,
              round(p50('ttfa', `${t}, POST`, m) / p50('ttfa', `${alone}, POST`, m), 2),
              `${p50('total', `${t}, POST`, m)} / ${p50('total', `${t}, WebSocket`, m)}`,
              `${worst(`${t}, POST`, m)} / ${worst(`${t}, WebSocket`, m)}`,
            ]),
          ),
        },
        ...(figures.some((f) => f.measure === 'agent')
          ? [
              {
                title: `A simulated LLM streaming a ${ANSWER.length}-character, 4-sentence answer: first audio from the agent’s start (median ms)`,
                header: [
                  'model',
                  'simulated LLM',
                  'bidi: chunker → WS',
                  'append: tokens → WS append + flush',
                  'batch: whole answer → POST',
                  'batch ÷ bidi',
                ],
                rows: models.flatMap((m) =>
                  SPEEDS.map(({ label }) => {
                    const [bidi, append, batch] = AGENTS.map((k) => p50('agent', `${k}, ${label}`, m));
                    return [m, label, bidi!, append!, batch!, round(batch! / bidi!, 2)];
                  }),
                ),
              },
            ]
          : []),
      ],
    };
  },
};
