/**
 * What the vendor-client tests of each dialect share: the two servers (one for the sockets, on a
 * slow stand-in whose long texts are still in flight when a cut arrives; one for the HTTP routes, on
 * the timestamped stand-in), each started once for all the files (the server project runs them one
 * after another in one process), and the helpers that drive the clients and read what they got.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import https from 'node:https';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import type { ReadableStream as WebReadableStream } from 'node:stream/web';
import { initializeLogger } from '@livekit/agents';
import WebSocket from 'ws';
import { expect } from 'vitest';
import { writeStandinModelDir } from '../../../scripts/lib/standin-model.ts';
import {
  TIMESTAMPED_MODEL_DIR,
  TestClient,
  referencePcm,
  sharedServer,
  type TestServer,
} from '../harness.ts';

/** Six inferences of about 500 phoneme ids: work in flight while a cut arrives. */
export const LONG = `Codes ${Array.from({ length: 30 }, () => '987654321').join(', ')} end.`;
export const TWO_SENTENCES = 'Hello there, this is the first sentence. And here is a second one.';
export const SPOKEN_WORDS = TWO_SENTENCES.split(' ');
/** What the HTTP routes are asked to speak. */
export const TEXT = 'The vendor clients ask for speech. Kokoro answers, one sentence at a time.';
export const WORDS = TEXT.split(' ');

/** ElevenLabs' "Rachel" and LiveKit's Cartesia default, both mapped to af_heart. */
export const RACHEL = '21m00Tcm4TlvDq8ikWAM';
export const CARTESIA_DEFAULT = 'f786b574-daa5-4673-aa0c-cbe3e8534c02';

let socketModelDir: Promise<string> | undefined;

/**
 * The server the sockets are tested on: a stand-in that repeats its work 30 times (so a long text
 * is still being synthesized when a cancel comes), times words and has three voices; sessions
 * never time out on their own. Started once; its model directory is removed when the process ends.
 */
export async function socketServer(): Promise<TestServer> {
  initializeLogger({ pretty: false, level: 'silent' });
  socketModelDir ??= (async () => {
    const dir = mkdtempSync(join(tmpdir(), 'kokoro-vendor-ws-'));
    process.once('exit', () => rmSync(dir, { recursive: true, force: true }));
    await writeStandinModelDir(dir, {
      repeat: 30,
      timestamps: true,
      voices: ['af_heart', 'am_adam', 'bf_emma'],
      log: () => {},
    });
    return dir;
  })();
  return sharedServer({ KOKORO_MODEL_DIR: await socketModelDir, WS_IDLE_TIMEOUT_S: '0' });
}

/** The server the HTTP routes are tested on: the timestamped stand-in times words, for the routes that send them. */
export async function httpServer(): Promise<TestServer> {
  initializeLogger({ pretty: false, level: 'silent' });
  return sharedServer({ KOKORO_MODEL_DIR: TIMESTAMPED_MODEL_DIR });
}

/** Our own PCM (24 kHz) for a text, from the socket server, to compare a dialect's audio with. */
export const pcmOf = async (text: string, voice?: string) => referencePcm(await socketServer(), text, voice);

/** The same text through POST /invocations on the HTTP server: raw PCM16 at `rate`. */
export const reference = async (voice: string, rate = 24_000, text = TEXT) =>
  referencePcm(await httpServer(), text, voice, rate);

/** The server's base URL for WebSockets. */
export const wsBase = (server: TestServer) => server.http.replace('http://', 'ws://');

export async function open(url: string, headers: Record<string, string> = {}): Promise<TestClient> {
  const socket = new WebSocket(url, { headers });
  const client = new TestClient(socket);
  await new Promise((resolve, reject) => socket.once('open', resolve).once('error', reject));
  return client;
}

/** Every JSON message a dialect sent (ElevenLabs' and Cartesia's have no `type` for audio). */
export const messages = (client: TestClient) => client.controls();

export function decodedAudio(
  client: TestClient,
  field: 'audio' | 'data',
  match: (m: Record<string, unknown>) => boolean,
) {
  return Buffer.concat(
    messages(client)
      .filter((m) => typeof m[field] === 'string' && match(m))
      .map((m) => Buffer.from(m[field] as string, 'base64')),
  );
}

export interface LiveKitOutput {
  samples: number;
  sampleRate: number;
  transcript: string[];
  finals: number;
  errors: unknown[];
}

/** Drives a LiveKit TTS plugin's stream(): text pushed as an agent writes it, frames read out. */
export async function liveKitStream(
  tts: {
    stream(
      o: object,
    ): AsyncIterable<unknown> & { pushText(t: string): void; flush(): void; endInput(): void };
    on(e: 'error', f: (e: unknown) => void): void;
  },
  pieces: readonly string[],
): Promise<LiveKitOutput> {
  const out: LiveKitOutput = { samples: 0, sampleRate: 0, transcript: [], finals: 0, errors: [] };
  tts.on('error', (e) => out.errors.push(e));
  const stream = tts.stream({ connOptions: { maxRetry: 0, retryIntervalMs: 100, timeoutMs: 20_000 } });
  for (const piece of pieces) stream.pushText(piece);
  stream.flush();
  stream.endInput();
  for await (const event of stream) {
    if (typeof event === 'symbol') break;
    const { frame, final, timedTranscripts } = event as {
      frame: { samplesPerChannel: number; sampleRate: number };
      final: boolean;
      timedTranscripts?: { text: string; startTime: number; endTime: number }[];
    };
    out.samples += frame.samplesPerChannel;
    out.sampleRate = frame.sampleRate;
    if (final) out.finals++;
    for (const t of timedTranscripts ?? []) out.transcript.push(t.text.trim());
  }
  return out;
}

