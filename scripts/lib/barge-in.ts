/**
 * The pieces of the barge-in benchmark: a cancel trial on one session, reference requests that say
 * what one chunk of model time is, sessions that keep the workers busy, and the server's own
 * 'cancel acknowledged' log lines read whole from its output.
 */
import type { ChildProcess } from 'node:child_process';
import { RawWsSession, control, type RawFrame } from './raw-ws.ts';

/** Sentences of a voice agent's length (each one chunk of model time); load and references use them. */
export const SENTENCES = [
  'Thanks for waiting, I found three flights that match your dates and budget.',
  'The earliest leaves at seven fifteen in the morning and lands just after noon.',
  'A later option departs at two and costs about forty dollars less.',
  'Would you like me to hold a seat on either one while you decide?',
];

/** The answer a trial cuts: twelve sentences, far more than is spoken before the cancel. */
export const LONG_TEXT = [...SENTENCES, ...SENTENCES, ...SENTENCES].join(' ');

/** What a completed request's synthesis_complete says about model time. */
export interface ChunkFigures {
  /** inference_s / chunks: the model's run time per chunk, on average over the request. */
  readonly perChunkMs: number;
  /** first_chunk_inference_s. */
  readonly firstChunkMs: number;
}

/** One cancel: sent after the first audio frame of a long request. */
export interface Trial {
  readonly requestId: string;
  /** From sending the cancel to receiving synthesis_cancelled, on the client. */
  readonly clientMs: number;
  /** The request was still running and the cancel cut it (listed, and no synthesis_complete). */
  readonly cut: boolean;
  /** From the server's log line: the cancel's arrival to its answer leaving. */
  ackMs?: number;
}

const figuresOf = (m: Record<string, unknown>): ChunkFigures => ({
  perChunkMs: (Number(m.inference_s) * 1000) / Math.max(1, Number(m.chunks)),
  firstChunkMs: Number(m.first_chunk_inference_s) * 1000,
});

/** The end of request `id`: its completion, or an error about it. */
const endOf = (id: string) => (f: RawFrame) =>
  f.message?.request_id === id && (f.message.type === 'synthesis_complete' || f.message.type === 'error');

function failIfError(frame: RawFrame): Record<string, unknown> {
  const m = frame.message!;
  if (m.type === 'error') throw new Error(`request ${String(m.request_id)} failed: ${String(m.message)}`);
  return m;
}

/** Sends one request and waits for its completion; returns its model figures. */
export async function completeRequest(
  session: RawWsSession,
  text: string,
  id: string,
): Promise<ChunkFigures> {
  const end = session.next(endOf(id), 300_000, `synthesis_complete of ${id}`);
  session.send({ text, request_id: id });
  return figuresOf(failIfError(await end));
}

/** One trial: a long request, its first audio frame, a cancel, the cancel's answer. */
export async function cancelTrial(session: RawWsSession, id: string, timeoutMs = 300_000): Promise<Trial> {
  const first = session.next((f) => f.binary || endOf(id)(f), timeoutMs, `first audio of ${id}`);
  session.send({ text: LONG_TEXT, request_id: id });
  const frame = await first;
  if (!frame.binary) {
    failIfError(frame);
    throw new Error(`request ${id} completed before any audio arrived`);
  }
  let completed = false;
  const stop = session.onFrame((f) => {
    if (control('synthesis_complete', id)(f)) completed = true;
  });
  const answer = session.next(control('synthesis_cancelled'), timeoutMs, 'synthesis_cancelled');
  const sentAt = session.send({ type: 'cancel' });
  const reply = await answer;
  stop();
  const cancelled = (reply.message!.cancelled ?? []) as string[];
  return { requestId: id, clientMs: reply.at - sentAt, cut: cancelled.includes(id) && !completed };
}

