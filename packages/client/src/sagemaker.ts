/**
 * Clients for this server behind an Amazon SageMaker real-time endpoint.
 *
 * - {@link SageMakerTtsSession}: many requests over one `InvokeEndpointWithBidirectionalStream` call
 *   (the SageMaker Runtime HTTP/2 service), the same shape as a WebSocket session with the container.
 * - {@link SageMakerBidiChannel}: the same call as a raw channel of frames, for any protocol the
 *   container speaks on the route that `modelInvocationPath` names (Deepgram's, ElevenLabs',
 *   Cartesia's); the session runs on it.
 * - {@link invokeStreaming}: one request over `InvokeEndpointWithResponseStream` (the container's
 *   `POST /invocations`), as raw audio bytes or as decoded SSE events.
 *
 * Neither AWS SDK package is a dependency: `@aws-sdk/client-sagemaker-runtime` (response streams) is an
 * optional peer dependency and `@aws-sdk/client-sagemaker-runtime-http2` (bidirectional streams) is
 * installed by the user. Each is loaded at run time, only when no client is passed in, so this module
 * imports and typechecks without either. The request and response shapes are typed structurally (sagemaker-stream.ts).
 */
export {
  HTTP2_SDK_PACKAGE,
  type BidiCommandFactory,
  type BidiInvokeInput,
  type BidiInvokeOutput,
  type BidiPayloadPart,
  type BidiRequestEvent,
  type BidiResponseEvent,
  type BidiStreamClient,
} from './sagemaker-stream.ts';
export {
  BidiStreamError,
  SageMakerBidiChannel,
  type BidiMessage,
  type SageMakerBidiOptions,
} from './sagemaker-channel.ts';
export { SageMakerTtsSession, type SageMakerSessionOptions } from './sagemaker-session.ts';
export { TtsRequestError, type TtsResult } from './session-core.ts';
export {
  RUNTIME_SDK_PACKAGE,
  invokeStreaming,
  type InvokeStreamingOptions,
  type ResponseStreamClient,
} from './sagemaker-invoke.ts';
