/**
 * The SageMaker bidirectional session of the client package (SageMakerTtsSession) over a fake
 * HTTP/2 client, and the contract rule that tells its control frames from audio.
 */
import { createRequire } from 'node:module';
import { ModelStreamError } from '@aws-sdk/client-sagemaker-runtime';
import { describe, expect, it } from 'vitest';
import {
  HTTP2_SDK_PACKAGE,
  SageMakerTtsSession,
  type BidiInvokeInput,
  type BidiStreamClient,
} from '../../../packages/client/src/sagemaker.ts';
import { decodeControlFrame } from '../../../protocol/frames.ts';
import type { TtsEvent } from '../../../packages/client/src/events.ts';
import {
  utf8,
  FakeBidiClient,
  commandFactory,
  part,
  control,
  pcm,
  collect,
  recordedAnswers,
  type Message,
} from './sagemaker-fakes.ts';

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
