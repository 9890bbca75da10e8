/**
 * Cartesia's text-to-speech WebSocket (`/tts/websocket`), so that a client written for it —
 * LiveKit's Cartesia plugin, Pipecat's, Cartesia's own SDK — drives a Kokoro session unchanged.
 *
 * Each generation request names its `context_id`; `"continue": true` means more text follows for
 * that context (its transcripts are joined as written, with a space between sentences sent
 * without one), and a request without it is the last: what the context received is spoken and
 * `done` follows its audio. `max_buffer_delay_ms` says how long text that ends no sentence waits
 * for more (0: each piece is spoken as it arrives); `flush` speaks what is held and answers
 * `flush_done` after its audio. Every request repeats the context's options; the first one's
 * count. `{"context_id", "cancel": true}` cuts a context, and is answered (an addition) by a `done`
 * that carries `heard`. Audio is `chunk` messages (base64, at most {@link CARTESIA_CHUNK_BYTES}
 * each), words `timestamps` messages (with `add_timestamps`), sounds `phoneme_timestamps` messages
 * (with `add_phoneme_timestamps`), problems `error` messages that name their context; the socket
 * serves on. A model that cannot time sends the audio without them.
 */
import { randomUUID } from 'node:crypto';
import type { Engine, PhonemeTiming } from '../../../model/engine.ts';
import { statusOfCode, type ErrorBody } from '../../../protocol/errors.ts';
import { ttsError } from '../../http/errors.ts';
import type { Command, SessionDialect } from '../dialect.ts';
import { contextIdOf, decodeText, parseJsonObject } from '../messages.ts';
import { CARTESIA_VOICES, cartesiaOutput, pcm16ToFloat32 } from './voices.ts';
import { checkVendorModel, vendorLanguage, vendorSpeed, vendorVoice } from '../vendor-voices.ts';

export const CARTESIA_WS_PATH = '/tts/websocket';

/**
 * Bytes of audio in one `chunk` message (WebSocket and SSE), as Cartesia sends them: 16384, as
 * its Python SDK's maintainers logged them (cartesia-ai/cartesia-python#39). Base64 in JSON makes
 * that about 22 KB, however long the sentence: Python's websockets closes on a message over 1 MiB.
 */
export const CARTESIA_CHUNK_BYTES = 16_384;

/** Cartesia's `max_buffer_delay_ms`: its default and its range (docs: TTS WebSocket, buffering). */
const BUFFER_DELAY_DEFAULT_MS = 3000;
const BUFFER_DELAY_MAX_MS = 5000;

/** Contexts with a refused turn remembered per session (the oldest is forgotten first). */
const REFUSED_KEPT = 4096;

/** The mark a `flush` puts in a context's audio; it answers `flush_done` when reached. */
const FLUSH_MARK = 'flush';

/** The invocation path a SageMaker client names for this protocol. */
export function isCartesiaSocketPath(path: string | undefined): boolean {
  return path !== undefined && path.replace(/^\/+/, '').split('?')[0] === CARTESIA_WS_PATH.slice(1);
}

const invalid = (message: string, param: string) =>
  ttsError('TTS_ERR_INVALID_OPTION', message, { data: { param } });

/** Cartesia's error message: `error` for LiveKit's plugin, `title` and `message` for Cartesia's SDK. */
export function cartesiaError(body: ErrorBody, status: number, context?: string): object {
  return {
    type: 'error',
    done: true,
    status_code: status,
    error: body.message,
    title: body.code.replaceAll('_', ' '),
    message: body.message,
    error_code: body.code,
    ...(body.request_id !== undefined ? { request_id: body.request_id } : {}),
    ...(context !== undefined ? { context_id: context } : {}),
  };
}

/** Cartesia's `voice`: an id as a string, or `{"mode": "id", "id"}`. */
export function cartesiaVoiceId(voice: unknown): string {
  if (typeof voice === 'string' && voice !== '') return voice;
  if (voice !== null && typeof voice === 'object' && !Array.isArray(voice)) {
    const { mode, id } = voice as Record<string, unknown>;
    if ((mode === undefined || mode === 'id') && typeof id === 'string' && id !== '') return id;
    if (mode === 'embedding') {
      throw invalid(
        'voice embeddings are not supported here: Kokoro speaks its own voices; name one by its id, as {"mode": "id", "id": "af_heart"} (a Kokoro voice or a mapped Cartesia id)',
        'voice',
      );
    }
  }
  throw invalid('voice should be a voice id, as "af_heart" or {"mode": "id", "id": "af_heart"}', 'voice');
}

