/**
 * ElevenLabs' text-to-speech WebSockets, so that a client written for them — LiveKit's ElevenLabs
 * plugin above all — drives a Kokoro session unchanged:
 *
 * - `/v1/text-to-speech/{voice_id}/stream-input`: one stream of text. The first message
 *   (`{"text": " ", "voice_settings": …}`) sets it up, each `text` is added as written, `flush`
 *   speaks what is held even mid-sentence, and `{"text": ""}` ends it: the rest is spoken,
 *   `{"isFinal": true}` sent, and the socket closed.
 * - `/v1/text-to-speech/{voice_id}/multi-stream-input`: the same per `context_id`, several at once.
 *   `{"text": ""}` only keeps a context alive; `close_context` ends one, answered by
 *   `{"isFinal": true, "contextId"}` after its audio; `close_socket` ends them all and closes.
 *
 * Audio goes out as `{"audio": base64, "isFinal": null, "alignment", "normalizedAlignment"}`, in
 * pieces under 64 KB cut where words start (alignment.ts), each with the characters of
 * the words that start in it, timed from that message's first sample as ElevenLabs does (Pipecat
 * adds each message's end to the next), or from the context's first sample with
 * `sync_alignment=true` (LiveKit sends it, and adds nothing). Problems are
 * `{"message", "error", "code"}` (and `contextId`), and the socket serves on.
 */
import { audioCuts, type Engine, type WordTiming } from '../../../model/engine.ts';
import { ttsError } from '../../http/errors.ts';
import { audioPieces, shiftAlignment } from './alignment.ts';
import type { Command, SessionDialect } from '../dialect.ts';
import { MAX_CONTEXT_ID_BYTES, decodeText, parseJsonObject } from '../messages.ts';
import { ELEVENLABS_VOICES, elevenLabsOutput } from './voices.ts';
import { checkVendorModel, vendorLanguage, vendorSpeed, vendorVoice } from '../vendor-voices.ts';
import type { ErrorBody } from '../../../protocol/errors.ts';

const WS_PATH = /^\/?v1\/text-to-speech\/([^/?]+)\/(stream-input|multi-stream-input)$/;

/** `{voice_id, multi}` when `path` (a URL's or SageMaker's invocation path) is one of ElevenLabs' sockets. */
export function elevenLabsSocketPath(
  path: string | undefined,
): { voiceId: string; multi: boolean } | undefined {
  const match = path === undefined ? null : WS_PATH.exec(path.split('?')[0]!);
  if (!match) return undefined;
  let voiceId = match[1]!;
  try {
    voiceId = decodeURIComponent(voiceId);
  } catch {
    // Not valid percent-encoding: taken as written, and refused as an unknown voice.
  }
  return { voiceId, multi: match[2] === 'multi-stream-input' };
}

/**
 * Contexts whose state a session keeps at most: ids that never open (one context too many, say)
 * must not make it grow without bound. Far above `WS_MAX_CONTEXTS`; forgetting an old id's state
 * only means its next message counts as a first one (whose options are then ignored).
 */
const CONTEXTS_REMEMBERED = 1024;

function remember(set: Set<string>, key: string): void {
  set.delete(key);
  set.add(key);
  if (set.size > CONTEXTS_REMEMBERED) set.delete(set.values().next().value!);
}

const NO_CHARS = { chars: [], charStartTimesMs: [], charDurationsMs: [] };

/**
 * The most a character adds to an audio message: itself, a start (12 digits) and a duration (8),
 * each with its comma, in `alignment` and in `normalizedAlignment`.
 */
const wsCharBytes = (char: string) => 2 * (Buffer.byteLength(JSON.stringify(char)) + 1 + 12 + 8);

/** ElevenLabs' own default when the client names no `output_format`. */
export const ELEVENLABS_DEFAULT_FORMAT = 'mp3_44100_128';

/** `inactivity_timeout`: ElevenLabs' default and its maximum, in seconds. */
const INACTIVITY_DEFAULT_S = 20;
const INACTIVITY_MAX_S = 180;

