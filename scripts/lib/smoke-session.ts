/**
 * The smoke test against a running server: checks `GET /ping`, then drives one WebSocket session the
 * way a voice agent does (every sentence sent at once, answers expected strictly in order), checks
 * that an invalid message gets an error frame without ending the session, and closes with
 * `{"type":"close"}`. Writes one WAV per sentence so a person can listen to the result.
 */
import { randomUUID } from 'node:crypto';
import { mkdir, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import WebSocket from 'ws';
import { AsyncQueue } from 'kokoro-stream-client';
import { wavFile } from '../../model/audio/wav.ts';
import { codePointLength } from '../../protocol/request.ts';
import {
  FOLLOW_UP_TEXT,
  PCM_SAMPLE_RATE,
  WS_PATH,
  classifyFrame,
  durationMatches,
  formatResultTable,
  pcmSeconds,
  type ControlMessage,
  type Endpoints,
  type ResultRow,
  type SmokeOptions,
  wavName,
} from './smoke-checks.ts';

/** One pass/fail line of the final summary. */
interface Check {
  readonly name: string;
  readonly ok: boolean;
  readonly detail: string;
}

type Frame =
  | { readonly kind: 'audio'; readonly data: Buffer; readonly at: number }
  | { readonly kind: 'control'; readonly message: ControlMessage; readonly at: number }
  | { readonly kind: 'malformed-control'; readonly text: string; readonly at: number }
  | { readonly kind: 'socket-error'; readonly error: Error; readonly at: number }
  | { readonly kind: 'closed'; readonly code: number; readonly reason: string; readonly at: number };

const KNOWN_CONTROL_TYPES: ReadonlySet<unknown> = new Set(['synthesis_start', 'synthesis_complete', 'error']);

/**
 * Frames from socket events, read as sequential awaits. Arrival time is taken in the event handler,
 * not when the frame is read, so TTFA is not inflated by the reader. Once the socket has closed,
 * nothing else can arrive, and every further read reports the close again.
 */
class FrameQueue {
  readonly #queue = new AsyncQueue<Frame>();
  #closed: Frame | undefined;

  push(frame: Frame): void {
    this.#queue.push(frame);
    if (frame.kind === 'closed') {
      this.#closed = frame;
      this.#queue.end();
    }
  }

  /** Next frame, or `'timeout'` once the deadline (a `performance.now()` value) has passed. */
  async next(deadline: number): Promise<Frame | 'timeout'> {
    const next = await this.#queue.nextBefore(deadline);
    return next === 'timeout' ? next : next.done ? this.#closed! : next.value;
  }
}

interface RequestState {
  readonly label: string;
  readonly id: string;
  readonly text: string;
  sentAt: number;
  /** When this request's turn began: its send, or the previous request's end if that was later. */
  turnStart: number;
  readonly chunks: Buffer[];
  bytes: number;
  oddFrames: number;
  firstAudioAt: number | null;
  doneAt: number | null;
  totalDurationS: unknown;
  outcome: 'pending' | 'complete' | 'error' | 'ended';
  readonly problems: string[];
}

function newRequest(label: string, id: string, text: string): RequestState {
  return {
    label,
    id,
    text,
    sentAt: 0,
    turnStart: 0,
    chunks: [],
    bytes: 0,
    oddFrames: 0,
    firstAudioAt: null,
    doneAt: null,
    totalDurationS: undefined,
    outcome: 'pending',
    problems: [],
  };
}

function describeError(message: ControlMessage): string {
  const code = typeof message.code === 'string' ? message.code : '(no code)';
  const text = typeof message.message === 'string' ? message.message : '(no message)';
  return `${code}: ${text}`;
}

function preview(text: string, max = 60): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat;
}

function closeDescription(frame: { code: number; reason: string }): string {
  return `code ${frame.code}${frame.reason ? ` "${frame.reason}"` : ''}`;
}

/**
 * Reads frames until `req` ends (completion, error frame, timeout or a closed socket). Frames that
 * name a later request mean the server reordered; those are recorded on both requests.
 * @returns false when the session can no longer be used.
 */
