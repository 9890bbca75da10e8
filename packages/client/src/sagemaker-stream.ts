/**
 * The wire shapes of SageMaker's streaming APIs (typed here, structurally: the SDK packages are
 * optional) and what both SageMaker transports share: payload bytes, and stream faults.
 */

/** The npm package that provides the SageMaker Runtime HTTP/2 client. */
export const HTTP2_SDK_PACKAGE = '@aws-sdk/client-sagemaker-runtime-http2';

/** One piece of a message in either direction. */
export interface BidiPayloadPart {
  readonly Bytes?: Uint8Array | string;
  /** `BINARY` when absent. */
  readonly DataType?: 'BINARY' | 'UTF8' | (string & {});
  /** `COMPLETE` when absent; `PARTIAL` parts are joined with the following ones up to a `COMPLETE`. */
  readonly CompletionState?: 'PARTIAL' | 'COMPLETE' | (string & {});
}

/** An event of the request stream. */
export interface BidiRequestEvent {
  readonly PayloadPart: BidiPayloadPart;
}

/** An event of the response stream: exactly one member is set. */
export interface BidiResponseEvent {
  readonly PayloadPart?: BidiPayloadPart;
  readonly ModelStreamError?: { readonly Message?: string; readonly ErrorCode?: string };
  readonly InternalStreamFailure?: { readonly Message?: string };
}

/** Input of `InvokeEndpointWithBidirectionalStreamCommand`. */
export interface BidiInvokeInput {
  readonly EndpointName: string;
  readonly TargetVariant?: string;
  readonly ModelInvocationPath?: string;
  readonly ModelQueryString?: string;
  readonly Body: AsyncIterable<BidiRequestEvent>;
}

/** Output of `InvokeEndpointWithBidirectionalStreamCommand` (only what is read here). */
export interface BidiInvokeOutput {
  readonly Body?: AsyncIterable<BidiResponseEvent>;
  readonly InvokedProductionVariant?: string;
}

/**
 * What the session needs from a SageMaker Runtime HTTP/2 client: `SageMakerRuntimeHTTP2Client`, or a
 * fake in tests. The result is checked at run time, so any SDK version's typing fits.
 */
export interface BidiStreamClient {
  send(command: object, options?: { abortSignal?: AbortSignal }): Promise<unknown>;
  destroy?(): void;
}

/** Builds the command object that {@link BidiStreamClient.send} accepts from the input. */
export type BidiCommandFactory = (input: BidiInvokeInput) => object;

// ---------------------------------------------------------------------------------------------
// Shared pieces
// ---------------------------------------------------------------------------------------------

// Typed by shape: inferred, the declarations would name Node's util.TextEncoder, which browsers lack.
export const encoder: { encode(text: string): Uint8Array } = new TextEncoder();

export function toBytes(value: Uint8Array | string | undefined): Uint8Array {
  if (value === undefined) return new Uint8Array(0);
  return typeof value === 'string' ? encoder.encode(value) : value;
}

export function errorText(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

export function isAsyncIterable<T>(value: unknown): value is AsyncIterable<T> {
  return (
    typeof value === 'object' &&
    value !== null &&
    typeof (value as { [Symbol.asyncIterator]?: unknown })[Symbol.asyncIterator] === 'function'
  );
}

/** A stream error reported by SageMaker, as a member of the response stream or as a thrown exception. */
export interface StreamFault {
  readonly code: 'model_stream_error' | 'internal_stream_failure';
  readonly message: string;
}

export function faultFromEvent(event: BidiResponseEvent): StreamFault | undefined {
  if (event.ModelStreamError) {
    const { ErrorCode, Message } = event.ModelStreamError;
    return {
      code: 'model_stream_error',
      message: `SageMaker ModelStreamError${ErrorCode ? ` (${ErrorCode})` : ''}: ${Message ?? 'no message'}`,
    };
  }
  if (event.InternalStreamFailure) {
    return {
      code: 'internal_stream_failure',
      message: `SageMaker InternalStreamFailure: ${event.InternalStreamFailure.Message ?? 'no message'}`,
    };
  }
  return undefined;
}

/** The SDK throws error events of an event stream as exceptions named after the member. */
export function faultFromException(err: unknown): StreamFault | undefined {
  if (!(err instanceof Error)) return undefined;
  const fields = err as Error & { ErrorCode?: string; Message?: string };
  if (err.name === 'ModelStreamError') {
    return faultFromEvent({
      ModelStreamError: { ErrorCode: fields.ErrorCode, Message: fields.Message ?? err.message },
    });
  }
  if (err.name === 'InternalStreamFailure') {
    return faultFromEvent({ InternalStreamFailure: { Message: fields.Message ?? err.message } });
  }
  return undefined;
}
