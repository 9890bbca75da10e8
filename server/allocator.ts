/**
 * glibc's malloc and memory it has freed. Above a threshold, malloc takes a block from the kernel
 * (mmap) and gives it back when freed; but that threshold moves up to the size of every such block
 * freed, up to 32 MB, so after the first large message or long sentence every later audio buffer
 * comes from the heap, and what is freed there stays with the process (docs/experiments.md,
 * "Memory after a burst", compares a burst of malformed input with and without the pin).
 *
 * Pinning it takes `MALLOC_MMAP_THRESHOLD_` in the environment before the process starts: glibc
 * reads it once, at startup. So the process re-executes itself with it (same PID, same arguments,
 * `process.execve`, Node 22.15 and later), unless the operator set it, turned it off
 * (`KOKORO_MALLOC_PIN=false`), or the allocator is not glibc.
 */
import { readSetting } from './config/setting-kinds.ts';
import { MALLOC_PIN } from './config/settings-engine.ts';

export const MMAP_THRESHOLD_VARIABLE = 'MALLOC_MMAP_THRESHOLD_';
/** `KOKORO_MALLOC_PIN=false` leaves glibc's moving threshold alone. */
export const PIN_VARIABLE = MALLOC_PIN.name;
/** Blocks of 1 MB and more (the audio of a long piece, a large message) go back to the kernel when freed. */
export const MMAP_THRESHOLD_BYTES = 1024 * 1024;

/** How the allocator was found: what the startup log reports. */
export type AllocatorState =
  | { readonly mmapThreshold: string; readonly by: 'server' | 'operator' }
  | { readonly mmapThreshold: 'glibc default'; readonly reason: string };

type Env = Readonly<Record<string, string | undefined>>;

export interface Process {
  readonly env: Env;
  readonly execPath: string;
  readonly execArgv: readonly string[];
  readonly argv: readonly string[];
  /** glibc's version when glibc is the C library (process.report's header). */
  readonly glibc: string | undefined;
  readonly execve: ((file: string, args: string[], env: Record<string, string>) => never) | undefined;
}

/** This process, as `pinMmapThreshold` needs it. */
export function thisProcess(): Process {
  const header = (process.report?.getReport() as { header?: { glibcVersionRuntime?: string } } | undefined)
    ?.header;
  const execve = (process as { execve?: Process['execve'] }).execve;
  return {
    env: process.env,
    execPath: process.execPath,
    execArgv: process.execArgv,
    argv: process.argv,
    glibc: header?.glibcVersionRuntime,
    execve: execve?.bind(process),
  };
}

/**
 * Re-executes the process with the threshold pinned when that is needed and possible (then it
 * does not return); otherwise says how the allocator stands.
 */
export function pinMmapThreshold(proc: Process = thisProcess()): AllocatorState {
  const set = proc.env[MMAP_THRESHOLD_VARIABLE];
  if (set !== undefined && set !== '') {
    return { mmapThreshold: set, by: set === String(MMAP_THRESHOLD_BYTES) ? 'server' : 'operator' };
  }
  if (proc.glibc === undefined) return { mmapThreshold: 'glibc default', reason: 'not glibc' };
  // A value that is not a boolean pins (the default); the configuration then refuses it, with the rest.
  if (!readSetting(MALLOC_PIN, proc.env).value) {
    return { mmapThreshold: 'glibc default', reason: `${PIN_VARIABLE}=${proc.env[PIN_VARIABLE]?.trim()}` };
  }
  if (!proc.execve) {
    return {
      mmapThreshold: 'glibc default',
      reason: `this Node cannot re-execute itself (process.execve, Node 22.15+); set ${MMAP_THRESHOLD_VARIABLE}=${MMAP_THRESHOLD_BYTES}`,
    };
  }
  const env = Object.fromEntries(
    Object.entries(proc.env).filter((entry): entry is [string, string] => entry[1] !== undefined),
  );
  env[MMAP_THRESHOLD_VARIABLE] = String(MMAP_THRESHOLD_BYTES);
  return proc.execve(proc.execPath, [proc.execPath, ...proc.execArgv, ...proc.argv.slice(1)], env);
}