/** Cartesia's speeds: a number (generation_config.speed, 0.6 to 1.5) or slow / normal / fast. */
export function cartesiaSpeed(fields: Record<string, unknown>): number | undefined {
  const config = fields.generation_config;
  const fromConfig =
    config !== null && typeof config === 'object' ? (config as Record<string, unknown>).speed : undefined;
  const speed = fromConfig ?? fields.speed;
  if (speed === undefined) return undefined;
  if (typeof speed === 'number') return speed;
  const named = { slow: 0.8, normal: 1, fast: 1.2 } as Record<string, number>;
  if (typeof speed === 'string' && Object.hasOwn(named, speed)) return named[speed];
  throw invalid('speed should be a number (0.6 to 1.5) or slow, normal or fast', 'speed');
}

/**
 * Cartesia's `max_buffer_delay_ms`: how long text that ends no sentence waits for more before it
 * is spoken (0: each piece is spoken as it arrives); Cartesia's default when absent.
 */
function cartesiaBufferDelay(value: unknown): number {
  if (value === undefined || value === null) return BUFFER_DELAY_DEFAULT_MS;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 0 || value > BUFFER_DELAY_MAX_MS) {
    throw invalid(
      `max_buffer_delay_ms should be a whole number of milliseconds from 0 to ${BUFFER_DELAY_MAX_MS} (0: each transcript is spoken as it arrives; default ${BUFFER_DELAY_DEFAULT_MS})`,
      'max_buffer_delay_ms',
    );
  }
  return value;
}

/** Our fields for a Cartesia generation request's options. */
function optionsOf(fields: Record<string, unknown>, engine: Engine): Record<string, unknown> {
  const voice = vendorVoice(cartesiaVoiceId(fields.voice), CARTESIA_VOICES, engine);
  checkVendorModel(fields.model_id);
  const { format, sampleRate } = cartesiaOutput(fields.output_format, ['raw']);
  const speed = vendorSpeed(cartesiaSpeed(fields), engine);
  const languageParam = fields.language !== undefined ? 'language' : 'locale';
  const lang = vendorLanguage(fields[languageParam], languageParam, voice, engine);
  return {
    voice,
    ...(lang !== undefined ? { lang } : {}),
    format,
    sample_rate: sampleRate,
    markup: 'none',
    ...(speed !== undefined ? { speed } : {}),
    ...(fields.add_timestamps === true ? { timestamps: true } : {}),
    ...(fields.add_phoneme_timestamps === true ? { phoneme_timestamps: true } : {}),
  };
}

/** Cartesia's `phoneme_timestamps`: the sounds and their start and end, in seconds. */
export function cartesiaPhonemes(phonemes: readonly PhonemeTiming[]): {
  phonemes: string[];
  start: number[];
  end: number[];
} {
  return {
    phonemes: phonemes.map((p) => p.phoneme),
    start: phonemes.map((p) => p.start_s),
    end: phonemes.map((p) => p.end_s),
  };
}

