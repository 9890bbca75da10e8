/**
 * The first chunk released early on the server: a long opening sentence is cut at its first clause
 * mark past FIRST_CHUNK_MIN_CHARS, for whole texts and for streamed text, unless the request asks
 * for `"first_chunk":"sentence"`; and for a whole text only when the sentence would take longer
 * than FIRST_CHUNK_BUDGET_MS whole (0 here: always).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TestClient, requestsOf, startServer, type TestServer } from './harness.ts';

// 170 characters before its first stop, with clause marks; the first one past 24 characters ends
// the first chunk.
const LONG_OPENING =
  'Well, after looking through everything you sent me this morning, including the two invoices, ' +
  'the receipts and the notes from the meeting, I think we can close the account today. Thanks.';

let server: TestServer;
beforeAll(async () => {
  server = await startServer({ FIRST_CHUNK_MIN_CHARS: '24', FIRST_CHUNK_BUDGET_MS: '0' });
});
afterAll(() => server.close());

async function chunksOf(message: Record<string, unknown>, on: TestServer = server): Promise<number> {
  const client = await TestClient.open(on.ws);
  client.send(message);
  await client.untilControls('synthesis_complete', 1);
  const [request] = requestsOf(client.frames);
  client.close();
  expect(request!.audio.length).toBe(request!.complete!.chunks);
  return request!.complete!.chunks as number;
}

describe('first chunk', () => {
  it('a long opening sentence is released at its first clause mark past the threshold, the rest whole', async () => {
    // "Well, after … this morning," | "including … today." | "Thanks."
    expect(await chunksOf({ text: LONG_OPENING })).toBe(3);
  });

  it('"first_chunk":"sentence" keeps the opening sentence whole', async () => {
    expect(await chunksOf({ text: LONG_OPENING, first_chunk: 'sentence' })).toBe(2);
  });

  it('streamed text gets the same early release, and the same opt-out', async () => {
    const pieces = LONG_OPENING.match(/.{1,5}/gs)!;
    const stream = async (first: Record<string, unknown>) => {
      const client = await TestClient.open(server.ws);
      client.send({ type: 'append', text: pieces[0], ...first });
      for (const piece of pieces.slice(1)) client.send({ type: 'append', text: piece });
      client.send({ type: 'flush' });
      await client.untilControls('synthesis_complete', 1);
      const chunks = client.controls('synthesis_complete')[0]!.chunks;
      client.close();
      return chunks;
    };
    expect(await stream({})).toBe(3);
    expect(await stream({ first_chunk: 'sentence' })).toBe(2);
  });

  it('refuses another value, and the session goes on', async () => {
    const client = await TestClient.open(server.ws);
    client.send({ text: 'Hello.', first_chunk: 'word', request_id: 'bad' });
    client.send({ text: 'Hello.', request_id: 'good' });
    await client.untilControls('synthesis_complete', 1);
    expect(client.controls('error')).toEqual([
      expect.objectContaining({
        code: 'invalid_option',
        request_id: 'bad',
        message: expect.stringMatching(/first_chunk should be "clause" or "sentence"/),
      }),
    ]);
    client.close();
  });
});

describe('the first-chunk budget', () => {
  it('keeps the opening sentence whole where it is fast enough, and cuts it where it is not', async () => {
    // The stand-in takes a few milliseconds for the opening sentence: within a minute, over 1 ms.
    for (const [budget, chunks] of [
      ['60000', 2],
      ['1', 3],
    ] as const) {
      const budgeted = await startServer({ FIRST_CHUNK_MIN_CHARS: '24', FIRST_CHUNK_BUDGET_MS: budget });
      try {
        expect(await chunksOf({ text: LONG_OPENING }, budgeted), `budget ${budget} ms`).toBe(chunks);
        // Streamed text: cut only once the text before the clause would take longer than the budget.
        const client = await TestClient.open(budgeted.ws);
        for (const piece of LONG_OPENING.match(/.{1,5}/gs)!) client.send({ type: 'append', text: piece });
        client.send({ type: 'flush' });
        await client.untilControls('synthesis_complete', 1);
        expect(client.controls('synthesis_complete')[0]!.chunks, `streamed, budget ${budget} ms`).toBe(
          chunks,
        );
        client.close();
      } finally {
        await budgeted.close();
      }
    }
  });
});
