/**
 * A WebSocket session at shutdown while an utterance is open (streamed text that no flush ended):
 * what it received is spoken, its completion sent, and the session closed with 1001; an utterance
 * that would start now is refused. In-process, over the fake engine.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type WebSocket from 'ws';
import { inProcessApp, type InProcessApp } from './in-process.ts';

let running: InProcessApp | undefined;
afterEach(async () => {
  await running?.close();
  running = undefined;
});

interface Received {
  readonly audio: number;
  readonly controls: Record<string, unknown>[];
  readonly close: Promise<number>;
}

/** Records what a session receives: audio bytes, control frames, and its close code. */
function record(socket: WebSocket): Received {
  const state = { audio: 0, controls: [] as Record<string, unknown>[] };
  socket.on('message', (data: Buffer, binary) => {
    if (binary) state.audio += data.length;
    else state.controls.push(JSON.parse(data.toString()) as Record<string, unknown>);
  });
  const close = new Promise<number>((resolve) => socket.once('close', (code) => resolve(code)));
  return {
    get audio() {
      return state.audio;
    },
    controls: state.controls,
    close,
  };
}

describe('draining with an utterance open', () => {
  it('speaks what the utterance received, completes it, and closes the session with 1001', async () => {
    running = await inProcessApp();
    const socket = await running.openSession();
    const received = record(socket);
    // Half a sentence: nothing is complete yet, so nothing is spoken until a flush or the drain.
    socket.send(JSON.stringify({ type: 'append', text: 'Half of a sentence that never', request_id: 'u1' }));
    await expect.poll(() => received.controls.some((c) => c.type === 'synthesis_start')).toBe(true);
    expect(received.audio).toBe(0);

    const drained = running.lifecycle.drain(5_000);
    expect(await received.close).toBe(1001);
    expect(await drained).toEqual([]);
    expect(received.controls.map((c) => c.type)).toEqual(['synthesis_start', 'synthesis_complete']);
    expect(received.controls[1]).toMatchObject({ request_id: 'u1' });
    // The tail was spoken: the fake engine's 10 ms of PCM16 per character.
    expect(received.audio).toBe(('Half of a sentence that never'.length * 24_000 * 2) / 100);
    expect(running.engine!.requests).toHaveLength(1);
  });

  it('refuses an utterance that would open once shutdown began, and the session still closes with 1001', async () => {
    running = await inProcessApp({}, { engine: { hold: new Promise((r) => setTimeout(r, 200)) } });
    const socket = await running.openSession();
    const received = record(socket);
    socket.send(JSON.stringify({ text: 'A request under way.', request_id: 'r1' }));
    await expect.poll(() => received.controls.some((c) => c.type === 'synthesis_start')).toBe(true);
    const drained = running.lifecycle.drain(5_000);
    socket.send(JSON.stringify({ type: 'append', text: 'Too late.', request_id: 'late' }));
    expect(await received.close).toBe(1001);
    await drained;
    expect(received.controls).toContainEqual(
      expect.objectContaining({ type: 'error', code: 'shutting_down', request_id: 'late' }),
    );
    expect(received.controls).toContainEqual(
      expect.objectContaining({ type: 'synthesis_complete', request_id: 'r1' }),
    );
  });
});
