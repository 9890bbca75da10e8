/**
 * Fuzzes the WebSocket message handling of one server with about 1,500 generated payloads: random
 * bytes, random JSON (the real option names with wrong types among them), deeply nested JSON,
 * strings up to 1 MiB, UTF-8 broken across RFC 6455 fragments, invalid UTF-8 in text frames,
 * CESU-8 surrogates, and valid requests with random options.
 *
 * Every payload is judged by an oracle written from docs/protocol.md (not from the server's code): it is
 * either a valid request (→ synthesis_start, audio, synthesis_complete) or not (→ exactly one
 * `error` frame that says what is wrong in words and leaks no internals). Answers come strictly in
 * order, so the n-th answer on a session belongs to the n-th message.
 *
 * The generator is seeded. To reproduce a failure: FUZZ_SEED=<seed> npx vitest run test/server/fuzz.test.ts
 * (FUZZ_SEED=random picks a fresh seed; FUZZ_VERBOSE=1 prints counts of what was sent and answered).
 */
import { afterAll, beforeAll, describe, expect, it, onTestFailed } from 'vitest';
import { GENERATORS, frame, type Kind, type Payload, type Context } from './fuzz-generators.ts';
import {
  expectedOutcome,
  AnswerReader,
  errorFrameProblems,
  answerProblems,
  type Expected,
  type Answer,
} from './fuzz-oracle.ts';
import { Rng } from './fuzz-random.ts';
import { TestClient, startServer, type TestServer } from './harness.ts';

const SEED =
  process.env.FUZZ_SEED === 'random'
    ? (Math.random() * 2 ** 32) >>> 0
    : process.env.FUZZ_SEED
      ? Number(process.env.FUZZ_SEED) >>> 0
      : 0x5eed_7750;
const VERBOSE = Boolean(process.env.FUZZ_VERBOSE);

/** The server's cap on pending messages per session, set low so that batches and the flood reach it. */
const WS_MAX_PENDING = 16;

/**
 * How many payloads of each kind: every kind, each in batches up to the pending cap on every
 * session. Each answer costs the server a parse and often a synthesis (random JSON is a valid
 * request more than a third of the time), so the plentiful kinds are sized to keep the file to a
 * few seconds; the rare, heavy ones (deep JSON, 1 MiB strings) and CESU-8 keep their counts.
 */
const PLAN: Readonly<Record<Kind, number>> = {
  'random-bytes': 400,
  'random-json': 450,
  'deep-json': 24,
  'huge-string': 16,
  fragmented: 200,
  'invalid-utf8': 175,
  cesu8: 150,
  valid: 150,
};
const SESSIONS = 4;
/** Batches stay under the session's caps (count and bytes), so answers are answers, not `busy`. */
const BATCH_MESSAGES = WS_MAX_PENDING;
const BATCH_BYTES = 6 * 1024 * 1024;
const BATCH_TIMEOUT_MS = 30_000;

function preview(payload: Payload): string {
  const bytes = Buffer.concat(payload.parts);
  const head = bytes.subarray(0, 100).toString('latin1');
  return `${payload.kind}, ${bytes.length} bytes in ${payload.parts.length} ${payload.binary ? 'binary' : 'text'} frame(s): ${JSON.stringify(head)}${bytes.length > 100 ? '…' : ''}`;
}

function describeAnswer(answer: Answer): string {
  if (answer.kind === 'error') return `error ${JSON.stringify(answer.error).slice(0, 300)}`;
  const audio = answer.audio.reduce((n, b) => n + b.length, 0);
  const end = answer.error ?? answer.complete;
  return `synthesis (${audio} audio bytes) ending ${JSON.stringify(end).slice(0, 300)}`;
}

// ---------------------------------------------------------------------------------------------
// The test

let server: TestServer;
let formats: string[];

beforeAll(async () => {
  server = await startServer({ WS_MAX_PENDING: String(WS_MAX_PENDING) });
  const ping = (await (await fetch(`${server.http}/ping`)).json()) as { formats: string[] };
  formats = ping.formats;
});
afterAll(() => server?.close());

async function pingStatus(): Promise<number> {
  const res = await fetch(`${server.http}/ping`);
  await res.arrayBuffer();
  return res.status;
}

