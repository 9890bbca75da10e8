/** The core benchmark's figures: raw samples, their summaries, the targets and the Markdown (pure). */
import { LONG_FIRST_SENTENCE } from './bench-texts.ts';
import { markdownTable, median, quantile, round } from './stats.ts';

/** A piece of a POST's body: when it arrived (ms after sending) and its size. */
export interface Arrival {
  readonly atMs: number;
  readonly bytes: number;
}

/** One POST, timed by the client. */
export interface PostSample {
  /** Sending → first body byte. */
  readonly ttfaMs: number;
  /** Sending → last body byte. */
  readonly totalMs: number;
  readonly audioS: number;
  /** Seconds a client playing from its first byte waits for audio (see playbackStallS). */
  readonly stallS: number;
}

/** One chunk of a text sent alone, once per trial. */
export interface ChunkAlone {
  readonly chars: number;
  readonly modelMs: number[];
  readonly frontEndMs: number[];
  audioS: number;
}

export interface OverheadSample {
  readonly serverTtfaMs: number;
  readonly firstInferenceMs: number;
  readonly firstFrontEndMs: number;
}

export interface PingSample {
  readonly latencies: number[];
}

/** What one server process gave: everything on the default look-ahead, the rest only on the baseline. */
export interface ServerRaw {
  readonly lookahead: number;
  /** Characters of the long sentence's first clause (its first chunk). */
  readonly clauseChars: number;
  readonly longEarly: PostSample[];
  readonly eight: PostSample[];
  /** The 8-sentence text's chunks, each alone, once per trial. */
  readonly alone: ChunkAlone[];
  /** Per trial, the sum of those chunks' model times, measured just before that trial's 8-sentence POST. */
  readonly eightAloneSumMs: number[];
  /** The 8-sentence text over WS after each POST: the server's sum of model times as they ran, and its elapsed time. */
  eightWs?: { inferenceMs: number; elapsedMs: number }[];
  readonly clauseAlone: PostSample[];
  readonly firstSentence: PostSample[];
  readonly paragraph: PostSample[];
  longSentence?: PostSample[];
  overhead?: OverheadSample[];
  ping?: PingSample;
}

/** One model cost: the server with the default look-ahead first, then (optionally) the baseline. */
export interface ModelRun {
  /** "stand-in (--repeat 30)" or a model directory. */
  readonly model: string;
  readonly trials: number;
  readonly servers: readonly ServerRaw[];
}

/**
 * Seconds of silence after playback started, for a client that starts playing at the first byte
 * and plays in real time: whenever audio arrives after the playhead has run out, the wait counts.
 */
export function playbackStallS(arrivals: readonly Arrival[], bytesPerS: number): number {
  let stall = 0;
  let dryAt = NaN;
  for (const a of arrivals) {
    const t = a.atMs / 1000;
    if (Number.isNaN(dryAt)) dryAt = t;
    else if (t > dryAt) {
      stall += t - dryAt;
      dryAt = t;
    }
    dryAt += a.bytes / bytesPerS;
  }
  return stall;
}

const med = (samples: readonly PostSample[] | undefined, pick: (s: PostSample) => number) =>
  median((samples ?? []).map(pick));

export interface ModelSummary {
  readonly model: string;
  readonly trials: number;
  readonly workers: number;
  /** One sentence of the 8-sentence text alone (medians over its sentences). */
  readonly sentence: { modelMs: number; frontEndMs: number; audioS: number };
  /** The model's time per second of audio, one sentence at a time: below 1 is faster than real time. */
  readonly modelPerAudio: number;
  /** Time to first audio on the baseline server (LOOKAHEAD_SENTENCES=0), when it ran. */
  readonly ttfaBaseline: {
    lookahead: number;
    clauseAloneMs: number;
    longEarlyMs: number;
    longEarlyRatio: number;
    firstSentenceMs: number;
    paragraphMs: number;
    paragraphRatio: number;
  } | null;
  readonly ttfa: {
    clauseChars: number;
    clauseAloneMs: number;
    longEarlyMs: number;
    longEarlyRatio: number;
    longSentenceMs: number;
    longSentenceRatio: number;
    firstSentenceMs: number;
    paragraphMs: number;
    paragraphRatio: number;
  };
  readonly eight: {
    chunks: number;
    sumModelMs: number;
    sumFrontEndMs: number;
    idealMs: number;
    idealWithFrontEndMs: number;
    audioS: number;
    byLookahead: {
      lookahead: number;
      idealMs: number;
      completionMs: number;
      ratio: number;
      ttfaMs: number;
    }[];
    /** The same text over WS (default look-ahead): model time as run, in all, and against the chunks alone. */
    asRun: { inferenceMs: number; toAlone: number; elapsedMs: number; elapsedToIdeal: number } | null;
  };
  readonly stalls: {
    request: string;
    byLookahead: { lookahead: number; medianS: number; maxS: number }[];
  }[];
  readonly overhead: {
    requests: number;
    medianInferenceMs: number;
    medianFrontEndMs: number;
    medianMinusInferenceMs: number;
    medianMinusInferenceAndFrontEndMs: number;
    p95MinusInferenceAndFrontEndMs: number;
  };
  readonly ping: { samples: number; p50Ms: number; p99Ms: number; maxMs: number } | null;
}