async function collectRequest(
  queue: FrameQueue,
  req: RequestState,
  later: readonly RequestState[],
  deadline: number,
): Promise<boolean> {
  for (;;) {
    const frame = await queue.next(deadline);
    if (frame === 'timeout') {
      req.outcome = 'ended';
      req.problems.push(
        `timed out waiting for ${req.firstAudioAt === null ? 'its first audio' : 'synthesis_complete'} (raise --timeout-ms?)`,
      );
      return false;
    }
    switch (frame.kind) {
      case 'audio':
        req.firstAudioAt ??= frame.at;
        req.chunks.push(frame.data);
        req.bytes += frame.data.length;
        if (frame.data.length % 2 !== 0) req.oddFrames++;
        break;
      case 'malformed-control':
        req.problems.push(`text frame that is not a JSON object: "${preview(frame.text)}"`);
        break;
      case 'socket-error':
        req.problems.push(`connection error: ${frame.error.message}`);
        break;
      case 'closed':
        req.outcome = 'ended';
        req.problems.push(
          `server closed the session before finishing this request (${closeDescription(frame)})`,
        );
        return false;
      case 'control': {
        const { message } = frame;
        const type = message.type;
        const rid = message.request_id;
        if (!KNOWN_CONTROL_TYPES.has(type)) break; // clients ignore control types they do not know
        if (rid !== undefined && rid !== req.id) {
          const other = later.find((r) => r.id === rid);
          req.problems.push(
            other
              ? `order broken: ${String(type)} for request ${other.label} arrived before this request finished`
              : `${String(type)} with unknown request_id ${JSON.stringify(rid)}`,
          );
          if (other && type !== 'synthesis_start') {
            other.outcome = type === 'error' ? 'error' : 'complete';
            other.doneAt = frame.at;
            other.totalDurationS = message.total_duration_s;
            other.problems.push(`answered out of order (before request ${req.label} finished)`);
            if (type === 'error') other.problems.push(`error frame ${describeError(message)}`);
          }
          break;
        }
        if (type === 'synthesis_complete') {
          if (rid === undefined) req.problems.push('synthesis_complete without request_id');
          req.outcome = 'complete';
          req.doneAt = frame.at;
          req.totalDurationS = message.total_duration_s;
          return true;
        }
        if (type === 'error') {
          // An error without request_id answers a message the server could not parse; since answers
          // come in order, it is this request's answer.
          req.outcome = 'error';
          req.doneAt = frame.at;
          req.problems.push(`error frame ${describeError(message)}`);
          return true;
        }
        break;
      }
    }
  }
}

/** Applies the per-request audio checks; returns the request's pass/fail check. */
function judgeRequest(req: RequestState): Check {
  const problems = [...req.problems];
  if (req.outcome === 'complete') {
    if (req.bytes === 0) problems.push('no audio bytes before synthesis_complete');
    if (req.bytes % 2 !== 0)
      problems.push(`odd number of audio bytes (${req.bytes}); s16le needs whole samples`);
    if (req.oddFrames > 0) problems.push(`${req.oddFrames} audio frame(s) split a sample (odd byte count)`);
    const total = req.totalDurationS;
    if (typeof total !== 'number' || !Number.isFinite(total)) {
      problems.push(`synthesis_complete has no numeric total_duration_s (got ${JSON.stringify(total)})`);
    } else if (!durationMatches(pcmSeconds(req.bytes), total)) {
      problems.push(
        `received ${pcmSeconds(req.bytes).toFixed(3)} s of audio but total_duration_s is ${total.toFixed(3)} s (more than 5 % apart)`,
      );
    }
  }
  return {
    name: `request ${req.label} "${preview(req.text, 40)}"`,
    ok: problems.length === 0,
    detail: problems.join('; '),
  };
}

function toRow(req: RequestState, ok: boolean): ResultRow {
  const first = req.firstAudioAt;
  return {
    request: req.label,
    chars: codePointLength(req.text),
    bytes: req.bytes,
    audioSeconds: req.outcome === 'complete' || req.bytes > 0 ? pcmSeconds(req.bytes) : null,
    ttfaFromSendMs: first === null ? null : first - req.sentAt,
    ttfaOwnTurnMs: first === null ? null : first - req.turnStart,
    status: ok ? 'ok' : req.outcome === 'pending' ? 'FAIL (no answer)' : 'FAIL',
  };
}

