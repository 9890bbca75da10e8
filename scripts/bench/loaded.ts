/**
 * Listeners under load, per dispatch policy: N clients each ask for paragraphs one after another
 * (a closed loop), and each plays every answer in real time from its first byte. First audio and
 * playback stalls with the deadline policy, with the policy before it (`fifo`), without
 * look-ahead, and from a kokoro-js server, side by side in one run.
 */
import { join } from 'node:path';
import { timePost, underLoad } from '../lib/bench-measures.ts';
import { samplesOf, stat, type Case, type Figure, type Server } from '../lib/bench-runner.ts';
import { UsageError } from '../lib/cli.ts';
import { PARAGRAPH } from '../lib/bench-texts.ts';
import { writePeerModelDir } from '../lib/peer-model.ts';
import { median, round } from '../lib/stats.ts';

const VOICE = 'af_heart';
const TEXT = PARAGRAPH.join(' ');

const SERVERS: readonly Server[] = [
  { name: 'deadline', env: { DISPATCH_POLICY: 'deadline' } },
  { name: 'fifo', env: { DISPATCH_POLICY: 'fifo' } },
  { name: 'deadline, no look-ahead', env: { DISPATCH_POLICY: 'deadline', LOOKAHEAD_SENTENCES: '0' } },
  { name: 'kokoro-js', kind: 'kokoro-js' },
];
const [DEADLINE, FIFO, , PEER] = SERVERS.map((s) => s.name) as [string, string, string, string];

/** What the deadline policy was built to meet, against `fifo` and kokoro-js at the same load. */
const TARGETS = {
  /** p95 first audio, deadline ÷ fifo: at most this. */
  p95VsFifo: 0.5,
  /** p95 first audio, kokoro-js ÷ deadline: at least this. */
  p95VsPeer: 3,
} as const;

/** `--clients 4,8` → [4, 8]. */
function clientCounts(raw: string): number[] {
  const counts = raw.split(',').map((c) => Number(c.trim()));
  if (counts.length === 0 || counts.some((c) => !Number.isInteger(c) || c < 1 || c > 200))
    throw new UsageError(`--clients should be counts from 1 to 200, comma-separated; got "${raw}"`);
  return counts;
}

const load = (what: string) => `${what} clients`;

