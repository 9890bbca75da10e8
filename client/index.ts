/**
 * What client authors import (`kokoro-stream-server/client`): the WebSocket session client, the
 * streaming sentence chunker for LLM output, the control-frame rule, and the SSE reader. Nothing
 * here loads server code (Fastify, onnxruntime-node, worker threads, the phonemizer) or the AWS SDK,
 * so it runs in browsers as well as in Node. The SageMaker transports are a subpath of their own,
 * `kokoro-stream-server/client/sagemaker`.
 */
export { IncrementalSentenceChunker, splitSentences, type ChunkerOptions } from '../model/text/sentences.ts';
export { decodeControlFrame, isControlFrame } from './frames.ts';
export {
  TtsSession,
  TtsRequestError,
  type AudioFormat,
  type SynthesisOptions,
  type TtsAudioEvent,
  type TtsClosedEvent,
  type TtsCompleteEvent,
  type TtsErrorEvent,
  type TtsEvent,
  type TtsResult,
  type TtsSessionOptions,
  type TtsStartEvent,
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