/** The server's own account of the 8-sentence text over WS: its model time as run and its elapsed time. */
function asRun(main: ServerRaw, workers: number): ModelSummary['eight']['asRun'] {
  const ws = main.eightWs ?? [];
  if (ws.length === 0) return null;
  return {
    inferenceMs: round(median(ws.map((w) => w.inferenceMs)), 1),
    toAlone: round(median(ws.map((w, i) => w.inferenceMs / main.eightAloneSumMs[i]!)), 3),
    elapsedMs: round(median(ws.map((w) => w.elapsedMs)), 1),
    elapsedToIdeal: round(median(ws.map((w) => w.elapsedMs / (w.inferenceMs / workers))), 3),
  };
}

/** The time-to-first-audio medians and ratios of one server. */
function ttfaOf(raw: ServerRaw) {
  const clauseAloneMs = med(raw.clauseAlone, (s) => s.ttfaMs);
  const longEarlyMs = med(raw.longEarly, (s) => s.ttfaMs);
  const firstSentenceMs = med(raw.firstSentence, (s) => s.ttfaMs);
  const paragraphMs = med(raw.paragraph, (s) => s.ttfaMs);
  return {
    lookahead: raw.lookahead,
    clauseAloneMs: round(clauseAloneMs, 1),
    longEarlyMs: round(longEarlyMs, 1),
    longEarlyRatio: round(longEarlyMs / clauseAloneMs, 3),
    firstSentenceMs: round(firstSentenceMs, 1),
    paragraphMs: round(paragraphMs, 1),
    paragraphRatio: round(paragraphMs / firstSentenceMs, 3),
  };
}

