/**
 * One `InvokeEndpointWithBidirectionalStream` call (the SageMaker Runtime HTTP/2 service) as a raw
 * channel, the way a WebSocket carries frames: each message sent reaches the container as one
 * WebSocket frame, and each frame of the container comes back whole. It carries whatever protocol
 * the container speaks on the route that `modelInvocationPath` names: ours (SageMakerTtsSession is
 * built on this channel), Deepgram's `v1/speak`, ElevenLabs' `v1/text-to-speech/{voice}/stream-input`
 * and `multi-stream-input`, Cartesia's `tts/websocket`.
 */
import { concatBytes } from '../../../protocol/bytes.ts';
import { AsyncQueue } from './async-queue.ts';
import {
  HTTP2_SDK_PACKAGE,
  encoder,
  errorText,
  faultFromEvent,
  faultFromException,
  isAsyncIterable,
  toBytes,
  type BidiCommandFactory,
  type BidiInvokeInput,
  type BidiInvokeOutput,
  type BidiPayloadPart,
  type BidiRequestEvent,
  type BidiResponseEvent,
  type BidiStreamClient,
} from './sagemaker-stream.ts';

/** Options of {@link SageMakerBidiChannel.connect} (and of `SageMakerTtsSession.connect`). */
export interface SageMakerBidiOptions {
  readonly endpointName: string;
  /** Used only when the client is created here; otherwise the SDK's usual region resolution applies. */
  readonly region?: string;
  readonly targetVariant?: string;
  /**
   * Path of the container's WebSocket route, which selects its protocol: absent for ours
   * (SageMaker's default), `v1/speak` for Deepgram's, `v1/text-to-speech/<voice>/multi-stream-input`
   * (or `stream-input`) for ElevenLabs', `tts/websocket` for Cartesia's.
   */
  readonly modelInvocationPath?: string;
  /** The route's query, without `?`: e.g. `contexts=true`, or Deepgram's `model=af_heart&encoding=linear16`. */
  readonly modelQueryString?: string;
  /** A `SageMakerRuntimeHTTP2Client` (or a fake); created from the optional SDK package when absent. */
  readonly client?: BidiStreamClient;
  /** Wraps the input into a command; `new InvokeEndpointWithBidirectionalStreamCommand(input)` when absent. */
  readonly commandFactory?: BidiCommandFactory;
}

/** One message from the container: a whole WebSocket frame, joined from its payload parts. */
export interface BidiMessage {
  readonly data: Uint8Array;
  /** `UTF8` for a text frame, `BINARY` for a binary frame (SageMaker's `DataType`). */
  readonly dataType: 'BINARY' | 'UTF8' | (string & {});
  /** The bytes as UTF-8 text. */
  text(): string;
}

/**
 * The stream failed: SageMaker reported a fault (`code` `model_stream_error` or
 * `internal_stream_failure`), or the call itself failed (`transport_error`).
 */
export class BidiStreamError extends Error {
  override readonly name = 'BidiStreamError';
  readonly code: 'model_stream_error' | 'internal_stream_failure' | 'transport_error';

  constructor(code: BidiStreamError['code'], message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.code = code;
  }
}

interface Http2Sdk {
  readonly SageMakerRuntimeHTTP2Client: new (config: { region?: string }) => BidiStreamClient;
  readonly InvokeEndpointWithBidirectionalStreamCommand: new (input: BidiInvokeInput) => object;
}

/** Loads the optional HTTP/2 SDK package, with an error that says how to get it. */
async function loadHttp2Sdk(): Promise<Http2Sdk> {
  // A variable specifier keeps TypeScript and bundlers from requiring the package at build time.
  const specifier: string = HTTP2_SDK_PACKAGE;
  let mod: Partial<Http2Sdk>;
  try {
    mod = (await import(/* @vite-ignore */ specifier)) as Partial<Http2Sdk>;
  } catch (err) {
    throw new Error(
      `The SageMaker bidirectional streaming client needs the ${HTTP2_SDK_PACKAGE} package, which could ` +
        `not be loaded (${errorText(err)}). Install it with \`npm install ${HTTP2_SDK_PACKAGE}\`, or pass ` +
        '`client` and `commandFactory` to connect().',
      { cause: err },
    );
  }
  if (
    typeof mod.SageMakerRuntimeHTTP2Client !== 'function' ||
    typeof mod.InvokeEndpointWithBidirectionalStreamCommand !== 'function'
  ) {
    throw new Error(
      `${HTTP2_SDK_PACKAGE} was loaded but does not export SageMakerRuntimeHTTP2Client and ` +
        'InvokeEndpointWithBidirectionalStreamCommand; pass `client` and `commandFactory` instead.',
    );
  }
  return mod as Http2Sdk;
}