/**
 * The frames hold about as many samples as the whole text said at once: the text arrives in
 * pieces and is spoken sentence by sentence, so the cuts (and their pauses) may differ a little.
 */
export async function expectWholeText(out: LiveKitOutput, server: TestServer): Promise<void> {
  expect(out.errors).toEqual([]);
  expect(out.sampleRate).toBe(24000);
  const whole = (await referencePcm(server, TWO_SENTENCES)).length / 2;
  expect(out.samples).toBeGreaterThan(whole * 0.8);
  expect(out.samples).toBeLessThan(whole * 1.2);
}

/**
 * Binary messages whose bytes are read asynchronously (a Blob's arrayBuffer()), kept in the order
 * they arrived; `settled()` waits for every read begun.
 */
export class BlobReader {
  readonly parts: Buffer[] = [];
  #reads: Promise<void>[] = [];

  add(message: Blob | ArrayBuffer): void {
    const at = this.parts.push(Buffer.alloc(0)) - 1;
    if (message instanceof ArrayBuffer) this.parts[at] = Buffer.from(message);
    else this.#reads.push(message.arrayBuffer().then((b) => void (this.parts[at] = Buffer.from(b))));
  }

  async settled(): Promise<Buffer> {
    await Promise.all(this.#reads);
    return Buffer.concat(this.parts);
  }
}

/**
 * Runs `fn` while node:https dials `server` over plain TCP: LiveKit's Cartesia and Deepgram
 * plugins post through node:https whatever the URL's scheme (Deepgram's to port 443 always).
 */
export async function overPlainHttp<T>(server: TestServer, fn: () => Promise<T>): Promise<T> {
  const agent = https.globalAgent as unknown as { createConnection: unknown };
  const original = agent.createConnection;
  const port = Number(new URL(server.http).port);
  agent.createConnection = () => net.connect({ host: '127.0.0.1', port });
  try {
    return await fn();
  } finally {
    agent.createConnection = original;
  }
}

/** A LiveKit plugin's synthesize() of TEXT: the PCM of its frames, which must be 24 kHz. */
export async function synthesizedPcm(tts: {
  synthesize(text: string): { collect(): Promise<{ sampleRate: number; data: Int16Array }> };
  close(): Promise<void>;
}): Promise<Buffer> {
  const frame = await tts.synthesize(TEXT).collect();
  await tts.close();
  expect(frame.sampleRate).toBe(24_000);
  return Buffer.from(frame.data.buffer, frame.data.byteOffset, frame.data.byteLength);
}

export async function readAll(stream: ReadableStream<Uint8Array>): Promise<Buffer> {
  const parts: Buffer[] = [];
  for await (const part of Readable.fromWeb(stream as WebReadableStream<Uint8Array>))
    parts.push(part as Buffer);
  return Buffer.concat(parts);
}

/**
 * POSTs JSON over a bare socket and reads the chunked answer as it was framed: the head and each
 * chunk's bytes (an HTTP client would join them).
 */
export async function chunkedBody(
  server: TestServer,
  path: string,
  body: object,
): Promise<{ head: string; chunks: Buffer[] }> {
  const { hostname, port } = new URL(server.http);
  const json = JSON.stringify(body);
  const socket = net.connect({ host: hostname, port: Number(port) });
  // Written, not ended: the server closes once it has answered (Connection: close).
  socket.write(
    `POST ${path} HTTP/1.1\r\nHost: ${hostname}\r\nContent-Type: application/json\r\n` +
      `Content-Length: ${Buffer.byteLength(json)}\r\nConnection: close\r\n\r\n${json}`,
  );
  const parts: Buffer[] = [];
  for await (const part of socket) parts.push(part as Buffer);
  const raw = Buffer.concat(parts);
  const end = raw.indexOf('\r\n\r\n');
  const chunks: Buffer[] = [];
  for (let at = end + 4; ; ) {
    const line = raw.indexOf('\r\n', at);
    const size = parseInt(raw.subarray(at, line).toString(), 16);
    if (line < 0 || Number.isNaN(size)) throw new Error(`not a chunked body at byte ${at}`);
    if (size === 0) break;
    chunks.push(raw.subarray(line + 2, line + 2 + size));
    at = line + 2 + size + 2;
  }
  return { head: raw.subarray(0, end + 4).toString(), chunks };
}

/** The error a promise rejects with. */
export async function rejection(promise: Promise<unknown>): Promise<unknown> {
  return promise.then(
    () => new Error('the request was accepted'),
    (err: unknown) => err,
  );
}
