/**
 * The client package's streaming invocation (invokeStreaming) over InvokeEndpointWithResponseStream,
 * mocked with aws-sdk-client-mock: binary and SSE transports, and the stream's errors.
 */
import {
  InvokeEndpointWithResponseStreamCommand,
  ModelStreamError,
  type InvokeEndpointWithResponseStreamCommandOutput,
  SageMakerRuntimeClient,
} from '@aws-sdk/client-sagemaker-runtime';
import { mockClient } from 'aws-sdk-client-mock';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { invokeStreaming, type BidiResponseEvent } from '../../../packages/client/src/sagemaker.ts';
import type { AudioStreamEvent } from '../../../packages/client/src/sse.ts';
import { utf8, fromUtf8, part, pcm, collect, type Message } from './sagemaker-fakes.ts';

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
