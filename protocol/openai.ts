/**
 * The OpenAI-compatible API as a wire contract: `POST /v1/audio/speech` (OpenAI's request fields,
 * models, voice names and response formats), its Server-Sent Events, its error body, and the two
 * listings `GET /v1/models` and `GET /v1/audio/voices`. docs/protocol.md ("OpenAI-compatible API")
 * is its prose.
 */
import type { AudioFormat } from './formats.ts';
import { sseEvent } from './sse.ts';

/** Model ids the speech route accepts; all of them run the one Kokoro model that is loaded. */
export const OPENAI_MODELS = ['kokoro', 'tts-1', 'tts-1-hd', 'gpt-4o-mini-tts'] as const;
export type OpenAiModel = (typeof OPENAI_MODELS)[number];

/** OpenAI's dated snapshots of its models (`gpt-4o-mini-tts-2025-12-15`) name the same model. */
const DATED = /^(.+)-\d{4}-\d{2}-\d{2}$/;

/** The listed model an id names, or undefined for an id that is not ours. */
export function openAiModel(id: string): OpenAiModel | undefined {
  const base = DATED.exec(id)?.[1] ?? id;
  return (OPENAI_MODELS as readonly string[]).includes(base) ? (base as OpenAiModel) : undefined;
}

/**
 * OpenAI's voice names and the Kokoro v1.0 voice each one speaks with. Five have a Kokoro
 * namesake; the others go to a Kokoro voice of the same gender and register, and marin and cedar
 * (OpenAI's recommended pair) to Kokoro's best-graded female and a clear male voice.
 */
export const OPENAI_VOICES = {
  alloy: 'af_alloy',
  ash: 'am_michael',
  ballad: 'bm_george',
  coral: 'af_bella',
  echo: 'am_echo',
  fable: 'bm_fable',
  nova: 'af_nova',
  onyx: 'am_onyx',
  sage: 'af_sarah',
  shimmer: 'af_nicole',
  verse: 'am_puck',
  marin: 'af_heart',
  cedar: 'am_fenrir',
} as const;
export type OpenAiVoice = keyof typeof OPENAI_VOICES;

/** The Kokoro voice spec for a request's voice: OpenAI names map, anything else is a Kokoro spec. */
export function kokoroVoiceFor(voice: string): string {
  return Object.hasOwn(OPENAI_VOICES, voice) ? OPENAI_VOICES[voice as OpenAiVoice] : voice;
}

/** OpenAI's response formats, all of which this server encodes. */
export const OPENAI_FORMATS = [
  'mp3',
  'opus',
  'aac',
  'flac',
  'wav',
  'pcm',
] as const satisfies readonly AudioFormat[];
export type OpenAiFormat = (typeof OPENAI_FORMATS)[number];

/** OpenAI's speed range; values inside it are clamped to what Kokoro takes (protocol/request.ts). */
export const OPENAI_SPEED_MIN = 0.25;
export const OPENAI_SPEED_MAX = 4.0;

export const OPENAI_STREAM_FORMATS = ['audio', 'sse'] as const;
export type OpenAiStreamFormat = (typeof OPENAI_STREAM_FORMATS)[number];

/** The body of `POST /v1/audio/speech`. */
export interface SpeechRequest {
  readonly model: string;
  readonly input: string;
  /** An OpenAI voice name, a Kokoro voice id or blend, or `{ "id": … }` naming either. The server's default voice when absent. */
  readonly voice?: string | { readonly id: string };
  /** `mp3` when absent, as OpenAI. */
  readonly response_format?: OpenAiFormat;
  /** 0.25 to 4.0; clamped to 0.5 to 2.0. */
  readonly speed?: number;
  /** `audio` (chunked audio, the default) or `sse`. */
  readonly stream_format?: OpenAiStreamFormat;
  /** Accepted and ignored: Kokoro takes no style instructions. */
  readonly instructions?: string;
  /** Not OpenAI's: the language to read the input in, as `lang` of the native routes (Kokoro-FastAPI's name). */
  readonly lang_code?: string;
}

/**
 * Audio as `output_tokens` counts it: Kokoro's duration frames, 600 samples at 24 kHz, 40 a second
 * (Kokoro has no audio tokens; its durations are counted in these).
 */
export const AUDIO_TOKENS_PER_SECOND = 40;

/** What `speech.audio.done` reports: input characters, and audio in Kokoro's 40 Hz duration frames. */
export interface SpeechUsage {
  readonly input_tokens: number;
  readonly output_tokens: number;
  readonly total_tokens: number;
}

/** OpenAI's error body. */
export interface OpenAiErrorBody {
  readonly error: {
    readonly message: string;
    /** `server_error` for 5xx answers, `invalid_request_error` for the rest. */
    readonly type: 'invalid_request_error' | 'server_error';
    readonly param: string | null;
    readonly code: string | null;
  };
}

export interface SpeechSseData {
  readonly 'speech.audio.delta': { readonly type: 'speech.audio.delta'; readonly audio: string };
  readonly 'speech.audio.done': { readonly type: 'speech.audio.done'; readonly usage: SpeechUsage };
  /** A failure after the stream began (OpenAI's shape, with `type: "error"`). */
  readonly error: { readonly type: 'error' } & OpenAiErrorBody;
}

/**
 * One speech event on the wire: `event: NAME` and a `data:` line of JSON whose `type` repeats the
 * name, so that clients reading either find it.
 */
export function formatSpeechEvent<N extends keyof SpeechSseData>(name: N, data: SpeechSseData[N]): string {
  return sseEvent(name, data);
}

/** One voice of `GET /v1/audio/voices`. */
export interface VoiceEntry {
  /** The Kokoro id to send as `voice`. */
  readonly id: string;
  readonly object: 'voice';
  /** A display name (`Heart`). */
  readonly name: string;
  /** BCP 47 tag of the language it speaks (`en-US`). */
  readonly language: string;
  readonly gender: 'female' | 'male';
  /** False while the server cannot phonemize the voice's language: requests with it are refused. */
  readonly supported: boolean;
  /** The OpenAI names that map to this voice. */
  readonly aliases: readonly string[];
}

export interface VoiceListing {
  readonly object: 'list';
  readonly data: readonly VoiceEntry[];
  /** The same ids, for clients of Kokoro-FastAPI's listing. */
  readonly voices: readonly string[];
  readonly default_voice: string;
  readonly openai_voices: Readonly<Record<OpenAiVoice, string>>;
  readonly blends: { readonly syntax: string; readonly examples: readonly string[]; readonly rules: string };
}

export interface ModelEntry {
  readonly id: string;
  readonly object: 'model';
  /** Epoch seconds. */
  readonly created: number;
  readonly owned_by: string;
}
