/**
 * The SageMaker transport for every protocol the container speaks: SageMakerBidiChannel carries a
 * Deepgram, ElevenLabs or Cartesia client (or ours with contexts) by naming the route as the
 * invocation path, over a fake HTTP/2 client.
 */
import { describe, expect, it } from 'vitest';
import {
  BidiStreamError,
  SageMakerBidiChannel,
  SageMakerTtsSession,
  type BidiInvokeInput,
  type BidiMessage,
  type BidiPayloadPart,
  type BidiResponseEvent,
  type BidiStreamClient,
} from '../../../packages/client/src/sagemaker.ts';
import {
  FakeBidiClient,
  collect,
  commandFactory,
  control,
  fromUtf8,
  part,
  pcm,
  utf8,
} from './sagemaker-fakes.ts';

/** Each protocol's route over SageMaker, with a query and the first message a client of it sends. */
const DIALECTS = new Map<string, { path: string; query: string; first: object }>([
  [
    'Deepgram',
    {
      path: 'v1/speak',
      query: 'model=aura-2-helena-en&encoding=linear16&sample_rate=24000',
      first: { type: 'Speak', text: 'Hello there.' },
    },
  ],
  [
    'ElevenLabs stream-input',
    {
      path: 'v1/text-to-speech/21m00Tcm4TlvDq8ikWAM/stream-input',
      query: 'output_format=pcm_24000&inactivity_timeout=60',
      first: { text: ' ', voice_settings: { speed: 1.1 } },
    },
  ],
  [
    'ElevenLabs multi-stream-input',
    {
      path: 'v1/text-to-speech/af_heart/multi-stream-input',
      query: 'output_format=ulaw_8000&apply_text_normalization=off',
      first: { text: 'Hello there. ', context_id: 'turn-1' },
    },
  ],
  [
    'Cartesia',
    {
      path: 'tts/websocket',
      query: 'cartesia_version=2025-04-16',
      first: {
        context_id: 'c1',
        transcript: 'Hello there.',
        continue: false,
        voice: { mode: 'id', id: 'af_heart' },
        output_format: { container: 'raw', encoding: 'pcm_s16le', sample_rate: 24000 },
      },
    },
  ],
]);

describe('SageMakerBidiChannel: each protocol by its invocation path', () => {
  for (const [name, { path, query, first }] of DIALECTS) {
    it(`${name}: ${path} and its query reach the command unchanged; a string goes as one UTF8 part`, async () => {
      const fake = new FakeBidiClient();
      const channel = await SageMakerBidiChannel.connect({
        endpointName: 'kokoro-ep',
        targetVariant: 'blue',
        modelInvocationPath: path,
        modelQueryString: query,
        client: fake,
        commandFactory,
      });
      channel.send(JSON.stringify(first));
      await expect.poll(() => fake.messages.length).toBe(1);
      expect(fake.input).toMatchObject({
        EndpointName: 'kokoro-ep',
        TargetVariant: 'blue',
        ModelInvocationPath: path,
        ModelQueryString: query,
      });
      expect(fake.parts[0]).toMatchObject({ DataType: 'UTF8', CompletionState: 'COMPLETE' });
      expect(fake.messages[0]).toEqual(first);
      channel.abort();
      expect(fake.abortSignal?.aborted).toBe(true);
    });
  }

  it('our protocol with contexts: the session passes its query string (and no path) through', async () => {
    const fake = new FakeBidiClient();
    const session = await SageMakerTtsSession.connect({
      endpointName: 'ep',
      modelQueryString: 'contexts=true',
      client: fake,
      commandFactory,
    });
    expect(fake.input?.ModelQueryString).toBe('contexts=true');
    expect(fake.input).not.toHaveProperty('ModelInvocationPath');
    session.abort();
  });
});

/**
 * Echoes each request part back as a response message split in two parts (PARTIAL, then COMPLETE),
 * keeping its DataType; unlike FakeBidiClient it takes parts that are not JSON. The response ends
 * with the request stream.
 */
class EchoBidiClient implements BidiStreamClient {
  readonly parts: BidiPayloadPart[] = [];
  input: BidiInvokeInput | undefined;

  async send(command: object): Promise<unknown> {
    const { input } = command as { input: BidiInvokeInput };
    this.input = input;
    const parts = this.parts;
    async function* echo(): AsyncGenerator<BidiResponseEvent> {
      for await (const { PayloadPart: sent } of input.Body) {
        parts.push(sent);
        const bytes = sent.Bytes as Uint8Array;
        const dataType = sent.DataType as 'BINARY' | 'UTF8';
        yield part(bytes.subarray(0, bytes.length >> 1), dataType, 'PARTIAL');
        yield part(bytes.subarray(bytes.length >> 1), dataType, 'COMPLETE');
      }
    }
    return { Body: echo() };
  }
}

const summary = (message: BidiMessage) => ({ dataType: message.dataType, bytes: [...message.data] });

