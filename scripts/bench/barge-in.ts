/**
 * How soon a cancel is answered (barge-in), idle and while other sessions keep every worker busy:
 * each trial cancels a long answer as its first audio arrives. The target is one chunk's model time
 * plus 5 ms, the chunk time taken in the same condition from the server's own figures.
 */
import { TtsSession } from 'kokoro-stream-client';
import { cancelTrial, timeWs, underLoad, type CancelTrial, type Timing } from '../lib/bench-measures.ts';
import { samplesOf, stat, type Case, type Context } from '../lib/bench-runner.ts';
import { PARAGRAPH } from '../lib/bench-texts.ts';
import { round } from '../lib/stats.ts';

/** Twelve sentences: far more than is spoken before the cancel. */
const LONG_TEXT = [...PARAGRAPH, ...PARAGRAPH, ...PARAGRAPH].join(' ');
const SLACK_MS = 5;
const CONDITIONS = ['idle', 'under load'] as const;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** A completed request's model time per chunk, from its synthesis_complete. */
const chunkMs = (t: Timing) =>
  t.complete ? (Number(t.complete.inference_s) * 1000) / Math.max(1, Number(t.complete.chunks)) : NaN;

/** Until no worker runs or has anything queued (GET /ping's busy and queued). */
async function idle(http: string): Promise<void> {
  for (const deadline = performance.now() + 120_000; performance.now() < deadline; await sleep(20)) {
    const ping = (await (await fetch(`${http}/ping`)).json()) as { busy?: number; queued?: number };
    if (ping.busy === 0 && ping.queued === 0) return;
  }
  throw new Error('the server stayed busy for 2 minutes');
}

/** The `ackMs` of the server's 'cancel acknowledged' lines, once it has logged `count`. */
async function acks(ctx: Context, count: number): Promise<number[]> {
  const read = () => ctx.server!.logs().filter((l) => l.msg === 'cancel acknowledged');
  for (const deadline = performance.now() + 10_000; read().length < count; await sleep(20))
    if (performance.now() > deadline) throw new Error(`${read().length} cancels logged of ${count}`);
  return read().map((l) => Number(l.ackMs));
}

export const bargeIn: Case = {
  name: 'barge-in',
  summary: 'cancel latency (barge-in), idle and while other sessions keep the workers busy',
  about:
    'How soon a cancel is answered: a session sends a twelve-sentence answer and cancels it as its first ' +
    'audio arrives, first with every worker idle, then while other sessions each send one sentence after ' +
    'another. Only cancels that cut a running request count. The server’s figure is its own ackMs (the ' +
    'cancel’s arrival to its answer leaving, from its info log); the target is one chunk’s model time ' +
    '(inference_s / chunks of requests completed in the same condition) plus 5 ms.',
  servers: [{ name: 'ours', env: { LOG_LEVEL: 'info' } }],
  models: ['fast', 'real'],
  trials: 1,
  measures: ['cancel', 'ping'],
  flags: {
    cancels: { kind: 'int', default: 10, min: 1, max: 1000, help: 'cancels per condition and trial' },
    load: { kind: 'int', default: 4, min: 1, max: 100, help: 'sessions keeping the workers busy under load' },
  },
  async run(ctx) {
    const { cancels, load } = ctx.settings.flags as Record<string, number>;
    const { http, ws } = ctx.server!;
    const session = await TtsSession.connect(ws);
    const trials: Record<(typeof CONDITIONS)[number], CancelTrial[]> = { idle: [], 'under load': [] };
    const chunks = { idle: [] as number[], 'under load': [] as number[] };
    for (const text of PARAGRAPH) chunks.idle.push(chunkMs(await timeWs(session, text)));
    for (let i = 0; i < cancels; i++) {
      await idle(http);
      trials.idle.push(await cancelTrial(session, LONG_TEXT));
    }
    const busy = await Promise.all(
      Array.from({ length: load }, () => TtsSession.connect(ws, { retries: 0 })),
    );
    let completed = 0;
    let done = false;
    const measured = (async () => {
      while (completed < load) await sleep(20); // every load session under way
      try {
        for (let i = 0; i < cancels; i++) trials['under load'].push(await cancelTrial(session, LONG_TEXT));
      } finally {
        done = true;
      }
    })();
    const streams = busy.map((s, i) => async (n: number) => {
      const t = await timeWs(s, PARAGRAPH[(i + n) % PARAGRAPH.length]!);
      completed++;
      return t;
    });
    const run = await underLoad(http, streams, () => done);
    await measured;
    await Promise.all([session, ...busy].map((s) => s.close()));
    chunks['under load'] = run.timings.map(chunkMs);
    // Only this session cancels, and a session answers its cancels in order.
    const server = ctx.server!.pid === undefined ? [] : await acks(ctx, 2 * cancels);
    for (const [k, condition] of CONDITIONS.entries()) {
      const list = trials[condition];
      const cut = list.flatMap((t, i) => (t.cut ? [i] : []));
      const fig = (what: string, unit: string, samples: number[]) =>
        ctx.figure({ measure: 'cancel', what: `${condition}: ${what}`, unit, samples });
      fig('cut', 'cancels', [cut.length]);
      fig('sent', 'cancels', [list.length]);
      fig(
        'client',
        'ms',
        cut.map((i) => list[i]!.clientMs),
      );
      if (server.length > 0)
        fig(
          'server',
          'ms',
          cut.map((i) => server[k * cancels + i]!),
        );
      fig('one chunk', 'ms of model time', chunks[condition].filter(Number.isFinite));
    }
    ctx.figure({ measure: 'ping', what: `under load, ${load} sessions`, unit: 'ms', samples: run.pings });
  },
  report(figures) {
    const models = [...new Set(figures.map((f) => f.model!))];
    return {
      tables: [
        {
          title: 'Cancel latency (median / p95)',
          header: [
            'model',
            'condition',
            'cancels (cut / sent)',
            'server: arrival → answer sent (ms)',
            'client: cancel sent → synthesis_cancelled (ms)',
            'one chunk’s model time, median (ms)',
            `target: one chunk + ${SLACK_MS} ms`,
            'server p95 within target',
          ],
          rows: models.flatMap((model) =>
            CONDITIONS.map((c) => {
              const at = (what: string, q = 0.5) => stat(figures, { model, what: `${c}: ${what}` }, q, 2);
              const count = (what: string) =>
                samplesOf(figures, { model, what: `${c}: ${what}` }).reduce((a, b) => a + b, 0);
              const target = round(at('one chunk') + SLACK_MS, 2);
              return [
                model,
                c,
                `${count('cut')} / ${count('sent')}`,
                `${at('server')} / ${at('server', 0.95)}`,
                `${at('client')} / ${at('client', 0.95)}`,
                at('one chunk'),
                target,
                Number.isNaN(at('server')) ? '–' : at('server', 0.95) <= target ? 'yes' : 'NO',
              ];
            }),
          ),
        },
      ],
      notes: models.map((model) => {
        const f = figures.find((x) => x.model === model && x.measure === 'ping')!;
        const ping = (q: number) => stat(figures, { model, measure: 'ping' }, q, 2);
        return `${model}: GET /ping ${f.what}: p50 / p99 ${ping(0.5)} / ${ping(0.99)} ms.`;
      }),
    };
  },
};