export function summarizeModel(run: ModelRun, workers: number): ModelSummary {
  const main = run.servers[0]!;
  const alone = main.alone;
  const modelMs = alone.map((c) => median(c.modelMs));
  const frontEndMs = alone.map((c) => median(c.frontEndMs));
  const sum = (xs: readonly number[]) => xs.reduce((a, b) => a + b, 0);
  const sumModelMs = median(main.eightAloneSumMs);
  const sumFrontEndMs = sum(frontEndMs);
  const audioS = sum(alone.map((c) => c.audioS));
  const ttfa = ttfaOf(main);
  const longSentenceMs = med(main.longSentence, (s) => s.ttfaMs);
  const baseline = run.servers[1];
  const stallOf = (pick: (s: ServerRaw) => readonly PostSample[]) =>
    run.servers.map((s) => ({
      lookahead: s.lookahead,
      medianS: round(median(pick(s).map((p) => p.stallS)), 3),
      maxS: round(Math.max(...pick(s).map((p) => p.stallS)), 3),
    }));
  const overhead = main.overhead ?? [];
  const minusModel = overhead.map((o) => o.serverTtfaMs - o.firstInferenceMs);
  const minusAll = overhead.map((o) => o.serverTtfaMs - o.firstInferenceMs - o.firstFrontEndMs);
  const pings = main.ping?.latencies ?? [];
  return {
    model: run.model,
    trials: run.trials,
    workers,
    sentence: {
      modelMs: round(median(modelMs), 1),
      frontEndMs: round(median(frontEndMs), 1),
      audioS: round(median(alone.map((c) => c.audioS)), 2),
    },
    modelPerAudio: round(sum(modelMs) / 1000 / audioS, 3),
    ttfa: {
      clauseChars: main.clauseChars,
      clauseAloneMs: ttfa.clauseAloneMs,
      longEarlyMs: ttfa.longEarlyMs,
      longEarlyRatio: ttfa.longEarlyRatio,
      longSentenceMs: round(longSentenceMs, 1),
      longSentenceRatio: round(longSentenceMs / ttfa.clauseAloneMs, 3),
      firstSentenceMs: ttfa.firstSentenceMs,
      paragraphMs: ttfa.paragraphMs,
      paragraphRatio: ttfa.paragraphRatio,
    },
    ttfaBaseline: baseline ? ttfaOf(baseline) : null,
    eight: {
      chunks: alone.length,
      sumModelMs: round(sumModelMs, 1),
      sumFrontEndMs: round(sumFrontEndMs, 1),
      idealMs: round(sumModelMs / workers, 1),
      idealWithFrontEndMs: round((sumModelMs + sumFrontEndMs) / workers, 1),
      audioS: round(audioS, 2),
      byLookahead: run.servers.map((s) => ({
        lookahead: s.lookahead,
        idealMs: round(median(s.eightAloneSumMs) / workers, 1),
        completionMs: round(
          med(s.eight, (p) => p.totalMs),
          1,
        ),
        // Each trial against the ideal measured next to it; the median of those ratios.
        ratio: round(median(s.eight.map((p, i) => p.totalMs / (s.eightAloneSumMs[i]! / workers))), 3),
        ttfaMs: round(
          med(s.eight, (p) => p.ttfaMs),
          1,
        ),
      })),
      asRun: asRun(main, workers),
    },
    stalls: [
      { request: '8-sentence POST', byLookahead: stallOf((s) => s.eight) },
      { request: 'long first sentence, early release', byLookahead: stallOf((s) => s.longEarly) },
    ],
    overhead: {
      requests: overhead.length,
      medianInferenceMs: round(median(overhead.map((o) => o.firstInferenceMs)), 2),
      medianFrontEndMs: round(median(overhead.map((o) => o.firstFrontEndMs)), 2),
      medianMinusInferenceMs: round(median(minusModel), 2),
      medianMinusInferenceAndFrontEndMs: round(median(minusAll), 2),
      p95MinusInferenceAndFrontEndMs: round(quantile(minusAll, 0.95), 2),
    },
    ping:
      pings.length > 0
        ? {
            samples: pings.length,
            p50Ms: round(median(pings), 2),
            p99Ms: round(quantile(pings, 0.99), 2),
            maxMs: round(Math.max(...pings), 2),
          }
        : null,
  };
}

/** Targets of the issue, in one place. */
export const TARGETS = {
  longFirstRatio: 1.3,
  paragraphRatio: 1.1,
  eightToIdeal: 1.15,
  overheadMs: 2,
  pingP99Ms: 50,
} as const;

export interface TargetCheck {
  readonly model: string;
  readonly name: string;
  readonly target: string;
  readonly value: string;
  readonly met: boolean | null;
}

const yes = (met: boolean | null) => (met === null ? '–' : met ? 'yes' : 'NO');

/** Every target with its verdict, per model. */
export function evaluateCore(summaries: readonly ModelSummary[]): TargetCheck[] {
  return summaries.flatMap((s) => {
    const fast = s.modelPerAudio < 1;
    const main = s.eight.byLookahead[0]!;
    const stalls = s.stalls.map((st) => ({ request: st.request, worst: st.byLookahead[0]!.maxS }));
    const checks: TargetCheck[] = [
      {
        model: s.model,
        name: 'time to first audio, long first sentence / its first clause alone',
        target: `≤ ${TARGETS.longFirstRatio}`,
        value: String(s.ttfa.longEarlyRatio),
        met: s.ttfa.longEarlyRatio <= TARGETS.longFirstRatio,
      },
      {
        model: s.model,
        name: 'time to first audio, 4-sentence paragraph / its first sentence alone',
        target: `≤ ${TARGETS.paragraphRatio}`,
        value: String(s.ttfa.paragraphRatio),
        met: s.ttfa.paragraphRatio <= TARGETS.paragraphRatio,
      },
      {
        model: s.model,
        name: `8-sentence POST completion / ideal (LOOKAHEAD_SENTENCES=${main.lookahead})`,
        target: `≤ ${TARGETS.eightToIdeal}`,
        value: String(main.ratio),
        met: main.ratio <= TARGETS.eightToIdeal,
      },
      ...stalls.map((st) => ({
        model: s.model,
        name: `playback stalls, ${st.request} (worst trial)`,
        target: fast ? '0 s' : 'none (model slower than real time)',
        value: `${st.worst} s`,
        met: fast ? st.worst === 0 : null,
      })),
      {
        model: s.model,
        name: 'server overhead: arrival → first frame sent, minus model and front end (median)',
        target: `≤ ${TARGETS.overheadMs} ms`,
        value: `${s.overhead.medianMinusInferenceAndFrontEndMs} ms`,
        met: s.overhead.medianMinusInferenceAndFrontEndMs <= TARGETS.overheadMs,
      },
    ];
    if (s.ping)
      checks.push({
        model: s.model,
        name: 'GET /ping p99 while every worker is busy',
        target: `< ${TARGETS.pingP99Ms} ms`,
        value: `${s.ping.p99Ms} ms`,
        met: s.ping.p99Ms < TARGETS.pingP99Ms,
      });
    return checks;
  });
}