describe('SageMakerBidiChannel: payloads in both directions', () => {
  it('JSON and binary payloads round-trip whole and in order', async () => {
    const client = new EchoBidiClient();
    const channel = await SageMakerBidiChannel.connect({
      endpointName: 'ep',
      modelInvocationPath: 'tts/websocket',
      client,
      commandFactory,
    });
    const audio = pcm(300, 5);
    audio[0] = 0x7b; // starts like JSON: still binary
    const sent: (string | Uint8Array)[] = [
      JSON.stringify({ context_id: 'c1', transcript: 'Grüße → 👋', continue: true }),
      audio,
      JSON.stringify({ context_id: 'c1', cancel: true }),
      new Uint8Array([1]),
    ];
    for (const data of sent) channel.send(data);
    const closing = channel.close();
    expect(channel.closed).toBe(true);
    expect(() => channel.send('late')).toThrow(/closed/);
    const received = await collect(channel);
    await closing;

    expect(client.parts.map((p) => [p.DataType, p.CompletionState])).toEqual(
      sent.map((data) => [typeof data === 'string' ? 'UTF8' : 'BINARY', 'COMPLETE']),
    );
    expect(received.map(summary)).toEqual(
      sent.map((data) =>
        typeof data === 'string'
          ? { dataType: 'UTF8', bytes: [...utf8.encode(data)] }
          : { dataType: 'BINARY', bytes: [...data] },
      ),
    );
    expect(received[0]?.text()).toBe(sent[0]);
    expect(JSON.parse(received[2]!.text())).toEqual({ context_id: 'c1', cancel: true });
  });

  it('a Deepgram session: Metadata, reassembled audio and Flushed in order, until its Close', async () => {
    const audio = pcm(1200, 7);
    const fake = new FakeBidiClient((message, self) => {
      if (message.type === 'Flush') {
        self.response.push(
          part(audio.subarray(0, 1000), 'BINARY', 'PARTIAL'),
          part(audio.subarray(1000), 'BINARY', 'COMPLETE'),
          control({ type: 'Flushed', sequence_id: 0 }),
        );
      }
      if (message.type === 'Close') self.response.end();
    });
    const channel = await SageMakerBidiChannel.connect({
      endpointName: 'ep',
      modelInvocationPath: 'v1/speak',
      modelQueryString: 'model=af_heart',
      client: fake,
      commandFactory,
    });
    fake.response.push(control({ type: 'Metadata', request_id: 'm', model_name: 'af_heart' }));
    channel.send(JSON.stringify({ type: 'Speak', text: 'Hello.' }));
    channel.send(JSON.stringify({ type: 'Flush' }));
    channel.send(JSON.stringify({ type: 'Close' }));
    const received = await collect(channel.messages());
    await fake.bodyEnded;
    expect(channel.closed).toBe(true);
    expect(fake.messages.map((m) => m.type)).toEqual(['Speak', 'Flush', 'Close']);
    expect(received.map((m) => m.dataType)).toEqual(['UTF8', 'BINARY', 'UTF8']);
    expect(JSON.parse(received[0]!.text())).toMatchObject({ type: 'Metadata' });
    expect(received[1]!.data).toEqual(audio);
    expect(JSON.parse(fromUtf8.decode(received[2]!.data))).toEqual({ type: 'Flushed', sequence_id: 0 });
    expect(() => channel.messages()).toThrow(/once/);
  });

  it('a SageMaker fault ends messages() with a BidiStreamError after what came before it', async () => {
    const fake = new FakeBidiClient((_message, self) => {
      self.response.push(control({ isFinal: null, audio: 'AAA=' }), {
        ModelStreamError: { ErrorCode: 'StreamBroken', Message: 'the container closed the connection' },
      });
    });
    const channel = await SageMakerBidiChannel.connect({
      endpointName: 'ep',
      modelInvocationPath: 'v1/text-to-speech/af_heart/stream-input',
      client: fake,
      commandFactory,
    });
    channel.send(JSON.stringify({ text: 'Hi. ' }));
    const seen: string[] = [];
    const failure = await (async () => {
      try {
        for await (const message of channel) seen.push(message.text());
      } catch (err) {
        return err;
      }
      return undefined;
    })();
    expect(seen).toEqual(['{"isFinal":null,"audio":"AAA="}']);
    expect(failure).toBeInstanceOf(BidiStreamError);
    expect(failure).toMatchObject({
      code: 'model_stream_error',
      message: 'SageMaker ModelStreamError (StreamBroken): the container closed the connection',
    });
    await fake.bodyEnded;
    expect(fake.abortSignal?.aborted).toBe(true);
    await channel.close(); // already ended: resolves at once
  });

  it('abort() ends messages() and cancels the call', async () => {
    const fake = new FakeBidiClient();
    const channel = await SageMakerBidiChannel.connect({ endpointName: 'ep', client: fake, commandFactory });
    const received = collect(channel);
    channel.abort();
    expect(await received).toEqual([]);
    expect(fake.abortSignal?.aborted).toBe(true);
    expect(() => channel.send('x')).toThrow(/closed/);
    await channel.close(); // resolves although the fake never ends its response
  });
});