function connectionHint(err: unknown): string {
  const cause = err instanceof Error && err.cause instanceof Error ? err.cause : err;
  const code =
    typeof cause === 'object' && cause !== null && 'code' in cause
      ? String((cause as { code: unknown }).code)
      : '';
  const text = cause instanceof Error ? cause.message : String(cause);
  const why = code === 'ENOTFOUND' || code === 'EAI_AGAIN' ? 'the host name does not resolve' : text;
  return `${why}. Is the server running (npm start), and does --url point at it?`;
}

/** Waits for `GET /ping` to answer 200, retrying while it answers 503 (model still loading). */
async function waitForPing(pingUrl: string, deadline: number, startedAt: number): Promise<Check> {
  const name = 'GET /ping answers 200';
  let announcedAt: number | null = null;
  for (;;) {
    const remaining = deadline - performance.now();
    if (remaining <= 0) {
      return {
        name,
        ok: false,
        detail: `still answering 503 when the ${Math.round(deadline - startedAt)} ms limit ran out`,
      };
    }
    const sentAt = performance.now();
    let status: number;
    try {
      // Longer than the contract's 2 s so a slow answer is reported as slow rather than missing.
      const res = await fetch(pingUrl, {
        signal: AbortSignal.timeout(Math.ceil(Math.min(remaining, 5_000))),
      });
      await res.arrayBuffer();
      status = res.status;
    } catch (err) {
      if (err instanceof Error && (err.name === 'TimeoutError' || err.name === 'AbortError')) {
        return {
          name,
          ok: false,
          detail: `${pingUrl} gave no answer within ${Math.round(performance.now() - sentAt)} ms`,
        };
      }
      return { name, ok: false, detail: `cannot reach ${pingUrl}: ${connectionHint(err)}` };
    }
    const latencyMs = performance.now() - sentAt;
    if (status === 200) {
      return latencyMs <= 2_000
        ? { name, ok: true, detail: `${Math.round(latencyMs)} ms` }
        : {
            name,
            ok: false,
            detail: `answered after ${Math.round(latencyMs)} ms; the contract allows 2000 ms`,
          };
    }
    if (status !== 503) {
      return { name, ok: false, detail: `${pingUrl} answered ${status}; is --url pointing at this server?` };
    }
    const now = performance.now();
    if (announcedAt === null || now - announcedAt >= 5_000) {
      console.log(`waiting for model… (/ping answers 503, ${Math.round((now - startedAt) / 1000)} s so far)`);
      announcedAt = now;
    }
    await sleep(Math.ceil(Math.max(0, Math.min(1_000, deadline - performance.now()))));
  }
}

/** Opens the session and routes every socket event into a FrameQueue. */
function openSession(
  wsUrl: string,
  deadline: number,
): Promise<{ ws: WebSocket; queue: FrameQueue; openMs: number } | { error: string }> {
  return new Promise((resolveOpen) => {
    const queue = new FrameQueue();
    const startedAt = performance.now();
    let opened = false;
    const ws = new WebSocket(wsUrl, { handshakeTimeout: Math.max(1, Math.round(deadline - startedAt)) });

    ws.on('message', (data, isBinary) => {
      const at = performance.now();
      const payload = Array.isArray(data)
        ? Buffer.concat(data)
        : Buffer.isBuffer(data)
          ? data
          : Buffer.from(data);
      const cls = classifyFrame(payload, isBinary);
      if (cls.kind === 'audio') queue.push({ kind: 'audio', data: payload, at });
      else if (cls.kind === 'control') queue.push({ kind: 'control', message: cls.message, at });
      else queue.push({ kind: 'malformed-control', text: cls.text, at });
    });
    ws.on('open', () => {
      opened = true;
      resolveOpen({ ws, queue, openMs: performance.now() - startedAt });
    });
    ws.on('error', (err) => {
      if (!opened) {
        // ws reports a refused upgrade as "Unexpected server response: 404"; say what that means.
        const status = /Unexpected server response: (\d+)/.exec(err.message)?.[1];
        const hint = status
          ? `the server answered HTTP ${status} instead of accepting the WebSocket; is the path right (${WS_PATH})?`
          : connectionHint(err);
        resolveOpen({ error: `cannot open ${wsUrl}: ${hint}` });
        return;
      }
      queue.push({ kind: 'socket-error', error: err, at: performance.now() });
    });
    ws.on('close', (code, reason) => {
      queue.push({ kind: 'closed', code, reason: reason.toString('utf8'), at: performance.now() });
    });
  });
}