export interface CoreReport {
  readonly machine: { cpu: string; cores: number; node: string };
  readonly workers: number;
  readonly defaultLookahead: number;
  readonly summaries: readonly ModelSummary[];
  readonly targets: readonly TargetCheck[];
  readonly runs: readonly ModelRun[];
}

const speedOf = (s: ModelSummary) =>
  `${s.modelPerAudio} s of model time per s of audio: ${s.modelPerAudio < 1 ? 'faster' : 'slower'} than real time`;

export function renderCore(report: CoreReport): string {
  const { summaries, workers } = report;
  const la = (n: number) => `LOOKAHEAD_SENTENCES=${n}${n === report.defaultLookahead ? ' (default)' : ''}`;
  const lookaheads = summaries[0]?.eight.byLookahead.map((b) => b.lookahead) ?? [];
  const baselineLa = summaries.find((s) => s.ttfaBaseline)?.ttfaBaseline?.lookahead;
  const metOf = (model: string, prefix: string) =>
    yes(report.targets.find((t) => t.model === model && t.name.startsWith(prefix))?.met ?? null);
  return [
    `Machine: ${report.machine.cpu}, ${report.machine.cores} cores, Node ${report.machine.node}. ` +
      `${workers} workers. Models, measured in this run (one sentence of the 8-sentence text alone, medians): ` +
      summaries
        .map(
          (s) =>
            `${s.model}: ${s.sentence.modelMs} ms of model time and ${s.sentence.frontEndMs} ms of text front end ` +
            `for ${s.sentence.audioS} s of audio (${speedOf(s)})`,
        )
        .join('; ') +
      '. ' +
      `POSTs ask for raw PCM and are timed by the client; medians of ${summaries.map((s) => `${s.trials} (${s.model})`).join(' and ')} trials.`,
    '',
    '**Time to first audio** (POST, sending → first body byte; the ratio is to the reference row above it)',
    '',
    markdownTable(
      [
        'model',
        'request',
        'median ms',
        'ratio',
        'target',
        'met',
        ...(baselineLa === undefined ? [] : [`${la(baselineLa)}: median ms (ratio)`]),
      ],
      summaries.flatMap((s) => {
        const b = s.ttfaBaseline;
        const rows: (string | number)[][] = [
          [
            s.model,
            `the long sentence's first clause alone (${s.ttfa.clauseChars} characters)`,
            s.ttfa.clauseAloneMs,
            '1',
            '(reference)',
            '',
          ],
          [
            s.model,
            `long first sentence (${LONG_FIRST_SENTENCE.length} characters, ${LONG_FIRST_SENTENCE.split(',').length - 1} commas), early release (default)`,
            s.ttfa.longEarlyMs,
            s.ttfa.longEarlyRatio,
            `≤ ${TARGETS.longFirstRatio}`,
            metOf(s.model, 'time to first audio, long'),
          ],
          [
            s.model,
            'the same with "first_chunk":"sentence"',
            s.ttfa.longSentenceMs,
            s.ttfa.longSentenceRatio,
            '(contrast)',
            '',
          ],
          [s.model, 'first sentence of the paragraph alone', s.ttfa.firstSentenceMs, '1', '(reference)', ''],
          [
            s.model,
            '4-sentence paragraph',
            s.ttfa.paragraphMs,
            s.ttfa.paragraphRatio,
            `≤ ${TARGETS.paragraphRatio}`,
            metOf(s.model, 'time to first audio, 4-sentence'),
          ],
        ];
        if (baselineLa === undefined) return rows;
        const extra = b
          ? [
              `${b.clauseAloneMs} (1)`,
              `${b.longEarlyMs} (${b.longEarlyRatio})`,
              '–',
              `${b.firstSentenceMs} (1)`,
              `${b.paragraphMs} (${b.paragraphRatio})`,
            ]
          : rows.map(() => '–');
        return rows.map((row, i) => [...row, extra[i]!]);
      }),
    ),
    '',
    `**One 8-sentence POST, sending → last byte** (ideal: the model time of each of its chunks sent alone, ` +
      `summed, / ${workers} workers, measured in each trial just before the POST; ratio: the median of the ` +
      'trials’ ratios; the last column puts the text front end into the ideal too, for comparison)',
    '',
    markdownTable(
      [
        'model',
        'chunks',
        'model time of the chunks alone, sum (front end) ms',
        ...lookaheads.flatMap((n) => [`${la(n)}: ideal / completion ms`, 'ratio']),
        'target',
        'met',
        'ratio with the front end in the ideal (default)',
      ],
      summaries.map((s) => [
        s.model,
        s.eight.chunks,
        `${s.eight.sumModelMs} (${s.eight.sumFrontEndMs})`,
        ...s.eight.byLookahead.flatMap((b) => [`${b.idealMs} / ${b.completionMs}`, b.ratio]),
        `≤ ${TARGETS.eightToIdeal} (default)`,
        metOf(s.model, '8-sentence'),
        round(s.eight.byLookahead[0]!.completionMs / s.eight.idealWithFrontEndMs, 3),
      ]),
    ),
    ...summaries
      .filter((s) => s.eight.asRun)
      .flatMap((s) => {
        const r = s.eight.asRun!;
        return [
          '',
          `${s.model}: the same text over WebSocket right after each POST took ${r.inferenceMs} ms of model time ` +
            `in all (the server’s inference_s, median), ${r.toAlone}× its chunks’ time alone in the same trial; ` +
            `its elapsed_s, ${r.elapsedMs} ms, is ${r.elapsedToIdeal}× that model time / ${workers} workers.`,
        ];
      }),
    '',
    `**Playback stalls** (a client that starts playing at its first audio byte, in real time at 24 kHz: ` +
      'seconds the playhead waits for audio over the whole request; median / worst trial)',
    '',
    markdownTable(
      ['model', 'model time / audio time', 'request', ...lookaheads.map(la), 'target', 'met (default)'],
      summaries.flatMap((s) =>
        s.stalls.map((st) => [
          s.model,
          s.modelPerAudio,
          st.request,
          ...st.byLookahead.map((b) => `${b.medianS} / ${b.maxS}`),
          s.modelPerAudio < 1 ? '0 s' : 'none (slower than real time)',
          metOf(s.model, `playback stalls, ${st.request}`),
        ]),
      ),
    ),
    '',
    '**Server overhead** (WebSocket, one request at a time; the server’s own figures from synthesis_complete)',
    '',
    markdownTable(
      [
        'model',
        'requests',
        'first chunk: model / front end (median ms)',
        'arrival → first frame sent, minus model (median ms)',
        '… minus model and front end: median / p95 ms',
        'target (median)',
        'met',
      ],
      summaries.map((s) => [
        s.model,
        s.overhead.requests,
        `${s.overhead.medianInferenceMs} / ${s.overhead.medianFrontEndMs}`,
        s.overhead.medianMinusInferenceMs,
        `${s.overhead.medianMinusInferenceAndFrontEndMs} / ${s.overhead.p95MinusInferenceAndFrontEndMs}`,
        `≤ ${TARGETS.overheadMs} ms`,
        metOf(s.model, 'server overhead'),
      ]),
    ),
    ...summaries
      .filter((s) => s.ping)
      .flatMap((s) => [
        '',
        `GET /ping while all ${workers} workers are busy (${s.model}, ${s.ping!.samples} pings): ` +
          `p50 / p99 / max ${s.ping!.p50Ms} / ${s.ping!.p99Ms} / ${s.ping!.maxMs} ms; target p99 < ${TARGETS.pingP99Ms} ms: ` +
          `${metOf(s.model, 'GET /ping')}.`,
      ]),
  ].join('\n');
}
