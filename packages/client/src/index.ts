/**
 * What client authors import (`kokoro-stream-client`): the WebSocket session client, the
 * streaming sentence chunker for LLM output, the streaming POST, the wire contract (request options,
 * control frames and the rule that tells them from audio, formats, error codes), the split of a
 * contexts-mode audio frame, the SSE reader and the queue they share.
 * Nothing here loads server code (Fastify, onnxruntime-node, worker threads, espeak-ng), the AWS SDK
 * or a Node built-in, so it runs in browsers as well as in Node. The SageMaker transports are a
 * subpath of their own, `kokoro-stream-client/sagemaker`.
 */
export {
  IncrementalSentenceChunker,
  splitSentences,
  type ChunkerOptions,
} from '../../../model/text/sentences.ts';
export {
  CLOSE_MESSAGE,
  ERROR_CODES,
  FORMATS,
  decodeControlFrame,
  isControlFrame,
  type AudioFormat,
  type ContextClosedFrame,
  type ControlFrame,
  type ErrorBody,
  type ErrorCode,
  type ErrorFrame,
  type Heard,
  type SynthesisCancelledFrame,
  type SynthesisCompleteFrame,
  type SynthesisOptions,
  type SynthesisStartFrame,
  type TimedWord,
  type WordTimestampsFrame,
} from '../../../protocol/index.ts';
export type {
  TtsAudioEvent,
  TtsCancelledEvent,
  TtsClosedEvent,
  TtsCompleteEvent,
  TtsErrorEvent,
  TtsEvent,
  TtsHeard,
  TtsPhoneme,
  TtsPhonemesEvent,
  TtsStartEvent,
  TtsWord,
  TtsWordsEvent,
  TtsMarkEvent,
} from './events.ts';
export {
  TtsSession,
  TtsRequestError,
  type TtsResult,
  type TtsSessionOptions,
  type WebSocketConstructor,
  type WebSocketLike,
} from './session.ts';
export { splitContextFrame, type ContextAudio } from './contexts.ts';
export { postSpeech, type PostSpeechInit } from './post.ts';
export { AsyncQueue } from './async-queue.ts';
export {
  SseParser,
  readSse,
  decodeAudioEvent,
  base64ToBytes,
  type AudioStreamEvent,
  type SseEvent,
} from './sse.ts';
