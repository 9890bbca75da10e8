/**
 * Floods of messages a session answers at once (refusals on the sessions with contexts and on
 * ElevenLabs' stream, cancels with nothing to cut), from a client that never reads: every answer
 * counts against the session's bounds until it is written, so each flood ends in a 1008 close with
 * a reason, a handful of log lines and memory that comes back, while /ping and a well-behaved
 * session on another socket are served. And thousands of contexts opened and dropped on one
 * socket, during which /ping stays fast. One server process, its log read from its output.
 */
import { once } from 'node:events';
import type { Socket } from 'node:net';
import { setImmediate as turn, setTimeout as sleep } from 'node:timers/promises';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { startServerProcess, type ServerProcess } from '../../scripts/lib/server-process.ts';
import { STANDIN_MODEL_DIR, TestClient, bytesDiff, requestsOf } from './harness.ts';
import { rssMb } from './malformed-burst.ts';
import { nextEvent } from '../wait.ts';

/** The longest a /ping may take while a session floods or churns. */
const PING_MS = 250;
/** Lines of one kind a session logs one by one (server/observability/outcomes.ts, LINES_LOGGED). */
const LINES_LOGGED = 8;
/** Frames a flood sends at most: far past where the session must be closed. */
const MAX_FLOOD = 400_000;
const FLOOD_LINE = 'closing a session that floods past its queue';
const GOOD_TEXT = 'A well behaved session. It gets every sample of its answer. Whatever the flood does.';

let server: ServerProcess;
let wsBase: string;
let reference: Buffer;
beforeAll(async () => {
  server = await startServerProcess({
    KOKORO_MODEL_DIR: STANDIN_MODEL_DIR,
    KOKORO_WORKERS: '1',
    LOG_LEVEL: 'info',
  });
  wsBase = server.http.replace('http:', 'ws:');
  // The audio the well-behaved session must get, and the working set any synthesis leaves.
  reference = await pcm(GOOD_TEXT);
});
afterAll(() => server?.stop());

/** Every client socket a test opened, ended after it whatever its outcome. */
const sockets: WebSocket[] = [];
afterEach(() => {
  for (const socket of sockets.splice(0)) socket.terminate();
});

async function pcm(text: string): Promise<Buffer> {
  const response = await fetch(`${server.http}/invocations`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ text, format: 'pcm' }),
  });
  expect(response.status).toBe(200);
  return Buffer.from(await response.arrayBuffer());
}

/** Polls GET /ping until stopped: how many answers, and the slowest, in ms. */
function pollPing(): { stop(): Promise<{ pings: number; maxMs: number }> } {
  let stopped = false;
  const times: number[] = [];
  const loop = (async () => {
    while (!stopped) {
      const start = performance.now();
      const response = await fetch(`${server.http}/ping`);
      await response.arrayBuffer();
      expect(response.status).toBe(200);
      times.push(performance.now() - start);
      await sleep(20);
    }
  })();
  return {
    async stop() {
      stopped = true;
      await loop;
      return { pings: times.length, maxMs: Math.round(Math.max(...times)) };
    },
  };
}

/** The id the server's log gives the upgrade request of `socket` (found by its port). */
async function requestIdOf(socket: WebSocket): Promise<unknown> {
  const port = raw(socket).localPort;
  const isUpgrade = (l: Record<string, unknown>) =>
    l.msg === 'incoming request' && (l.req as { remotePort?: number } | undefined)?.remotePort === port;
  await logged(isUpgrade, 'the upgrade request in the log');
  return server.logs().find(isUpgrade)!.reqId;
}

/** Resolves once the server's log has a line for which `match` holds; fails after `timeoutMs`. */
async function logged(
  match: (line: Record<string, unknown>) => boolean,
  what: string,
  timeoutMs = 20_000,
): Promise<void> {
  const seen = () => server.logs().some(match);
  if (seen()) return;
  // After the harness's own listener, which has added the chunk's lines by then.
  await nextEvent(server.child.stdout!, 'data', { accept: seen, timeoutMs, what });
}

