/** Command-line pieces the scripts share. */
import { realpathSync } from 'node:fs';
import { pathToFileURL } from 'node:url';
import { parseArgs, type ParseArgsConfig } from 'node:util';

type FlagOptions = NonNullable<ParseArgsConfig['options']>;

/** A command-line mistake: printed with the usage text or a pointer to --help, exit code 2. */
export class UsageError extends Error {
  override readonly name = 'UsageError';
}

/** Parses `--flag` options strictly (no positionals); unknown flags or bad values are UsageErrors. */
export function parseFlags<const O extends FlagOptions>(
  argv: readonly string[],
  options: O,
): ReturnType<
  typeof parseArgs<{ args: string[]; strict: true; allowPositionals: false; options: O }>
>['values'] {
  try {
    return parseArgs({ args: [...argv], strict: true, allowPositionals: false, options }).values;
  } catch (err) {
    throw new UsageError(err instanceof Error ? err.message : String(err));
  }
}

/** Whether the module at `moduleUrl` (its `import.meta.url`) is the script node was asked to run. */
export function isMain(moduleUrl: string): boolean {
  const entry = process.argv[1];
  if (entry === undefined) return false;
  try {
    return pathToFileURL(realpathSync(entry)).href === moduleUrl;
  } catch {
    return false;
  }
}