/** The context a multi-stream message that names none goes to, as ElevenLabs has one. */
const DEFAULT_CONTEXT = 'default';

const invalid = (message: string, param?: string) =>
  ttsError('TTS_ERR_INVALID_OPTION', message, param === undefined ? {} : { data: { param } });

/** The error message ElevenLabs' clients read: `error` names it (LiveKit fails the context on it). */
export function elevenLabsError(body: ErrorBody, context?: string): object {
  return {
    message: body.message,
    error: body.code,
    code: body.code === 'internal_error' || body.code === 'inference_failed' ? 1011 : 1008,
    ...(context !== undefined ? { contextId: context } : {}),
  };
}

/** Options of the first message of a stream (or context), as our fields. */
function firstMessageFields(fields: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  const settings = fields.voice_settings;
  if (settings !== undefined && settings !== null) {
    if (typeof settings !== 'object' || Array.isArray(settings)) {
      throw invalid('voice_settings should be an object such as {"speed": 1.1}', 'voice_settings');
    }
    const speed = (settings as Record<string, unknown>).speed;
    if (speed !== undefined) out.speed = speed;
  }
  const config = fields.generation_config;
  if (config !== undefined && config !== null) {
    if (typeof config !== 'object' || Array.isArray(config)) {
      throw invalid(
        'generation_config should be an object such as {"chunk_length_schedule": [120, 160]}',
        'generation_config',
      );
    }
    const schedule = (config as Record<string, unknown>).chunk_length_schedule;
    if (schedule !== undefined) {
      if (!Array.isArray(schedule) || schedule.some((n) => typeof n !== 'number' || !(n > 0))) {
        throw invalid(
          'generation_config.chunk_length_schedule should be an array of positive numbers such as [120, 160, 250]',
          'generation_config',
        );
      }
      // A hint: a short first chunk asks for speech at the first clause; a long one, at the
      // first sentence end. Later sizes are ours (sentences).
      if (schedule.length > 0) out.first_chunk = schedule[0] < 100 ? 'clause' : 'sentence';
    }
  }
  return out;
}

/**
 * The dialect of one session opened on `path` with `query`.
 * @throws TtsError `voice_not_found` / `invalid_option` for a voice, format or timeout the server
 *   cannot serve (refused at connection time).
 */