const raw = (socket: WebSocket) => (socket as unknown as { _socket: Socket })._socket;

async function connect(path: string): Promise<WebSocket> {
  const socket = new WebSocket(`${wsBase}${path}`);
  socket.on('error', () => {});
  sockets.push(socket);
  await once(socket, 'open');
  return socket;
}

/** Sends `frame` in batches, at the pace the socket takes them, until `done` or `max` frames. */
async function flood(socket: WebSocket, frame: string, done: Promise<void>, max: number): Promise<number> {
  let finished = false;
  const finish = () => (finished = true);
  void done.then(finish, finish);
  let sent = 0;
  while (!finished && sent < max) {
    for (let i = 0; i < 500; i++) socket.send(frame);
    sent += 500;
    if (raw(socket).writableNeedDrain) await Promise.race([once(raw(socket), 'drain'), done]);
    else await turn();
  }
  return sent;
}

/** A native session that sends one request and collects its audio. */
async function wellBehaved(): Promise<{ done: Promise<Buffer>; client: TestClient }> {
  const client = await TestClient.open(`${wsBase}/invocations-bidirectional-stream`);
  client.send({ text: GOOD_TEXT, format: 'pcm', request_id: 'good' });
  const done = client.untilControls('synthesis_complete', 1).then(() => {
    const [request] = requestsOf(client.frames);
    return Buffer.concat(request!.audio);
  });
  return { done, client };
}

describe('a client that floods without reading, on every route that answers at once', () => {
  const refused = { line: 'request refused', kind: 'refusals' };
  const cases = [
    {
      route: 'contexts=true',
      path: '/invocations-bidirectional-stream?contexts=true',
      frame: '{',
      ...refused,
    },
    {
      route: 'ElevenLabs multi-stream-input',
      path: '/v1/text-to-speech/af_heart/multi-stream-input',
      frame: '{',
      ...refused,
    },
    {
      route: 'ElevenLabs stream-input',
      path: '/v1/text-to-speech/af_heart/stream-input',
      frame: '{}',
      ...refused,
    },
    { route: 'Cartesia /tts/websocket', path: '/tts/websocket', frame: '{', ...refused },
    // Cancels with nothing to cut: not refused, but answered at once all the same.
    {
      route: 'plain session, cancels',
      path: '/invocations-bidirectional-stream',
      frame: '{"type":"cancel"}',
      line: 'cancel acknowledged',
      kind: 'emptyCancels',
    },
  ];

  it.each(cases)(
    '$route: closed 1008 with a reason, a bounded log, RSS back; /ping and another session served',
    async ({ path, frame, line, kind }) => {
      const pid = server.child.pid!;
      const rssBefore = rssMb(pid);
      const flooder = await connect(path);
      // The client never reads: what the server answers stays in the socket's buffers.
      raw(flooder).pause();
      const closed = once(flooder, 'close') as Promise<[number, Buffer]>;
      const reqId = await requestIdOf(flooder);
      // The flood's decision in the log, within 30 s of the flood's start.
      const decided = logged((l) => l.msg === FLOOD_LINE && l.reqId === reqId, 'the flood decision', 30_000);

      const ping = pollPing();
      const good = await wellBehaved();
      const sent = await flood(flooder, frame, decided, MAX_FLOOD);
      const seen = await decided.then(
        () => true,
        () => false,
      );
      const { pings, maxMs } = await ping.stop();
      const audio = await good.done;
      good.client.close();
      expect(pings).toBeGreaterThan(0);
      expect(maxMs, `the slowest of ${pings} pings`).toBeLessThan(PING_MS);
      expect(bytesDiff(audio, reference)).toBeUndefined();
      expect(seen, `a flood decision in the log after ${sent} frames`).toBe(true);
      // Read what was answered, then the close frame.
      let answers = 0;
      flooder.on('message', () => answers++);
      raw(flooder).resume();
      const [code, reason] = await closed;

      expect({ code, reason: reason.toString() }).toEqual({
        code: 1008,
        reason: 'too many pending messages',
      });
      // Every frame answered, the last ones not: nothing more was read once it closed.
      expect(answers).toBeGreaterThan(0);
      expect(answers).toBeLessThan(sent);

      await logged((l) => l.msg === 'session closed' && l.reqId === reqId, 'the session closed line');
      const lines = server.logs().filter((l) => l.reqId === reqId);
      expect(lines.filter((l) => l.msg === line)).toHaveLength(LINES_LOGGED);
      expect(lines.filter((l) => l.msg === FLOOD_LINE)).toHaveLength(1);
      // The rest are counted, once: every answer the client got among them.
      const summary = lines.find((l) => l.msg === 'session closed')!;
      expect(summary[kind]).toBeGreaterThanOrEqual(answers);
      expect(summary.unlogged).toEqual({ [kind]: (summary[kind] as number) - LINES_LOGGED });
      // Upgrade, opened, the first few answers, the flood, closed.
      expect(lines.length).toBeLessThanOrEqual(LINES_LOGGED + 4);

      await expect
        .poll(() => rssMb(pid) - rssBefore, {
          timeout: 15_000,
          interval: 500,
          message: `RSS ${rssBefore.toFixed(0)} MB before the flood of ${sent} frames`,
        })
        .toBeLessThan(80);
      expect((await fetch(`${server.http}/ping`)).status).toBe(200);
    },
  );
});