function send(ws: WebSocket, body: unknown): void {
  // SageMaker delivers every client message as a binary frame, so do the same.
  ws.send(Buffer.from(JSON.stringify(body)));
}

/** Runs the whole smoke test and returns the process exit code. */
const INVALID_CHECK = 'invalid message {"text": 5} gets an error frame';
const CLOSE_CHECK = '{"type":"close"} closes the session with 1000';

/** Sends `{"text": 5}` and expects an `error` control frame with a readable message. */
async function checkInvalidMessage(
  ws: WebSocket,
  queue: FrameQueue,
  deadline: number,
  report: (check: Check) => void,
): Promise<boolean> {
  const name = INVALID_CHECK;
  send(ws, { text: 5 });
  let sawAudio = false;
  for (;;) {
    const frame = await queue.next(deadline);
    if (frame === 'timeout') {
      report({ name, ok: false, detail: 'no error frame before the time limit' });
      return false;
    }
    if (frame.kind === 'closed') {
      report({ name, ok: false, detail: `server closed the session instead (${closeDescription(frame)})` });
      return false;
    }
    if (frame.kind === 'audio') {
      sawAudio = true;
      continue;
    }
    if (frame.kind !== 'control') continue;
    const { message } = frame;
    if (message.type === 'synthesis_complete') {
      report({
        name,
        ok: false,
        detail: 'the server synthesized it instead of answering with an error frame',
      });
      return true;
    }
    if (message.type !== 'error') continue;
    const problems: string[] = [];
    if (sawAudio) problems.push('audio arrived before the error frame');
    if (typeof message.code !== 'string' || message.code === '') problems.push('error frame has no code');
    const text = message.message;
    if (typeof text !== 'string' || text.trim() === '') problems.push('error frame has no message');
    // The contract asks for words, not a bare key name such as 'text'.
    else if (!/\s/.test(text.trim()))
      problems.push(`error message "${text}" does not say what was wrong in words`);
    const ok = problems.length === 0;
    report({ name, ok, detail: ok ? describeError(message) : problems.join('; ') });
    return true;
  }
}

/** Sends `{"type":"close"}` and expects the server to close with 1000. */
async function checkClose(
  ws: WebSocket,
  queue: FrameQueue,
  deadline: number,
  report: (check: Check) => void,
): Promise<void> {
  const name = CLOSE_CHECK;
  send(ws, { type: 'close' });
  let extra = 0;
  for (;;) {
    const frame = await queue.next(deadline);
    if (frame === 'timeout') {
      report({ name, ok: false, detail: 'the server did not close the connection before the time limit' });
      return;
    }
    if (frame.kind === 'closed') {
      const problems: string[] = [];
      if (frame.code !== 1000) problems.push(`closed with ${closeDescription(frame)}`);
      if (extra > 0) problems.push(`${extra} unexpected frame(s) after the close message`);
      report({ name, ok: problems.length === 0, detail: problems.join('; ') });
      return;
    }
    if (frame.kind === 'audio' || frame.kind === 'malformed-control') extra++;
    else if (frame.kind === 'control' && KNOWN_CONTROL_TYPES.has(frame.message.type)) extra++;
  }
}

/** Writes one WAV per request that produced audio; returns a line saying where they went. */
async function writeWavs(requests: readonly RequestState[], outDir: string): Promise<string> {
  const dir = resolve(outDir);
  if (!requests.some((r) => r.bytes > 0)) return 'no audio received, so no WAV files written';
  try {
    await mkdir(dir, { recursive: true });
    let written = 0;
    for (const [i, req] of requests.entries()) {
      if (req.bytes === 0) continue;
      const name = wavName(i, req.text);
      await writeFile(join(dir, name), wavFile(Buffer.concat(req.chunks)));
      written++;
    }
    return `wrote ${written} WAV file(s) to ${dir}`;
  } catch (err) {
    // Not a server failure, so it does not change the verdict; still worth saying.
    return `could not write WAV files to ${dir}: ${err instanceof Error ? err.message : String(err)}`;
  }
}