// Typed by shape: inferred, the declarations would name Node's util.TextDecoder, which browsers lack.
const decoder: { decode(bytes: Uint8Array): string } = new TextDecoder();

class ReceivedMessage implements BidiMessage {
  constructor(
    readonly data: Uint8Array,
    readonly dataType: string,
  ) {}

  text(): string {
    return decoder.decode(this.data);
  }
}

/**
 * A raw bidirectional stream with a SageMaker endpoint. {@link send} a string as a text frame or
 * bytes as a binary frame; read the container's frames from {@link messages} (or iterate the
 * channel), in order, each whole.
 *
 * @example Cartesia's protocol over SageMaker
 * ```ts
 * const channel = await SageMakerBidiChannel.connect({ endpointName: 'kokoro', modelInvocationPath: 'tts/websocket' });
 * channel.send(JSON.stringify({ context_id: 'c1', transcript: 'Hello.', voice: { mode: 'id', id: 'af_heart' },
 *   output_format: { container: 'raw', encoding: 'pcm_s16le', sample_rate: 24000 } }));
 * for await (const message of channel) {
 *   const frame = JSON.parse(message.text());
 *   if (frame.type === 'chunk') play(frame.data);
 *   if (frame.type === 'done') break;
 * }
 * await channel.close();
 * ```
 */
export class SageMakerBidiChannel implements AsyncIterable<BidiMessage> {
  readonly #requests = new AsyncQueue<BidiRequestEvent>();
  readonly #received = new AsyncQueue<BidiMessage>();
  readonly #abort = new AbortController();
  #fragments: Uint8Array[] = [];
  #fragmentType: string | undefined;
  /** Why the stream failed; {@link messages} throws it after the frames that came before it. */
  #failure: BidiStreamError | undefined;
  #finished = false;
  #taken = false;
  #ownedClient: BidiStreamClient | undefined;
  #done!: Promise<void>;

  private constructor() {}

  /**
   * Opens the bidirectional stream. Resolves once the SDK has started reading the request stream (or
   * the response has begun), so messages can be sent at once; a failure before that (credentials, a
   * missing SDK package) rejects. Failures after it end {@link messages} with a {@link BidiStreamError}.
   */
  static async connect(options: SageMakerBidiOptions): Promise<SageMakerBidiChannel> {
    let { client, commandFactory } = options;
    let owned: BidiStreamClient | undefined;
    if (!client || !commandFactory) {
      const sdk = await loadHttp2Sdk();
      if (!client) {
        client = owned = new sdk.SageMakerRuntimeHTTP2Client(
          options.region !== undefined ? { region: options.region } : {},
        );
      }
      commandFactory ??= (input) => new sdk.InvokeEndpointWithBidirectionalStreamCommand(input);
    }

    const channel = new SageMakerBidiChannel();
    channel.#ownedClient = owned;
    let markPulled!: () => void;
    const pulled = new Promise<void>((resolve) => {
      markPulled = resolve;
    });
    const input: BidiInvokeInput = {
      EndpointName: options.endpointName,
      ...(options.targetVariant !== undefined ? { TargetVariant: options.targetVariant } : {}),
      ...(options.modelInvocationPath !== undefined
        ? { ModelInvocationPath: options.modelInvocationPath }
        : {}),
      ...(options.modelQueryString !== undefined ? { ModelQueryString: options.modelQueryString } : {}),
      Body: channel.#requestBody(markPulled),
    };

    let response: Promise<unknown>;
    try {
      response = client.send(commandFactory(input), { abortSignal: channel.#abort.signal });
    } catch (err) {
      owned?.destroy?.();
      throw err;
    }
    // Never wait for the response alone: an implementation may hold it back until the first message.
    const opened = await Promise.race([
      pulled.then(() => ({ ok: true as const })),
      response.then(
        () => ({ ok: true as const }),
        (err: unknown) => ({ ok: false as const, err }),
      ),
    ]);
    if (!opened.ok) {
      channel.#requests.end();
      owned?.destroy?.();
      throw opened.err;
    }
    channel.#done = channel.#pump(response);
    return channel;
  }

  /** True once `close()` or `abort()` was called or the stream ended: nothing more can be sent. */
  get closed(): boolean {
    return this.#requests.ended;
  }

  /**
   * Sends one message as one payload part: a string as `UTF8` (a text frame to the container),
   * bytes as `BINARY` (a binary frame).
   * @throws Error when the channel is closed.
   */
  send(data: string | Uint8Array): void {
    if (this.closed) throw new Error('the SageMaker stream is closed; connect a new one');
    const text = typeof data === 'string';
    this.#requests.push({
      PayloadPart: {
        Bytes: text ? encoder.encode(data) : data,
        DataType: text ? 'UTF8' : 'BINARY',
        CompletionState: 'COMPLETE',
      },
    });
  }