export const loaded: Case = {
  name: 'loaded',
  summary: 'N listeners asking for paragraphs in a closed loop: first audio and stalls per dispatch policy',
  about:
    'N clients each POST a 4-sentence paragraph, then the next as soon as the last one’s audio has arrived, ' +
    'and play every answer in real time from its first byte. Per server and client count: first audio ' +
    '(p50, p95, max), playback stalls per answer (p50, p95, and the total of a run), audio seconds per wall ' +
    'second, and refusals. The servers, one at a time and the first alternating between trials: ours with ' +
    'the deadline policy, with the policy before it (DISPATCH_POLICY=fifo), with deadlines and no ' +
    'look-ahead (LOOKAHEAD_SENTENCES=0), and a kokoro-js server on the same model file (the peer case’s).',
  servers: SERVERS,
  models: ['fast', 'real'],
  trials: 2,
  measures: ['ttfa', 'stalls', 'throughput'],
  flags: {
    clients: {
      kind: 'string',
      default: '4,8',
      help: 'client counts, comma-separated: one closed loop each, in turn, on every server',
    },
    paragraphs: { kind: 'int', default: 3, min: 1, max: 100, help: 'paragraphs each client asks for' },
  },
  warm: [TEXT],
  prepare: async (dir, tmp) => (await writePeerModelDir(dir, join(tmp, 'peer'))).dir,
  async run(ctx) {
    const paragraphs = ctx.settings.flags.paragraphs as number;
    for (const clients of clientCounts(ctx.settings.flags.clients as string)) {
      ctx.log(`  ${clients} clients × ${paragraphs} paragraphs…`);
      const run = await underLoad(
        ctx.server!.http,
        Array.from({ length: clients }, () => () => timePost(ctx.server!.http, TEXT, { voice: VOICE })),
        (n) => n >= paragraphs,
      );
      const ok = run.timings.filter((t) => t.error === undefined);
      const what = load(String(clients));
      ctx.figure({ measure: 'ttfa', what, unit: 'ms', samples: ok.map((t) => t.ttfaMs) });
      ctx.figure({ measure: 'stalls', what, unit: 's', samples: ok.map((t) => t.stallS) });
      ctx.figure({ measure: 'throughput', what, unit: 'audio s per wall s', samples: [run.throughput] });
      ctx.figure({
        measure: 'ttfa',
        what: `${what}, refused`,
        unit: 'requests',
        samples: [run.timings.length - ok.length],
      });
    }
  },
  report(figures, settings) {
    const models = [...new Set(figures.map((f) => f.model!))];
    const counts = clientCounts(settings.flags.clients as string);
    const paragraphs = settings.flags.paragraphs as number;
    const at = (model: string, server: string, clients: number, measure: Figure['measure']) => ({
      model,
      server,
      measure,
      what: load(String(clients)),
    });
    const q = (model: string, server: string, clients: number, measure: Figure['measure'], p: number) =>
      stat(figures, at(model, server, clients, measure), p, measure === 'stalls' ? 2 : 0);
    /** Stall seconds of every answer of a run, added up: the mean over trials. */
    const stallTotal = (model: string, server: string, clients: number) =>
      round(
        samplesOf(figures, at(model, server, clients, 'stalls')).reduce((a, b) => a + b, 0) / settings.trials,
        2,
      );
    const throughput = (model: string, server: string, clients: number) =>
      round(median(samplesOf(figures, at(model, server, clients, 'throughput'))), 2);
    const requests = (model: string, server: string, clients: number) => {
      const n = samplesOf(figures, at(model, server, clients, 'ttfa')).length;
      const refused = samplesOf(figures, { model, server, what: `${load(String(clients))}, refused` }).reduce(
        (a, b) => a + b,
        0,
      );
      return `${n + refused} (${refused})`;
    };
    const servers = SERVERS.map((s) => s.name);
    const rows = models.flatMap((m) =>
      counts.flatMap((c) =>
        servers.map((s) => [
          m,
          c,
          s,
          requests(m, s, c),
          `${q(m, s, c, 'ttfa', 0.5)} / ${q(m, s, c, 'ttfa', 0.95)} / ${q(m, s, c, 'ttfa', 1)}`,
          `${q(m, s, c, 'stalls', 0.5)} / ${q(m, s, c, 'stalls', 0.95)} / ${stallTotal(m, s, c)}`,
          throughput(m, s, c),
        ]),
      ),
    );
    const met = (ok: boolean) => (ok ? 'yes' : 'no');
    const targets = models.flatMap((m) =>
      counts.map((c) => {
        const p95 = (s: string) => q(m, s, c, 'ttfa', 0.95);
        const vsFifo = round(p95(DEADLINE) / p95(FIFO), 2);
        const vsPeer = round(p95(PEER) / p95(DEADLINE), 2);
        const [tDeadline, tFifo] = [throughput(m, DEADLINE, c), throughput(m, FIFO, c)];
        const [sDeadline, sFifo] = [stallTotal(m, DEADLINE, c), stallTotal(m, FIFO, c)];
        return [
          m,
          c,
          `${vsFifo} (${met(vsFifo <= TARGETS.p95VsFifo)})`,
          `${vsPeer} (${met(vsPeer >= TARGETS.p95VsPeer)})`,
          `${tDeadline} / ${tFifo} (${met(tDeadline >= tFifo)})`,
          `${sDeadline} / ${sFifo} (${met(sDeadline <= sFifo)})`,
        ];
      }),
    );
    return {
      tables: [
        {
          title: `N clients × ${paragraphs} paragraphs in a closed loop, each answer played in real time from its first byte (all trials pooled)`,
          header: [
            'model',
            'clients',
            'server',
            'requests (refused)',
            'first audio p50 / p95 / max (ms)',
            'stalls per answer p50 / p95 (s) / total of a run (s)',
            'audio s per wall s',
          ],
          rows,
        },
        {
          title: `The deadline policy’s targets (p95 first audio ≤ ${TARGETS.p95VsFifo}× fifo’s and ≥ ${TARGETS.p95VsPeer}× better than kokoro-js’s; throughput not lower and stalls not more than fifo’s)`,
          header: [
            'model',
            'clients',
            'p95 first audio, deadline ÷ fifo (met)',
            'p95 first audio, kokoro-js ÷ deadline (met)',
            'audio s per wall s, deadline / fifo (met)',
            'stall s in a run, deadline / fifo (met)',
          ],
          rows: targets,
        },
      ],
      notes: [
        'Each client sends its next paragraph as soon as the last one’s audio has arrived, so the server always ' +
          'has N answers open; a stall is a second its listener, playing from the first byte, waits for audio. ' +
          'Stall totals are per run (the sum over every answer, averaged over trials).',
      ],
    };
  },
};
