/**
 * Starts the server as its own process (exactly as `npm start` does: the compiled server in dist/)
 * on a free loopback port, for the benchmarks and tests, and stops it again.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createServer } from 'node:net';
import { PROJECT_ROOT, projectPath } from './paths.ts';

export interface ServerProcess {
  readonly http: string;
  readonly ws: string;
  readonly child: ChildProcess;
  /** Everything the server printed: JSON log lines, startup stage markers, EMF metric lines. */
  readonly output: string[];
  /** The JSON log lines printed so far, parsed (not the stage markers nor the EMF lines). */
  logs(): Record<string, unknown>[];
  stop(): Promise<number | null>;
}

/** A port the OS says is free right now. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const address = s.address();
      s.close(() =>
        typeof address === 'object' && address ? resolve(address.port) : reject(new Error('no port')),
      );
    });
  });
}

/**
 * Spawns the server (behind `wrapper`, a command such as strace that runs the rest, when given) and
 * waits until GET /ping answers 200. `entry` is another server that reads HOST and PORT (the
 * kokoro-js server of the peer benchmark).
 */
export async function startServerProcess(
  env: Record<string, string>,
  timeoutMs = 120_000,
  wrapper: readonly string[] = [],
  entry = projectPath('dist', 'server', 'main.js'),
): Promise<ServerProcess> {
  const port = await freePort();
  const command = [...wrapper, process.execPath, entry];
  const child = spawn(command[0]!, command.slice(1), {
    cwd: PROJECT_ROOT,
    env: { ...process.env, HOST: '127.0.0.1', PORT: String(port), ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const output: string[] = [];
  for (const stream of [child.stdout!, child.stderr!]) {
    // Whole lines only: a pipe chunk may end inside one.
    let rest = '';
    stream.on('data', (chunk: Buffer) => {
      const lines = (rest + chunk.toString()).split('\n');
      rest = lines.pop()!;
      output.push(...lines.filter(Boolean));
    });
    stream.on('end', () => rest && output.push(rest));
  }
  // 'close', not 'exit': the child's output has been read to the end by then.
  const exited = new Promise<number | null>((resolve) => child.once('close', (code) => resolve(code)));
  const http = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (child.exitCode !== null)
      throw new Error(`server exited with ${child.exitCode}:\n${output.slice(-20).join('\n')}`);
    try {
      if ((await fetch(`${http}/ping`)).status === 200) break;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`server not ready after ${timeoutMs} ms:\n${output.slice(-20).join('\n')}`);
    }
    await new Promise((r) => setTimeout(r, 250));
  }
  return {
    http,
    ws: `ws://127.0.0.1:${port}/invocations-bidirectional-stream`,
    child,
    output,
    logs: () =>
      output
        .filter((line) => line.startsWith('{') && !line.startsWith('{"_aws"'))
        .map((line) => JSON.parse(line) as Record<string, unknown>),
    async stop() {
      if (child.exitCode === null) child.kill('SIGTERM');
      // The server's drain ends within SHUTDOWN_GRACE_S (25 s); anything else gets 30.
      const timer = setTimeout(() => child.kill('SIGKILL'), 30_000).unref();
      return exited.finally(() => clearTimeout(timer));
    },
  };
}
