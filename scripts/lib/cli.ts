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

/**
 * A whole-number flag value from `min` to `max`, or `fallback` when the flag is absent.
 * @throws UsageError naming the flag and the range.
 */
export function intFlag(
  name: string,
  raw: string | undefined,
  fallback: number,
  min: number,
  max = Number.MAX_SAFE_INTEGER,
): number {
  if (raw === undefined) return fallback;
  const value = Number(raw);
  if (!/^\d+$/.test(raw.trim()) || value < min || value > max) {
    const range = max === Number.MAX_SAFE_INTEGER ? `of ${min} or more` : `from ${min} to ${max}`;
    throw new UsageError(`--${name} should be a whole number ${range}; got "${raw}"`);
  }
  return value;
}

/**
 * Runs a script's `main` when the module is the program node was asked to run: its result is the
 * exit code; a crash is printed with the script's name and exits 1.
 */
export function runMain(moduleUrl: string, name: string, main: () => Promise<number>): void {
  if (!isMain(moduleUrl)) return;
  main().then(
    (code) => {
      process.exitCode = code;
    },
    (err: unknown) => {
      process.stderr.write(
        `${name} crashed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`,
      );
      process.exitCode = 1;
    },
  );
}
