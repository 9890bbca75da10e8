/**
 * The benchmarks: `npm run bench -- <case> [flags]` runs one case of scripts/bench/ through the
 * runner (scripts/lib/bench-runner.ts), writes docs/bench/<case>.json and .md, and with --readme the
 * case's block in the docs/ page that holds its markers (docs/performance.md and its neighbours). `--list` lists the cases, `<case> --help` says what one measures.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { CASES } from './bench/index.ts';
import { helpText, parseBenchArgs } from './lib/bench-cli.ts';
import { renderResult, runCase } from './lib/bench-runner.ts';
import { UsageError, runMain } from './lib/cli.ts';
import { projectPath } from './lib/paths.ts';
import { writeDocBlock } from './lib/doc-blocks.ts';

export async function main(argv: readonly string[]): Promise<number> {
  let command;
  try {
    command = parseBenchArgs(argv, CASES);
  } catch (err) {
    if (!(err instanceof UsageError)) throw err;
    process.stderr.write(`bench: ${err.message}\n`);
    return 2;
  }
  if (command.kind !== 'run') {
    process.stdout.write(`${helpText(CASES, command.kind === 'help' ? command.case : undefined)}\n`);
    return 0;
  }
  const { case: c, settings } = command;
  // The command as it reproduces the figures: where they were written is not part of it.
  const shown = argv.filter((a, i) => a !== '--readme' && a !== '--out' && argv[i - 1] !== '--out');
  const result = await runCase(c, settings, `npm run bench -- ${shown.join(' ')}`, (line) =>
    process.stderr.write(`${line}\n`),
  );
  const md = renderResult(result);
  const json = settings.out ?? projectPath('docs', 'bench', c.file?.(settings) ?? `${c.name}.json`);
  mkdirSync(dirname(json), { recursive: true });
  writeFileSync(json, `${JSON.stringify(result, null, 2)}\n`);
  writeFileSync(json.replace(/(\.json)?$/, '.md'), `${md}\n`);
  if (settings.readme) writeDocBlock(c.block?.(settings) ?? `bench:${c.name}`, md);
  process.stdout.write(`${md}\n`);
  return 0;
}

runMain(import.meta.url, 'bench', () => main(process.argv.slice(2)));
