/**
 * A burst of malformed WebSocket input against a running server, and its resident memory before
 * and after, for the memory test (attacks.test.ts; the figures that decided the fixes are in
 * docs/experiments.md). The server must allow messages of at most 1 MiB (`WS_MAX_MESSAGE_BYTES=1048576`).
 */
import { readFileSync } from 'node:fs';
import WebSocket from 'ws';
import { nextEvent } from '../wait.ts';

const MB = 1024 * 1024;

/** A process's resident memory, in MB. */
export function rssMb(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  return Number(/VmRSS:\s+(\d+) kB/.exec(status)![1]) / 1024;
}

/** A process's CPU time so far (user and system), in seconds. */
function cpuSeconds(pid: number): number {
  // Fields after the command name, which is in parentheses and may hold spaces.
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  return (Number(fields[11]) + Number(fields[12])) / 100; // utime, stime in clock ticks (USER_HZ 100)
}

/** One session: `parts` as one message (fin on the last), until its answer, an error or a close. */
function oneCase(ws: string, parts: readonly Buffer[]): Promise<void> {
  return new Promise((resolve, reject) => {
    const socket = new WebSocket(ws);
    nextEvent(socket, 'close', { timeoutMs: 60_000, what: 'an answer or a close' }).then(
      () => resolve(),
      reject,
    );
    socket.on('error', () => {});
    socket.on('message', (data, binary) => {
      if (binary) return;
      const type = (JSON.parse(String(data)) as { type: string }).type;
      if (type === 'synthesis_complete' || type === 'error') socket.close();
    });
    socket.on('open', () =>
      parts.forEach((p, i) => socket.send(p, { fin: i === parts.length - 1, binary: true })),
    );
  });
}

/** Text no language reads: combining marks, Han, emoji, arrows and letters, seeded. */
function garbage(length: number, seed: number): string {
  let state = seed;
  const next = () => (state = (state * 1103515245 + 12345) % 2147483648) / 2147483648;
  const ranges = [0x300, 0x4e00, 0x1f600, 0x2190, 0x61];
  let text = '';
  for (let i = 0; i < length; i++)
    text += String.fromCodePoint(ranges[Math.floor(next() * 5)]! + Math.floor(next() * 64));
  return text;
}

/** The six kinds of case, in turn: five refused, one synthesized as 40 pieces of 510 ids. */
const KINDS: readonly ((i: number) => Buffer[])[] = [
  () => [Buffer.concat([Buffer.from('{"text":'), Buffer.alloc(MB - 100, 0x61)])], // not JSON
  () => [Buffer.alloc(256 * 1024, 0xff)], // not UTF-8
  () => [Buffer.alloc(MB + 10, 0x61)], // over WS_MAX_MESSAGE_BYTES: 1009
  () => [Buffer.from(JSON.stringify({ text: 'a '.repeat(5000) }))], // text_too_long
  () => Array.from({ length: 300 }, () => Buffer.alloc(2048, 0x62)), // over the size, in fragments
  (i) => [Buffer.from(JSON.stringify({ text: garbage(4000, i + 1) }))], // synthesized, 40 long pieces
];

export interface BurstFigures {
  /** RSS after one long ordinary request, whose working set any long request leaves. */
  readonly baselineMb: number;
  /** RSS right after the burst (the caller reads it again for as long as memory may come back). */
  readonly afterMb: number;
  /** The server's CPU time over the burst. */
  readonly cpuS: number;
}

/** One long request, then `cases` malformed ones in turn, each after the last has been answered. */
export async function malformedBurst(
  server: { readonly ws: string; readonly pid: number },
  cases = 84,
): Promise<BurstFigures> {
  const long = 'the quick brown fox jumps over the lazy dog, '.repeat(60);
  await oneCase(server.ws, [Buffer.from(JSON.stringify({ text: long }))]);
  // What the long request frees is returned to the system over the next seconds: the baseline is
  // read after that, so that it holds only what any long request keeps.
  await new Promise((r) => setTimeout(r, 3000));
  const baselineMb = rssMb(server.pid);
  const cpu0 = cpuSeconds(server.pid);
  for (let i = 0; i < cases; i++) await oneCase(server.ws, KINDS[i % KINDS.length]!(i));
  const cpuS = cpuSeconds(server.pid) - cpu0;
  return { baselineMb, afterMb: rssMb(server.pid), cpuS };
}