/** Prints the table, the failure reasons and the verdict; returns the exit code. */
function finish(
  sessionChecks: readonly Check[],
  requests: readonly RequestState[],
  wavNote?: string,
): number {
  const requestChecks = requests.map(judgeRequest);
  if (requests.length > 0) {
    console.log('');
    console.log(formatResultTable(requests.map((r, i) => toRow(r, requestChecks[i]?.ok ?? false))));
  }
  if (wavNote) console.log(`\n${wavNote}`);
  const all = [...sessionChecks, ...requestChecks];
  const failed = all.filter((c) => !c.ok);
  if (failed.length > 0) {
    console.log('\nFailed checks:');
    for (const c of failed) console.log(`  - ${c.name}: ${c.detail}`);
  }
  console.log(`\n${all.length - failed.length} passed, ${failed.length} failed`);
  return failed.length === 0 ? 0 : 1;
}

/**
 * Runs every check against the server at `endpoints`, printing a line per check and the result
 * table; returns the exit code (0: all passed).
 */
export async function runSmoke(options: SmokeOptions, endpoints: Endpoints): Promise<number> {
  const startedAt = performance.now();
  const deadline = startedAt + options.timeoutMs;
  const checks: Check[] = [];
  const report = (check: Check): void => {
    checks.push(check);
    console.log(`${check.ok ? 'ok  ' : 'FAIL'} ${check.name}${check.detail ? ` — ${check.detail}` : ''}`);
  };

  console.log(`ping     ${endpoints.pingUrl}`);
  console.log(`session  ${endpoints.wsUrl}`);
  console.log(`voice    ${options.voice}, format ${options.format} s16le mono ${PCM_SAMPLE_RATE} Hz`);
  console.log('');

  const ping = await waitForPing(endpoints.pingUrl, deadline, startedAt);
  report(ping);
  if (!ping.ok) return finish(checks, []);

  const session = await openSession(endpoints.wsUrl, deadline);
  if ('error' in session) {
    report({ name: 'WebSocket session opens', ok: false, detail: session.error });
    return finish(checks, []);
  }
  report({ name: 'WebSocket session opens', ok: true, detail: `${Math.round(session.openMs)} ms` });
  const { ws, queue } = session;

  const runId = randomUUID().slice(0, 8);
  const requests = options.texts.map((text, i) => newRequest(String(i + 1), `smoke-${runId}-${i + 1}`, text));

  // All at once, as an agent streaming sentences would; the server must queue and answer in order.
  for (const req of requests) {
    req.sentAt = performance.now();
    send(ws, {
      text: req.text,
      voice: options.voice,
      request_timestamp: Date.now() / 1000,
      request_id: req.id,
    });
  }
  console.log(`sent ${requests.length} sentence(s) at once; reading answers…`);

  let alive = true;
  let previousEnd = -Infinity;
  for (const [i, req] of requests.entries()) {
    if (req.outcome !== 'pending') continue; // already answered out of order
    if (!alive) {
      req.outcome = 'ended';
      req.problems.push('not answered: the session ended earlier');
      continue;
    }
    req.turnStart = Math.max(req.sentAt, previousEnd);
    alive = await collectRequest(queue, req, requests.slice(i + 1), deadline);
    previousEnd = req.doneAt ?? performance.now();
  }

  const followUp = newRequest(
    `${requests.length + 1} (after error)`,
    `smoke-${runId}-after-error`,
    FOLLOW_UP_TEXT,
  );
  const skipped = (name: string): Check => ({
    name,
    ok: false,
    detail: 'not run: the session ended earlier',
  });
  if (alive) alive = await checkInvalidMessage(ws, queue, deadline, report);
  else report(skipped(INVALID_CHECK));
  if (alive) {
    followUp.sentAt = followUp.turnStart = performance.now();
    send(ws, {
      text: followUp.text,
      voice: options.voice,
      request_timestamp: Date.now() / 1000,
      request_id: followUp.id,
    });
    alive = await collectRequest(queue, followUp, [], deadline);
  } else {
    followUp.outcome = 'ended';
    followUp.problems.push('not sent: the session ended earlier');
  }
  if (alive) await checkClose(ws, queue, deadline, report);
  else report(skipped(CLOSE_CHECK));

  if (ws.readyState !== WebSocket.CLOSED) ws.terminate();

  const all = [...requests, followUp];
  const wavNote = await writeWavs(all, options.outDir);
  return finish(checks, all, wavNote);
}
