/**
 * The benchmark runner. A case (scripts/bench/) is data — the servers it compares, the model costs,
 * the trials, the measures it takes, its flags — and one function that measures a trial; this runs
 * it: generates the stand-ins, starts and stops each server in turn (alternating the order between
 * trials), warms it up, takes the 1-minute load average with each figure, and renders every table
 * the same way for docs/bench/ and the pages under docs/ (docs/performance.md and its neighbours).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { MEASURES, timePost, type MeasureName } from './bench-measures.ts';
import { projectPath } from './paths.ts';
import { startServerProcess } from './server-process.ts';
import { writeStandinModelDir } from './standin-model.ts';
import { markdownTable, quantile, round } from './stats.ts';

export type Model = 'fast' | 'real';

/** A server a case runs: ours (with settings), or the kokoro-js server a user would write. */
export interface Server {
  readonly name: string;
  readonly kind?: 'ours' | 'kokoro-js';
  /** Settings of ours; they win over the shell's and --env. */
  readonly env?: Readonly<Record<string, string>>;
}

export interface Flag {
  readonly kind: 'int' | 'string' | 'boolean' | 'list';
  readonly default?: number | string;
  readonly min?: number;
  readonly max?: number;
  readonly help: string;
}

export type Value = number | string | boolean | readonly string[] | undefined;

export interface Settings {
  readonly trials: number;
  /** --repeat of the real-cost stand-in; 0 leaves it out. */
  readonly repeat: number;
  readonly modelDir?: string;
  readonly url?: string;
  readonly env: Readonly<Record<string, string>>;
  readonly out?: string;
  readonly readme: boolean;
  /** The case's own flags, defaults applied. */
  readonly flags: Readonly<Record<string, Value>>;
}

/** One measured quantity of one trial: its samples and the load average when they were taken. */
export interface Figure {
  readonly measure: MeasureName;
  /** What was measured: the text, the transport, the condition. */
  readonly what: string;
  readonly server?: string;
  readonly model?: string;
  readonly unit: string;
  readonly samples: readonly number[];
  /** The machine's 1-minute load average when the figure was recorded. */
  readonly load1: number;
  /** Each answer's audio as `bytes:sha256`, where servers' audio is compared. */
  readonly digests?: readonly string[];
}

export interface Table {
  readonly title: string;
  readonly header: readonly string[];
  readonly rows: readonly (readonly (string | number)[])[];
}

export interface Report {
  readonly tables: readonly Table[];
  readonly notes?: readonly string[];
  /** Further top-level fields of the JSON (the capacity file that `npm run plan` reads). */
  readonly fields?: Readonly<Record<string, unknown>>;
}

export interface RunningServer {
  readonly name: string;
  readonly http: string;
  readonly ws: string;
  /** The process's id, when this runner started it. */
  readonly pid?: number;
  /** Its JSON log lines so far. */
  logs(): Record<string, unknown>[];
}

export interface Context {
  readonly settings: Settings;
  /** The server of this trial; absent for an in-process case or an outside target. */
  readonly server?: RunningServer;
  readonly model?: string;
  readonly trial: number;
  readonly log: (line: string) => void;
  /** Records a figure (server and model filled in) with the 1-minute load average now. */
  figure(f: Omit<Figure, 'load1' | 'server' | 'model'>): void;
}

export interface Case {
  readonly name: string;
  /** One line for --list. */
  readonly summary: string;
  /** The question it answers, for --help. */
  readonly about: string;
  /** Started one at a time; none: the case runs in-process. */
  readonly servers: readonly Server[];
  readonly models: readonly Model[];
  readonly trials: number;
  readonly measures: readonly MeasureName[];
  readonly flags: Readonly<Record<string, Flag>>;
  /** Texts POSTed once to each server after it starts; a paragraph when absent. */
  readonly warm?: readonly string[];
  /** Whether the settings name a target other than a started server (no server is started then). */
  readonly external?: (s: Settings) => boolean;
  /** The block in docs/ (default `bench:<name>`) and the JSON file (default `<name>.json`). */
  readonly block?: (s: Settings) => string;
  readonly file?: (s: Settings) => string;
  /** Turns a model directory into the one the servers load (the kokoro-js folder), inside `tmp`. */
  readonly prepare?: (modelDir: string, tmp: string) => Promise<string>;
  /**
   * Measures one trial, on `ctx.server` when the case has servers; what it returns besides figures
   * (the capacity ladder's report) comes to `report` in trial order.
   */
  run(ctx: Context): Promise<unknown>;
  report(figures: readonly Figure[], settings: Settings, returned: readonly unknown[]): Report;
}

