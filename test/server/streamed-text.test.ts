/**
 * Streamed text input: `append` and `flush` on a live session, as an agent piping LLM tokens uses
 * them, with the bounds on an open utterance.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TestClient, requestsOf, startServer, type TestServer, llmTokens } from './harness.ts';

const PARAGRAPH =
  'Streaming text arrives in small pieces. The server speaks each sentence once it is complete! ' +
  'Numbers like 3.14 and abbreviations like Dr. Smith stay whole. Does the last one wait for the flush';

const audioOf = (client: TestClient, id: string) =>
  Buffer.concat(requestsOf(client.frames).find((r) => r.id === id)?.audio ?? []);

let server: TestServer;
beforeAll(async () => {
  server = await startServer({ UTTERANCE_MAX_BUFFER_BYTES: '1024', UTTERANCE_IDLE_FLUSH_S: '1' });
});
afterAll(() => server.close());

describe('append and flush', () => {
  it('many small appends give the same audio as the text sent whole, under the first append’s options', async () => {
    const client = await TestClient.open(server.ws);
    const pieces = llmTokens(PARAGRAPH);
    expect(pieces.length).toBeGreaterThan(40);
    client.send({ type: 'append', text: pieces[0], request_id: 'streamed', voice: 'af_bella', speed: 1.2 });
    for (const piece of pieces.slice(1)) client.send({ type: 'append', text: piece }, false);
    client.send({ type: 'flush' });
    await client.untilControls('synthesis_complete', 1);
    client.send({ text: PARAGRAPH, request_id: 'whole', voice: 'af_bella', speed: 1.2 });
    await client.untilControls('synthesis_complete', 2);
    const [streamed, whole] = requestsOf(client.frames);
    expect(streamed!.id).toBe('streamed');
    expect(streamed!.complete!.chunks).toBe(whole!.complete!.chunks);
    expect(streamed!.audio.length).toBeGreaterThanOrEqual(4); // one frame per sentence
    expect(audioOf(client, 'streamed').equals(audioOf(client, 'whole'))).toBe(true);
    expect(client.controls('error')).toEqual([]);
    client.close();
  });

  it('speaks a sentence as soon as it is complete, before the flush', async () => {
    const client = await TestClient.open(server.ws);
    client.send({
      type: 'append',
      text: 'The first sentence is complete. The second is not',
      request_id: 'early',
    });
    await client.until((c) => c.frames.some((f) => f.kind === 'audio'), 'audio before the flush');
    expect(client.controls('synthesis_complete')).toEqual([]);
    client.send({ type: 'append', text: ' yet.' });
    client.send({ type: 'flush' });
    await client.untilControls('synthesis_complete', 1);
    expect(requestsOf(client.frames)[0]!.complete!.chunks).toBe(2);
    client.close();
  });

  it('a flush with nothing pending answers synthesis_complete at once, with no audio', async () => {
    const client = await TestClient.open(server.ws);
    client.send({ type: 'flush', request_id: 'nothing' });
    await client.untilControls('synthesis_complete', 1);
    expect(client.controls('synthesis_complete')[0]).toMatchObject({
      request_id: 'nothing',
      total_duration_s: 0,
      chunks: 0,
    });
    expect(client.frames.filter((f) => f.kind === 'audio')).toEqual([]);
    client.close();
  });

  it('an utterance waits its turn behind a request sent before it, and a request after it waits for its flush', async () => {
    const client = await TestClient.open(server.ws);
    client.send({ text: 'A whole request first. With two sentences.', request_id: 'before' });
    client.send({ type: 'append', text: 'Then streamed text. ', request_id: 'utterance' });
    client.send({ text: 'A request after the utterance.', request_id: 'after' });
    client.send({ type: 'append', text: 'More streamed text.' });
    client.send({ type: 'flush' });
    await client.untilControls('synthesis_complete', 3);
    expect(requestsOf(client.frames).map((r) => [r.id, r.complete !== undefined])).toEqual([
      ['before', true],
      ['utterance', true],
      ['after', true],
    ]);
    expect(requestsOf(client.frames)[1]!.complete!.chunks).toBe(2);
    client.close();
  });

  it('refuses options on a later append, and bad appends, without losing the utterance', async () => {
    const client = await TestClient.open(server.ws);
    client.send({ type: 'append', text: 'Kept text. ', request_id: 'opts' });
    client.send({ type: 'append', text: 'Refused text. ', voice: 'af_sky' });
    client.send({ type: 'append', text: 42 });
    client.send({ type: 'append', text: 'Also kept.' });
    client.send({ type: 'flush' });
    await client.untilControls('synthesis_complete', 1);
    const errors = client.controls('error');
    expect(errors.map((e) => [e.code, e.request_id])).toEqual([
      ['invalid_option', 'opts'],
      ['invalid_option', 'opts'],
    ]);
    expect(errors[0]!.message).toMatch(/Only the first append.*voice/);
    expect(errors[1]!.message).toMatch(/text as a string/);
    expect(requestsOf(client.frames)[0]!.complete!.chunks).toBe(2);
    client.close();
  });

  it('refuses a first append with a bad option: no utterance opens, and the next append opens one', async () => {
    const client = await TestClient.open(server.ws);
    client.send({ type: 'append', text: 'Never spoken.', request_id: 'bad', voice: 'zz_nobody' });
    client.send({ type: 'append', text: 'Spoken.', request_id: 'good' });
    client.send({ type: 'flush' });
    await client.untilControls('synthesis_complete', 1);
    expect(client.controls('error').map((e) => [e.code, e.request_id])).toEqual([['voice_not_found', 'bad']]);
    expect(requestsOf(client.frames).map((r) => r.id)).toEqual(['good']);
    client.close();
  });

  it('refuses an append past UTTERANCE_MAX_BUFFER_BYTES of unspoken text with a clear error; the utterance goes on', async () => {
    const client = await TestClient.open(server.ws);
    client.send({ type: 'append', text: 'Short start. ', request_id: 'bounded' });
    client.send({ type: 'append', text: `${'word '.repeat(300)}` }); // 1500 bytes without a sentence end
    client.send({ type: 'append', text: 'Short end.' });
    client.send({ type: 'flush' });
    await client.untilControls('synthesis_complete', 1);
    const [error] = client.controls('error');
    expect(error).toMatchObject({ code: 'text_too_long', request_id: 'bounded' });
    expect(error!.message).toMatch(/limit of 1024.*not added/);
    expect(requestsOf(client.frames)[0]!.complete!.chunks).toBe(2);
    client.close();
  });

  it('speaks the buffered tail after UTTERANCE_IDLE_FLUSH_S without an append, and keeps the utterance open', async () => {
    const client = await TestClient.open(server.ws);
    client.send({ type: 'append', text: 'An agent that stalls mid sentence', request_id: 'stalled' });
    await client.until(
      (c) => c.frames.some((f) => f.kind === 'audio'),
      'the tail, spoken after the idle flush',
    );
    expect(client.controls('synthesis_complete')).toEqual([]);
    client.send({ type: 'append', text: 'and then goes on.' });
    client.send({ type: 'flush' });
    await client.untilControls('synthesis_complete', 1);
    expect(requestsOf(client.frames)[0]!.complete!.chunks).toBe(2);
    client.close();
  });

  it('closing the session speaks what the open utterance received', async () => {
    const client = await TestClient.open(server.ws);
    client.send({ type: 'append', text: 'Received, never flushed', request_id: 'closing' });
    client.send({ type: 'close' });
    await client.until((c) => c.closeCode !== undefined, 'close');
    expect(client.closeCode).toBe(1000);
    expect(requestsOf(client.frames).map((r) => [r.id, r.complete !== undefined])).toEqual([
      ['closing', true],
    ]);
  });
});
