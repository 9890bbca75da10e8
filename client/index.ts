/**
 * What client authors import (`kokoro-stream-server/client`): the WebSocket session client, the
 * streaming sentence chunker for LLM output, the wire contract (request options, control frames and
 * the rule that tells them from audio, formats, error codes), and the SSE reader. Nothing here loads
 * server code (Fastify, onnxruntime-node, worker threads, espeak-ng) or the AWS SDK, so it runs
 * in browsers as well as in Node. The SageMaker transports are a subpath of their own,
 * `kokoro-stream-server/client/sagemaker`.
 */
export { IncrementalSentenceChunker, splitSentences, type ChunkerOptions } from '../model/text/sentences.ts';
export {
  CLOSE_MESSAGE,
  ERROR_CODES,
  FORMATS,
  decodeControlFrame,
  isControlFrame,
  type AudioFormat,
  type ControlFrame,
  type ErrorBody,
  type ErrorCode,
  type ErrorFrame,
  type SynthesisCancelledFrame,
  type SynthesisCompleteFrame,
  type SynthesisOptions,
  type SynthesisStartFrame,
  type WordTimestampsFrame,
} from '../protocol/index.ts';
export type {
  TtsAudioEvent,
  TtsCancelledEvent,
  TtsClosedEvent,
  TtsCompleteEvent,
  TtsErrorEvent,
  TtsEvent,
  TtsStartEvent,
  TtsWord,
  TtsWordsEvent,
} from './events.ts';
export {
  TtsSession,
  TtsRequestError,
  type TtsResult,
  type TtsSessionOptions,
  type WebSocketConstructor,
  type WebSocketLike,
} from './session.ts';
export {
  SseParser,
  readSse,
  decodeAudioEvent,
  base64ToBytes,
  type AudioStreamEvent,
  type SseEvent,
} from './sse.ts';