function send(client: TestClient, payload: Payload): void {
  const last = payload.parts.length - 1;
  payload.parts.forEach((part, i) => client.socket.send(part, { binary: payload.binary, fin: i === last }));
}

interface Tally {
  sent: number;
  byKind: Record<string, number>;
  outcomes: Record<string, number>;
  batches: number;
}

/** One session: generates its share of the plan lazily (timestamps are fresh), batch by batch. */
async function fuzzSession(
  index: number,
  kinds: readonly Kind[],
  failures: string[],
  tally: Tally,
): Promise<void> {
  const rng = new Rng((SEED ^ Math.imul(index + 1, 0x9e3779b1)) >>> 0);
  const ctx: Context = { formats };
  const client = await TestClient.open(server.ws);
  const reader = new AnswerReader();
  const sent: { payload: Payload; expected: Expected }[] = [];
  const fail = (what: string) => failures.push(`[session ${index}] ${what}`);
  const queue: Kind[] = [...kinds];
  let carry: Payload | undefined;
  let finalSent = false;

  while ((queue.length > 0 || carry || !finalSent) && failures.length < 30) {
    const batch: Payload[] = [];
    let bytes = 0;
    for (;;) {
      let payload = carry;
      carry = undefined;
      if (!payload) {
        const kind = queue.shift();
        if (kind === undefined) break;
        payload = GENERATORS[kind](rng, ctx);
      }
      const size = payload.parts.reduce((n, p) => n + p.length, 0);
      if (batch.length > 0 && (batch.length >= BATCH_MESSAGES || bytes + size > BATCH_BYTES)) {
        carry = payload;
        break;
      }
      batch.push(payload);
      bytes += size;
    }
    if (batch.length === 0) {
      // Last of all: a valid request whose id proves nothing is left over or shifted.
      batch.push({
        kind: 'final',
        parts: [Buffer.from(JSON.stringify({ text: 'The end.', request_id: `final-${index}` }))],
        binary: true,
      });
      finalSent = true;
    }

    const now = Date.now();
    for (const payload of batch) {
      const expected = expectedOutcome(Buffer.concat(payload.parts), formats, now);
      if (expected.outcome === 'close') continue; // never close the session from the fuzzer
      sent.push({ payload, expected });
      send(client, payload);
      tally.byKind[payload.kind] = (tally.byKind[payload.kind] ?? 0) + 1;
      tally.sent++;
    }
    tally.batches++;

    try {
      await client.until(
        (c) => reader.update(c.frames) >= sent.length,
        `${sent.length} answers (seed ${SEED})`,
        BATCH_TIMEOUT_MS,
      );
    } catch (err) {
      const missing = sent
        .slice(reader.answers.length, reader.answers.length + 3)
        .map((s) => preview(s.payload));
      fail(`${(err as Error).message.slice(0, 400)}; first unanswered: ${missing.join(' | ')}`);
      break;
    }
    for (const v of reader.violations.splice(0)) fail(v);
    if (client.closeCode !== undefined) fail(`session closed with ${client.closeCode}`);
    if ((await pingStatus()) !== 200) fail('GET /ping is not 200 after a batch');
  }

  // Exactly one answer per message: nothing extra may follow (checked after a short grace).
  await new Promise((r) => setTimeout(r, 100));
  reader.update(client.frames);
  if (reader.answers.length > sent.length)
    fail(`${reader.answers.length - sent.length} answer(s) more than messages sent`);
  const last = reader.answers[sent.length - 1];
  if (finalSent && !(last?.kind === 'synthesis' && last.complete?.request_id === `final-${index}`))
    fail('the final request is not the last answer: answers and messages are out of step');

  for (const [i, { payload, expected }] of sent.entries()) {
    const answer = reader.answers[i];
    if (!answer) break;
    const key = answer.kind === 'error' ? `error:${String(answer.error.code)}` : 'audio';
    tally.outcomes[key] = (tally.outcomes[key] ?? 0) + 1;
    const problems = answerProblems(expected, answer);
    if (problems.length > 0)
      fail(`${problems.join('; ')}\n    sent: ${preview(payload)}\n    got: ${describeAnswer(answer)}`);
    if (failures.length >= 30) break;
  }
  client.close();
}