/** Every sample of the figures that match, across trials (a key absent from `match` matches anything). */
export function samplesOf(figures: readonly Figure[], match: Partial<Figure>): number[] {
  const keys = Object.keys(match) as (keyof Figure)[];
  return figures.filter((f) => keys.every((k) => f[k] === match[k])).flatMap((f) => [...f.samples]);
}

/** The q-quantile of the matching samples, rounded; NaN when there are none. */
export const stat = (figures: readonly Figure[], match: Partial<Figure>, p = 0.5, digits = 1): number =>
  round(quantile(samplesOf(figures, match), p), digits);

export interface Machine {
  readonly cpu: string;
  readonly cores: number;
  readonly node: string;
}

export type BenchResult = Readonly<Record<string, unknown>> & {
  readonly version: 1;
  readonly case: string;
  readonly command: string;
  readonly measured_at: string;
  readonly machine: Machine;
  readonly load1: { readonly start: number; readonly end: number };
  /** Where the files went and whether the docs were written are not part of what was measured. */
  readonly settings: Omit<Settings, 'out' | 'readme'>;
  readonly measures: Readonly<Record<string, string>>;
  readonly figures: readonly Figure[];
  readonly tables: readonly Table[];
  readonly notes: readonly string[];
};

/** The JSON of a run (pure): the report's own fields beside the common ones. */
export function buildResult(
  c: Case,
  run: { settings: Settings; figures: readonly Figure[]; report: Report; command: string },
  env: { machine: Machine; load1: { start: number; end: number }; at: Date },
): BenchResult {
  const settings = Object.fromEntries(
    Object.entries(run.settings).filter(([k]) => k !== 'out' && k !== 'readme'),
  ) as BenchResult['settings'];
  return {
    ...run.report.fields,
    version: 1,
    case: c.name,
    command: run.command,
    measured_at: env.at.toISOString(),
    machine: env.machine,
    load1: env.load1,
    settings,
    measures: Object.fromEntries(c.measures.map((m) => [m, MEASURES[m]])),
    figures: run.figures,
    tables: run.report.tables,
    notes: run.report.notes ?? [],
  };
}

/** The one Markdown rendering of a result: the machine, then every table, then the notes. */
export function renderResult(r: BenchResult): string {
  const head =
    `Machine: ${r.machine.cpu.trim()}, ${r.machine.cores} cores, Node ${r.machine.node}; ` +
    `1-minute load average ${round(r.load1.start, 2)} at the start, ${round(r.load1.end, 2)} at the end. ` +
    `\`${r.command}\`, ${r.settings.trials} trial(s).`;
  const cell = (c: string | number) => (typeof c === 'number' && Number.isNaN(c) ? '–' : c);
  const tables = r.tables.flatMap((t) => [
    '',
    `**${t.title}**`,
    '',
    markdownTable(
      t.header,
      t.rows.map((row) => row.map(cell)),
    ),
  ]);
  return [head, ...tables, ...r.notes.flatMap((n) => ['', n])].join('\n');
}

export const load1 = (): number => loadavg()[0]!;

export function machine(): Machine {
  return { cpu: cpus()[0]?.model ?? 'unknown', cores: cpus().length, node: process.version };
}

const FAST_DIR = projectPath('test', 'fixtures', 'standin-model');

