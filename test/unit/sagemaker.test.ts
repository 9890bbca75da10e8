import { mkdtemp, readFile, readdir, rm } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  InvokeEndpointWithResponseStreamCommand,
  ModelStreamError,
  type InvokeEndpointWithResponseStreamCommandOutput,
  SageMakerRuntimeClient,
} from '@aws-sdk/client-sagemaker-runtime';
import { mockClient } from 'aws-sdk-client-mock';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  HTTP2_SDK_PACKAGE,
  SageMakerTtsSession,
  invokeStreaming,
  type BidiCommandFactory,
  type BidiInvokeInput,
  type BidiPayloadPart,
  type BidiResponseEvent,
  type BidiStreamClient,
} from '../../packages/client/src/sagemaker.ts';
import type { AudioStreamEvent } from '../../packages/client/src/sse.ts';
import { decodeControlFrame } from '../../protocol/frames.ts';
import type { TtsEvent } from '../../packages/client/src/events.ts';
import { wavName } from '../../scripts/lib/smoke-checks.ts';
import { UsageError, formatTable, main, parseCliArgs } from '../../scripts/sagemaker-smoke.ts';

const utf8 = new TextEncoder();
const fromUtf8 = new TextDecoder();

/** A push-fed async iterable: the fake's response stream. */
class Channel<T> implements AsyncIterable<T> {
  readonly #items: T[] = [];
  readonly #waiters: {
    resolve: (result: IteratorResult<T, undefined>) => void;
    reject: (err: unknown) => void;
  }[] = [];
  #ended = false;
  #error: unknown;

  push(...items: T[]): void {
    for (const item of items) {
      const waiter = this.#waiters.shift();
      if (waiter) waiter.resolve({ value: item, done: false });
      else this.#items.push(item);
    }
  }

  end(): void {
    this.#ended = true;
    for (const waiter of this.#waiters.splice(0)) {
      if (this.#error !== undefined) waiter.reject(this.#error);
      else waiter.resolve({ value: undefined, done: true });
    }
  }

  /** Makes the iterator throw once the backlog is read, as the SDK does for exception events. */
  fail(error: unknown): void {
    this.#error = error;
    this.end();
  }

  [Symbol.asyncIterator](): AsyncIterator<T, undefined> {
    return {
      next: async () => {
        if (this.#items.length > 0) return { value: this.#items.shift() as T, done: false };
        if (this.#ended) {
          if (this.#error !== undefined) throw this.#error;
          return { value: undefined, done: true };
        }
        return new Promise((resolve, reject) => this.#waiters.push({ resolve, reject }));
      },
    };
  }
}

type Message = Record<string, unknown>;

/**
 * Stands in for `SageMakerRuntimeHTTP2Client`: records every request part (by iterating the request
 * Body as the SDK would), hands each complete message to `onMessage`, and answers through a channel.
 */
class FakeBidiClient implements BidiStreamClient {
  readonly parts: BidiPayloadPart[] = [];
  readonly messages: Message[] = [];
  readonly response = new Channel<BidiResponseEvent>();
  input: BidiInvokeInput | undefined;
  abortSignal: AbortSignal | undefined;
  bodyDone = false;
  #bodyEnded!: () => void;
  readonly bodyEnded = new Promise<void>((resolve) => {
    this.#bodyEnded = resolve;
  });

  constructor(private readonly onMessage: (message: Message, fake: FakeBidiClient) => void = () => {}) {}

  async send(command: object, options?: { abortSignal?: AbortSignal }): Promise<unknown> {
    const { input } = command as { input: BidiInvokeInput };
    this.input = input;
    this.abortSignal = options?.abortSignal;
    void (async () => {
      for await (const event of input.Body) {
        this.parts.push(event.PayloadPart);
        const message = JSON.parse(fromUtf8.decode(event.PayloadPart.Bytes as Uint8Array)) as Message;
        this.messages.push(message);
        this.onMessage(message, this);
      }
      this.bodyDone = true;
      this.#bodyEnded();
    })();
    return { Body: this.response };
  }
}

const commandFactory: BidiCommandFactory = (input) => ({ input });

const part = (
  bytes: Uint8Array | string,
  DataType?: 'BINARY' | 'UTF8',
  CompletionState?: 'PARTIAL' | 'COMPLETE',
): BidiResponseEvent => ({
  PayloadPart: {
    Bytes: typeof bytes === 'string' ? utf8.encode(bytes) : bytes,
    ...(DataType ? { DataType } : {}),
    ...(CompletionState ? { CompletionState } : {}),
  },
});
const control = (message: Message): BidiResponseEvent => part(JSON.stringify(message), 'UTF8', 'COMPLETE');
const pcm = (samples: number, seed: number): Uint8Array => {
  const out = new Uint8Array(samples * 2);
  for (let i = 0; i < out.length; i++) out[i] = (i * 7 + seed) & 0xff;
  return out;
};

async function collect<T>(iterable: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const item of iterable) out.push(item);
  return out;
}

/**
 * The shape recorded from the container through SageMaker: control frames as UTF8 parts, audio as
 * BINARY parts; fragmented frames arrive as PARTIAL parts closed by a COMPLETE part.
 */
function recordedAnswers(ids: readonly string[]): { events: BidiResponseEvent[]; audio: Uint8Array[][] } {
  const [first, second] = ids as [string, string];
  const a1 = pcm(2400, 1);
  const a2 = pcm(1200, 2);
  // Starts with "{" (0x7b) but is not JSON: audio by the contract's rule.
  const a3 = pcm(600, 3);
  a3[0] = 0x7b;
  const complete1 = JSON.stringify({
    type: 'synthesis_complete',
    request_id: first,
    total_duration_s: 0.15,
    elapsed_s: 0.02,
    rtf: 0.13,
  });
  const events: BidiResponseEvent[] = [
    control({ type: 'synthesis_start', request_id: first }),
    part(a1, 'BINARY', 'COMPLETE'),
    part(a2.subarray(0, 1000), 'BINARY', 'PARTIAL'),
    part(a2.subarray(1000, 1801), 'BINARY', 'PARTIAL'),
    part(a2.subarray(1801), 'BINARY', 'COMPLETE'),
    part(complete1.slice(0, 25), 'UTF8', 'PARTIAL'),
    part(complete1.slice(25), 'UTF8', 'COMPLETE'),
    // The second answer omits the optional synthesis_start, leaves CompletionState out (COMPLETE by
    // default) and sends its control frame as BINARY: the fallback rule must still find it.
    part(a3),
    part(
      JSON.stringify({
        type: 'synthesis_complete',
        request_id: second,
        total_duration_s: 0.025,
        elapsed_s: 0.01,
      }),
      'BINARY',
    ),
    control({ type: 'some_future_frame', request_id: second }),
  ];
  return { events, audio: [[a1, a2], [a3]] };
}

describe('SageMakerTtsSession over a fake HTTP/2 client', () => {
  it('sends each request as one BINARY payload part with the JSON, without waiting for answers', async () => {
    const fake = new FakeBidiClient();
    const session = await SageMakerTtsSession.connect({
      endpointName: 'kokoro-ep',
      targetVariant: 'blue',
      client: fake,
      commandFactory,
    });
    const before = Date.now() / 1000;
    const id1 = session.send('Hello there.', { voice: 'af_bella', speed: 1.2, sample_rate: 24000 });
    const id2 = session.send('Second.', { request_id: 'mine-2', format: 'pcm' });
    expect(id2).toBe('mine-2');
    expect(id1).toMatch(/^[0-9a-f-]{36}$/);
    await expect.poll(() => fake.parts.length).toBe(2);

    expect(fake.input?.EndpointName).toBe('kokoro-ep');
    expect(fake.input?.TargetVariant).toBe('blue');
    for (const p of fake.parts) {
      expect(p.DataType).toBe('BINARY');
      expect(p.CompletionState).toBe('COMPLETE');
      expect(p.Bytes).toBeInstanceOf(Uint8Array);
    }
    const [m1, m2] = fake.messages as [Message, Message];
    expect(m1).toMatchObject({
      text: 'Hello there.',
      voice: 'af_bella',
      speed: 1.2,
      sample_rate: 24000,
      request_id: id1,
    });
    expect(m2).toMatchObject({ text: 'Second.', format: 'pcm', request_id: 'mine-2' });
    expect(m2).not.toHaveProperty('voice');
    expect(m1.request_timestamp).toBeGreaterThanOrEqual(before - 1);
    expect(m1.request_timestamp).toBeLessThan(before + 60);
    session.abort();
  });

  it('reassembles split frames and yields events in order, attributed to their requests', async () => {
    let audio: Uint8Array[][] = [];
    const fake = new FakeBidiClient((message, self) => {
      if (message.type === 'close') {
        self.response.end();
        return;
      }
      if (self.messages.length === 2) {
        const recorded = recordedAnswers(self.messages.map((m) => String(m.request_id)));
        audio = recorded.audio;
        self.response.push(...recorded.events);
      }
    });
    const session = await SageMakerTtsSession.connect({ endpointName: 'ep', client: fake, commandFactory });
    const id1 = session.send('One.');
    const id2 = session.send('Two.');
    const eventsPromise = collect(session.events());
    await expect.poll(() => audio.length).toBe(2);
    await session.close();
    const events = await eventsPromise;

    const summary = events.map((e) =>
      e.type === 'audio'
        ? `audio:${e.requestId === id1 ? 1 : e.requestId === id2 ? 2 : '?'}:${e.bytes.length}`
        : e.type,
    );
    expect(summary).toEqual([
      'start',
      'audio:1:4800',
      'audio:1:2400',
      'complete',
      'audio:2:1200',
      'complete',
      'closed',
    ]);
    const audioEvents = events.filter((e): e is Extract<TtsEvent, { type: 'audio' }> => e.type === 'audio');
    expect(audioEvents.map((e) => [...e.bytes])).toEqual([...audio[0]!, ...audio[1]!].map((b) => [...b]));
    expect(events[0]).toEqual({ type: 'start', requestId: id1 });
    expect(events[3]).toMatchObject({
      type: 'complete',
      requestId: id1,
      totalDurationS: 0.15,
      elapsedS: 0.02,
    });
    expect((events[3] as Extract<TtsEvent, { type: 'complete' }>).raw.rtf).toBe(0.13);
    expect(events[5]).toMatchObject({
      type: 'complete',
      requestId: id2,
      totalDurationS: 0.025,
      elapsedS: 0.01,
    });
    expect(events[6]).toEqual({ type: 'closed', reason: 'closed' });
  });

  it('close() sends {"type":"close"}, resolves when the response ends and then ends the request stream', async () => {
    const fake = new FakeBidiClient((message, self) => {
      if (message.type === 'close') {
        // The request stream must still be open while the server finishes: no answer is cut off.
        expect(self.bodyDone).toBe(false);
        self.response.end();
      }
    });
    const session = await SageMakerTtsSession.connect({ endpointName: 'ep', client: fake, commandFactory });
    const events = collect(session.events());
    await session.close();
    await fake.bodyEnded;
    expect(fake.messages).toEqual([{ type: 'close' }]);
    expect(fake.parts[0]?.DataType).toBe('BINARY');
    expect(await events).toEqual([{ type: 'closed', reason: 'closed' }]);
    expect(session.closed).toBe(true);
    expect(() => session.send('late')).toThrow(/closed/);
    await session.close(); // idempotent
    expect(fake.messages).toHaveLength(1);
  });

  it('keeps the session open after a request error frame', async () => {
    const fake = new FakeBidiClient((message, self) => {
      if (message.type === 'close') return self.response.end();
      if (message.text === 'bad') {
        self.response.push(
          control({
            type: 'error',
            request_id: message.request_id,
            code: 'voice_not_found',
            message: 'voice "zz" is not a Kokoro voice',
          }),
        );
      } else {
        self.response.push(
          part(pcm(10, 0), 'BINARY'),
          control({
            type: 'synthesis_complete',
            request_id: message.request_id,
            total_duration_s: 0.0004,
            elapsed_s: 0,
          }),
        );
      }
    });
    const session = await SageMakerTtsSession.connect({ endpointName: 'ep', client: fake, commandFactory });
    const bad = session.send('bad', { voice: 'zz' });
    const good = session.send('good');
    const events = collect(session.events());
    await expect.poll(() => fake.messages.length).toBe(2);
    await session.close();
    expect(await events).toEqual([
      { type: 'error', requestId: bad, code: 'voice_not_found', message: 'voice "zz" is not a Kokoro voice' },
      { type: 'audio', requestId: good, bytes: pcm(10, 0) },
      expect.objectContaining({ type: 'complete', requestId: good }),
      { type: 'closed', reason: 'closed' },
    ]);
  });

  it('append, flush and cancel: one BINARY part each; the cancelled answer settles request() and flush()', async () => {
    const fake = new FakeBidiClient((message, self) => {
      if (message.type === 'close') self.response.end();
    });
    const session = await SageMakerTtsSession.connect({ endpointName: 'ep', client: fake, commandFactory });
    const before = Date.now() / 1000;
    const utterance = session.append('Hel', { voice: 'af_sky', timestamps: true });
    expect(session.append('lo.')).toBe(utterance);
    expect(() => session.append('x', { speed: 2 })).toThrow(/Only the first append/);
    const flushed = session.flush();
    const collected = session.request('Later.', { request_id: 'later' });
    const answer = session.cancel();
    await expect.poll(() => fake.messages.length).toBe(5);
    expect(fake.parts.every((p) => p.DataType === 'BINARY' && p.CompletionState === 'COMPLETE')).toBe(true);
    const [first, ...rest] = fake.messages as [Message, ...Message[]];
    expect(first).toEqual({
      type: 'append',
      text: 'Hel',
      voice: 'af_sky',
      timestamps: true,
      request_id: utterance,
      request_timestamp: expect.any(Number),
    });
    expect(first.request_timestamp).toBeGreaterThanOrEqual(before - 1);
    expect(rest).toEqual([
      { type: 'append', text: 'lo.', request_id: utterance },
      { type: 'flush', request_id: utterance },
      expect.objectContaining({ text: 'Later.', request_id: 'later' }),
      { type: 'cancel' },
    ]);

    const events = collect(session.events());
    fake.response.push(
      control({ type: 'synthesis_start', request_id: utterance }),
      control({
        type: 'word_timestamps',
        request_id: utterance,
        words: [{ word: 'Hello.', start_s: 0, end_s: 0.1 }],
      }),
      part(pcm(4, 1), 'BINARY'),
      control({ type: 'synthesis_cancelled', request_id: utterance, cancelled: [utterance, 'later'] }),
    );
    expect(await answer).toEqual({
      type: 'cancelled',
      requestId: utterance,
      cancelled: [utterance, 'later'],
    });
    await expect(flushed).rejects.toMatchObject({
      name: 'TtsRequestError',
      code: 'cancelled',
      requestId: utterance,
    });
    await expect(collected).rejects.toMatchObject({ code: 'cancelled', requestId: 'later' });
    await session.close();
    expect((await events).map((e) => e.type)).toEqual(['start', 'words', 'audio', 'cancelled', 'closed']);
  });

  it('a session that ends fails what is still awaited', async () => {
    const fake = new FakeBidiClient();
    const session = await SageMakerTtsSession.connect({ endpointName: 'ep', client: fake, commandFactory });
    const collected = session.request('Never answered.');
    const answer = session.cancel();
    session.abort();
    await expect(collected).rejects.toThrow(/ended \(aborted\) before request/);
    await expect(answer).rejects.toThrow(/before the cancel was answered/);
    await expect(session.flush()).rejects.toThrow(/closed/);
  });

  it('turns a ModelStreamError member into an error event followed by closed', async () => {
    const fake = new FakeBidiClient((_message, self) => {
      self.response.push(part(pcm(4, 0), 'BINARY'), {
        ModelStreamError: { ErrorCode: 'StreamBroken', Message: 'the container closed the connection' },
      });
    });
    const session = await SageMakerTtsSession.connect({ endpointName: 'ep', client: fake, commandFactory });
    const id = session.send('Hello.');
    const events = await collect(session.events());
    expect(events.map((e) => e.type)).toEqual(['audio', 'error', 'closed']);
    expect(events[0]).toMatchObject({ requestId: id });
    expect(events[1]).toEqual({
      type: 'error',
      code: 'model_stream_error',
      message: 'SageMaker ModelStreamError (StreamBroken): the container closed the connection',
    });
    expect(events[2]).toEqual({
      type: 'closed',
      reason: events[1]!.type === 'error' ? events[1]!.message : '',
    });
    expect(session.closed).toBe(true);
    await session.close(); // already finished: resolves at once
    await fake.bodyEnded;
    expect(fake.abortSignal?.aborted).toBe(true);
  });

  it('reports an InternalStreamFailure member, and one thrown by the SDK iterator', async () => {
    const member = new FakeBidiClient((_m, self) =>
      self.response.push({ InternalStreamFailure: { Message: 'try again' } }),
    );
    const s1 = await SageMakerTtsSession.connect({ endpointName: 'ep', client: member, commandFactory });
    s1.send('x');
    expect(await collect(s1.events())).toEqual([
      {
        type: 'error',
        code: 'internal_stream_failure',
        message: 'SageMaker InternalStreamFailure: try again',
      },
      { type: 'closed', reason: 'SageMaker InternalStreamFailure: try again' },
    ]);

    // The SDK throws error events as exceptions named after the member.
    const thrown = new FakeBidiClient((_m, self) =>
      self.response.fail(
        new ModelStreamError({
          message: 'timed out',
          $metadata: {},
          Message: 'timed out',
          ErrorCode: 'ModelInvocationTimeExceeded',
        }),
      ),
    );
    const s2 = await SageMakerTtsSession.connect({ endpointName: 'ep', client: thrown, commandFactory });
    s2.send('x');
    const events = await collect(s2.events());
    expect(events[0]).toEqual({
      type: 'error',
      code: 'model_stream_error',
      message: 'SageMaker ModelStreamError (ModelInvocationTimeExceeded): timed out',
    });
    expect(events[1]?.type).toBe('closed');
  });

  it('reports a failed send after the stream opened as a transport error, then closed', async () => {
    const client: BidiStreamClient = {
      send: async (command) => {
        const { input } = command as { input: BidiInvokeInput };
        const iterator = input.Body[Symbol.asyncIterator]();
        void iterator.next(); // the SDK starts reading the request stream, then the call fails
        await new Promise((resolve) => setTimeout(resolve, 5));
        throw new Error('403 Forbidden: not authorized to perform sagemaker:InvokeEndpoint');
      },
    };
    const session = await SageMakerTtsSession.connect({ endpointName: 'ep', client, commandFactory });
    expect(await collect(session.events())).toEqual([
      {
        type: 'error',
        code: 'transport_error',
        message:
          'the SageMaker stream failed: 403 Forbidden: not authorized to perform sagemaker:InvokeEndpoint',
      },
      {
        type: 'closed',
        reason:
          'the SageMaker stream failed: 403 Forbidden: not authorized to perform sagemaker:InvokeEndpoint',
      },
    ]);
  });

  it('rejects connect when the call fails before the request stream is read', async () => {
    const client: BidiStreamClient = {
      send: () => Promise.reject(new Error('Could not load credentials from any providers')),
    };
    await expect(SageMakerTtsSession.connect({ endpointName: 'ep', client, commandFactory })).rejects.toThrow(
      /Could not load credentials/,
    );
  });

  it('abort() ends the session at once with reason aborted', async () => {
    const fake = new FakeBidiClient();
    const session = await SageMakerTtsSession.connect({ endpointName: 'ep', client: fake, commandFactory });
    session.send('never answered');
    const events = collect(session.events());
    session.abort();
    expect(await events).toEqual([{ type: 'closed', reason: 'aborted' }]);
    expect(fake.abortSignal?.aborted).toBe(true);
    await session.close();
    expect(() => session.events()).toThrow(/once/);
  });

  const sdkInstalled = (() => {
    try {
      createRequire(import.meta.url).resolve(HTTP2_SDK_PACKAGE);
      return true;
    } catch {
      return false;
    }
  })();

  it.skipIf(sdkInstalled)('without an injected client, says to install the HTTP/2 SDK package', async () => {
    const attempt = SageMakerTtsSession.connect({ endpointName: 'ep', region: 'us-east-1' });
    await expect(attempt).rejects.toThrow(HTTP2_SDK_PACKAGE);
    await expect(attempt).rejects.toThrow(/npm install @aws-sdk\/client-sagemaker-runtime-http2/);
    // A client alone is not enough: the command class comes from the same package.
    await expect(
      SageMakerTtsSession.connect({ endpointName: 'ep', client: new FakeBidiClient() }),
    ).rejects.toThrow(HTTP2_SDK_PACKAGE);
  });
});

describe('decodeControlFrame on SageMaker payload parts (the contract rule)', () => {
  it('finds JSON objects and leaves audio alone', () => {
    expect(decodeControlFrame(utf8.encode(' {"type":"error"}\n'))).toEqual({ type: 'error' });
    expect(decodeControlFrame(new Uint8Array([0x7b, 1, 2, 0x7d]))).toBeNull();
    expect(decodeControlFrame(utf8.encode('[1]'))).toBeNull();
    expect(decodeControlFrame(new Uint8Array(0))).toBeNull();
    expect(decodeControlFrame(new Uint8Array([0x7b, 0x22, 0xff, 0x22, 0x7d]))).toBeNull();
  });
});

describe('invokeStreaming over InvokeEndpointWithResponseStream (aws-sdk-client-mock)', () => {
  const sm = mockClient(SageMakerRuntimeClient);
  beforeEach(() => sm.reset());
  afterEach(() => sm.reset());

  async function* stream(...events: BidiResponseEvent[]): AsyncGenerator<BidiResponseEvent> {
    for (const event of events) yield event;
  }
  const payloads = (...chunks: (Uint8Array | string)[]) => stream(...chunks.map((c) => part(c)));
  const respond = (body: AsyncIterable<BidiResponseEvent>) =>
    sm
      .on(InvokeEndpointWithResponseStreamCommand)
      .resolves({ Body: body } as InvokeEndpointWithResponseStreamCommandOutput);
  const sentInput = () => sm.commandCalls(InvokeEndpointWithResponseStreamCommand)[0]!.args[0].input;

  it('binary: yields the audio bytes as they arrive', async () => {
    const header = utf8.encode('RIFF\xff\xff\xff\xffWAVE');
    const body = pcm(500, 9);
    respond(payloads(header, body.subarray(0, 333), body.subarray(333)));
    const chunks = await collect(
      invokeStreaming({
        endpointName: 'kokoro-ep',
        text: 'Hi.',
        options: { voice: 'af_sky', format: 'wav' },
        transport: 'binary',
        client: new SageMakerRuntimeClient({ region: 'us-east-1' }),
      }),
    );
    expect(Buffer.concat(chunks)).toEqual(Buffer.concat([header, body]));
    const input = sentInput();
    expect(input.EndpointName).toBe('kokoro-ep');
    expect(input.ContentType).toBe('application/json');
    expect(input.Accept).toBeUndefined();
    const json = JSON.parse(fromUtf8.decode(input.Body as Uint8Array)) as Message;
    expect(json).toMatchObject({ text: 'Hi.', voice: 'af_sky', format: 'wav' });
    expect(json).not.toHaveProperty('transport');
    expect(typeof json.request_timestamp).toBe('number');
  });

  it('sse: decodes events split across payload parts mid-event', async () => {
    const a = pcm(300, 4);
    const b = pcm(200, 5);
    const sse = [
      `event: audio_stream_start\ndata: ${JSON.stringify({ request_id: 'r1', format: 'pcm', voice: 'af_heart', sample_rate: 24000 })}\n\n`,
      `event: audio_chunk\ndata: ${JSON.stringify({ request_id: 'r1', seq: 0, data: Buffer.from(a).toString('base64') })}\n\n`,
      `event: audio_chunk\ndata: ${JSON.stringify({ request_id: 'r1', seq: 1, data: Buffer.from(b).toString('base64') })}\n\n`,
      `event: audio_stream_end\ndata: ${JSON.stringify({ request_id: 'r1', total_chunks: 2, duration_s: 0.02 })}\n\n`,
    ].join('');
    const bytes = utf8.encode(sse);
    // Cut inside the "event:" line, inside base64 data, and between "\n" and "\n".
    const cuts = [7, 140, sse.indexOf('\n\nevent: audio_stream_end') + 1, bytes.length - 3];
    const pieces: Uint8Array[] = [];
    let at = 0;
    for (const cut of [...cuts, bytes.length]) {
      pieces.push(bytes.subarray(at, cut));
      at = cut;
    }
    respond(payloads(...pieces));

    const events: AudioStreamEvent[] = await collect(
      invokeStreaming({
        endpointName: 'ep',
        text: 'Hi.',
        options: { format: 'pcm', request_id: 'r1' },
        transport: 'sse',
        client: new SageMakerRuntimeClient({ region: 'us-east-1' }),
      }),
    );
    expect(events.map((e) => e.type)).toEqual([
      'audio_stream_start',
      'audio_chunk',
      'audio_chunk',
      'audio_stream_end',
    ]);
    const audio = events.flatMap((e) => (e.type === 'audio_chunk' ? [e.audio] : []));
    expect(Buffer.concat(audio)).toEqual(Buffer.concat([a, b]));
    expect(events[3]).toMatchObject({ total_chunks: 2, duration_s: 0.02 });
    const input = sentInput();
    expect(input.Accept).toBe('text/event-stream');
    expect(JSON.parse(fromUtf8.decode(input.Body as Uint8Array))).toMatchObject({
      transport: 'sse',
      request_id: 'r1',
    });
  });

  it('creates its own client when none is given', async () => {
    respond(payloads(pcm(2, 0)));
    const chunks = await collect(
      invokeStreaming({ endpointName: 'ep', text: 'x', transport: 'binary', region: 'eu-west-1' }),
    );
    expect(chunks).toHaveLength(1);
  });

  it('rejects with a clear error on a ModelStreamError member', async () => {
    respond(
      stream(part(pcm(8, 0)), {
        ModelStreamError: { ErrorCode: 'ModelInvocationTimeExceeded', Message: 'too slow' },
      }),
    );
    const received: Uint8Array[] = [];
    const run = async () => {
      for await (const chunk of invokeStreaming({
        endpointName: 'kokoro-ep',
        text: 'x',
        transport: 'binary',
        client: new SageMakerRuntimeClient({ region: 'us-east-1' }),
      }))
        received.push(chunk);
    };
    await expect(run()).rejects.toThrow(
      'SageMaker endpoint kokoro-ep: SageMaker ModelStreamError (ModelInvocationTimeExceeded): too slow',
    );
    expect(received).toHaveLength(1);
  });

  it('rejects with a clear error when the SDK throws ModelStreamError mid-stream', async () => {
    async function* failing(): AsyncGenerator<BidiResponseEvent> {
      yield part(pcm(8, 0));
      throw new ModelStreamError({
        message: 'broken',
        $metadata: {},
        Message: 'broken',
        ErrorCode: 'StreamBroken',
      });
    }
    respond(failing());
    await expect(
      collect(
        invokeStreaming({
          endpointName: 'ep',
          text: 'x',
          transport: 'sse',
          client: new SageMakerRuntimeClient({}),
        }),
      ),
    ).rejects.toThrow('SageMaker endpoint ep: SageMaker ModelStreamError (StreamBroken): broken');
  });

  it('sse: rejects when the stream ends without audio_stream_end', async () => {
    respond(
      payloads(`event: audio_chunk\ndata: ${JSON.stringify({ request_id: 'r', seq: 0, data: 'AAA=' })}\n\n`),
    );
    await expect(
      collect(
        invokeStreaming({
          endpointName: 'ep',
          text: 'x',
          transport: 'sse',
          client: new SageMakerRuntimeClient({}),
        }),
      ),
    ).rejects.toThrow(/without audio_stream_end/);
  });
});

describe('sagemaker-smoke script', () => {
  /** Answers like the container: start, audio in two frames, complete; closes on {"type":"close"}. */
  const serverLike =
    (failText?: string) =>
    (message: Message, self: FakeBidiClient): void => {
      if (message.type === 'close') {
        self.response.end();
        return;
      }
      const id = message.request_id;
      if (message.text === failText) {
        self.response.push(
          control({ type: 'error', request_id: id, code: 'inference_failed', message: 'the model failed' }),
        );
        return;
      }
      self.response.push(
        control({ type: 'synthesis_start', request_id: id }),
        part(pcm(1200, 1), 'BINARY'),
        part(pcm(1200, 2), 'BINARY'),
        control({ type: 'synthesis_complete', request_id: id, total_duration_s: 0.1, elapsed_s: 0.01 }),
      );
    };

  let out: string;
  beforeEach(async () => {
    out = await mkdtemp(join(tmpdir(), 'sm-smoke-'));
  });
  afterEach(async () => {
    await rm(out, { recursive: true, force: true });
  });

  it('runs two sentences over one session: table, WAVs and the passed count', async () => {
    const fake = new FakeBidiClient(serverLike());
    const lines: string[] = [];
    const code = await main(
      [
        '--endpoint',
        'kokoro-ep',
        '--voice',
        'af_sky',
        '--out',
        out,
        '--text',
        'Hello there.',
        '--text',
        'Second one!',
      ],
      { client: fake, commandFactory, log: (line) => lines.push(line) },
    );
    const text = lines.join('\n');
    expect(code).toBe(0);
    expect(text).toContain('5 passed, 0 failed');
    expect(text).toMatch(/#\s+chars\s+bytes\s+audio s\s+server s\s+first audio ms\s+status/);
    expect(text).toMatch(/\n\s*1\s+12\s+4800\s+0\.10\s+0\.10\s+\d+\s+ok/);
    expect(text).toMatch(/\n\s*2\s+11\s+4800\s+0\.10\s+0\.10\s+\d+\s+ok/);
    expect(fake.messages.map((m) => m.text ?? m.type)).toEqual(['Hello there.', 'Second one!', 'close']);
    expect(fake.messages[0]).toMatchObject({ voice: 'af_sky' });
    expect(fake.parts.every((p) => p.DataType === 'BINARY')).toBe(true);

    const files = (await readdir(out)).sort();
    expect(files).toEqual(['01-hello-there.wav', '02-second-one.wav']);
    const wav = await readFile(join(out, files[0]!));
    expect(wav.length).toBe(44 + 4800);
    expect(wav.toString('ascii', 0, 4)).toBe('RIFF');
    expect(wav.readUInt16LE(22)).toBe(1); // mono
    expect(wav.readUInt32LE(24)).toBe(24000);
    expect(wav.readUInt16LE(34)).toBe(16);
    expect(wav.readUInt32LE(40)).toBe(4800);
    expect([...wav.subarray(44, 44 + 2400)]).toEqual([...pcm(1200, 1)]);
  });

  it('fails (exit 1) when a sentence gets an error frame, and still closes cleanly', async () => {
    const lines: string[] = [];
    const code = await main(['--endpoint', 'ep', '--out', out, '--text', 'Fine.', '--text', 'Broken.'], {
      client: new FakeBidiClient(serverLike('Broken.')),
      commandFactory,
      log: (line) => lines.push(line),
    });
    const text = lines.join('\n');
    expect(code).toBe(1);
    expect(text).toContain('4 passed, 1 failed');
    expect(text).toContain('sentence 2: error inference_failed: the model failed; no audio');
    expect(await readdir(out)).toEqual(['01-fine.wav']);
  });

  it('fails when the endpoint never answers, within the time limit', async () => {
    const lines: string[] = [];
    const code = await main(['--endpoint', 'ep', '--out', out, '--text', 'Hello.', '--timeout-ms', '200'], {
      client: new FakeBidiClient(),
      commandFactory,
      log: (line) => lines.push(line),
    });
    expect(code).toBe(1);
    expect(lines.join('\n')).toContain('1 sentence(s) unanswered before the time limit');
  });

  it('parses the command line', () => {
    expect(parseCliArgs(['--endpoint', 'ep', '--region', 'us-west-2'])).toMatchObject({
      endpoint: 'ep',
      region: 'us-west-2',
      voice: 'af_heart',
      timeoutMs: 120000,
    });
    expect(() => parseCliArgs([])).toThrow(UsageError);
    expect(() => parseCliArgs(['--endpoint', 'ep', '--bogus'])).toThrow(UsageError);
    expect(() => parseCliArgs(['--endpoint', 'ep', '--timeout-ms', '0'])).toThrow(
      /--timeout-ms should be a whole number of 1 or more/,
    );
    expect(parseCliArgs(['--help']).help).toBe(true);
    expect(wavName(0, 'Hello, World!')).toBe('01-hello-world.wav');
    expect(formatTable([]).split('\n')).toHaveLength(2);
  });

  it('exits 2 with the usage on bad options', async () => {
    const lines: string[] = [];
    expect(await main(['--region', 'x'], { log: (l) => lines.push(l) })).toBe(2);
    expect(lines.join('\n')).toContain('--endpoint NAME is required');
  });
});
