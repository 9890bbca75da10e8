/**
 * Several contexts on one socket, in the project's own protocol (`?contexts=true`): contexts
 * stream side by side, every audio frame names its context, `close_context` finishes or drops one
 * and the socket serves on; what a cut left the server is stated. Bad input (a reused id, a closed
 * context, too many, no id) gets an error frame naming the context, and the others go on.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import WebSocket from 'ws';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { writeStandinModelDir } from '../../scripts/lib/standin-model.ts';
import { TestClient, referencePcm, startServer, type TestServer } from './harness.ts';

/** Six inferences of about 500 phoneme ids: work in flight while a cut arrives. */
const LONG = `Codes ${Array.from({ length: 30 }, () => '987654321').join(', ')} end.`;
const SHORT = 'A short sentence.';

let server: TestServer;
let dir: string;
beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'kokoro-contexts-'));
  await writeStandinModelDir(dir, { repeat: 60, voices: ['af_heart', 'am_adam'], log: () => {} });
  server = await startServer({ KOKORO_MODEL_DIR: dir, WS_IDLE_TIMEOUT_S: '0', WS_MAX_CONTEXTS: '3' });
});
afterAll(async () => {
  await server.close();
  rmSync(dir, { recursive: true, force: true });
});

const contextsUrl = () => `${server.ws}?contexts=true`;

/** An audio frame's context id (its first byte is the id's length) and its audio. */
function split(frame: Buffer): { context: string; audio: Buffer } {
  const length = frame[0]!;
  return { context: frame.subarray(1, 1 + length).toString('utf8'), audio: frame.subarray(1 + length) };
}

function audioOf(client: TestClient, context: string): Buffer {
  return Buffer.concat(
    client.frames
      .filter((f) => f.kind === 'audio')
      .map((f) => split((f as { bytes: Buffer }).bytes))
      .filter((a) => a.context === context)
      .map((a) => a.audio),
  );
}

/** The same text's PCM from POST /invocations: what a context's audio must equal. */
const reference = (text: string, voice?: string) => referencePcm(server, text, voice);