describe(`WebSocket fuzzing (seed ${SEED})`, () => {
  it('answers thousands of odd and valid messages one by one, and stays up', async () => {
    onTestFailed(() => {
      console.error(
        `fuzz seed ${SEED}: reproduce with FUZZ_SEED=${SEED} npx vitest run test/server/fuzz.test.ts`,
      );
    });
    const planRng = new Rng(SEED);
    const kinds = planRng.shuffle(
      (Object.entries(PLAN) as [Kind, number][]).flatMap(([kind, n]) => Array<Kind>(n).fill(kind)),
    );
    const failures: string[] = [];
    const tally: Tally = { sent: 0, byKind: {}, outcomes: {}, batches: 0 };
    const started = performance.now();
    await Promise.all(
      Array.from({ length: SESSIONS }, (_, s) =>
        fuzzSession(
          s,
          kinds.filter((_, i) => i % SESSIONS === s),
          failures,
          tally,
        ),
      ),
    );
    if (VERBOSE)
      console.log(
        `fuzz seed ${SEED}: ${tally.sent} messages in ${tally.batches} batches, ${Math.round(performance.now() - started)} ms`,
        tally.byKind,
        tally.outcomes,
      );
    expect(failures, `seed ${SEED}:\n${failures.join('\n')}`).toEqual([]);
    expect(tally.sent).toBeGreaterThanOrEqual(Object.values(PLAN).reduce((a, b) => a + b, 0));
  }, 120_000);

  it('survives a deliberate flood far past the pending cap (busy errors, maybe a 1008 close)', async () => {
    onTestFailed(() => console.error(`fuzz seed ${SEED}`));
    const rng = new Rng(SEED ^ 0xf100d);
    const ctx: Context = { formats };
    const client = await TestClient.open(server.ws);
    const total = 150;
    // All in one go, without waiting: busy errors come at once, the accepted messages in turn.
    for (let i = 0; i < total; i++) {
      const payload = rng.chance(0.7)
        ? frame('flood', Buffer.from(JSON.stringify({ text: `Flood ${i}.`, request_id: `flood-${i}` })), rng)
        : GENERATORS[rng.pick<Kind>(['random-bytes', 'invalid-utf8', 'random-json'])](rng, ctx);
      if (expectedOutcome(Buffer.concat(payload.parts), formats, Date.now()).outcome === 'close') continue;
      send(client, payload);
    }
    const count = (c: TestClient) => c.controls('synthesis_complete').length + c.controls('error').length;
    await client.until((c) => c.closeCode !== undefined || count(c) >= total, 'flood answers', 30_000);
    expect([undefined, 1008]).toContain(client.closeCode);
    expect(count(client)).toBeLessThanOrEqual(total);
    const errors = client.controls('error');
    expect(errors.some((e) => e.code === 'busy') || client.closeCode === 1008).toBe(true);
    for (const e of errors) expect(errorFrameProblems(e), JSON.stringify(e).slice(0, 300)).toEqual([]);
    if (VERBOSE)
      console.log(
        `flood: close ${client.closeCode}, ${client.controls('synthesis_complete').length} complete, ` +
          `${errors.filter((e) => e.code === 'busy').length} busy, ${errors.length} errors in all`,
      );
    client.close();
    expect(await pingStatus()).toBe(200);
  });

  it('still synthesizes a valid request on a fresh session afterwards', async () => {
    expect(await pingStatus()).toBe(200);
    const client = await TestClient.open(server.ws);
    client.send({ text: 'Still standing after all that.', request_id: 'after-fuzz' });
    await client.untilControls('synthesis_complete', 1);
    const reader = new AnswerReader();
    reader.update(client.frames);
    const [answer] = reader.answers;
    expect(answer?.kind).toBe('synthesis');
    if (answer?.kind !== 'synthesis') return;
    expect(answer.complete?.request_id).toBe('after-fuzz');
    expect(answer.audio.reduce((n, b) => n + b.length, 0)).toBeGreaterThan(0);
    expect(client.closeCode).toBeUndefined();
    client.close();
  });
});