  /**
   * The container's messages in arrival order, each a whole frame. Ends when the response stream
   * ends (or at {@link abort}); throws a {@link BidiStreamError} when the stream fails, after the
   * messages that came before the failure. There is one reader: calling this twice throws.
   */
  messages(): AsyncIterableIterator<BidiMessage> {
    if (this.#taken) throw new Error('messages() may be called once per channel');
    this.#taken = true;
    const next = async (): Promise<IteratorResult<BidiMessage, undefined>> => {
      const result = await this.#received.next();
      if (result.done && this.#failure) throw this.#failure;
      return result;
    };
    return {
      next,
      [Symbol.asyncIterator]() {
        return this;
      },
    };
  }

  [Symbol.asyncIterator](): AsyncIterator<BidiMessage> {
    return this.messages();
  }

  /**
   * Ends the request stream (SageMaker then closes the container's WebSocket) and resolves when the
   * response stream has ended. To let the container answer everything first, send its protocol's
   * own close message instead (ours `{"type":"close"}`, Deepgram's `{"type":"Close"}`, ElevenLabs'
   * `{"close_socket":true}`) and read {@link messages} to the end: the request stream is ended
   * once the response has ended, in case the service treats its end as a disconnect.
   */
  async close(): Promise<void> {
    this.#requests.end();
    if (!this.#finished) await this.#done;
  }

  /** Stops at once: cancels the call; {@link messages} ends after what was already received. */
  abort(): void {
    if (this.#finished) return;
    this.#end();
    this.#abort.abort();
  }

  async *#requestBody(markPulled: () => void): AsyncGenerator<BidiRequestEvent> {
    markPulled();
    for (;;) {
      const next = await this.#requests.next();
      if (next.done) return;
      yield next.value;
    }
  }

  async #pump(response: Promise<unknown>): Promise<void> {
    try {
      const output = (await response) as BidiInvokeOutput | undefined;
      const body: unknown = output?.Body;
      if (!isAsyncIterable<BidiResponseEvent>(body)) {
        throw new Error('the InvokeEndpointWithBidirectionalStream response has no Body event stream');
      }
      for await (const event of body) {
        if (this.#finished) return;
        const fault = faultFromEvent(event);
        if (fault) {
          this.#fail(new BidiStreamError(fault.code, fault.message));
          return;
        }
        if (event.PayloadPart) this.#onPart(event.PayloadPart);
        // Members added to the union later are ignored, as unknown control types are.
      }
    } catch (err) {
      if (this.#finished) return;
      const fault = faultFromException(err);
      this.#fail(
        fault
          ? new BidiStreamError(fault.code, fault.message, { cause: err })
          : new BidiStreamError('transport_error', `the SageMaker stream failed: ${errorText(err)}`, {
              cause: err,
            }),
      );
    } finally {
      // The request stream stays open until here: see close().
      this.#end();
      this.#ownedClient?.destroy?.();
    }
  }

  #onPart(part: BidiPayloadPart): void {
    this.#fragments.push(toBytes(part.Bytes));
    this.#fragmentType ??= part.DataType;
    if (part.CompletionState === 'PARTIAL') return;
    const payload = concatBytes(this.#fragments);
    const dataType = this.#fragmentType ?? 'BINARY';
    this.#fragments = [];
    this.#fragmentType = undefined;
    this.#received.push(new ReceivedMessage(payload, dataType));
  }

  #fail(failure: BidiStreamError): void {
    this.#failure = failure;
    this.#end();
    this.#abort.abort();
  }

  #end(): void {
    this.#finished = true;
    this.#received.end();
    this.#requests.end();
  }
}