describe('contexts on our protocol', () => {
  it('two contexts stream side by side; each audio frame names its context and equals its text alone', async () => {
    const client = await TestClient.open(contextsUrl());
    client.send({ text: 'The first context speaks this.', context_id: 'a', request_id: 'ra' });
    client.send({
      text: 'The second one, another voice.',
      voice: 'am_adam',
      context_id: 'b',
      request_id: 'rb',
    });
    await client.untilControls('synthesis_complete', 2);
    const completes = client.controls('synthesis_complete');
    expect(completes.map((c) => [c.context_id, c.request_id]).sort()).toEqual([
      ['a', 'ra'],
      ['b', 'rb'],
    ]);
    for (const start of client.controls('synthesis_start')) expect(['a', 'b']).toContain(start.context_id);
    expect(audioOf(client, 'a').equals(await reference('The first context speaks this.'))).toBe(true);
    expect(audioOf(client, 'b').equals(await reference('The second one, another voice.', 'am_adam'))).toBe(
      true,
    );
    client.close();
  });

  it('streamed text per context; close_context finishes a context, answers context_closed, and the socket serves on', async () => {
    const client = await TestClient.open(contextsUrl());
    client.send({ type: 'append', text: 'Written in two ', context_id: 'x' });
    client.send({ type: 'append', text: 'pieces.', context_id: 'x' });
    client.send({ type: 'close_context', context_id: 'x' });
    await client.untilControls('context_closed', 1);
    expect(client.controls('context_closed')).toEqual([{ type: 'context_closed', context_id: 'x' }]);
    const complete = client.controls('synthesis_complete')[0]!;
    expect(complete.context_id).toBe('x');
    // Everything it received was spoken before the answer.
    expect(audioOf(client, 'x').equals(await reference('Written in two pieces.'))).toBe(true);
    client.send({ text: SHORT, context_id: 'y' });
    await client.untilControls('synthesis_complete', 2);
    expect(client.closeCode).toBeUndefined();
    client.close();
  });

  it('close_context with drop cuts only that context, says what was heard, and the other finishes', async () => {
    const client = await TestClient.open(contextsUrl());
    client.send({ text: `First sentence. ${LONG}`, context_id: 'cut', request_id: 'long' });
    client.send({ text: SHORT, context_id: 'keep', request_id: 'short' });
    await client.until((c) => audioOf(c, 'cut').length > 0, 'audio of the context to cut');
    client.send({ type: 'close_context', context_id: 'cut', drop: true });
    await client.untilControls('context_closed', 1);
    const closed = client.controls('context_closed')[0]!;
    const sent = audioOf(client, 'cut').length;
    expect(closed).toEqual({
      type: 'context_closed',
      context_id: 'cut',
      cancelled: ['long'],
      heard: {
        request_id: 'long',
        samples: sent / 2,
        sample_rate: 24000,
        ms: Math.round(sent / 2 / 2.4) / 10,
      },
    });
    await client.until(
      (c) => c.controls('synthesis_complete').some((m) => m.context_id === 'keep'),
      'the other context',
    );
    // Nothing of the cut context after its answer, and it never completed: a while of silence on
    // it (several sentences' time), the other context having finished meanwhile.
    await new Promise((r) => setTimeout(r, 300));
    expect(audioOf(client, 'cut').length).toBe(sent);
    expect(client.controls('synthesis_complete').some((m) => m.context_id === 'cut')).toBe(false);
    client.close();
  });

  it('a cancel of every context does not cut a context’s close: context_closed still follows', async () => {
    const client = await TestClient.open(contextsUrl());
    client.send({ type: 'append', text: `${LONG} `, context_id: 'closing', request_id: 'c-long' });
    client.send({ type: 'close_context', context_id: 'closing' });
    await client.untilControls('synthesis_start', 1);
    client.send({ type: 'cancel' });
    await client.untilControls('context_closed', 1);
    expect(client.controls('synthesis_cancelled')[0]).toMatchObject({
      context_id: 'closing',
      cancelled: ['c-long'],
    });
    expect(client.controls('context_closed')).toEqual([{ type: 'context_closed', context_id: 'closing' }]);
    // Its id is closed, and a new context opens as usual.
    client.send({ text: SHORT, context_id: 'closing' });
    client.send({ text: SHORT, context_id: 'after', request_id: 'after' });
    await client.until(
      (c) => c.controls('synthesis_complete').some((m) => m.request_id === 'after'),
      'after',
    );
    expect(client.controls('error')).toMatchObject([{ code: 'context_closed', context_id: 'closing' }]);
    client.close();
  });

  it('a cancel names its context and cuts only it, answering with what was heard', async () => {
    const client = await TestClient.open(contextsUrl());
    client.send({ text: LONG, context_id: 'one', request_id: 'l1' });
    await client.untilControls('synthesis_start', 1);
    client.send({ type: 'cancel', context_id: 'one' });
    await client.untilControls('synthesis_cancelled', 1);
    expect(client.controls('synthesis_cancelled')[0]).toMatchObject({
      context_id: 'one',
      request_id: 'l1',
      cancelled: ['l1'],
      heard: { request_id: 'l1', sample_rate: 24000 },
    });
    // A cancel does not close the context: it takes the next message.
    client.send({ text: SHORT, context_id: 'one', request_id: 'again' });
    await client.until(
      (c) => c.controls('synthesis_complete').some((m) => m.request_id === 'again'),
      'again',
    );
    client.close();
  });

  it('a short context is not held behind a long one: the dispatch policy serves next-needed sentences first come first served', async () => {
    const client = await TestClient.open(contextsUrl());
    client.send({ text: `${LONG} ${LONG}`, context_id: 'long', request_id: 'two-long-sentences' });
    await client.untilControls('synthesis_start', 1);
    client.send({ text: SHORT, context_id: 'short', request_id: 'short' });
    await client.untilControls('synthesis_complete', 2);
    // The short turn's sentence waited for the long one's first sentence only, not its second.
    expect(client.controls('synthesis_complete').map((c) => c.request_id)).toEqual([
      'short',
      'two-long-sentences',
    ]);
    expect(audioOf(client, 'short').equals(await reference(SHORT))).toBe(true);
    client.close();
  });

  it('bad input: each an error frame naming the context, the socket and its other contexts serve on', async () => {
    const client = await TestClient.open(contextsUrl());
    client.send({ text: SHORT, context_id: 'live', request_id: 'live-1' });
    client.send({ type: 'close_context', context_id: 'gone' }); // never opened: closed at once
    await client.untilControls('context_closed', 1);
    client.send({ text: SHORT, context_id: 'gone' }); // reused after close
    client.send({ type: 'close_context', context_id: 'gone' }); // closed twice
    client.send({ text: SHORT }); // no context id
    client.send('plain text has no context'); // not JSON
    client.send({ text: SHORT, context_id: 'x'.repeat(300) }); // too long an id
    client.send({ text: SHORT, context_id: 'two' });
    client.send({ text: SHORT, context_id: 'three' });
    client.send({ text: SHORT, context_id: 'four' }); // past WS_MAX_CONTEXTS (3)
    await client.untilControls('error', 6);
    const errors = client.controls('error');
    expect(errors.map((e) => [e.code, e.context_id])).toEqual([
      ['context_closed', 'gone'],
      ['context_closed', 'gone'],
      ['invalid_option', undefined],
      ['invalid_option', undefined],
      ['invalid_option', undefined],
      ['too_many_contexts', 'four'],
    ]);
    expect(errors.find((e) => e.code === 'too_many_contexts')!.message).toMatch(/WS_MAX_CONTEXTS/);
    expect(errors[0]!.message).toMatch(/cannot be used again/);
    await client.until((c) => c.controls('synthesis_complete').length >= 3, 'the live contexts');
    expect(
      client
        .controls('synthesis_complete')
        .map((c) => c.context_id)
        .sort(),
    ).toEqual(['live', 'three', 'two']);
    expect(client.closeCode).toBeUndefined();
    client.close();
  });

  it('close ends every context (each answered) and then the session', async () => {
    const client = await TestClient.open(contextsUrl());
    client.send({ type: 'append', text: 'Still being ', context_id: 'p' });
    client.send({ type: 'append', text: 'written.', context_id: 'p' });
    client.send({ text: SHORT, context_id: 'q' });
    client.send({ type: 'close' });
    expect(await client.closed(30_000)).toBe(1000);
    expect(
      client
        .controls('context_closed')
        .map((c) => c.context_id)
        .sort(),
    ).toEqual(['p', 'q']);
    expect(audioOf(client, 'p').equals(await reference('Still being written.'))).toBe(true);
  });

  it('SageMaker: the query string header turns contexts on for the invocation route', async () => {
    const socket = new WebSocket(server.ws, {
      headers: { 'x-amzn-sagemaker-model-query-string': 'contexts=true' },
    });
    const client = new TestClient(socket);
    await new Promise((resolve, reject) => socket.once('open', resolve).once('error', reject));
    client.send({ text: SHORT, context_id: 'sm' });
    await client.untilControls('synthesis_complete', 1);
    expect(client.controls('synthesis_complete')[0]!.context_id).toBe('sm');
    expect(audioOf(client, 'sm').equals(await reference(SHORT))).toBe(true);
    client.close();
  });

  it('refuses contexts=maybe at connection time with an error frame and 1008', async () => {
    const client = await TestClient.open(`${server.ws}?contexts=maybe`);
    expect(await client.closed()).toBe(1008);
    expect(client.controls('error')[0]).toMatchObject({ code: 'invalid_option' });
  });
});
