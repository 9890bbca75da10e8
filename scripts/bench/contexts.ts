/**
 * A voice agent's next turn while its current one still streams: how soon the next turn's audio
 * starts on one session in strict order (it waits for the current turn), with a cancel first (the
 * current turn is lost), and with contexts (`?contexts=true`: both go on side by side).
 */
import WebSocket from 'ws';
import { stat, type Case } from '../lib/bench-runner.ts';
import { PARAGRAPH } from '../lib/bench-texts.ts';
import { round } from '../lib/stats.ts';

/** The current turn: three paragraphs, far longer than the wait for the next. */
const CURRENT = [...PARAGRAPH, ...PARAGRAPH, ...PARAGRAPH].join(' ');
const NEXT = 'One more thing: your table is booked for seven.';
const WAYS = ['in order', 'cancel, then send', 'contexts'] as const;
type Way = (typeof WAYS)[number];

/** One turn after another on a fresh socket; resolves with ms from sending the next turn to its first audio. */
function trial(ws: string, way: Way): Promise<number> {
  const socket = new WebSocket(way === 'contexts' ? `${ws}?contexts=true` : ws);
  const send = (message: object) => socket.send(JSON.stringify(message));
  return new Promise<number>((resolve, reject) => {
    let sentAt = 0;
    let nextStarted = false;
    const timer = setTimeout(() => reject(new Error(`${way}: no audio of the next turn in 120 s`)), 120_000);
    const done = (ms: number) => {
      clearTimeout(timer);
      socket.close();
      resolve(ms);
    };
    socket.on('error', reject);
    socket.on('open', () =>
      send({
        text: CURRENT,
        format: 'pcm',
        request_id: 'current',
        ...(way === 'contexts' ? { context_id: 'a' } : {}),
      }),
    );
    socket.on('message', (data: Buffer, binary: boolean) => {
      if (!binary) {
        const frame = JSON.parse(data.toString()) as { type?: string; request_id?: string; message?: string };
        if (frame.type === 'error') reject(new Error(`${way}: ${frame.message}`));
        if (frame.type === 'synthesis_start' && frame.request_id === 'next') nextStarted = true;
        return;
      }
      if (sentAt === 0) {
        // The current turn's first audio: the agent now has its next turn.
        sentAt = performance.now();
        if (way === 'cancel, then send') send({ type: 'cancel' });
        send({
          text: NEXT,
          format: 'pcm',
          request_id: 'next',
          ...(way === 'contexts' ? { context_id: 'b' } : {}),
        });
        return;
      }
      const ofNext = way === 'contexts' ? data.subarray(1, 1 + data[0]!).toString() === 'b' : nextStarted;
      if (ofNext) done(performance.now() - sentAt);
    });
  });
}

export const contexts: Case = {
  name: 'contexts',
  summary:
    'the next turn’s first audio while the current turn streams: in order, after a cancel, with contexts',
  about:
    'An agent has a long answer streaming (three paragraphs) and, as its first audio arrives, sends its next ' +
    'turn (one sentence). Measured: from sending the next turn to its first audio, on one session in strict ' +
    'order (it waits for the whole current turn), with a cancel sent first (the current turn is cut), and ' +
    'with contexts (?contexts=true, the next turn in a context of its own: the current one goes on).',
  servers: [{ name: 'ours' }],
  models: ['fast', 'real'],
  trials: 1,
  measures: ['ttfa'],
  flags: {
    turns: { kind: 'int', default: 5, min: 1, max: 1000, help: 'next turns per way and trial' },
  },
  async run(ctx) {
    const turns = ctx.settings.flags.turns as number;
    for (const way of WAYS) {
      const samples: number[] = [];
      for (let i = 0; i < turns; i++) samples.push(await trial(ctx.server!.ws, way));
      ctx.figure({ measure: 'ttfa', what: way, unit: 'ms', samples });
    }
  },
  report(figures) {
    const models = [...new Set(figures.map((f) => f.model!))];
    const p50 = (what: Way, model: string) => stat(figures, { measure: 'ttfa', what, model });
    return {
      tables: [
        {
          title: 'The next turn’s first audio, sent as the current turn’s first audio arrives (median ms)',
          header: ['model', ...WAYS, 'in order ÷ contexts'],
          rows: models.map((m) => [
            m,
            ...WAYS.map((w) => p50(w, m)),
            round(p50('in order', m) / p50('contexts', m), 1),
          ]),
        },
      ],
      notes: [
        'With a cancel the current turn is lost; with contexts it keeps streaming while the next one starts.',
      ],
    };
  },
};
