/**
 * A flood of POST /v1/phonemize through one running server while a WebSocket client speaks one
 * sentence at a time. Phonemize work is scheduled by the dispatch policy below every next-needed
 * sentence, so the sentence's first audio stays near its unloaded figure; the flood past its
 * bounds is refused with `Retry-After`; `/ping` is answered throughout. Verdicts are ratios of
 * figures measured in the same run, never absolute times. It prints the figures:
 *   npm run build && npx vitest run test/server/phonemize-flood.test.ts
 */
import { Agent, request } from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
import WebSocket from 'ws';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SENTENCES } from '../../scripts/lib/bench-texts.ts';
import { median, quantile } from '../../scripts/lib/stats.ts';
import { startServer, type TestServer } from './harness.ts';
import { waitFor } from '../wait.ts';

/** Flooding clients, two to a loopback address (so each address is over its bound of one). */
const FLOODERS = 16;
const ADDRESSES = 8;
/** How long the flood lasts once under way: over a hundred sentences, forty pings. */
const FLOOD_MS = 4000;
/** The sentence the WebSocket client speaks, one request at a time. */
const SENTENCE = 'Your package should arrive on Tuesday afternoon.';

let server: TestServer;
beforeAll(async () => {
  server = await startServer({
    PHONEMIZE_MAX_QUEUED: '6',
    PHONEMIZE_MAX_PER_CLIENT: '1',
    MAX_TEXT_CHARS: '200000',
  });
});
afterAll(() => server.close());

/**
 * About 3,900 characters: the `n`th text of flooder `i`, sentences of a voice agent's, each with
 * a made-up name that no lexicon holds (the slow path of the front end, espeak-ng's).
 */
function longText(i: number, n: number): string {
  const syllables = ['zor', 'blat', 'quen', 'fid', 'mar', 'vok', 'tri', 'plen', 'shu', 'gra', 'nix', 'pesh'];
  const out: string[] = [];
  for (let k = 0; out.join(' ').length < 3800; k++) {
    const name = [i, n, k].map((x) => syllables[x % syllables.length]).join('');
    out.push(`Note ${k} for ${name}: ${SENTENCES[(i + n + k) % SENTENCES.length]}`);
  }
  return out.join(' ');
}

interface Answer {
  readonly status: number;
  readonly retryAfter: string | undefined;
  readonly body: string;
}

