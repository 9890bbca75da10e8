/**
 * The container engine the image test drives: a working Docker engine when there is one, else
 * Podman, with the flags this kind of machine needs. Only `spawn`s the engine's command line.
 */
import { spawn, spawnSync } from 'node:child_process';
import { createWriteStream, readFileSync } from 'node:fs';

export type EngineName = 'docker' | 'podman';

export interface Engine {
  readonly name: EngineName;
  /** Flags before the subcommand (`podman --runtime runc build …`). */
  readonly globalArgs: readonly string[];
  /** Flags for `build` and `run` alike: resource limits the engine's defaults would get wrong. */
  readonly limitArgs: readonly string[];
}

/** The outcome of an engine command run to its end. */
export interface EngineResult {
  readonly status: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

/** Soft and hard limits of one resource, from /proc/self/limits ("unlimited" is Infinity). */
export interface Limit {
  readonly soft: number;
  readonly hard: number;
}

/** Reads the "Max open files" and "Max processes" rows of a /proc/PID/limits text. */
export function parseLimits(text: string): { nofile?: Limit; nproc?: Limit } {
  const row = (label: string): Limit | undefined => {
    const m = new RegExp(`^${label}\\s+(\\S+)\\s+(\\S+)`, 'm').exec(text);
    if (!m) return undefined;
    const value = (s: string) => (s === 'unlimited' ? Infinity : Number(s));
    return { soft: value(m[1]!), hard: value(m[2]!) };
  };
  const nofile = row('Max open files');
  const nproc = row('Max processes');
  return { ...(nofile ? { nofile } : {}), ...(nproc ? { nproc } : {}) };
}

/**
 * `--ulimit` flags that the container runtime can apply. Podman's defaults for root (nofile
 * 1048576, nproc at the kernel's maximum) are above what a sandboxed host grants, and runc then
 * fails with "error setting rlimit type 7 (or 6): operation not permitted"; so pass the host's own
 * hard limits, and nproc no higher than kernel.pid_max (a higher value was refused the same way).
 */
export function ulimitArgs(limits: { nofile?: Limit; nproc?: Limit }, pidMax: number): string[] {
  const args: string[] = [];
  const flag = (name: string, limit: Limit | undefined, cap = Infinity) => {
    if (!limit || !Number.isFinite(limit.hard)) return;
    const hard = Math.min(limit.hard, cap);
    args.push('--ulimit', `${name}=${Math.min(limit.soft, hard)}:${hard}`);
  };
  flag('nofile', limits.nofile);
  flag('nproc', limits.nproc, pidMax);
  return args;
}

function hostUlimitArgs(): string[] {
  try {
    const pidMax = Number(readFileSync('/proc/sys/kernel/pid_max', 'utf8').trim());
    return ulimitArgs(parseLimits(readFileSync('/proc/self/limits', 'utf8')), pidMax || Infinity);
  } catch {
    return [];
  }
}

function works(command: string, args: readonly string[]): EngineResult {
  const r = spawnSync(command, args, { encoding: 'utf8', timeout: 30_000 });
  return {
    status: r.error ? null : r.status,
    stdout: r.stdout ?? '',
    stderr: r.stderr ?? r.error?.message ?? '',
  };
}

/**
 * The engine to use: `preferred` if given (it must work), else Docker when its engine answers
 * (`docker info`; a podman-docker shim counts as Podman), else Podman.
 * @throws Error saying what was tried and how to install Podman.
 */
export function detectEngine(preferred?: EngineName): Engine {
  const tried: string[] = [];
  const candidates: EngineName[] = preferred ? [preferred] : ['docker', 'podman'];
  for (const name of candidates) {
    const version = works(name, ['--version']);
    if (version.status !== 0) {
      tried.push(`${name}: not installed`);
      continue;
    }
    if (name === 'docker' && /podman/i.test(version.stdout) && !preferred) {
      tried.push('docker: a Podman shim (using podman itself)');
      continue;
    }
    if (name === 'docker') {
      const info = works('docker', ['info', '--format', '{{.ServerVersion}}']);
      if (info.status !== 0) {
        tried.push(`docker: no engine answers (${info.stderr.trim().split('\n')[0] ?? ''})`);
        continue;
      }
      return { name, globalArgs: [], limitArgs: [] };
    }
    // crun (Podman's usual runtime) refuses a hybrid cgroup v1/v2 layout that runc runs on.
    const runc = works('runc', ['--version']).status === 0;
    const engine: Engine = {
      name,
      globalArgs: runc ? ['--runtime', 'runc'] : [],
      limitArgs: hostUlimitArgs(),
    };
    const info = works(name, [...engine.globalArgs, 'info', '--format', '{{.Host.OCIRuntime.Name}}']);
    if (info.status !== 0) {
      tried.push(`podman: \`podman info\` failed (${info.stderr.trim().split('\n')[0] ?? ''})`);
      continue;
    }
    return engine;
  }
  throw new Error(
    `no container engine works (${tried.join('; ')}); on Debian or Ubuntu run sh scripts/test-deps.sh, which installs podman and runc`,
  );
}

/** Runs `engine args…` to its end and returns its output (stdin from `input`, if given). */
export function engineRun(
  engine: Engine,
  args: readonly string[],
  options: { input?: NodeJS.ReadableStream; timeoutMs?: number } = {},
): Promise<EngineResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(engine.name, [...engine.globalArgs, ...args], {
      stdio: [options.input ? 'pipe' : 'ignore', 'pipe', 'pipe'],
    });
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    child.stdout!.on('data', (d: Buffer) => out.push(d));
    child.stderr!.on('data', (d: Buffer) => err.push(d));
    if (options.input && child.stdin) options.input.pipe(child.stdin);
    const timer =
      options.timeoutMs === undefined
        ? undefined
        : setTimeout(() => child.kill('SIGKILL'), options.timeoutMs);
    child.once('error', (e) => {
      clearTimeout(timer);
      reject(e);
    });
    child.once('close', (status) => {
      clearTimeout(timer);
      resolve({
        status,
        stdout: Buffer.concat(out).toString('utf8'),
        stderr: Buffer.concat(err).toString('utf8'),
      });
    });
  });
}

/**
 * Runs `engine args…` with its output appended to `logFile`; every output line also goes to
 * `onLine` (for progress). Resolves with the exit status and the last lines, for a failure message.
 */
export function engineStream(
  engine: Engine,
  args: readonly string[],
  logFile: string,
  onLine: (line: string) => void,
  env: NodeJS.ProcessEnv = process.env,
): Promise<{ status: number | null; tail: string[] }> {
  return new Promise((resolve, reject) => {
    const log = createWriteStream(logFile, { flags: 'a' });
    log.write(`$ ${engine.name} ${[...engine.globalArgs, ...args].join(' ')}\n`);
    const child = spawn(engine.name, [...engine.globalArgs, ...args], {
      stdio: ['ignore', 'pipe', 'pipe'],
      env,
    });
    const tail: string[] = [];
    let partial = '';
    const take = (d: Buffer) => {
      log.write(d);
      const lines = (partial + d.toString('utf8')).split('\n');
      partial = lines.pop() ?? '';
      for (const line of lines) {
        tail.push(line);
        if (tail.length > 60) tail.shift();
        onLine(line);
      }
    };
    child.stdout.on('data', take);
    child.stderr.on('data', take);
    child.once('error', reject);
    child.once('close', (status) => {
      if (partial) tail.push(partial);
      log.end(() => resolve({ status, tail }));
    });
  });
}