describe('contexts opened and dropped by the thousand on one socket', () => {
  /**
   * Past the 4,096 closed context ids a session remembers (server/session/ws-session.ts) and the
   * 1,024 contexts ElevenLabs' socket keeps state for: the last 900 opens and drops run with
   * both memories full, each forgetting its oldest, as they would for any longer churn.
   */
  const N = 5_000;
  const cases = [
    {
      route: 'ElevenLabs multi-stream-input',
      path: '/v1/text-to-speech/af_heart/multi-stream-input',
      open: (id: string) => ({ context_id: id, text: 'Hi.' }),
      drop: (id: string) => ({ context_id: id, close_context: true }),
      isEnd: (m: Record<string, unknown>) => m.isFinal === true && typeof m.contextId === 'string',
    },
    {
      route: 'contexts=true',
      path: '/invocations-bidirectional-stream?contexts=true',
      open: (id: string) => ({ context_id: id, text: 'Hi.' }),
      drop: (id: string) => ({ type: 'close_context', context_id: id, drop: true }),
      isEnd: (m: Record<string, unknown>) => m.type === 'context_closed',
    },
  ];

  it.each(cases)(`$route: ${N} opens and drops, every one answered; no /ping over 250 ms`, async (c) => {
    const socket = await connect(c.path);
    let ends = 0;
    let errors = 0;
    const allEnded = new Promise<void>((resolve) =>
      socket.on('message', (data, binary) => {
        if (binary) return;
        const message = JSON.parse(String(data)) as Record<string, unknown>;
        if (c.isEnd(message) && ++ends === N) resolve();
        if (message.error !== undefined || message.type === 'error') errors++;
      }),
    );
    const ping = pollPing();
    for (let i = 0; i < N; i++) {
      socket.send(JSON.stringify(c.open(`c${i}`)));
      socket.send(JSON.stringify(c.drop(`c${i}`)));
      if (i % 250 === 249) {
        if (raw(socket).writableNeedDrain) await once(raw(socket), 'drain');
        else await turn();
      }
    }
    await allEnded;
    const { pings, maxMs } = await ping.stop();
    socket.close();
    expect(errors).toBe(0);
    expect(pings).toBeGreaterThan(0);
    expect(maxMs, `the slowest of ${pings} pings`).toBeLessThan(PING_MS);
  });
});