/** The model costs a run covers, with their labels. */
function modelsOf(c: Case, s: Settings): { label: string; dir?: string; repeat?: number }[] {
  if (s.modelDir) return [{ label: s.modelDir, dir: s.modelDir }];
  const wanted = c.models.filter((m) => m === 'fast' || s.repeat > 0);
  return (wanted.length > 0 ? wanted : (['fast'] as const)).map((m) =>
    m === 'fast'
      ? { label: 'fast stand-in (fixture)', dir: FAST_DIR }
      : { label: `real-cost stand-in (--repeat ${s.repeat})`, repeat: s.repeat },
  );
}

/** Starts one server on `dir` and waits until it answers /ping. */
async function start(server: Server, dir: string, s: Settings) {
  const proc =
    server.kind === 'kokoro-js'
      ? await startServerProcess(
          { PEER_MODEL_DIR: dir },
          120_000,
          [],
          projectPath('dist', 'scripts', 'peer-kokoro-js-server.js'),
        )
      : await startServerProcess({ LOG_LEVEL: 'warn', ...s.env, KOKORO_MODEL_DIR: dir, ...server.env });
  return {
    running: {
      name: server.name,
      http: proc.http,
      ws: proc.ws,
      pid: proc.child.pid!,
      logs: () => proc.logs(),
    } satisfies RunningServer,
    stop: () => proc.stop(),
  };
}

const WARM = 'Thanks for waiting, I found three flights that match your dates and budget. Shall I book one?';

/** Runs every trial of a case and returns its result. */
export async function runCase(c: Case, s: Settings, command: string, log: (line: string) => void) {
  const figures: Figure[] = [];
  const returned: unknown[] = [];
  const start1 = load1();
  const trial = async (t: number, server?: RunningServer, model?: string) => {
    const value = await c.run({
      settings: s,
      trial: t,
      log,
      ...(server ? { server } : {}),
      ...(model ? { model } : {}),
      figure: (f) =>
        figures.push({
          ...f,
          samples: f.samples.map((x) => round(x, 3)),
          ...(server ? { server: server.name } : {}),
          ...(model ? { model } : {}),
          load1: load1(),
        }),
    });
    if (value !== undefined) returned.push(value);
  };
  if (c.servers.length === 0 || c.external?.(s)) {
    for (let t = 0; t < s.trials; t++) await trial(t);
  } else if (s.url) {
    const http = s.url.replace(/\/$/, '');
    const ws = `${http.replace(/^http/, 'ws')}/invocations-bidirectional-stream`;
    const server = { name: c.servers[0]!.name, http, ws, logs: () => [] };
    for (let t = 0; t < s.trials; t++) await trial(t, server, http);
  } else {
    for (const model of modelsOf(c, s)) {
      const tmp = mkdtempSync(join(tmpdir(), `kokoro-bench-${c.name}-`));
      try {
        let dir = model.dir ?? join(tmp, 'standin');
        if (model.repeat !== undefined) {
          log(`generating a stand-in with --repeat ${model.repeat}…`);
          await writeStandinModelDir(dir, { repeat: model.repeat, log: () => {} });
        }
        if (c.prepare) dir = await c.prepare(dir, tmp);
        for (let t = 0; t < s.trials; t++) {
          const turn = t % c.servers.length;
          for (const server of [...c.servers.slice(turn), ...c.servers.slice(0, turn)]) {
            log(`${model.label}, trial ${t + 1}/${s.trials}: ${server.name}…`);
            const { running, stop } = await start(server, dir, s);
            try {
              for (const text of c.warm ?? [WARM]) {
                const warm = await timePost(running.http, text);
                if (warm.error) throw new Error(`${server.name} refused the warm-up: ${warm.error}`);
              }
              await trial(t, running, model.label);
            } finally {
              await stop();
            }
          }
        }
      } finally {
        rmSync(tmp, { recursive: true, force: true });
      }
    }
  }
  const report = c.report(figures, s, returned);
  return buildResult(
    c,
    { settings: s, figures, report, command },
    { machine: machine(), load1: { start: start1, end: load1() }, at: new Date() },
  );
}
