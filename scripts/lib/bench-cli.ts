/**
 * The benchmarks' command line (pure): the flags every case takes, a case's own flags, `--list` and
 * `<case> --help`.
 */
import { parseArgs } from 'node:util';
import { MEASURES } from './bench-measures.ts';
import type { Case, Flag, Settings, Value } from './bench-runner.ts';
import { UsageError, intFlag } from './cli.ts';

export const COMMON_FLAGS: Readonly<Record<string, Flag>> = {
  trials: {
    kind: 'int',
    min: 1,
    max: 1000,
    help: 'trials; each starts every server anew (default: the case’s)',
  },
  repeat: {
    kind: 'int',
    default: 1000,
    min: 0,
    max: 100_000,
    help: 'compute of the real-cost stand-in (1000: about a second per sentence on two cores); 0 leaves it out',
  },
  'model-dir': { kind: 'string', help: 'a model directory (a real model) instead of the stand-ins' },
  url: { kind: 'string', help: 'a running server, http://HOST:PORT, instead of starting one' },
  env: {
    kind: 'list',
    help: 'KEY=VALUE for the servers it starts (repeatable; the shell’s environment passes too)',
  },
  out: {
    kind: 'string',
    help: 'the JSON file (default docs/bench/<case>.json); the Markdown goes beside it',
  },
  readme: {
    kind: 'boolean',
    help: 'also write the tables into the docs/ page that holds the case’s markers (docs/performance.md, …)',
  },
};

export type Command =
  | { readonly kind: 'list' }
  | { readonly kind: 'help'; readonly case?: Case }
  | { readonly kind: 'run'; readonly case: Case; readonly settings: Settings };

/**
 * `[case] [flags]`, `--list` or `[case] --help` into what to do (pure).
 * @throws UsageError naming the unknown case, flag or bad value.
 */
export function parseBenchArgs(argv: readonly string[], cases: readonly Case[]): Command {
  if (argv.includes('--list')) return { kind: 'list' };
  const name = argv[0]?.startsWith('-') ? undefined : argv[0];
  const c = cases.find((k) => k.name === name);
  if (name !== undefined && !c) throw new UsageError(`no case "${name}"; --list lists them`);
  if (argv.includes('--help') || argv.includes('-h')) return { kind: 'help', ...(c ? { case: c } : {}) };
  if (!c) throw new UsageError('name a case first; --list lists them');
  const flags = { ...COMMON_FLAGS, ...c.flags };
  let values: Record<string, string | boolean | (string | boolean)[] | undefined>;
  try {
    values = parseArgs({
      args: argv.slice(1),
      strict: true,
      allowPositionals: false,
      options: Object.fromEntries(
        Object.entries(flags).map(([k, f]) => [
          k,
          { type: f.kind === 'boolean' ? 'boolean' : 'string', multiple: f.kind === 'list' },
        ]),
      ),
    }).values;
  } catch (err) {
    throw new UsageError(err instanceof Error ? err.message : String(err));
  }
  const value = (key: string, f: Flag): Value => {
    const raw = values[key];
    if (f.kind === 'int')
      return intFlag(key, raw as string | undefined, Number(f.default ?? NaN), f.min ?? 0, f.max);
    if (f.kind === 'boolean') return raw === true;
    if (f.kind === 'list') return (raw as string[] | undefined) ?? [];
    return (raw as string | undefined) ?? (f.default as string | undefined);
  };
  const env: Record<string, string> = {};
  for (const pair of value('env', COMMON_FLAGS.env!) as string[]) {
    const eq = pair.indexOf('=');
    if (eq <= 0) throw new UsageError(`--env should be KEY=VALUE; got "${pair}"`);
    env[pair.slice(0, eq)] = pair.slice(eq + 1);
  }
  const str = (key: string) => value(key, COMMON_FLAGS[key]!) as string | undefined;
  const settings: Settings = {
    trials: intFlag('trials', values.trials as string | undefined, c.trials, 1, 1000),
    repeat: value('repeat', COMMON_FLAGS.repeat!) as number,
    ...(str('model-dir') !== undefined ? { modelDir: str('model-dir') } : {}),
    ...(str('url') !== undefined ? { url: str('url') } : {}),
    ...(str('out') !== undefined ? { out: str('out') } : {}),
    env,
    readme: value('readme', COMMON_FLAGS.readme!) as boolean,
    flags: Object.fromEntries(Object.entries(c.flags).map(([k, f]) => [k, value(k, f)])),
  };
  if (settings.url !== undefined && !/^https?:\/\/[^/]+\/?$/.test(settings.url))
    throw new UsageError(`--url should be http://HOST:PORT; got "${settings.url}"`);
  if (settings.url !== undefined && c.servers.length !== 1)
    throw new UsageError(`--url needs a case with one server; ${c.name} has ${c.servers.length}`);
  return { kind: 'run', case: c, settings };
}

const flagLines = (flags: Readonly<Record<string, Flag>>) =>
  Object.entries(flags).map(([k, f]) => {
    const arg = f.kind === 'boolean' ? '' : f.kind === 'int' ? ' N' : ' VALUE';
    const def = f.default === undefined ? '' : ` (default ${f.default})`;
    return `  --${`${k}${arg}`.padEnd(20)} ${f.help}${def}`;
  });

/** The text of `--list`, or of `--help` for one case (pure). */
export function helpText(cases: readonly Case[], c?: Case): string {
  if (!c)
    return [
      'Usage: npm run bench -- <case> [flags]    (--list: the cases; <case> --help: its flags)',
      '',
      ...cases.map((k) => `  ${k.name.padEnd(12)} ${k.summary}`),
    ].join('\n');
  const servers = c.servers.length === 0 ? 'none (in-process)' : c.servers.map((s) => s.name).join(', ');
  return [
    `Usage: npm run bench -- ${c.name} [flags]`,
    '',
    c.about,
    '',
    `Servers: ${servers}. Models: ${c.models.join(', ') || 'none'}. Trials: ${c.trials}.`,
    'Measures:',
    ...c.measures.map((m) => `  ${m}: ${MEASURES[m]}`),
    '',
    'Flags of this case:',
    ...(Object.keys(c.flags).length > 0 ? flagLines(c.flags) : ['  none']),
    '',
    'Flags of every case:',
    // An in-process case starts no server: the model and server flags do nothing there.
    ...flagLines(
      c.servers.length > 0
        ? COMMON_FLAGS
        : { trials: COMMON_FLAGS.trials!, out: COMMON_FLAGS.out!, readme: COMMON_FLAGS.readme! },
    ),
  ].join('\n');
}