/** Waits until no worker runs or has queued anything (GET /ping's busy and queued). */
export async function waitIdle(http: string, timeoutMs = 120_000): Promise<void> {
  const deadline = performance.now() + timeoutMs;
  for (;;) {
    const body = (await (await fetch(`${http}/ping`)).json()) as { busy?: number; queued?: number };
    if (body.busy === 0 && body.queued === 0) return;
    if (performance.now() > deadline) throw new Error(`the server stayed busy for ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

/**
 * Sessions that keep the workers busy: each sends one sentence after another, the next as soon
 * as the last completes, until stopped. Completions are kept while `recording`.
 */
export class LoadSessions {
  readonly #sessions: RawWsSession[];
  #stopped = false;
  recording = false;
  readonly completions: ChunkFigures[] = [];
  /** Requests completed since the start, recorded or not. */
  completed = 0;
  errors = 0;

  private constructor(sessions: RawWsSession[]) {
    this.#sessions = sessions;
  }

  static async start(url: string, count: number): Promise<LoadSessions> {
    const sessions = await Promise.all(Array.from({ length: count }, () => RawWsSession.open(url)));
    const load = new LoadSessions(sessions);
    for (const [i, s] of sessions.entries()) load.#loop(s, i);
    return load;
  }

  #loop(session: RawWsSession, index: number): void {
    let n = 0;
    const next = () => {
      if (this.#stopped) return;
      session.send({ text: SENTENCES[(index + n) % SENTENCES.length]!, request_id: `load${index}-${n++}` });
    };
    session.onFrame((f) => {
      if (f.message?.type === 'synthesis_complete') {
        this.completed++;
        if (this.recording) this.completions.push(figuresOf(f.message));
        next();
      } else if (f.message?.type === 'error') {
        this.errors++;
        next();
      }
    });
    next();
  }

  /** Stops sending and closes every session (the server drops what they had in flight). */
  async stop(): Promise<void> {
    this.#stopped = true;
    await Promise.all(this.#sessions.map((s) => s.close()));
  }
}

/**
 * The server's JSON log lines, parsed as they come. Reads the child's output itself, line by
 * line across pipe chunks, so that no line is lost where a chunk boundary splits it.
 */
export function collectLogLines(child: ChildProcess): Record<string, unknown>[] {
  const lines: Record<string, unknown>[] = [];
  for (const stream of [child.stdout, child.stderr]) {
    let rest = '';
    stream?.on('data', (chunk: Buffer) => {
      const parts = (rest + chunk.toString()).split('\n');
      rest = parts.pop()!;
      for (const part of parts) {
        if (!part.startsWith('{')) continue;
        try {
          lines.push(JSON.parse(part) as Record<string, unknown>);
        } catch {
          // not a log line
        }
      }
    });
  }
  return lines;
}

/** The ackMs of every 'cancel acknowledged' line so far, in order, with the session it came from. */
export function cancelAcks(
  lines: readonly Record<string, unknown>[],
): { sessionId: string; ackMs: number }[] {
  return lines
    .filter((l) => l.msg === 'cancel acknowledged')
    .map((l) => ({ sessionId: String(l.sessionId), ackMs: Number(l.ackMs) }));
}

/**
 * Waits until the server has logged `count` cancel answers (its output is read asynchronously)
 * and gives trial i the i-th one: only the measuring session cancels, and a session answers its
 * cancels in order.
 */
export async function attachAcks(
  lines: readonly Record<string, unknown>[],
  trials: readonly Trial[],
  timeoutMs = 10_000,
): Promise<void> {
  const deadline = performance.now() + timeoutMs;
  while (cancelAcks(lines).length < trials.length) {
    if (performance.now() > deadline) {
      throw new Error(
        `the server logged ${cancelAcks(lines).length} 'cancel acknowledged' lines for ${trials.length} cancels; is LOG_LEVEL info?`,
      );
    }
    await new Promise((r) => setTimeout(r, 20));
  }
  const acks = cancelAcks(lines);
  if (new Set(acks.map((a) => a.sessionId)).size > 1)
    throw new Error('cancel answers from more than one session');
  for (const [i, trial] of trials.entries()) trial.ackMs = acks[i]!.ackMs;
}