export function elevenLabsDialect(
  voiceId: string,
  multi: boolean,
  query: URLSearchParams,
  engine: Engine,
): SessionDialect {
  const voice = vendorVoice(voiceId, ELEVENLABS_VOICES, engine);
  checkVendorModel(query.get('model_id'));
  const { format, sampleRate } = elevenLabsOutput(
    query.get('output_format') ?? undefined,
    ELEVENLABS_DEFAULT_FORMAT,
  );
  const timeoutText = query.get('inactivity_timeout');
  const inactivity = timeoutText === null ? INACTIVITY_DEFAULT_S : Number(timeoutText);
  if (!Number.isInteger(inactivity) || inactivity < 1 || inactivity > INACTIVITY_MAX_S) {
    throw invalid(
      `inactivity_timeout ${JSON.stringify(timeoutText)} should be a whole number of seconds from 1 to ${INACTIVITY_MAX_S}`,
      'inactivity_timeout',
    );
  }
  const ssml = query.get('enable_ssml_parsing')?.toLowerCase() === 'true';
  const normalization = query.get('apply_text_normalization');
  if (normalization !== null && !['auto', 'on', 'off'].includes(normalization)) {
    throw invalid(
      `apply_text_normalization should be auto, on or off; got ${JSON.stringify(normalization.slice(0, 20))}`,
    );
  }
  const lang = vendorLanguage(query.get('language_code') ?? undefined, 'language_code', voice, engine);
  const defaults = {
    voice,
    ...(lang !== undefined ? { lang } : {}),
    format,
    sample_rate: sampleRate,
    markup: ssml ? 'ssml' : 'none',
    ...(normalization === 'off' ? { normalization_options: { normalize: false } } : {}),
  };

  /**
   * `auto_mode=true`: every piece of text is whole (a sentence or phrase, Pipecat's and LiveKit's
   * default), spoken as it arrives instead of waiting for what follows it.
   */
  const autoMode = query.get('auto_mode')?.toLowerCase() === 'true';
  /** Contexts whose first message has been taken (its options count; later ones' do not). */
  const started = new Set<string>();
  /**
   * Contexts whose last words were followed by a flush that ends the turn: `close_context` finishes
   * them, and cuts any other. With auto_mode a flush carrying text only speaks that piece (LiveKit
   * flushes every sentence, then sends a flush of no text at the end of its input); without it,
   * any flush counts.
   */
  const turnEnded = new Set<string>();
  /** Each request's words, held until the audio they belong beside. */
  const pendingWords = new Map<string, WordTiming[]>();
  /**
   * `sync_alignment=true` (LiveKit's plugins send it): character times on the context's clock,
   * from its first sample, instead of from each message's audio (ElevenLabs' default, which
   * Pipecat reads).
   */
  const syncAlignment = query.get('sync_alignment')?.toLowerCase() === 'true';
  /** Where each context's next request starts on its clock, in ms (after one that ended early). */
  const contextOffsets = new Map<string, number>();

  const parse = (data: Buffer): Command | readonly Command[] => {
    const text = decodeText(data);
    if (!text.trimStart().startsWith('{')) {
      throw invalid('Send JSON messages such as {"text": "Hello "}');
    }
    const fields = parseJsonObject(text.trimStart());
    let context: string | undefined;
    if (multi) {
      const named = fields.context_id ?? fields.contextId;
      if (
        named !== undefined &&
        (typeof named !== 'string' || named === '' || Buffer.byteLength(named) > MAX_CONTEXT_ID_BYTES)
      ) {
        throw invalid(
          `context_id should be a non-empty string of at most ${MAX_CONTEXT_ID_BYTES} UTF-8 bytes`,
          'context_id',
        );
      }
      context = (named as string | undefined) ?? DEFAULT_CONTEXT;
    }
    try {
      return commandsOf(fields, context);
    } catch (error) {
      return { kind: 'refuse', error, ...(context !== undefined ? { context } : {}) };
    }
  };

  const commandsOf = (
    fields: Record<string, unknown>,
    context: string | undefined,
  ): Command | readonly Command[] => {
    const key = context ?? '';
    const inContext = context !== undefined ? { context } : {};
    if (multi && fields.close_socket === true) return { kind: 'close' };
    if (multi && fields.close_context === true) {
      const drop = !turnEnded.has(key);
      started.delete(key);
      turnEnded.delete(key);
      return { kind: 'close-context', context: context!, drop, tolerant: true };
    }
    const flush = fields.flush === true;
    const text = fields.text;
    // A flush may come without text (ElevenLabs' FlushContext; Pipecat ends each turn so).
    if ((text === undefined || text === null) && flush) {
      if (multi) remember(turnEnded, key);
      return started.has(key)
        ? { kind: 'append', fields: { text: '' }, ...inContext, generate: true }
        : { kind: 'keep-alive', ...inContext };
    }
    if (typeof text !== 'string') {
      throw invalid(
        `Each message carries its text as a string ({"text": "Hello "}), or ${multi ? '"flush", "close_context" or "close_socket"' : '"flush" or "" to end the stream'}`,
        'text',
      );
    }
    if (text === '') {
      // stream-input: the end of the text. multi-stream-input: a keep-alive (and a flush, if asked).
      if (!multi) return [{ kind: 'flush', fields: {} }, { kind: 'close' }];
      if (!flush) return { kind: 'keep-alive', ...inContext };
      remember(turnEnded, key);
      return started.has(key)
        ? { kind: 'append', fields: { text: '' }, ...inContext, generate: true }
        : { kind: 'keep-alive', ...inContext };
    }
    const first = !started.has(key);
    // Read before anything is noted, so a refused first message leaves the stream unopened.
    const read = first ? firstMessageFields(fields) : {};
    const options = read.speed === undefined ? read : { ...read, speed: vendorSpeed(read.speed, engine) };
    remember(started, key);
    const blank = text.trim() === '';
    if (flush && (blank || !autoMode)) remember(turnEnded, key);
    else if (!blank) turnEnded.delete(key);
    return {
      kind: 'append',
      fields: { ...options, text },
      ...inContext,
      generate: flush || autoMode,
      repeatsOptions: true,
    };
  };

  const withContext = (context: string | undefined) =>
    multi && context !== undefined ? { contextId: context } : {};

  /** What one audio message takes besides its audio's base64 and its characters. */
  const envelope = (context: string | undefined) =>
    Buffer.byteLength(
      JSON.stringify({
        audio: '',
        isFinal: null,
        normalizedAlignment: NO_CHARS,
        alignment: NO_CHARS,
        ...withContext(context),
      }),
    );
  /**
   * One request's audio: where it stands on its context's clock (sync_alignment), where it ends,
   * and whether its words are timed (some came).
   */
  const clocks = new Map<string, { offsetMs: number; endMs: number; timed: boolean }>();
  const contextKey = (context: string | undefined) => context ?? '';

  return {
    parse,
    contexts: multi,
    alwaysWords: true,
    opening: () => [],
    start: () => undefined,
    audio: ({ requestId, context }, bytes, span) => {
      const words = pendingWords.get(requestId) ?? [];
      pendingWords.delete(requestId);
      let clock = clocks.get(requestId);
      if (!clock) {
        clock = { offsetMs: contextOffsets.get(contextKey(context)) ?? 0, endMs: 0, timed: false };
        clocks.set(requestId, clock);
      }
      clock.timed ||= words.length > 0;
      const pieces = audioPieces(bytes, span, words, {
        cuts: audioCuts(format, bytes),
        envelopeBytes: envelope(context),
        charBytes: wsCharBytes,
        timed: clock.timed,
      });
      return pieces.map((piece) => {
        clock.endMs = piece.endMs;
        // Times relative to each message's audio, as ElevenLabs sends them; with sync_alignment,
        // on the context's clock.
        const alignment =
          piece.alignment.chars.length === 0
            ? null
            : shiftAlignment(piece.alignment, syncAlignment ? clock.offsetMs : -piece.startMs);
        return {
          data: JSON.stringify({
            audio: Buffer.from(piece.bytes.buffer, piece.bytes.byteOffset, piece.bytes.length).toString(
              'base64',
            ),
            isFinal: null,
            normalizedAlignment: alignment,
            alignment,
            ...withContext(context),
          }),
          binary: false,
        };
      });
    },
    words: ({ requestId }, words) => {
      const held = pendingWords.get(requestId);
      if (held) held.push(...words);
      else pendingWords.set(requestId, [...words]);
      return undefined;
    },
    // stream-input's one utterance ends with the stream; a context's with close_context.
    complete: () => (multi ? undefined : { isFinal: true }),
    ended: ({ requestId, context }) => {
      pendingWords.delete(requestId);
      const clock = clocks.get(requestId);
      clocks.delete(requestId);
      // A context's next request (after one that failed) goes on from where this one's audio ended.
      if (clock && clock.endMs > 0) contextOffsets.set(contextKey(context), clock.offsetMs + clock.endMs);
    },
    mark: () => undefined,
    cancelled: () => undefined,
    contextClosed: (context, _cancelled, heard) => {
      contextOffsets.delete(context);
      return { isFinal: true, contextId: context, ...(heard ? { heard } : {}) };
    },
    error: (body, context) => elevenLabsError(body, context),
    defaults,
    idleTimeoutS: inactivity,
  };
}
