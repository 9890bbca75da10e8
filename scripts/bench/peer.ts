/**
 * Our server beside the one a kokoro-js user writes (scripts/peer-kokoro-js-server.ts), on the same
 * model file and voices, one at a time, the first alternating: single requests, a closed loop of
 * streams with /ping, and whether both sent byte-identical audio for the same text.
 */
import { join } from 'node:path';
import { timePost, underLoad, type Timing } from '../lib/bench-measures.ts';
import { samplesOf, stat, type Case, type Figure } from '../lib/bench-runner.ts';
import { EIGHT_SENTENCES, PARAGRAPH } from '../lib/bench-texts.ts';
import { writePeerModelDir } from '../lib/peer-model.ts';
import { phonemize } from '../../model/text/phonemes.ts';
import { filterToVocab } from '../../model/text/tokens.ts';
import { median, round } from '../lib/stats.ts';

const VOICE = 'af_heart';
/**
 * Each text, sent alone. The first has 14 words and no comma, so neither server cuts it; the
 * paragraph's first sentence alone is what the paragraph's first audio is held to.
 */
const TEXTS = {
  '1 sentence': PARAGRAPH[1]!,
  'the paragraph’s first sentence': PARAGRAPH[0]!,
  '4-sentence paragraph': PARAGRAPH.join(' '),
  '8 sentences': EIGHT_SENTENCES.join(' '),
};
/** A lone paragraph's first audio may be this much later than its first sentence's alone. */
const PARAGRAPH_TARGET = 1.05;
const SERVERS = ['ours', 'kokoro-js'] as const;
const PHONEMES = 'the 8 sentences as phonemes, one request each, the same voice row';

let phonemes: Promise<string[]> | undefined;
/** The 8 sentences' phonemes, from this process's English front end: the same input for both servers. */
const phonemesOnce = () =>
  (phonemes ??= Promise.all(
    EIGHT_SENTENCES.map(async (s) => filterToVocab(await phonemize(s, 'a')).kept.trim()),
  ));