/** The dialect of one `/tts/websocket` session. */
export function cartesiaDialect(engine: Engine): SessionDialect {
  /** When each request's last chunk left, for `step_time`. */
  const lastChunk = new Map<string, number>();
  /** Each request's flushes answered so far: its chunks carry `flush_id` one more. */
  const flushes = new Map<string, number>();
  /** Contexts whose turn had a message refused, until its last message. */
  const refused = new Set<string>();
  let count = 0;

  const parse = (data: Buffer): Command | readonly Command[] => {
    const text = decodeText(data);
    if (!text.trimStart().startsWith('{')) {
      throw invalid(
        'Send JSON generation requests such as {"transcript": "Hello", "context_id": "a", …}',
        'transcript',
      );
    }
    const fields = parseJsonObject(text.trimStart());
    const context = fields.context_id === undefined ? randomUUID() : (contextIdOf(fields, true) as string);
    // Without a context_id nothing can continue the request: it is complete as it is.
    const last = fields.continue !== true || fields.context_id === undefined;
    try {
      if (fields.cancel === true) {
        refused.delete(context);
        return { kind: 'close-context', context, drop: true };
      }
      const transcript = fields.transcript;
      if (typeof transcript !== 'string') {
        throw invalid('A generation request carries its text as a string: "transcript"', 'transcript');
      }
      if (fields.continue !== undefined && typeof fields.continue !== 'boolean') {
        throw invalid('continue should be true or false', 'continue');
      }
      const options = optionsOf(fields, engine);
      const holdMs = cartesiaBufferDelay(fields.max_buffer_delay_ms);
      // Each message gets an id; the one that opens the turn names it (a continuation's options,
      // its id among them, are ignored). The id says how the audio goes out: `f…` as 32-bit
      // floats, `c…` as it is.
      const float = (fields.output_format as Record<string, unknown>).encoding === 'pcm_f32le';
      const requestId = `${float ? 'f' : 'c'}${++count}`;
      const append: Command = {
        kind: 'append',
        fields: { ...options, request_id: requestId, text: transcript },
        context,
        repeatsOptions: true,
        // Pipecat sends its sentences with nothing between them ("there." then "How").
        spaceSentences: true,
        holdMs,
        ...(holdMs === 0 ? { generate: true } : {}),
        ...(fields.flush === true ? { mark: FLUSH_MARK } : {}),
      };
      if (!last) return append;
      refused.delete(context);
      return [append, { kind: 'flush', fields: {}, context }];
    } catch (error) {
      // A turn's messages repeat its options, so a refused one is refused again with each: it is
      // answered once, and the rest of the turn is taken in silence. A client that reads its
      // socket for the next turn (LiveKit's pool) would take a late error as that turn's.
      if (refused.has(context)) {
        if (last) refused.delete(context);
        return { kind: 'keep-alive', context };
      }
      if (!last) {
        refused.add(context);
        if (refused.size > REFUSED_KEPT) refused.delete(refused.values().next().value!);
      }
      return { kind: 'refuse', error, context };
    }
  };

  const done = (context: string | undefined, extra: object = {}) => ({
    type: 'done',
    done: true,
    status_code: 200,
    ...(context !== undefined ? { context_id: context } : {}),
    ...extra,
  });

  return {
    parse,
    contexts: true,
    releaseIdleContexts: true,
    opening: () => [],
    start: () => undefined,
    audio: ({ requestId, context }, bytes) => {
      const now = performance.now();
      const stepMs = now - (lastChunk.get(requestId) ?? now);
      lastChunk.set(requestId, now);
      const out = requestId.startsWith('f') ? pcm16ToFloat32(bytes) : bytes;
      return {
        data: JSON.stringify({
          type: 'chunk',
          data: Buffer.from(out.buffer, out.byteOffset, out.length).toString('base64'),
          done: false,
          status_code: 206,
          step_time: Math.round(stepMs * 10) / 10,
          flush_id: (flushes.get(requestId) ?? 0) + 1,
          context_id: context,
        }),
        binary: false,
      };
    },
    // 32-bit floats are twice the bytes of the PCM16 they are made from.
    maxAudioBytes: ({ requestId }) =>
      requestId.startsWith('f') ? CARTESIA_CHUNK_BYTES / 2 : CARTESIA_CHUNK_BYTES,
    words: ({ context }, words) => ({
      type: 'timestamps',
      done: false,
      status_code: 206,
      context_id: context,
      word_timestamps: {
        words: words.map((w) => w.word),
        start: words.map((w) => w.start_s),
        end: words.map((w) => w.end_s),
      },
    }),
    phonemes: ({ context }, phonemes) => ({
      type: 'phoneme_timestamps',
      done: false,
      status_code: 206,
      context_id: context,
      phoneme_timestamps: cartesiaPhonemes(phonemes),
    }),
    complete: ({ context }) => done(context),
    ended: ({ requestId }) => {
      lastChunk.delete(requestId);
      flushes.delete(requestId);
    },
    // Marks come only from `flush` (the text is read without markup): each answers `flush_done`.
    mark: ({ requestId, context }, name) => {
      if (name !== FLUSH_MARK) return undefined;
      const flushId = (flushes.get(requestId) ?? 0) + 1;
      flushes.set(requestId, flushId);
      return {
        type: 'flush_done',
        done: false,
        flush_done: true,
        flush_id: flushId,
        status_code: 206,
        context_id: context,
      };
    },
    cancelled: () => undefined,
    // A cancel's answer (Cartesia sends none; clients that stopped reading the context skip it).
    contextClosed: (context, _cancelled, heard) =>
      done(context, { cancelled: true, ...(heard ? { heard } : {}) }),
    error: (body, context) => cartesiaError(body, statusOfCode(body.code), context),
    defaults: {},
  };
}
