/**
 * One request through `InvokeEndpointWithResponseStream` (the container's `POST /invocations`), as
 * raw audio bytes or as decoded SSE events.
 */
import { requestMessage, type SynthesisOptions } from '../../../protocol/request.ts';
import { SseParser, decodeAudioEvent, type AudioStreamEvent } from './sse.ts';
import {
  encoder,
  errorText,
  faultFromEvent,
  faultFromException,
  toBytes,
  type BidiResponseEvent,
} from './sagemaker-stream.ts';

/** The npm package that provides `InvokeEndpointWithResponseStream` (an optional peer dependency). */
export const RUNTIME_SDK_PACKAGE = '@aws-sdk/client-sagemaker-runtime';

/** What {@link invokeStreaming} needs of a `SageMakerRuntimeClient`. */
export interface ResponseStreamClient {
  send(
    command: object,
    options?: { abortSignal?: AbortSignal },
  ): Promise<{ readonly Body?: AsyncIterable<unknown> }>;
  destroy(): void;
}

interface RuntimeSdk {
  readonly SageMakerRuntimeClient: new (config: { region?: string }) => ResponseStreamClient;
  readonly InvokeEndpointWithResponseStreamCommand: new (input: {
    EndpointName: string;
    Body: Uint8Array;
    ContentType: string;
    Accept?: string;
    TargetVariant?: string;
  }) => object;
}

/** Loads the optional runtime SDK package, with an error that says how to get it. */
async function loadRuntimeSdk(): Promise<RuntimeSdk> {
  const specifier: string = RUNTIME_SDK_PACKAGE;
  try {
    return (await import(/* @vite-ignore */ specifier)) as RuntimeSdk;
  } catch (err) {
    throw new Error(
      `invokeStreaming needs the ${RUNTIME_SDK_PACKAGE} package, which could not be loaded (${errorText(err)}). ` +
        `Install it with \`npm install ${RUNTIME_SDK_PACKAGE}\`.`,
      { cause: err },
    );
  }
}

/** Options of {@link invokeStreaming}. */
export interface InvokeStreamingOptions {
  readonly endpointName: string;
  readonly text: string;
  readonly options?: SynthesisOptions;
  /** `binary`: raw audio bytes as they arrive; `sse`: this server's SSE events, decoded. */
  readonly transport: 'binary' | 'sse';
  /** A `SageMakerRuntimeClient`; created (with `region`) when absent. */
  readonly client?: ResponseStreamClient;
  readonly region?: string;
  readonly targetVariant?: string;
  readonly abortSignal?: AbortSignal;
}

/**
 * One request through `InvokeEndpointWithResponseStream`. With `transport: 'binary'` it yields the
 * audio bytes in the requested format (`wav` with a streaming header by default); with `'sse'` it
 * yields the decoded events (`audio_stream_start`, `audio_chunk` with bytes, `audio_stream_end`, and
 * `error` for a failure after the stream began), however SageMaker splits them into parts.
 *
 * @throws Error on a `ModelStreamError` or `InternalStreamFailure`, and in SSE mode when the stream
 *   ends with neither `audio_stream_end` nor an `error` event.
 */
export function invokeStreaming(
  options: InvokeStreamingOptions & { transport: 'binary' },
): AsyncGenerator<Uint8Array, void, undefined>;
export function invokeStreaming(
  options: InvokeStreamingOptions & { transport: 'sse' },
): AsyncGenerator<AudioStreamEvent, void, undefined>;
export function invokeStreaming(
  options: InvokeStreamingOptions,
): AsyncGenerator<Uint8Array | AudioStreamEvent, void, undefined>;
export async function* invokeStreaming(
  options: InvokeStreamingOptions,
): AsyncGenerator<Uint8Array | AudioStreamEvent, void, undefined> {
  const sse = options.transport === 'sse';
  const message = requestMessage(
    options.text,
    { ...options.options, ...(sse ? { transport: 'sse' as const } : {}) },
    globalThis.crypto.randomUUID(),
  );
  const sdk = await loadRuntimeSdk();
  const client =
    options.client ??
    new sdk.SageMakerRuntimeClient(options.region !== undefined ? { region: options.region } : {});
  const where = `SageMaker endpoint ${options.endpointName}`;

  try {
    const output = await client.send(
      new sdk.InvokeEndpointWithResponseStreamCommand({
        EndpointName: options.endpointName,
        Body: encoder.encode(JSON.stringify(message)),
        ContentType: 'application/json',
        ...(sse ? { Accept: 'text/event-stream' } : {}),
        ...(options.targetVariant !== undefined ? { TargetVariant: options.targetVariant } : {}),
      }),
      options.abortSignal ? { abortSignal: options.abortSignal } : {},
    );
    if (!output.Body) throw new Error(`${where}: the response has no Body event stream`);

    const parser = new SseParser();
    let ended = false;
    try {
      for await (const event of output.Body as AsyncIterable<BidiResponseEvent>) {
        const fault = faultFromEvent(event);
        if (fault) throw new Error(`${where}: ${fault.message}`);
        const bytes = toBytes(event.PayloadPart?.Bytes);
        if (bytes.length === 0) continue;
        if (!sse) {
          yield bytes;
          continue;
        }
        for (const sseEvent of parser.push(bytes)) {
          const decoded = decodeAudioEvent(sseEvent);
          if (decoded.type === 'audio_stream_end' || decoded.type === 'error') ended = true;
          yield decoded;
        }
      }
    } catch (err) {
      const fault = faultFromException(err);
      throw fault ? new Error(`${where}: ${fault.message}`, { cause: err }) : err;
    }
    if (sse) {
      for (const sseEvent of parser.end()) {
        const decoded = decodeAudioEvent(sseEvent);
        if (decoded.type === 'audio_stream_end' || decoded.type === 'error') ended = true;
        yield decoded;
      }
      if (!ended)
        throw new Error(`${where}: the SSE stream ended without audio_stream_end; the audio is incomplete`);
    }
  } finally {
    if (!options.client) client.destroy();
  }
}