export const peer: Case = {
  name: 'peer',
  summary: 'our server beside a kokoro-js server on the same model, with a byte-identical-audio check',
  about:
    'This server beside the one a user would otherwise write: Fastify with kokoro-js’s ' +
    '`tts.stream(TextSplitterStream)` writing PCM16 per sentence, both on the same model file (a folder ' +
    'kokoro-js loads, built from the stand-in) and kokoro-js’s voice files, one server at a time, the ' +
    'first alternating between trials. Single requests (first audio of a sentence and a paragraph, total ' +
    'time of 8 sentences), then streams in a closed loop (p95 first audio, throughput, /ping); and whether ' +
    'both sent the same bytes for each text. Ratios are kokoro-js ÷ ours for times (above 1: ours is faster).',
  servers: [{ name: 'ours' }, { name: 'kokoro-js', kind: 'kokoro-js' }],
  models: ['fast', 'real'],
  trials: 3,
  measures: ['ttfa', 'total', 'stalls', 'throughput', 'ping'],
  flags: {
    requests: {
      kind: 'int',
      default: 3,
      min: 1,
      max: 1000,
      help: 'requests of each text per server and trial',
    },
    streams: { kind: 'int', default: 8, min: 1, max: 100, help: 'concurrent streams of the closed loop' },
    paragraphs: { kind: 'int', default: 3, min: 1, max: 100, help: 'paragraphs each stream sends' },
  },
  warm: Object.values(TEXTS),
  prepare: async (dir, tmp) => (await writePeerModelDir(dir, join(tmp, 'peer'))).dir,
  async run(ctx) {
    const { requests, streams, paragraphs } = ctx.settings.flags as Record<string, number>;
    const post = (input: string | { phonemes: string }) =>
      timePost(ctx.server!.http, input, { voice: VOICE });
    const timings: Record<string, Timing[]> = {};
    for (let i = 0; i < requests; i++)
      for (const [what, text] of Object.entries(TEXTS)) (timings[what] ??= []).push(await post(text));
    for (const [what, list] of Object.entries(timings)) {
      if (list.some((t) => t.error))
        throw new Error(`${ctx.server!.name}, ${what}: ${list.find((t) => t.error)!.error}`);
      const digests = list.map((t) => `${t.bytes}:${t.digest}`);
      ctx.figure({ measure: 'ttfa', what, unit: 'ms', samples: list.map((t) => t.ttfaMs), digests });
      ctx.figure({ measure: 'total', what, unit: 'ms', samples: list.map((t) => t.totalMs) });
      ctx.figure({ measure: 'stalls', what, unit: 's', samples: list.map((t) => t.stallS) });
    }
    if (ctx.trial === 0) {
      const spoken = [];
      for (const p of await phonemesOnce()) spoken.push(await post({ phonemes: p }));
      if (spoken.some((t) => t.error)) throw new Error(`${ctx.server!.name} refused phonemes`);
      const digests = spoken.map((t) => `${t.bytes}:${t.digest}`);
      ctx.figure({
        measure: 'total',
        what: PHONEMES,
        unit: 'ms',
        samples: spoken.map((t) => t.totalMs),
        digests,
      });
    }
    const loop = await underLoad(
      ctx.server!.http,
      Array.from({ length: streams }, () => () => post(TEXTS['4-sentence paragraph'])),
      (n) => n >= paragraphs,
    );
    const what = `${streams} streams`;
    ctx.figure({ measure: 'ttfa', what, unit: 'ms', samples: loop.timings.map((t) => t.ttfaMs) });
    ctx.figure({ measure: 'throughput', what, unit: 'audio s per wall s', samples: [loop.throughput] });
    ctx.figure({ measure: 'ping', what, unit: 'ms', samples: loop.pings });
  },
  report(figures, settings) {
    const { streams, paragraphs } = settings.flags as Record<string, number>;
    const models = [...new Set(figures.map((f) => f.model!))];
    const loop = `${streams} streams`;
    const rows = [
      { label: 'first audio, 1 sentence (ms)', match: { measure: 'ttfa', what: '1 sentence' }, q: 0.5 },
      {
        label: 'first audio, 4-sentence paragraph (ms)',
        match: { measure: 'ttfa', what: '4-sentence paragraph' },
        q: 0.5,
      },
      { label: 'total time, 8 sentences (ms)', match: { measure: 'total', what: '8 sentences' }, q: 0.5 },
      {
        label: 'playback stalls, 8 sentences, the worst request (s)',
        match: { measure: 'stalls', what: '8 sentences' },
        q: 1,
      },
      {
        label: `${loop} × ${paragraphs} paragraphs: p95 first audio (ms)`,
        match: { measure: 'ttfa', what: loop },
        q: 0.95,
      },
      {
        label: `${loop}: audio s per wall s (ratio ours ÷ kokoro-js)`,
        match: { measure: 'throughput', what: loop },
        q: 0.5,
        higher: true,
      },
      { label: `${loop}: GET /ping p99 (ms)`, match: { measure: 'ping', what: loop }, q: 0.99 },
    ] as const;
    const cell = (model: string, server: string, r: (typeof rows)[number]) =>
      stat(figures, { ...r.match, model, server } as Partial<Figure>, r.q, 2);
    const load = (model: string, server: string, r: (typeof rows)[number]) =>
      round(
        median(
          figures
            .filter(
              (f) =>
                f.model === model &&
                f.server === server &&
                f.measure === r.match.measure &&
                f.what === r.match.what,
            )
            .map((f) => f.load1),
        ),
        2,
      );
    /** Each answer's bytes and digest: in order for the phonemes, the distinct ones for a text. */
    const same = (model: string, what: string) => {
      const of = (server: string) => {
        const mine = figures.filter((f) => f.model === model && f.server === server && f.what === what);
        const all = mine.flatMap((f) => f.digests ?? []);
        return what === PHONEMES ? all : [...new Set(all)];
      };
      const [ours, theirs] = SERVERS.map(of) as [string[], string[]];
      const bytes = (d: string[]) => d.reduce((n, x) => n + Number(x.split(':')[0]), 0);
      const one = what === PHONEMES || (ours.length === 1 && theirs.length === 1);
      const sameLength = one && bytes(ours) === bytes(theirs);
      const identical = one && ours.join() === theirs.join();
      return [
        model,
        what,
        `${bytes(ours)} / ${bytes(theirs)}`,
        sameLength ? 'yes' : 'no',
        identical ? 'yes' : what === PHONEMES ? 'NO' : 'no',
      ];
    };
    // The policy's target: a lone paragraph's first audio against its first sentence's alone.
    const paragraph = models.map((m) => {
      const alone = stat(
        figures,
        {
          measure: 'ttfa',
          what: 'the paragraph’s first sentence',
          model: m,
          server: 'ours',
        } as Partial<Figure>,
        0.5,
        2,
      )!;
      const whole = stat(
        figures,
        { measure: 'ttfa', what: '4-sentence paragraph', model: m, server: 'ours' } as Partial<Figure>,
        0.5,
        2,
      )!;
      const stalls = ['4-sentence paragraph', '8 sentences'].map((what) =>
        stat(figures, { measure: 'stalls', what, model: m, server: 'ours' } as Partial<Figure>, 1, 3),
      );
      const ratio = round(whole / alone, 3);
      return [m, `${whole} / ${alone}`, ratio, ratio <= PARAGRAPH_TARGET ? 'yes' : 'no', stalls.join(' / ')];
    });
    return {
      tables: [
        {
          title: `Ours: a lone paragraph’s first audio against its first sentence’s alone (medians; target ≤ ${PARAGRAPH_TARGET})`,
          header: [
            'model',
            'paragraph / first sentence alone (ms)',
            'ratio',
            'met',
            'worst stall, paragraph / 8 sentences (s)',
          ],
          rows: paragraph,
        },
        {
          title:
            'Ours beside kokoro-js (medians over every trial; ratio kokoro-js ÷ ours, above 1: ours is better)',
          header: [
            'measure',
            ...models.flatMap((m) => [`${m}: ours / kokoro-js`, 'ratio', '1-min load, ours / kokoro-js']),
          ],
          rows: rows.map((r) => [
            r.label,
            ...models.flatMap((m) => {
              const [ours, theirs] = SERVERS.map((s) => cell(m, s, r));
              return [
                `${ours} / ${theirs}`,
                round('higher' in r ? ours! / theirs! : theirs! / ours!, 2),
                `${load(m, 'ours', r)} / ${load(m, 'kokoro-js', r)}`,
              ];
            }),
          ]),
        },
        {
          title: 'Same audio? (bytes of PCM16, ours / kokoro-js)',
          header: ['model', 'input', 'bytes', 'same length', 'byte-identical'],
          rows: models.flatMap((m) => [...Object.keys(TEXTS), PHONEMES].map((t) => same(m, t))),
        },
      ],
      notes: [
        'From text the English front ends differ (misaki here; espeak-ng with kokoro-js’s corrections there), ' +
          'and so does the voice row (n − 1 for n phonemes here, as Kokoro’s reference pipeline takes it; n in ' +
          'kokoro-js): the audio differs. From the same phonemes, with kokoro-js’s model run on the same row, ' +
          'both must send the same bytes: the same model file, token ids and ONNX Runtime, run alike.',
        `Pings answered while the streams ran, ours / kokoro-js (all trials; a server whose event loop is blocked answers few): ${models
          .map(
            (m) =>
              `${m}: ${SERVERS.map((s) => samplesOf(figures, { model: m, server: s, measure: 'ping' }).length).join(' / ')}`,
          )
          .join('; ')}.`,
      ],
    };
  },
};
