/**
 * The bounds on what one request, session or connection may make the server spend, and on how
 * much work it takes in at once.
 */
import { int } from './setting-kinds.ts';

const KIB = 1024;
const MIB = 1024 * KIB;

/** What one request, session or connection may hold or ask for. */
export const LIMITS = [
  int({
    name: 'MAX_TEXT_CHARS',
    key: 'maxTextChars',
    min: 1,
    max: 1_000_000,
    default: 4096,
    description:
      'text limit per message, in code points; it holds after pronunciations and `sub`/alias readings are applied too (an utterance may speak this many more than it was sent), `text_too_long` past it',
  }),
  int({
    name: 'MAX_AUDIO_S',
    key: 'maxAudioS',
    min: 1,
    max: 86_400,
    default: 600,
    description:
      'seconds of audio one request or streamed utterance may make, pauses, aliases and rate changes included; a request whose pauses alone pass it is refused before any audio, and a run that reaches it ends with `audio_too_long`',
  }),
  int({
    name: 'MAX_COMPLETE_REPLY_BYTES',
    key: 'maxCompleteReplyBytes',
    min: MIB,
    max: 1024 * MIB,
    default: 32 * MIB,
    description:
      'bytes a `stream: false` reply (one whole file, held until complete) may reach; past it the request ends with `audio_too_long` (ask for a stream instead)',
  }),
  int({
    name: 'MAX_REQUEST_AGE_S',
    key: 'maxRequestAgeS',
    min: 1,
    max: 86_400,
    default: 56,
    description: 'requests older than this (by `request_timestamp`) are refused',
  }),
  int({
    name: 'MAX_BODY_BYTES',
    key: 'maxBodyBytes',
    min: KIB,
    max: 64 * MIB,
    default: MIB,
    description: 'POST body limit',
  }),
  int({
    name: 'WS_MAX_MESSAGE_BYTES',
    key: 'wsMaxMessageBytes',
    min: MIB,
    max: 64 * MIB,
    default: 4 * MIB,
    description: 'WebSocket messages above this close the session with 1009; smaller ones get an answer',
  }),
  int({
    name: 'WS_MAX_PENDING',
    key: 'wsMaxPending',
    min: 1,
    max: 10_000,
    default: 64,
    description: 'messages a session may have waiting; more get `busy`',
  }),
  int({
    name: 'WS_MAX_PENDING_BYTES',
    key: 'wsMaxPendingBytes',
    min: MIB,
    max: 1024 * MIB,
    default: 8 * MIB,
    description: 'bytes of messages a session may have waiting, which bounds its memory; more get `busy`',
  }),
  int({
    name: 'WS_MAX_CONTEXTS',
    key: 'wsMaxContexts',
    min: 1,
    max: 256,
    default: 5,
    description:
      "contexts a session may have open at once (`contexts=true`, ElevenLabs multi-stream, Cartesia); one more gets `too_many_contexts` (5: ElevenLabs' own limit)",
  }),
  int({
    name: 'WS_IDLE_TIMEOUT_S',
    key: 'wsIdleTimeoutS',
    min: 0,
    max: 86_400,
    default: 300,
    description:
      'a session with no message and no ping for this long is closed with 1000 and the reason `idle` (never while it synthesizes); `0` keeps idle sessions open',
  }),
  int({
    name: 'UTTERANCE_MAX_BUFFER_BYTES',
    key: 'utteranceMaxBufferBytes',
    min: KIB,
    max: 64 * MIB,
    default: 64 * KIB,
    description:
      "streamed text input: bytes of an open utterance's text received but not yet synthesized; an `append` past it gets `text_too_long` and is not added, and the utterance stays open",
  }),
  int({
    name: 'UTTERANCE_IDLE_FLUSH_S',
    key: 'utteranceIdleFlushS',
    min: 0,
    max: 3600,
    default: 5,
    description:
      'streamed text input: after this long without an `append`, the unfinished tail of the utterance is spoken (the utterance stays open until `flush`); `0`: never',
  }),
  int({
    name: 'HTTP_MAX_PIPELINED',
    key: 'httpMaxPipelined',
    min: 1,
    max: 1000,
    default: 16,
    description:
      'requests one HTTP connection may have unanswered at once; a client pipelining past that without reading is disconnected',
  }),
  int({
    name: 'HTTP_STALL_TIMEOUT_S',
    key: 'httpStallTimeoutS',
    min: 1,
    max: 3600,
    default: 60,
    description:
      'an HTTP connection on which no byte moves either way for this long (a client that stopped reading) is closed',
  }),
] as const;

/** How much work the server takes in at once: past these, `busy` at once rather than a wait. */
export const CAPACITY = [
  int({
    name: 'MAX_QUEUED_JOBS',
    key: 'maxQueuedJobs',
    min: 1,
    max: 100_000,
    default: 256,
    description: 'sentences waiting for a worker across all sessions; more get `busy`',
  }),
  int({
    name: 'MAX_SESSIONS',
    key: 'maxSessions',
    min: 1,
    max: 100_000,
    default: 256,
    description: 'open WebSocket sessions at once; more are closed with 1013, try again later',
  }),
  int({
    name: 'MAX_HTTP_STREAMS',
    key: 'maxHttpStreams',
    min: 1,
    max: 100_000,
    default: 256,
    description:
      "streaming POSTs (`/invocations` and `/v1/audio/speech`) in flight at once, set from the autoscaling plan's Q_max (see [Autoscaling](deploy.md#autoscaling)); more are refused at once with 503 `busy` and `Retry-After: 1`",
  }),
  int({
    name: 'PHONEMIZE_MAX_QUEUED',
    key: 'phonemizeMaxQueued',
    min: 1,
    max: 100_000,
    default: 32,
    description:
      '`POST /v1/phonemize` requests in flight at once, all clients together (each holds at most one sentence-sized piece in the inference queue, below every next-needed sentence); more are refused at once with 503 `busy` and `Retry-After: 1`',
  }),
  int({
    name: 'PHONEMIZE_MAX_PER_CLIENT',
    key: 'phonemizeMaxPerClient',
    min: 1,
    max: 100_000,
    default: 4,
    description:
      '`POST /v1/phonemize` requests in flight at once from one remote address (behind a proxy, every client shares its address); more are refused at once with 429 `too_many_requests` and `Retry-After: 1`',
  }),
] as const;