function post(path: string, body: string, agent: Agent, localAddress: string): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = request(
      `${server.http}${path}`,
      {
        method: 'POST',
        agent,
        localAddress,
        headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('error', reject);
        res.on('end', () =>
          resolve({
            status: res.statusCode!,
            retryAfter: res.headers['retry-after'],
            body: Buffer.concat(chunks).toString(),
          }),
        );
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

/** Sends SENTENCE as request `id` and resolves with ms from sending it to its first audio. */
function firstAudio(socket: WebSocket, id: string): Promise<number> {
  return new Promise((resolve, reject) => {
    let first: number | undefined;
    const onMessage = (data: Buffer, binary: boolean) => {
      if (binary) {
        first ??= performance.now() - sentAt;
        return;
      }
      const frame = JSON.parse(data.toString()) as { type: string; request_id?: string; message?: string };
      if (frame.type === 'error') reject(new Error(`${id}: ${frame.message}`));
      if (frame.type !== 'synthesis_complete' || frame.request_id !== id) return;
      socket.off('message', onMessage);
      if (first === undefined) reject(new Error(`${id}: no audio`));
      else resolve(first);
    };
    socket.on('message', onMessage);
    const sentAt = performance.now();
    socket.send(JSON.stringify({ text: SENTENCE, format: 'pcm', request_id: id }));
  });
}

/** First audio of `count` sentences in a row, a short pause between them, or until `stop()`. */
async function speak(socket: WebSocket, phase: string, count: number, stop = () => false): Promise<number[]> {
  const samples: number[] = [];
  for (let k = 0; k < count && !stop(); k++) {
    samples.push(await firstAudio(socket, `${phase}-${k}`));
    await sleep(20);
  }
  return samples;
}

const stats = (samples: readonly number[]) => ({
  n: samples.length,
  p50: Math.round(median(samples) * 10) / 10,
  p90: Math.round(quantile(samples, 0.9) * 10) / 10,
  max: Math.round(Math.max(...samples) * 10) / 10,
});

describe('a /v1/phonemize flood', () => {
  it('leaves a WebSocket sentence’s first audio near its unloaded figure, refuses past its bounds with Retry-After, and /ping answers', async () => {
    const socket = new WebSocket(server.ws);
    await new Promise((resolve, reject) => socket.once('open', resolve).once('error', reject));
    await speak(socket, 'warm', 10);
    const unloaded = await speak(socket, 'unloaded', 40);

    // Each flooder posts long texts back to back; a refused one waits as Retry-After says.
    let flooding = true;
    const answers: Answer[] = [];
    const flooders = Array.from({ length: FLOODERS }, async (_, i) => {
      const agent = new Agent({ keepAlive: true });
      const address = `127.0.0.${2 + (i % ADDRESSES)}`;
      for (let n = 0; flooding; n++) {
        const answer = await post('/v1/phonemize', JSON.stringify({ text: longText(i, n) }), agent, address);
        answers.push(answer);
        if (answer.status !== 200) await sleep(1000 * Number(answer.retryAfter ?? 0));
      }
      agent.destroy();
    });
    const pings: number[] = [];
    const pinging = (async () => {
      while (flooding) {
        pings.push((await fetch(`${server.http}/ping`)).status);
        await sleep(100);
      }
    })();
    // The flood under way: past its bounds, so refusals have come.
    await waitFor(() => answers.some((a) => a.status !== 200), { what: 'the first refusal of the flood' });
    const stopped = sleep(FLOOD_MS).then(() => {
      flooding = false;
    });
    // Sentences for as long as the flood lasts (the last may end after it).
    const flooded = await speak(socket, 'flooded', Infinity, () => !flooding);
    await stopped;
    await Promise.all([...flooders, pinging]);
    socket.close();

    const served = answers.filter((a) => a.status === 200);
    const refused = answers.filter((a) => a.status !== 200);
    const figures = { unloaded: stats(unloaded), flooded: stats(flooded) };
    console.log(
      `phonemize flood: first audio (ms) unloaded ${JSON.stringify(figures.unloaded)}, ` +
        `flooded ${JSON.stringify(figures.flooded)}; phonemize answered ${served.length}, ` +
        `refused ${refused.length} (${refused.filter((a) => a.status === 429).length} × 429); ` +
        `pings ${pings.length}`,
    );

    // The sentence waits for at most one sentence's front end, not for the flood: its typical
    // first audio within three times the unloaded one, nine in ten within ten times.
    expect(figures.flooded.p50 / figures.unloaded.p50).toBeLessThan(3);
    expect(figures.flooded.p90 / figures.unloaded.p50).toBeLessThan(10);
    // The flood was served, and refused past its bounds (per address, and in all) with Retry-After.
    expect(served.length).toBeGreaterThan(0);
    expect(new Set(refused.map((a) => a.status))).toEqual(new Set([429, 503]));
    for (const answer of refused) {
      expect(answer.retryAfter).toBe('1');
      expect(JSON.parse(answer.body)).toMatchObject({
        type: 'error',
        code: answer.status === 429 ? 'too_many_requests' : 'busy',
      });
    }
    expect(pings.length).toBeGreaterThan(10);
    expect(pings.every((status) => status === 200)).toBe(true);
  }, 120_000);

  it('a text of 160,000 characters is phonemized whole: more ids than a call takes as arguments', async () => {
    const text = Array.from({ length: 2800 }, (_, k) => SENTENCES[k % SENTENCES.length]).join(' ');
    expect(text.length).toBeGreaterThan(160_000);
    const res = await fetch(`${server.http}/v1/phonemize`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ text }),
    });
    expect(res.status).toBe(200);
    const { phonemes, tokens } = (await res.json()) as { phonemes: string; tokens: number[] };
    expect(tokens.length).toBeGreaterThan(150_000);
    expect(tokens).toHaveLength([...phonemes].length);
  }, 60_000);
});
