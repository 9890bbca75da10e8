/**
 * Mixed traffic in rounds: WebSocket sessions and POST clients in a closed loop (each sends its next
 * sentence as soon as its last one ended), GET /ping throughout, and the server's memory after each
 * round, whose growth from round to round would be a leak.
 */
import { readFileSync } from 'node:fs';
import { TtsSession } from 'kokoro-stream-client';
import { timePost, timeWs, underLoad, type Timing } from '../lib/bench-measures.ts';
import { samplesOf, stat, type Case } from '../lib/bench-runner.ts';
import { SENTENCES } from '../lib/bench-texts.ts';
import { round } from '../lib/stats.ts';

const ROUTES = ['WS', 'POST'] as const;

/** VmRSS of a process in MB; NaN when it cannot be read (a server this runner did not start). */
function rssMb(pid: number | undefined): number {
  try {
    return Number(/^VmRSS:\s+(\d+)\s+kB/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))![1]) / 1024;
  } catch {
    return NaN;
  }
}

export const load: Case = {
  name: 'load',
  summary: 'WebSocket sessions and POST clients in a closed loop, with /ping and memory, in rounds',
  about:
    'What the server does under steady mixed traffic: N WebSocket sessions and P POST clients, each sending ' +
    'a voice agent’s sentences one after another for a round’s seconds, GET /ping every 20 ms meanwhile; ' +
    'per round the time to first audio of each route, throughput, /ping latency, and the server’s resident ' +
    'memory after it (rounds on one server, so growth would show).',
  servers: [{ name: 'ours' }],
  models: ['fast', 'real'],
  trials: 1,
  measures: ['ttfa', 'throughput', 'ping', 'memory'],
  flags: {
    sessions: { kind: 'int', default: 10, min: 0, max: 500, help: 'WebSocket sessions' },
    posts: { kind: 'int', default: 2, min: 0, max: 100, help: 'POST clients' },
    seconds: {
      kind: 'int',
      default: 10,
      min: 1,
      max: 3600,
      help: 'seconds of each round (the last requests finish)',
    },
    rounds: { kind: 'int', default: 3, min: 1, max: 50, help: 'rounds per trial, on the same server' },
  },
  async run(ctx) {
    const { sessions, posts, seconds, rounds } = ctx.settings.flags as Record<string, number>;
    const { http, ws, pid } = ctx.server!;
    const sentence = (stream: number, n: number) => SENTENCES[(stream + n) % SENTENCES.length]!;
    for (let r = 1; r <= rounds; r++) {
      ctx.log(`  round ${r}/${rounds}: ${sessions} sessions, ${posts} POST clients, ${seconds} s…`);
      const open = await Promise.all(
        Array.from({ length: sessions }, () => TtsSession.connect(ws, { retries: 0 })),
      );
      const streams = [
        ...open.map((s, i) => (n: number) => timeWs(s, sentence(i, n))),
        ...Array.from({ length: posts }, (_, j) => (n: number) => timePost(http, sentence(sessions + j, n))),
      ];
      const deadline = performance.now() + seconds * 1000;
      const run = await underLoad(http, streams, () => performance.now() > deadline);
      await Promise.all(open.map((s) => s.close()));
      for (const route of ROUTES) {
        const mine = run.timings.filter((t) => t.stream < sessions === (route === 'WS'));
        const ok = (t: Timing) => t.error === undefined;
        ctx.figure({
          measure: 'ttfa',
          what: `${route}, round ${r}`,
          unit: 'ms',
          samples: mine.filter(ok).map((t) => t.ttfaMs),
        });
        ctx.figure({
          measure: 'ttfa',
          what: `${route} errors, round ${r}`,
          unit: 'requests',
          samples: [mine.filter((t) => !ok(t)).length],
        });
      }
      ctx.figure({
        measure: 'throughput',
        what: `round ${r}`,
        unit: 'audio s per wall s',
        samples: [run.throughput],
      });
      ctx.figure({ measure: 'ping', what: `round ${r}`, unit: 'ms', samples: run.pings });
      ctx.figure({
        measure: 'ping',
        what: `failures, round ${r}`,
        unit: 'pings',
        samples: [run.pingFailures],
      });
      ctx.figure({ measure: 'memory', what: `round ${r}`, unit: 'MB', samples: [rssMb(pid)] });
    }
  },
  report(figures, settings) {
    const models = [...new Set(figures.map((f) => f.model!))];
    const rounds = Array.from({ length: settings.flags.rounds as number }, (_, i) => i + 1);
    const route = (model: string, r: number, name: string) => {
      const n = samplesOf(figures, { model, what: `${name}, round ${r}` }).length;
      const errors = stat(figures, { model, what: `${name} errors, round ${r}` }, 0.5, 0);
      const p = (q: number) => stat(figures, { model, measure: 'ttfa', what: `${name}, round ${r}` }, q);
      return [`${n + errors} (${errors})`, `${p(0.5)} / ${p(0.95)}`];
    };
    const { sessions, posts, seconds } = settings.flags as Record<string, number>;
    return {
      tables: [
        {
          title: `${sessions} WebSocket sessions and ${posts} POST clients in a closed loop for ${seconds} s a round, GET /ping every 20 ms`,
          header: [
            'model',
            'round',
            'WS requests (errors)',
            'WS first audio p50 / p95 ms',
            'POST requests (errors)',
            'POST first audio p50 / p95 ms',
            'audio s per wall s',
            '/ping p50 / p99 / max ms (failed)',
            'server RSS MB',
          ],
          rows: models.flatMap((m) =>
            rounds.map((r) => {
              const ping = (q: number) =>
                stat(figures, { model: m, measure: 'ping', what: `round ${r}` }, q, 2);
              const failed = stat(figures, { model: m, what: `failures, round ${r}` }, 0.5, 0);
              return [
                m,
                r,
                ...route(m, r, 'WS'),
                ...route(m, r, 'POST'),
                stat(figures, { model: m, measure: 'throughput', what: `round ${r}` }, 0.5, 2),
                `${ping(0.5)} / ${ping(0.99)} / ${ping(1)} (${failed})`,
                round(stat(figures, { model: m, measure: 'memory', what: `round ${r}` }), 1),
              ];
            }),
          ),
        },
      ],
    };
  },
};
