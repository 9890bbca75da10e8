/**
 * The pure parts of the voice-agent dialects: the project's own protocol with contexts
 * (session-messages.ts), ElevenLabs' stream-input and multi-stream-input sockets (elevenlabs.ts,
 * elevenlabs-alignment.ts), Cartesia's /tts/websocket (cartesia.ts), and the vendors' voices and
 * formats (vendor-voices.ts): what each message becomes, what each event is sent as, and the
 * error (code, message, param) of every input refused.
 */
import { describe, expect, it } from 'vitest';
import type { WordTiming } from '../../dist/model/engine.js';
import type { RunFigures } from '../../dist/model/synthesis/run.js';
import type { ErrorBody } from '../../dist/protocol/errors.js';
import { FORMATS } from '../../dist/protocol/formats.js';
import type { Heard } from '../../dist/protocol/frames.js';
import {
  CARTESIA_WS_PATH,
  cartesiaDialect,
  cartesiaSpeed,
  cartesiaVoiceId,
  isCartesiaSocketPath,
} from '../../dist/server/dialects/cartesia/socket.js';
import type { CharAlignment } from '../../dist/server/dialects/elevenlabs/alignment.js';
import {
  ELEVENLABS_DEFAULT_FORMAT,
  elevenLabsDialect,
  elevenLabsSocketPath,
} from '../../dist/server/dialects/elevenlabs/socket.js';
import { TtsError } from '../../dist/server/http/errors.js';
import type { Command, OutgoingFrame } from '../../dist/server/dialects/dialect.js';
import { MAX_CONTEXT_ID_BYTES, contextIdOf } from '../../dist/server/dialects/messages.js';
import {
  contextAudioFrame,
  nativeDialect,
  parseMessage,
} from '../../dist/server/dialects/native/messages.js';
import { startsSentenceAfterOne } from '../../dist/server/session/utterance.js';
import {
  CARTESIA_VOICES,
  cartesiaOutput,
  pcm16ToFloat32,
} from '../../dist/server/dialects/cartesia/voices.js';
import { ELEVENLABS_VOICES, elevenLabsOutput } from '../../dist/server/dialects/elevenlabs/voices.js';
import { vendorSpeed, vendorVoice, type VendorOutput } from '../../dist/server/dialects/vendor-voices.js';
import { fakeEngine } from '../app/fake-engine.ts';

/** The real voice catalog (the stand-in's and kokoro-js's voices): only `voices.resolve` is used. */
const engine = fakeEngine();

const bytes = (text: string) => Buffer.from(text);
const json = (value: unknown) => Buffer.from(JSON.stringify(value));

/** What `run` throws (the test fails when it throws nothing). */
function thrown(run: () => unknown): unknown {
  try {
    run();
  } catch (err) {
    return err;
  }
  throw new Error('nothing was thrown');
}

/** `err` is our error with this code, a message that names the problem, and this `param`. */
function expectError(err: unknown, code: string, message: RegExp, param: string | undefined): void {
  expect(err).toBeInstanceOf(TtsError);
  const known = err as TtsError;
  expect(known.code).toBe(code);
  expect(known.message).toMatch(message);
  expect(known.data.param).toBe(param);
}

/** The refusal command a dialect's parse answered with: its error and its context. */
function refusal(result: Command | readonly Command[]): { error: unknown; context?: string } {
  expect(result).toMatchObject({ kind: 'refuse' });
  return result as { error: unknown; context?: string };
}

/** Where a piece of audio lies on its request's clock, for dialects that do not read it. */
const SPAN = { startS: 0, endS: 0 };

/** The one frame a dialect made of a piece of audio. */
function oneFrame(frames: OutgoingFrame | readonly OutgoingFrame[]): OutgoingFrame {
  const list: readonly OutgoingFrame[] = Array.isArray(frames) ? frames : [frames as OutgoingFrame];
  expect(list).toHaveLength(1);
  return list[0]!;
}

/** A frame's JSON text as an object. */
function sentJson(frame: { data: Uint8Array | string; binary: boolean }): Record<string, unknown> {
  expect(frame.binary).toBe(false);
  return JSON.parse(frame.data as string) as Record<string, unknown>;
}

/** Little-endian PCM16 bytes of these samples. */
function pcm16(samples: readonly number[]): Uint8Array {
  const view = new DataView(new ArrayBuffer(samples.length * 2));
  samples.forEach((s, i) => view.setInt16(i * 2, s, true));
  return new Uint8Array(view.buffer);
}

/** The samples of little-endian float32 bytes. */
function floats(data: Uint8Array): number[] {
  const view = new DataView(data.buffer, data.byteOffset, data.length);
  return Array.from({ length: data.length / 4 }, (_, i) => view.getFloat32(i * 4, true));
}

const body = (code: ErrorBody['code'], message = `${code} happened`, requestId?: string): ErrorBody => ({
  type: 'error',
  code,
  message,
  ...(requestId !== undefined ? { request_id: requestId } : {}),
});

const HEARD: Heard = {
  request_id: 'r1',
  samples: 2400,
  sample_rate: 24000,
  ms: 100,
  words: [{ word: 'Hello', start_s: 0, end_s: 0.1 }],
};

const FIGURES: RunFigures = {
  audioS: 1.5,
  elapsedMs: 900,
  ttfaMs: 120,
  inferenceMs: 600,
  rtf: 0.6,
  chunks: 3,
  firstInferenceMs: 80,
  firstFrontEndMs: 20,
  firstQueueMs: 5,
};

/** A context id of exactly `n` UTF-8 bytes, made of two-byte characters (and one `a` if odd). */
const idOfBytes = (n: number) => 'é'.repeat(n >> 1) + (n % 2 ? 'a' : '');

describe('parseMessage with contexts', () => {
  const commands = new Map<string, Command>([
    [
      '{"text":"Hi.","context_id":"a"}',
      { kind: 'request', fields: { text: 'Hi.', context_id: 'a' }, context: 'a' },
    ],
    [
      '{"type":"synthesize","text":"Hi.","context_id":"a"}',
      { kind: 'request', fields: { type: 'synthesize', text: 'Hi.', context_id: 'a' }, context: 'a' },
    ],
    [
      '{"type":"append","text":"Hel","context_id":"b"}',
      { kind: 'append', fields: { type: 'append', text: 'Hel', context_id: 'b' }, context: 'b' },
    ],
    [
      '{"type":"flush","context_id":"b"}',
      { kind: 'flush', fields: { type: 'flush', context_id: 'b' }, context: 'b' },
    ],
    ['{"type":"cancel"}', { kind: 'cancel', requestId: undefined }],
    ['{"type":"cancel","context_id":"a"}', { kind: 'cancel', requestId: undefined, context: 'a' }],
    [
      '{"type":"clear","context_id":"a","request_id":"r1"}',
      { kind: 'cancel', requestId: 'r1', context: 'a' },
    ],
    ['{"type":"close_context","context_id":"a"}', { kind: 'close-context', context: 'a', drop: false }],
    [
      '{"type":"Close_Context","context_id":"a","drop":true}',
      { kind: 'close-context', context: 'a', drop: true },
    ],
    [
      '{"type":"close_context","context_id":"a","drop":false}',
      { kind: 'close-context', context: 'a', drop: false },
    ],
    ['{"type":"keep_alive"}', { kind: 'keep-alive' }],
    ['{"type":"KEEP_ALIVE","context_id":"a"}', { kind: 'keep-alive', context: 'a' }],
    ['{"type":"close"}', { kind: 'close' }],
    [
      JSON.stringify({ text: 'x', context_id: idOfBytes(MAX_CONTEXT_ID_BYTES) }),
      {
        kind: 'request',
        fields: { text: 'x', context_id: idOfBytes(MAX_CONTEXT_ID_BYTES) },
        context: idOfBytes(MAX_CONTEXT_ID_BYTES),
      },
    ],
  ]);
  it.each([...commands])('%s', (message, command) => {
    expect(parseMessage(bytes(message), true)).toStrictEqual(command);
  });

  const missing = /This session has contexts: name the context of every message with "context_id"/;
  const unusable = /context_id should be a non-empty string of at most 255 UTF-8 bytes; got /;
  const refusals: [string, string, RegExp, string | undefined][] = [
    ['Hello there.', 'invalid_option', /send JSON messages that name their context/, 'context_id'],
    ['  plain', 'invalid_option', /send JSON messages that name their context/, 'context_id'],
    ['{"text":"Hi."}', 'invalid_option', missing, 'context_id'],
    ['{"type":"synthesize","text":"Hi."}', 'invalid_option', missing, 'context_id'],
    ['{"type":"append","text":"Hel"}', 'invalid_option', missing, 'context_id'],
    ['{"type":"flush"}', 'invalid_option', missing, 'context_id'],
    ['{"type":"close_context"}', 'invalid_option', missing, 'context_id'],
    ['{"text":"x","context_id":""}', 'invalid_option', /got ""$/, 'context_id'],
    ['{"text":"x","context_id":5}', 'invalid_option', /got 5$/, 'context_id'],
    ['{"text":"x","context_id":null}', 'invalid_option', /got null$/, 'context_id'],
    ['{"type":"append","text":"x","context_id":["a"]}', 'invalid_option', /got an array$/, 'context_id'],
    ['{"type":"cancel","context_id":""}', 'invalid_option', unusable, 'context_id'],
    ['{"type":"keep_alive","context_id":{}}', 'invalid_option', /got an object$/, 'context_id'],
    [
      JSON.stringify({ text: 'x', context_id: idOfBytes(MAX_CONTEXT_ID_BYTES + 1) }),
      'invalid_option',
      unusable,
      'context_id',
    ],
    [
      JSON.stringify({ type: 'close_context', context_id: 'x'.repeat(300) }),
      'invalid_option',
      /got "x{40}…"$/,
      'context_id',
    ],
    [
      '{"type":"close_context","context_id":"a","drop":"yes"}',
      'invalid_option',
      /drop on close_context should be true or false/,
      'drop',
    ],
    [
      '{"type":"close_context","context_id":"a","drop":1}',
      'invalid_option',
      /drop on close_context should be true or false/,
      'drop',
    ],
    [
      '{"type":"close_context","drop":null}',
      'invalid_option',
      /drop on close_context should be true or false/,
      'drop',
    ],
    [
      '{"type":"nope","context_id":"a"}',
      'unknown_type',
      /^Unknown message type "nope"; .*"close_context" to end a context, "keep_alive", or "close"/,
      undefined,
    ],
  ];
  it.each(refusals)('refuses %s', (message, code, text, param) => {
    expectError(
      thrown(() => parseMessage(bytes(message), true)),
      code,
      text,
      param,
    );
  });

  it('tags a refused context id with the request id of its message', () => {
    const err = thrown(() => parseMessage(bytes('{"text":"x","request_id":"r9"}'), true));
    expectError(err, 'invalid_option', missing, 'context_id');
    expect((err as TtsError).requestId).toBe('r9');
  });

  it('counts the id in UTF-8 bytes, not characters', () => {
    const id = '€'.repeat(86); // 86 characters, 258 bytes
    expect(id.length).toBeLessThan(MAX_CONTEXT_ID_BYTES);
    expectError(
      thrown(() => parseMessage(json({ text: 'x', context_id: id }), true)),
      'invalid_option',
      unusable,
      'context_id',
    );
  });
});

describe('parseMessage without contexts', () => {
  const unknown: [string, string][] = [
    ['{"type":"close_context","context_id":"a"}', '"close_context"'],
    ['{"type":"close_context","context_id":"a","drop":true}', '"close_context"'],
    ['{"type":"keep_alive"}', '"keep_alive"'],
  ];
  it.each(unknown)('%s is an unknown type', (message, type) => {
    const err = thrown(() => parseMessage(bytes(message)));
    expectError(err, 'unknown_type', new RegExp(`^Unknown message type ${type}; `), undefined);
    expect((err as TtsError).message).not.toContain('to end a context');
  });

  it('keeps context_id as a field, names no context, and takes plain text', () => {
    expect(parseMessage(bytes('{"text":"Hi.","context_id":"a"}'))).toStrictEqual({
      kind: 'request',
      fields: { text: 'Hi.', context_id: 'a' },
    });
    expect(parseMessage(bytes('{"type":"cancel","context_id":"a"}'))).toStrictEqual({
      kind: 'cancel',
      requestId: undefined,
    });
    expect(parseMessage(bytes('Hi.'))).toStrictEqual({ kind: 'request', fields: { text: 'Hi.' } });
  });
});

describe('contextIdOf', () => {
  it('reads a context id, required or not', () => {
    expect(contextIdOf({ context_id: 'a' }, true)).toBe('a');
    expect(contextIdOf({ context_id: 'a' }, false)).toBe('a');
    expect(contextIdOf({}, false)).toBeUndefined();
    expect(contextIdOf({ context_id: idOfBytes(255) }, true)).toBe(idOfBytes(255));
  });

  const refusals: [Record<string, unknown>, boolean, RegExp][] = [
    [{}, true, /^This session has contexts: name the context of every message with "context_id"$/],
    [{ context_id: '' }, true, /non-empty string of at most 255 UTF-8 bytes; got ""$/],
    [{ context_id: null }, false, /non-empty string of at most 255 UTF-8 bytes; got null$/],
    [{ context_id: 3 }, false, /got 3$/],
    [{ context_id: true }, true, /got true$/],
    [{ context_id: {} }, true, /got an object$/],
    [{ context_id: ['a'] }, false, /got an array$/],
    [{ context_id: idOfBytes(256) }, true, /non-empty string of at most 255 UTF-8 bytes; got "é{40}…"$/],
  ];
  it.each(refusals)('refuses %j (required: %s)', (fields, required, message) => {
    expectError(
      thrown(() => contextIdOf(fields, required)),
      'invalid_option',
      message,
      'context_id',
    );
  });

  it('tags its refusal with the message request id', () => {
    const err = thrown(() => contextIdOf({ request_id: 'r1', context_id: 7 }, true));
    expectError(err, 'invalid_option', /got 7$/, 'context_id');
    expect((err as TtsError).requestId).toBe('r1');
  });
});

describe('contextAudioFrame', () => {
  it('is one byte of length, the id in UTF-8, then the audio', () => {
    expect([...contextAudioFrame('ab', new Uint8Array([1, 2, 3]))]).toEqual([2, 0x61, 0x62, 1, 2, 3]);
    expect([...contextAudioFrame('é', new Uint8Array([9]))]).toEqual([2, 0xc3, 0xa9, 9]);
    expect([...contextAudioFrame('a', new Uint8Array(0))]).toEqual([1, 0x61]);
  });

  it('holds the longest id, and reads the audio of a view from its offset', () => {
    const id = idOfBytes(MAX_CONTEXT_ID_BYTES);
    const audio = new Uint8Array([0xff, 4, 5, 0xff]).subarray(1, 3);
    const frame = contextAudioFrame(id, audio);
    expect(frame.length).toBe(1 + 255 + 2);
    expect(frame[0]).toBe(255);
    expect(Buffer.from(frame.subarray(1, 256)).toString('utf8')).toBe(id);
    expect([...frame.subarray(256)]).toEqual([4, 5]);
  });
});

describe('nativeDialect with contexts', () => {
  const dialect = nativeDialect({ contexts: true });
  const turn = { requestId: 'r1', context: 'a' };
  const words: WordTiming[] = [{ word: 'Hi', start_s: 0, end_s: 0.2 }];

  it('parses with contexts and opens with nothing', () => {
    expect(dialect.contexts).toBe(true);
    expect(dialect.parse(bytes('{"type":"keep_alive","context_id":"a"}'))).toStrictEqual({
      kind: 'keep-alive',
      context: 'a',
    });
    expectError(
      thrown(() => dialect.parse(bytes('{"text":"Hi."}'))),
      'invalid_option',
      /name the context of every message/,
      'context_id',
    );
    expect(dialect.opening('s1')).toEqual([]);
    expect(dialect.defaults).toEqual({});
  });

  it('puts context_id on every control frame', () => {
    expect(dialect.start(turn)).toStrictEqual({ type: 'synthesis_start', request_id: 'r1', context_id: 'a' });
    expect(dialect.complete(turn, FIGURES, ['<foo> dropped'])).toStrictEqual({
      type: 'synthesis_complete',
      request_id: 'r1',
      total_duration_s: 1.5,
      elapsed_s: 0.9,
      time_to_first_audio_s: 0.12,
      inference_s: 0.6,
      first_chunk_inference_s: 0.08,
      first_chunk_frontend_s: 0.02,
      chunks: 3,
      warnings: ['<foo> dropped'],
      context_id: 'a',
    });
    expect(dialect.complete(turn, undefined)).toStrictEqual({
      type: 'synthesis_complete',
      request_id: 'r1',
      total_duration_s: 0,
      elapsed_s: 0,
      time_to_first_audio_s: 0,
      inference_s: 0,
      first_chunk_inference_s: 0,
      first_chunk_frontend_s: 0,
      chunks: 0,
      context_id: 'a',
    });
    expect(dialect.words(turn, words)).toStrictEqual({
      type: 'word_timestamps',
      request_id: 'r1',
      words,
      context_id: 'a',
    });
    expect(dialect.mark(turn, 'm1', 0.25)).toStrictEqual({
      type: 'mark',
      request_id: 'r1',
      name: 'm1',
      time_s: 0.25,
      context_id: 'a',
    });
    expect(dialect.cancelled('r1', ['r1', 'r2'], HEARD, 'a')).toStrictEqual({
      type: 'synthesis_cancelled',
      request_id: 'r1',
      cancelled: ['r1', 'r2'],
      heard: HEARD,
      context_id: 'a',
    });
    expect(dialect.error(body('invalid_option'), 'a')).toStrictEqual({
      ...body('invalid_option'),
      context_id: 'a',
    });
  });

  it('leaves context_id off a cancel and an error that name no context', () => {
    expect(dialect.cancelled(undefined, [], undefined, undefined)).toStrictEqual({
      type: 'synthesis_cancelled',
      cancelled: [],
    });
    expect(dialect.error(body('busy'))).toStrictEqual(body('busy'));
  });

  it('says a context closed, with what a drop cut', () => {
    expect(dialect.contextClosed('a', undefined, undefined)).toStrictEqual({
      type: 'context_closed',
      context_id: 'a',
    });
    expect(dialect.contextClosed('a', ['r1'], HEARD)).toStrictEqual({
      type: 'context_closed',
      context_id: 'a',
      cancelled: ['r1'],
      heard: HEARD,
    });
    expect(dialect.contextClosed('a', [], undefined)).toStrictEqual({
      type: 'context_closed',
      context_id: 'a',
      cancelled: [],
    });
  });

  it('prefixes audio frames with their context id', () => {
    const audio = new Uint8Array([10, 20, 30]);
    const frame = oneFrame(dialect.audio({ requestId: 'r1', context: 'ctx' }, audio, SPAN));
    expect(frame.binary).toBe(true);
    expect([...(frame.data as Uint8Array)]).toEqual([3, 0x63, 0x74, 0x78, 10, 20, 30]);
  });
});

describe('nativeDialect without contexts', () => {
  const dialect = nativeDialect();
  const turn = { requestId: 'r1' };

  it('sends audio as it is and frames without context_id', () => {
    expect(dialect.contexts).toBe(false);
    const audio = new Uint8Array([1, 2, 3]);
    const frame = oneFrame(dialect.audio(turn, audio, SPAN));
    expect(frame).toStrictEqual({ data: audio, binary: true });
    expect(frame.data).toBe(audio);
    expect(dialect.start(turn)).toStrictEqual({ type: 'synthesis_start', request_id: 'r1' });
    expect(dialect.mark(turn, 'm', 1)).toStrictEqual({
      type: 'mark',
      request_id: 'r1',
      name: 'm',
      time_s: 1,
    });
    expect(dialect.complete(turn, FIGURES)).not.toHaveProperty('context_id');
    expect(dialect.complete(turn, FIGURES)).not.toHaveProperty('warnings');
    expect(dialect.words(turn, [])).toStrictEqual({ type: 'word_timestamps', request_id: 'r1', words: [] });
    expect(dialect.cancelled('r1', ['r1'], undefined)).toStrictEqual({
      type: 'synthesis_cancelled',
      request_id: 'r1',
      cancelled: ['r1'],
    });
    expect(dialect.error(body('busy'))).toStrictEqual(body('busy'));
  });

  it('parses without contexts', () => {
    expect(dialect.parse(bytes('Hello.'))).toStrictEqual({ kind: 'request', fields: { text: 'Hello.' } });
    expectError(
      thrown(() => dialect.parse(bytes('{"type":"keep_alive"}'))),
      'unknown_type',
      /^Unknown message type "keep_alive"/,
      undefined,
    );
  });
});

describe('elevenLabsSocketPath', () => {
  const paths = new Map<string, { voiceId: string; multi: boolean }>([
    [
      '/v1/text-to-speech/21m00Tcm4TlvDq8ikWAM/stream-input',
      { voiceId: '21m00Tcm4TlvDq8ikWAM', multi: false },
    ],
    [
      'v1/text-to-speech/21m00Tcm4TlvDq8ikWAM/stream-input',
      { voiceId: '21m00Tcm4TlvDq8ikWAM', multi: false },
    ],
    ['/v1/text-to-speech/abc/multi-stream-input', { voiceId: 'abc', multi: true }],
    ['v1/text-to-speech/abc/multi-stream-input', { voiceId: 'abc', multi: true }],
    [
      '/v1/text-to-speech/abc/stream-input?output_format=pcm_16000&inactivity_timeout=60',
      { voiceId: 'abc', multi: false },
    ],
    ['/v1/text-to-speech/abc/multi-stream-input?model_id=eleven_flash_v2_5', { voiceId: 'abc', multi: true }],
    ['/v1/text-to-speech/af_bella%2Baf_sky/stream-input', { voiceId: 'af_bella+af_sky', multi: false }],
    [
      '/v1/text-to-speech/af_bella%282%29%2Baf_sky/stream-input',
      { voiceId: 'af_bella(2)+af_sky', multi: false },
    ],
    ['/v1/text-to-speech/a%20b/multi-stream-input', { voiceId: 'a b', multi: true }],
    // Broken percent-encoding is taken as written (and refused later as an unknown voice).
    ['/v1/text-to-speech/%E0%A4%A/stream-input', { voiceId: '%E0%A4%A', multi: false }],
  ]);
  it.each([...paths])('%s', (path, expected) => {
    expect(elevenLabsSocketPath(path)).toStrictEqual(expected);
  });

  const others = [
    undefined,
    '',
    '/',
    '/v1/text-to-speech/abc/stream',
    '/v1/text-to-speech/abc',
    '/v1/text-to-speech//stream-input',
    '/v1/text-to-speech/abc/stream-input/',
    '/v1/text-to-speech/a/b/stream-input',
    '/x/v1/text-to-speech/abc/stream-input',
    '/v2/text-to-speech/abc/stream-input',
    '/v1/text-to-speech/abc/Stream-Input',
    '/tts/websocket',
    '/v1/listen',
  ];
  it.each(others)('%s is not an ElevenLabs socket', (path) => {
    expect(elevenLabsSocketPath(path)).toBeUndefined();
  });
});

describe('elevenLabsDialect: connection', () => {
  const open = (query = '', voice = '21m00Tcm4TlvDq8ikWAM', multi = false) =>
    elevenLabsDialect(voice, multi, new URLSearchParams(query), engine);

  it.each(Object.entries(ELEVENLABS_VOICES))('maps ElevenLabs voice %s to %s', (id, kokoro) => {
    expect(open('', id).defaults.voice).toBe(kokoro);
  });

  it.each(['af_sky', 'bf_emma', 'af_bella+af_sky', 'af_bella(2)+af_sky(1)'])(
    'takes Kokoro voice %s as it is',
    (id) => {
      expect(open('', id).defaults.voice).toBe(id);
    },
  );

  it.each(['nope', 'rachel', '21M00TCM4TLVDQ8IKWAM', 'f786b574-daa5-4673-aa0c-cbe3e8534c02', 'toString', ''])(
    'refuses voice %j',
    (id) => {
      expectError(
        thrown(() => open('', id)),
        'voice_not_found',
        new RegExp(`^Unknown voice ${JSON.stringify(id)}: name a Kokoro voice .*docs/protocol\\.md`),
        'voice',
      );
    },
  );

  const formats = new Map<string | undefined, { format: string; sample_rate: number }>([
    [undefined, { format: 'mp3', sample_rate: 44100 }],
    ['pcm_16000', { format: 'pcm', sample_rate: 16000 }],
    ['pcm_24000', { format: 'pcm', sample_rate: 24000 }],
    ['pcm_44100', { format: 'pcm', sample_rate: 44100 }],
    ['pcm_32000', { format: 'pcm', sample_rate: 32000 }],
    ['ulaw_8000', { format: 'mulaw', sample_rate: 8000 }],
    ['mp3_44100_128', { format: 'mp3', sample_rate: 44100 }],
    ['mp3_22050_32', { format: 'mp3', sample_rate: 22050 }],
    ['opus_48000_64', { format: 'opus', sample_rate: 48000 }],
  ]);
  it.each([...formats])('output_format %s', (value, expected) => {
    const query = value === undefined ? '' : `output_format=${value}`;
    expect(open(query).defaults).toMatchObject(expected);
  });

  it('defaults to ElevenLabs own default format', () => {
    expect(ELEVENLABS_DEFAULT_FORMAT).toBe('mp3_44100_128');
  });

  const badFormats: [string, RegExp][] = [
    ['flac_44100', /^output_format "flac_44100" is not supported; use pcm_<rate>/],
    ['garbage', /^output_format "garbage" is not supported; use pcm_<rate>/],
    ['pcm', /^output_format "pcm" is not supported/],
    ['', /^output_format "" is not supported/],
    [
      'pcm_12000',
      /^output_format pcm_12000: sample rate 12000 is not offered for it; use one of 8000, 16000, 22050, 24000, 32000, 44100, 48000$/,
    ],
    ['ulaw_16000', /^output_format ulaw_16000: sample rate 16000 is not offered for it; use one of 8000$/],
    [
      'opus_44100_64',
      /^output_format opus_44100_64: sample rate 44100 is not offered for it; use one of 8000, 16000, 24000, 48000$/,
    ],
  ];
  it.each(badFormats)('refuses output_format %j', (value, message) => {
    expectError(
      thrown(() => open(`output_format=${value}`)),
      'invalid_option',
      message,
      'output_format',
    );
  });

  it.each([
    ['', 20],
    ['inactivity_timeout=1', 1],
    ['inactivity_timeout=60', 60],
    ['inactivity_timeout=180', 180],
  ] as const)('inactivity timeout of %j is %d s', (query, seconds) => {
    expect(open(query).idleTimeoutS).toBe(seconds);
  });

  it.each(['0', '181', '-5', '1.5', 'abc', '', '1000'])('refuses inactivity_timeout %j', (value) => {
    expectError(
      thrown(() => open(`inactivity_timeout=${value}`)),
      'invalid_option',
      new RegExp(`^inactivity_timeout "${value}" should be a whole number of seconds from 1 to 180$`),
      'inactivity_timeout',
    );
  });

  it.each([
    ['enable_ssml_parsing=true', 'ssml'],
    ['enable_ssml_parsing=false', 'none'],
    ['', 'none'],
  ] as const)('markup with %j is %s', (query, markup) => {
    expect(open(query).defaults.markup).toBe(markup);
  });

  it('turns normalization off only with apply_text_normalization=off', () => {
    expect(open('apply_text_normalization=off').defaults.normalization_options).toStrictEqual({
      normalize: false,
    });
    expect(open('apply_text_normalization=on').defaults).not.toHaveProperty('normalization_options');
    expect(open('apply_text_normalization=auto').defaults).not.toHaveProperty('normalization_options');
    expect(open('').defaults).not.toHaveProperty('normalization_options');
  });

  it('refuses an unknown apply_text_normalization', () => {
    const err = thrown(() => open('apply_text_normalization=sometimes'));
    expect(err).toBeInstanceOf(TtsError);
    expect((err as TtsError).code).toBe('invalid_option');
    expect((err as TtsError).message).toBe(
      'apply_text_normalization should be auto, on or off; got "sometimes"',
    );
  });

  it('gathers the whole query into the defaults', () => {
    const dialect = open(
      'output_format=pcm_16000&enable_ssml_parsing=true&apply_text_normalization=off&inactivity_timeout=45',
      'JBFqnCBsd6RMkjVDRZzb',
      true,
    );
    expect(dialect.defaults).toStrictEqual({
      voice: 'bm_george',
      format: 'pcm',
      sample_rate: 16000,
      markup: 'ssml',
      normalization_options: { normalize: false },
    });
    expect(dialect.idleTimeoutS).toBe(45);
    expect(dialect.contexts).toBe(true);
    expect(dialect.alwaysWords).toBe(true);
    expect(open().contexts).toBe(false);
  });
});

describe('elevenLabsDialect: stream-input messages', () => {
  const open = () => elevenLabsDialect('21m00Tcm4TlvDq8ikWAM', false, new URLSearchParams(), engine);

  it('takes the first message options, then only text; flush speaks; "" ends the stream', () => {
    const dialect = open();
    expect(
      dialect.parse(
        json({
          text: ' ',
          voice_settings: { speed: 1.1, stability: 0.5 },
          generation_config: { chunk_length_schedule: [50] },
          xi_api_key: 'k',
        }),
      ),
    ).toStrictEqual({
      kind: 'append',
      fields: { speed: 1.1, first_chunk: 'clause', text: ' ' },
      generate: false,
      repeatsOptions: true,
    });
    expect(dialect.parse(json({ text: 'Hello ', voice_settings: { speed: 2 } }))).toStrictEqual({
      kind: 'append',
      fields: { text: 'Hello ' },
      generate: false,
      repeatsOptions: true,
    });
    expect(dialect.parse(json({ text: 'world. ', flush: true }))).toStrictEqual({
      kind: 'append',
      fields: { text: 'world. ' },
      generate: true,
      repeatsOptions: true,
    });
    expect(dialect.parse(json({ text: '' }))).toStrictEqual([
      { kind: 'flush', fields: {} },
      { kind: 'close' },
    ]);
    expect(dialect.parse(json({ text: '', flush: true }))).toStrictEqual([
      { kind: 'flush', fields: {} },
      { kind: 'close' },
    ]);
  });

  it('a flush with no text speaks what is held and keeps the stream open', () => {
    const dialect = open();
    expect(dialect.parse(json({ flush: true }))).toStrictEqual({ kind: 'keep-alive' });
    dialect.parse(json({ text: 'Held ' }));
    expect(dialect.parse(json({ flush: true }))).toStrictEqual({
      kind: 'append',
      fields: { text: '' },
      generate: true,
    });
  });

  it.each([
    [[50, 120], { first_chunk: 'clause' }],
    [[99], { first_chunk: 'clause' }],
    [[100], { first_chunk: 'sentence' }],
    [[120, 160, 250, 290], { first_chunk: 'sentence' }],
    [[], {}],
  ])('chunk_length_schedule %j gives %j', (schedule, expected) => {
    expect(
      open().parse(json({ text: ' ', generation_config: { chunk_length_schedule: schedule } })),
    ).toStrictEqual({
      kind: 'append',
      fields: { ...expected, text: ' ' },
      generate: false,
      repeatsOptions: true,
    });
  });

  const refusals: [string, Record<string, unknown>, RegExp, string][] = [
    [
      'text a number',
      { text: 5 },
      /^Each message carries its text as a string .*"" to end the stream$/,
      'text',
    ],
    ['no text', { try_trigger_generation: true }, /carries its text as a string/, 'text'],
    ['text null', { text: null }, /carries its text as a string/, 'text'],
    [
      'voice_settings a string',
      { text: ' ', voice_settings: 'fast' },
      /^voice_settings should be an object/,
      'voice_settings',
    ],
    [
      'voice_settings an array',
      { text: ' ', voice_settings: [1] },
      /^voice_settings should be an object/,
      'voice_settings',
    ],
    [
      'a schedule not an array',
      { text: ' ', generation_config: { chunk_length_schedule: 50 } },
      /^generation_config\.chunk_length_schedule should be an array of positive numbers/,
      'generation_config',
    ],
    [
      'a schedule with zero',
      { text: ' ', generation_config: { chunk_length_schedule: [0, 100] } },
      /chunk_length_schedule should be an array of positive numbers/,
      'generation_config',
    ],
    [
      'a schedule of strings',
      { text: ' ', generation_config: { chunk_length_schedule: ['50'] } },
      /chunk_length_schedule should be an array of positive numbers/,
      'generation_config',
    ],
  ];
  it.each(refusals)('refuses %s, naming no context', (_name, message, text, param) => {
    const refused = refusal(open().parse(json(message)));
    expectError(refused.error, 'invalid_option', text, param);
    expect(refused).not.toHaveProperty('context');
  });

  it('throws for what is not a JSON object', () => {
    expectError(
      thrown(() => open().parse(bytes('Hello'))),
      'invalid_option',
      /^Send JSON messages such as \{"text": "Hello "\}$/,
      undefined,
    );
    expectError(
      thrown(() => open().parse(bytes('[1, 2]'))),
      'invalid_option',
      /^Send JSON messages/,
      undefined,
    );
    expectError(
      thrown(() => open().parse(bytes('{"text": "unterminated'))),
      'invalid_json',
      /is not valid JSON/,
      undefined,
    );
    expectError(
      thrown(() => open().parse(Buffer.from([0x7b, 0xff, 0x7d]))),
      'invalid_utf8',
      /not valid UTF-8/,
      undefined,
    );
  });

  it('ignores close_context and close_socket on stream-input (they are not its messages)', () => {
    const refused = refusal(open().parse(json({ close_socket: true })));
    expectError(refused.error, 'invalid_option', /carries its text as a string/, 'text');
  });
});

describe('elevenLabsDialect: multi-stream-input messages', () => {
  const open = () => elevenLabsDialect('21m00Tcm4TlvDq8ikWAM', true, new URLSearchParams(), engine);

  it('puts messages that name no context in "default", and reads contextId too', () => {
    const dialect = open();
    expect(dialect.parse(json({ text: ' ', voice_settings: { speed: 1.1 } }))).toStrictEqual({
      kind: 'append',
      fields: { speed: 1.1, text: ' ' },
      context: 'default',
      generate: false,
      repeatsOptions: true,
    });
    expect(dialect.parse(json({ text: 'Hi ', contextId: 'b' }))).toStrictEqual({
      kind: 'append',
      fields: { text: 'Hi ' },
      context: 'b',
      generate: false,
      repeatsOptions: true,
    });
  });

  it('takes each context first message options, and only its first', () => {
    const dialect = open();
    expect(dialect.parse(json({ text: ' ', context_id: 'a', voice_settings: { speed: 0.9 } }))).toMatchObject(
      {
        fields: { speed: 0.9, text: ' ' },
      },
    );
    expect(dialect.parse(json({ text: ' ', context_id: 'b', voice_settings: { speed: 1.2 } }))).toMatchObject(
      {
        fields: { speed: 1.2, text: ' ' },
      },
    );
    expect(dialect.parse(json({ text: 'x', context_id: 'a', voice_settings: { speed: 2 } }))).toStrictEqual({
      kind: 'append',
      fields: { text: 'x' },
      context: 'a',
      generate: false,
      repeatsOptions: true,
    });
  });

  it('"" keeps a context alive; with flush it speaks what a started context holds', () => {
    const dialect = open();
    expect(dialect.parse(json({ text: '' }))).toStrictEqual({ kind: 'keep-alive', context: 'default' });
    expect(dialect.parse(json({ text: '', context_id: 'new', flush: true }))).toStrictEqual({
      kind: 'keep-alive',
      context: 'new',
    });
    dialect.parse(json({ text: 'Hello', context_id: 'a' }));
    expect(dialect.parse(json({ text: '', context_id: 'a' }))).toStrictEqual({
      kind: 'keep-alive',
      context: 'a',
    });
    expect(dialect.parse(json({ text: '', context_id: 'a', flush: true }))).toStrictEqual({
      kind: 'append',
      fields: { text: '' },
      context: 'a',
      generate: true,
    });
  });

  const closing = (context: string, drop: boolean) => ({
    kind: 'close-context',
    context,
    drop,
    tolerant: true,
  });

  it('close_context finishes a context flushed since its last text, and cuts one that was not', () => {
    const dialect = open();
    const send = (message: Record<string, unknown>) => dialect.parse(json(message));
    const close = (context: string) => send({ context_id: context, close_context: true });

    send({ context_id: 'flushed', text: 'Hello.' });
    send({ context_id: 'flushed', text: '', flush: true });
    expect(close('flushed')).toStrictEqual(closing('flushed', false));

    send({ context_id: 'unflushed', text: 'Hello' });
    expect(close('unflushed')).toStrictEqual(closing('unflushed', true));

    send({ context_id: 'text-flush', text: 'Hello.', flush: true });
    expect(close('text-flush')).toStrictEqual(closing('text-flush', false));

    send({ context_id: 'more', text: 'Hello.', flush: true });
    send({ context_id: 'more', text: 'And more' });
    expect(close('more')).toStrictEqual(closing('more', true));

    send({ context_id: 'spaces', text: 'Hello.', flush: true });
    send({ context_id: 'spaces', text: ' ' });
    expect(close('spaces')).toStrictEqual(closing('spaces', false));

    // Pipecat's end of a turn: a flush with no text at all, then the close.
    send({ context_id: 'bare', text: ' ' });
    send({ context_id: 'bare', text: 'Hello there.' });
    expect(send({ context_id: 'bare', flush: true })).toStrictEqual({
      kind: 'append',
      fields: { text: '' },
      context: 'bare',
      generate: true,
    });
    expect(close('bare')).toStrictEqual(closing('bare', false));

    expect(close('never-used')).toStrictEqual(closing('never-used', true));
    expect(send({ close_context: true })).toStrictEqual(closing('default', true));
  });

  it('with auto_mode, speaks every piece as it comes, and only a flush of no text ends the turn', () => {
    const dialect = elevenLabsDialect(
      '21m00Tcm4TlvDq8ikWAM',
      true,
      new URLSearchParams('auto_mode=true'),
      engine,
    );
    const send = (message: Record<string, unknown>) => dialect.parse(json(message));
    const close = (context: string) => send({ context_id: context, close_context: true });
    // Pipecat's sentences: no flush, no spaces between them; each is spoken at once.
    expect(send({ context_id: 'p', text: ' ' })).toMatchObject({ generate: true });
    expect(send({ context_id: 'p', text: 'Hello there.' })).toStrictEqual({
      kind: 'append',
      fields: { text: 'Hello there.' },
      context: 'p',
      generate: true,
      repeatsOptions: true,
    });
    send({ context_id: 'p', flush: true });
    expect(close('p')).toStrictEqual(closing('p', false));
    // LiveKit's sentences, each flushed: a close before its input ended is a barge-in.
    send({ context_id: 'l', text: ' ', voice_settings: {} });
    send({ context_id: 'l', text: 'Hello there. ', flush: true });
    send({ context_id: 'l', text: 'How are you? ', flush: true });
    expect(close('l')).toStrictEqual(closing('l', true));
    // Its end of input: a flush of no text, then the close.
    send({ context_id: 'm', text: 'Hello there. ', flush: true });
    send({ context_id: 'm', text: '', flush: true });
    expect(close('m')).toStrictEqual(closing('m', false));
    send({ context_id: 'n', text: 'Hello there. ', flush: true });
    send({ context_id: 'n', text: ' ', flush: true });
    expect(close('n')).toStrictEqual(closing('n', false));
  });

  it('a flush with no text on a context never started only keeps it alive', () => {
    const dialect = open();
    expect(dialect.parse(json({ context_id: 'x', flush: true }))).toStrictEqual({
      kind: 'keep-alive',
      context: 'x',
    });
    expect(dialect.parse(json({ context_id: 'x', text: null, flush: true }))).toStrictEqual({
      kind: 'keep-alive',
      context: 'x',
    });
  });

  it('forgets a closed context: its id starts over, options and all', () => {
    const dialect = open();
    dialect.parse(json({ context_id: 'a', text: 'Hello.', flush: true }));
    dialect.parse(json({ context_id: 'a', close_context: true }));
    expect(dialect.parse(json({ context_id: 'a', text: ' ', voice_settings: { speed: 0.8 } }))).toMatchObject(
      {
        fields: { speed: 0.8, text: ' ' },
      },
    );
    expect(dialect.parse(json({ context_id: 'a', close_context: true }))).toMatchObject({ drop: true });
  });

  it('close_socket closes the session', () => {
    expect(open().parse(json({ close_socket: true }))).toStrictEqual({ kind: 'close' });
    expect(open().parse(json({ close_socket: true, context_id: 'a' }))).toStrictEqual({ kind: 'close' });
  });

  const refusals: [string, Record<string, unknown>, RegExp, string][] = [
    [
      'text a number',
      { context_id: 'a', text: 5 },
      /as a string .*or "flush", "close_context" or "close_socket"$/,
      'text',
    ],
    [
      'close_context "true"',
      { context_id: 'a', close_context: 'true' },
      /carries its text as a string/,
      'text',
    ],
    [
      'voice_settings a string',
      { context_id: 'a', text: ' ', voice_settings: 'x' },
      /^voice_settings should be an object/,
      'voice_settings',
    ],
  ];
  it.each(refusals)('refuses %s in its context', (_name, message, text, param) => {
    const refused = refusal(open().parse(json(message)));
    expectError(refused.error, 'invalid_option', text, param);
    expect(refused.context).toBe('a');
  });

  it('refuses a bad field in the default context when none is named', () => {
    const refused = refusal(open().parse(json({ text: 5 })));
    expectError(refused.error, 'invalid_option', /carries its text as a string/, 'text');
    expect(refused.context).toBe('default');
  });

  it.each([5, '', ['a'], {}, 'x'.repeat(256)])('throws for context_id %j', (id) => {
    expectError(
      thrown(() => open().parse(json({ context_id: id, text: 'x' }))),
      'invalid_option',
      /^context_id should be a non-empty string of at most 255 UTF-8 bytes$/,
      'context_id',
    );
  });

  it('keeps state for at most 1024 contexts: ids that never open do not grow it without bound', () => {
    const dialect = open();
    for (let i = 0; i <= 1024; i++) dialect.parse(json({ context_id: `c${i}`, text: ' ' }));
    // The oldest was forgotten: its next message counts as a first one again.
    expect(
      dialect.parse(json({ context_id: 'c0', text: ' ', voice_settings: { speed: 1.1 } })),
    ).toMatchObject({
      fields: { speed: 1.1 },
    });
    // The newest was not: a later message's settings are the dialect's repetition, not options.
    expect(
      dialect.parse(json({ context_id: 'c1024', text: 'x ', voice_settings: { speed: 1.1 } })),
    ).toMatchObject({
      fields: { text: 'x ' },
    });
    expect(
      (
        dialect.parse(json({ context_id: 'c1024', text: 'y ', voice_settings: { speed: 1.1 } })) as {
          fields: object;
        }
      ).fields,
    ).toStrictEqual({ text: 'y ' });
  });

  it('a refused first message leaves the context unopened: the corrected retry’s options count', () => {
    const dialect = open();
    expect(
      dialect.parse(json({ context_id: 'a', text: ' ', voice_settings: 'fast', flush: true })),
    ).toMatchObject({
      kind: 'refuse',
      context: 'a',
    });
    expect(dialect.parse(json({ context_id: 'a', text: ' ', voice_settings: { speed: 1.2 } }))).toMatchObject(
      {
        kind: 'append',
        fields: { speed: 1.2, text: ' ' },
      },
    );
    // The refused message's flush was not noted: close_context cuts.
    expect(dialect.parse(json({ context_id: 'a', close_context: true }))).toMatchObject({ drop: true });
  });
});

describe('elevenLabsDialect: frames', () => {
  const open = (multi: boolean, query = '') =>
    elevenLabsDialect(
      '21m00Tcm4TlvDq8ikWAM',
      multi,
      new URLSearchParams(`output_format=pcm_24000${query}`),
      engine,
    );
  /** 0.2 s of silence at 24 kHz. */
  const fifth = new Uint8Array(9600);
  const hi: WordTiming[] = [{ word: 'Hi', start_s: 0, end_s: 0.2 }];
  const there: WordTiming[] = [{ word: 'there', start_s: 0.2, end_s: 0.4 }];
  const frames = (out: OutgoingFrame | readonly OutgoingFrame[]) =>
    (Array.isArray(out) ? out : [out as OutgoingFrame]).map(sentJson);

  it('sends audio as base64 with no alignment when no words came before it', () => {
    const dialect = open(false);
    expect(
      frames(dialect.audio({ requestId: 'r1' }, new Uint8Array([1, 2]), { startS: 0, endS: 1 / 24000 })),
    ).toStrictEqual([{ audio: 'AQI=', isFinal: null, normalizedAlignment: null, alignment: null }]);
  });

  it('encodes only the bytes of a view', () => {
    const view = new Uint8Array([0xff, 1, 2, 3, 4, 0xff]).subarray(1, 5);
    const [frame] = frames(open(false).audio({ requestId: 'r1' }, view, { startS: 0, endS: 2 / 24000 }));
    expect(frame!.audio).toBe('AQIDBA==');
  });

  it('puts the words given for a request beside its next audio, once, timed from that message', () => {
    const dialect = open(false);
    expect(dialect.words({ requestId: 'r1' }, hi)).toBeUndefined();
    expect(dialect.words({ requestId: 'r2' }, [{ word: 'other', start_s: 0, end_s: 0.2 }])).toBeUndefined();
    const [first] = frames(dialect.audio({ requestId: 'r1' }, fifth, { startS: 0, endS: 0.2 }));
    const hiChars = {
      chars: ['H', 'i', ' '],
      charStartTimesMs: [0, 100, 200],
      charDurationsMs: [100, 100, 0],
    };
    expect(first).toStrictEqual({
      audio: Buffer.from(fifth).toString('base64'),
      isFinal: null,
      normalizedAlignment: hiChars,
      alignment: hiChars,
    });
    // The next message's times start again from its own first sample (ElevenLabs' default).
    dialect.words({ requestId: 'r1' }, there);
    const [second] = frames(dialect.audio({ requestId: 'r1' }, fifth, { startS: 0.2, endS: 0.4 }));
    expect(second!.alignment).toStrictEqual({
      chars: ['t', 'h', 'e', 'r', 'e', ' '],
      charStartTimesMs: [0, 40, 80, 120, 160, 200],
      charDurationsMs: [40, 40, 40, 40, 40, 0],
    });
    // Audio after the request's last word: a space over it, the silence it holds.
    expect(
      frames(dialect.audio({ requestId: 'r1' }, fifth, { startS: 0.4, endS: 0.6 }))[0]!.alignment,
    ).toStrictEqual({ chars: [' '], charStartTimesMs: [0], charDurationsMs: [200] });
    expect(
      frames(dialect.audio({ requestId: 'r2' }, fifth, { startS: 0, endS: 0.2 }))[0]!.alignment,
    ).toMatchObject({
      chars: ['o', 't', 'h', 'e', 'r', ' '],
    });
  });

  it('with sync_alignment, times the characters on the context’s clock, across its requests', () => {
    const dialect = open(true, '&sync_alignment=true');
    const turn = { requestId: 'r1', context: 'a' };
    dialect.words(turn, hi);
    frames(dialect.audio(turn, fifth, { startS: 0, endS: 0.2 }));
    dialect.words(turn, there);
    const [second] = frames(dialect.audio(turn, fifth, { startS: 0.2, endS: 0.4 }));
    expect((second!.alignment as { charStartTimesMs: number[] }).charStartTimesMs).toEqual([
      200, 240, 280, 320, 360, 400,
    ]);
    // A request that ended early (a failure): the context's next one goes on from its audio's end.
    dialect.ended!(turn);
    const next = { requestId: 'r2', context: 'a' };
    dialect.words(next, hi);
    const [third] = frames(dialect.audio(next, fifth, { startS: 0, endS: 0.2 }));
    expect((third!.alignment as { charStartTimesMs: number[] }).charStartTimesMs).toEqual([400, 500, 600]);
    // Another context has a clock of its own; a closed one starts over.
    const other = { requestId: 'r3', context: 'b' };
    dialect.words(other, hi);
    expect(frames(dialect.audio(other, fifth, { startS: 0, endS: 0.2 }))[0]!.alignment).toMatchObject({
      charStartTimesMs: [0, 100, 200],
    });
    dialect.contextClosed('a', undefined, undefined);
    const again = { requestId: 'r4', context: 'a' };
    dialect.words(again, hi);
    expect(frames(dialect.audio(again, fifth, { startS: 0, endS: 0.2 }))[0]!.alignment).toMatchObject({
      charStartTimesMs: [0, 100, 200],
    });
  });

  it.each([24000, 48000])(
    'cuts %d Hz audio into messages under 64 KB, at word starts, each timed from its own audio',
    (rate) => {
      const dialect = elevenLabsDialect(
        '21m00Tcm4TlvDq8ikWAM',
        true,
        new URLSearchParams(`output_format=pcm_${rate}`),
        engine,
      );
      const turn = { requestId: 'r1', context: 'a' };
      // 4 s of audio, a word every 0.3 s.
      const audio = new Uint8Array(4 * rate * 2).map((_, i) => i % 251);
      const words = Array.from({ length: 13 }, (_, i) => ({
        word: `w${i}`,
        start_s: 0.05 + 0.3 * i,
        end_s: Math.min(4, 0.35 + 0.3 * i),
      }));
      dialect.words(turn, words);
      const out = dialect.audio(turn, audio, { startS: 0, endS: 4 }) as readonly OutgoingFrame[];
      expect(out.length).toBeGreaterThan(4);
      for (const frame of out) expect(Buffer.byteLength(frame.data as string)).toBeLessThanOrEqual(64_000);
      const sent = out.map(sentJson);
      expect(Buffer.concat(sent.map((m) => Buffer.from(m.audio as string, 'base64'))).equals(audio)).toBe(
        true,
      );
      const aligned = sent.map((m) => m.alignment as CharAlignment);
      expect(aligned.flatMap((a) => a.chars).join('')).toBe(`${words.map((w) => w.word).join(' ')} `);
      // Pipecat's clock: each message's times, plus the ends of the messages before it.
      const ms = (bytes: number) => Math.round((1000 * bytes) / 2 / rate);
      let offset = 0;
      let clock = 0;
      for (const [i, a] of aligned.entries()) {
        const bytes = Buffer.from(sent[i]!.audio as string, 'base64').length;
        expect(bytes / 2 / rate).toBeLessThanOrEqual(1);
        // Each message's characters end with a space, at the end of its own audio.
        expect(a.chars.at(-1)).toBe(' ');
        const end = a.charStartTimesMs.at(-1)! + a.charDurationsMs.at(-1)!;
        expect(end).toBe(ms(offset + bytes) - ms(offset));
        expect(a.charStartTimesMs[0]).toBeGreaterThanOrEqual(0);
        // Its first word starts where that clock says.
        const firstWord = words.find((w) => w.word === a.chars.slice(0, a.chars.indexOf(' ')).join(''))!;
        expect(clock + a.charStartTimesMs[0]!).toBe(Math.round(firstWord.start_s * 1000));
        clock += end;
        offset += bytes;
      }
      expect(clock).toBe(4000);
    },
  );

  it('ends stream-input with isFinal, and forgets words left over once the request has ended', () => {
    const dialect = open(false);
    dialect.words({ requestId: 'r1' }, hi);
    expect(dialect.complete({ requestId: 'r1' }, FIGURES)).toStrictEqual({ isFinal: true });
    dialect.ended!({ requestId: 'r1' });
    expect(
      frames(dialect.audio({ requestId: 'r1' }, fifth, { startS: 0, endS: 0.2 }))[0]!.alignment,
    ).toBeNull();
    expect(dialect.complete({ requestId: 'r2' }, undefined)).toStrictEqual({ isFinal: true });
  });

  it('names the context on multi-stream audio and sends nothing on complete', () => {
    const dialect = open(true);
    dialect.words({ requestId: 'r1', context: 'a' }, hi);
    expect(
      frames(dialect.audio({ requestId: 'r1', context: 'a' }, fifth, { startS: 0, endS: 0.2 })),
    ).toStrictEqual([
      {
        audio: Buffer.from(fifth).toString('base64'),
        isFinal: null,
        normalizedAlignment: expect.objectContaining({ chars: ['H', 'i', ' '] }),
        alignment: expect.objectContaining({ chars: ['H', 'i', ' '] }),
        contextId: 'a',
      },
    ]);
    expect(dialect.complete({ requestId: 'r1', context: 'a' }, FIGURES)).toBeUndefined();
  });

  it('answers close_context with isFinal and the context, and heard when it cut', () => {
    const dialect = open(true);
    expect(dialect.contextClosed('a', undefined, undefined)).toStrictEqual({ isFinal: true, contextId: 'a' });
    expect(dialect.contextClosed('a', ['r1'], HEARD)).toStrictEqual({
      isFinal: true,
      contextId: 'a',
      heard: HEARD,
    });
  });

  it('sends nothing for start, marks and cancels, and opens with nothing', () => {
    const dialect = open(true);
    expect(dialect.opening('s1')).toEqual([]);
    expect(dialect.start({ requestId: 'r1', context: 'a' })).toBeUndefined();
    expect(dialect.mark({ requestId: 'r1', context: 'a' }, 'm', 1)).toBeUndefined();
    expect(dialect.cancelled('r1', ['r1'], HEARD, 'a')).toBeUndefined();
  });

  it.each([
    ['invalid_option', 1008],
    ['voice_not_found', 1008],
    ['context_closed', 1008],
    ['busy', 1008],
    ['internal_error', 1011],
    ['inference_failed', 1011],
  ] as const)('words a %s error with code %d', (code, closeCode) => {
    const dialect = open(true);
    expect(dialect.error(body(code, 'It failed.'), 'a')).toStrictEqual({
      message: 'It failed.',
      error: code,
      code: closeCode,
      contextId: 'a',
    });
    expect(dialect.error(body(code, 'It failed.'))).toStrictEqual({
      message: 'It failed.',
      error: code,
      code: closeCode,
    });
  });
});

describe('isCartesiaSocketPath', () => {
  it.each([
    ['/tts/websocket', true],
    ['tts/websocket', true],
    ['//tts/websocket', true],
    ['/tts/websocket?api_key=k&cartesia_version=2024-06-10', true],
    [undefined, false],
    ['', false],
    ['/tts/websocket/', false],
    ['/tts/websockets', false],
    ['/v1/tts/websocket', false],
    ['/tts/bytes', false],
    ['/TTS/websocket', false],
  ] as const)('%j → %s', (path, expected) => {
    expect(isCartesiaSocketPath(path)).toBe(expected);
  });

  it('is named by CARTESIA_WS_PATH', () => {
    expect(CARTESIA_WS_PATH).toBe('/tts/websocket');
  });
});

describe('cartesiaVoiceId', () => {
  it.each([
    ['af_heart', 'af_heart'],
    [{ mode: 'id', id: 'af_sky' }, 'af_sky'],
    [{ id: 'a0e99841-438c-4a64-b679-ae501e7d6091' }, 'a0e99841-438c-4a64-b679-ae501e7d6091'],
    [{ mode: 'id', id: 'af_bella+af_sky', __experimental_controls: {} }, 'af_bella+af_sky'],
  ] as const)('%j → %s', (voice, id) => {
    expect(cartesiaVoiceId(voice)).toBe(id);
  });

  it.each([
    { mode: 'embedding', embedding: [0.1, 0.2] },
    { mode: 'embedding', id: 'af_heart' },
    { mode: 'embedding' },
  ])('refuses an embedding %j', (voice) => {
    expectError(
      thrown(() => cartesiaVoiceId(voice)),
      'invalid_option',
      /^voice embeddings are not supported here: Kokoro speaks its own voices; name one by its id, as \{"mode": "id", "id": "af_heart"\} \(a Kokoro voice or a mapped Cartesia id\)$/,
      'voice',
    );
  });

  it.each([
    undefined,
    null,
    '',
    5,
    true,
    ['af_heart'],
    {},
    { mode: 'id' },
    { mode: 'id', id: '' },
    { mode: 'id', id: 5 },
    { mode: 'clone', id: 'af_heart' },
  ])('refuses %j', (voice) => {
    expectError(
      thrown(() => cartesiaVoiceId(voice)),
      'invalid_option',
      /^voice should be a voice id, as "af_heart" or \{"mode": "id", "id": "af_heart"\}$/,
      'voice',
    );
  });
});

describe('cartesiaSpeed', () => {
  it.each([
    [{}, undefined],
    [{ speed: 1.2 }, 1.2],
    [{ speed: 0.6 }, 0.6],
    [{ speed: 'slow' }, 0.8],
    [{ speed: 'normal' }, 1],
    [{ speed: 'fast' }, 1.2],
    [{ generation_config: { speed: 0.9 } }, 0.9],
    [{ generation_config: { speed: 0.9 }, speed: 'fast' }, 0.9],
    [{ generation_config: { speed: 'slow' }, speed: 1.4 }, 0.8],
    [{ generation_config: {}, speed: 'slow' }, 0.8],
    [{ generation_config: null, speed: 1.1 }, 1.1],
  ] as const)('%j → %s', (fields, speed) => {
    expect(cartesiaSpeed(fields)).toBe(speed);
  });

  it.each([
    { speed: 'fastest' },
    { speed: 'Fast' },
    { speed: true },
    { speed: null },
    { speed: [1] },
    { generation_config: { speed: 'x' }, speed: 1 },
  ])('refuses %j', (fields) => {
    expectError(
      thrown(() => cartesiaSpeed(fields)),
      'invalid_option',
      /^speed should be a number \(0\.6 to 1\.5\) or slow, normal or fast$/,
      'speed',
    );
  });
});

describe('cartesiaDialect: messages', () => {
  const RAW = { container: 'raw', encoding: 'pcm_s16le', sample_rate: 24000 };
  const base = {
    model_id: 'sonic-2',
    voice: { mode: 'id', id: 'af_heart' },
    output_format: RAW,
    language: 'en',
  };
  const options = { voice: 'af_heart', format: 'pcm', sample_rate: 24000, markup: 'none' };
  /** How an append is taken without max_buffer_delay_ms: held up to Cartesia's default 3 s. */
  const HELD = { repeatsOptions: true, spaceSentences: true, holdMs: 3000 } as const;
  const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

  it('joins a context continuations into one utterance, ended by a request without continue', () => {
    const dialect = cartesiaDialect(engine);
    expect(dialect.contexts).toBe(true);
    expect(dialect.releaseIdleContexts).toBe(true);
    expect(
      dialect.parse(json({ ...base, transcript: 'Hello ', context_id: 'a', continue: true })),
    ).toStrictEqual({
      kind: 'append',
      fields: { ...options, request_id: 'c1', text: 'Hello ' },
      context: 'a',
      ...HELD,
    });
    expect(
      dialect.parse(json({ ...base, transcript: 'world.', context_id: 'a', continue: true })),
    ).toStrictEqual({
      kind: 'append',
      // A continuation's own id is ignored, as its other options are: the turn keeps its first id.
      fields: { ...options, request_id: 'c2', text: 'world.' },
      context: 'a',
      ...HELD,
    });
    expect(dialect.parse(json({ ...base, transcript: '', context_id: 'a', continue: false }))).toStrictEqual([
      {
        kind: 'append',
        fields: { ...options, request_id: 'c3', text: '' },
        context: 'a',
        ...HELD,
      },
      { kind: 'flush', fields: {}, context: 'a' },
    ]);
    expect(dialect.parse(json({ ...base, transcript: 'Again.', context_id: 'a' }))).toStrictEqual([
      {
        kind: 'append',
        fields: { ...options, request_id: 'c4', text: 'Again.' },
        context: 'a',
        ...HELD,
      },
      { kind: 'flush', fields: {}, context: 'a' },
    ]);
  });

  it('gives every message an id of its own', () => {
    const dialect = cartesiaDialect(engine);
    expect(dialect.parse(json({ ...base, transcript: 'a', context_id: 'a', continue: true }))).toMatchObject({
      fields: { request_id: 'c1' },
    });
    expect(dialect.parse(json({ ...base, transcript: 'b', context_id: 'b', continue: true }))).toMatchObject({
      fields: { request_id: 'c2' },
    });
    expect(dialect.parse(json({ ...base, transcript: 'a', context_id: 'a', continue: true }))).toMatchObject({
      fields: { request_id: 'c3' },
    });
  });

  it('reads timestamps, speed, flush and a mapped voice', () => {
    const dialect = cartesiaDialect(engine);
    expect(
      dialect.parse(
        json({
          ...base,
          voice: 'a0e99841-438c-4a64-b679-ae501e7d6091',
          output_format: { container: 'raw', encoding: 'pcm_mulaw', sample_rate: 8000 },
          transcript: 'Hi.',
          context_id: 'a',
          continue: true,
          add_timestamps: true,
          speed: 'fast',
          flush: true,
        }),
      ),
    ).toStrictEqual({
      kind: 'append',
      fields: {
        voice: 'am_michael',
        format: 'mulaw',
        sample_rate: 8000,
        markup: 'none',
        speed: 1.2,
        timestamps: true,
        request_id: 'c1',
        text: 'Hi.',
      },
      context: 'a',
      ...HELD,
      mark: 'flush',
    });
  });

  it.each(Object.entries(CARTESIA_VOICES))('maps Cartesia voice %s to %s', (id, kokoro) => {
    expect(
      cartesiaDialect(engine).parse(
        json({ ...base, voice: { mode: 'id', id }, transcript: 'x', context_id: 'a', continue: true }),
      ),
    ).toMatchObject({
      fields: { voice: kokoro },
    });
  });

  it('cancel drops the context, and its next request is a new utterance', () => {
    const dialect = cartesiaDialect(engine);
    dialect.parse(json({ ...base, transcript: 'Hello ', context_id: 'a', continue: true }));
    expect(dialect.parse(json({ context_id: 'a', cancel: true }))).toStrictEqual({
      kind: 'close-context',
      context: 'a',
      drop: true,
    });
    expect(dialect.parse(json({ ...base, transcript: 'Hi', context_id: 'a', continue: true }))).toMatchObject(
      {
        fields: { request_id: 'c2' },
      },
    );
  });

  it('gives a request that names no context a fresh one', () => {
    const dialect = cartesiaDialect(engine);
    const first = dialect.parse(json({ ...base, transcript: 'One.' })) as readonly Command[];
    const second = dialect.parse(json({ ...base, transcript: 'Two.' })) as readonly Command[];
    expect(first).toHaveLength(2);
    expect(first[0]).toMatchObject({ kind: 'append', context: expect.stringMatching(UUID) });
    expect(first[1]).toStrictEqual({
      kind: 'flush',
      fields: {},
      context: (first[0] as { context: string }).context,
    });
    expect((second[0] as { context: string }).context).toMatch(UUID);
    expect((second[0] as { context: string }).context).not.toBe((first[0] as { context: string }).context);
  });

  const refusals: [string, Record<string, unknown>, string, RegExp, string][] = [
    [
      'a transcript number',
      { ...base, transcript: 5 },
      'invalid_option',
      /^A generation request carries its text as a string: "transcript"$/,
      'transcript',
    ],
    [
      'no transcript',
      { ...base },
      'invalid_option',
      /carries its text as a string: "transcript"/,
      'transcript',
    ],
    [
      'continue "yes"',
      { ...base, transcript: 'x', continue: 'yes' },
      'invalid_option',
      /^continue should be true or false$/,
      'continue',
    ],
    [
      'an embedding',
      { ...base, transcript: 'x', voice: { mode: 'embedding', embedding: [0] } },
      'invalid_option',
      /^voice embeddings are not supported/,
      'voice',
    ],
    [
      'no voice',
      { ...base, transcript: 'x', voice: undefined },
      'invalid_option',
      /^voice should be a voice id/,
      'voice',
    ],
    [
      'an unknown voice',
      { ...base, transcript: 'x', voice: 'nope' },
      'voice_not_found',
      /^Unknown voice "nope": name a Kokoro voice/,
      'voice',
    ],
    [
      'no output_format',
      { ...base, transcript: 'x', output_format: undefined },
      'invalid_option',
      /^output_format should be an object/,
      'output_format',
    ],
    [
      'an mp3 container',
      { ...base, transcript: 'x', output_format: { container: 'mp3', sample_rate: 44100 } },
      'invalid_option',
      /container should be raw$/,
      'output_format',
    ],
    [
      'a wav container',
      { ...base, transcript: 'x', output_format: { ...RAW, container: 'wav' } },
      'invalid_option',
      /container should be raw$/,
      'output_format',
    ],
    [
      'pcm_s24le',
      { ...base, transcript: 'x', output_format: { ...RAW, encoding: 'pcm_s24le' } },
      'invalid_option',
      /encoding should be pcm_s16le, pcm_f32le, pcm_mulaw or pcm_alaw$/,
      'output_format',
    ],
    [
      'a bad speed',
      { ...base, transcript: 'x', speed: 'fastest' },
      'invalid_option',
      /^speed should be a number/,
      'speed',
    ],
    ...[-1, 5001, 1.5, '0', true].map(
      (delay) =>
        [
          `max_buffer_delay_ms ${JSON.stringify(delay)}`,
          { ...base, transcript: 'x', max_buffer_delay_ms: delay },
          'invalid_option',
          /^max_buffer_delay_ms should be a whole number of milliseconds from 0 to 5000 \(0: each transcript is spoken as it arrives; default 3000\)$/,
          'max_buffer_delay_ms',
        ] as [string, Record<string, unknown>, string, RegExp, string],
    ),
  ];
  it.each(refusals)('refuses %s in its context', (_name, message, code, text, param) => {
    const dialect = cartesiaDialect(engine);
    const refused = refusal(
      dialect.parse(json({ ...message, context_id: 'a', continue: message.continue ?? true })),
    );
    expectError(refused.error, code, text, param);
    expect(refused.context).toBe('a');
    // Nothing was taken: the context's next request is its first.
    expect(dialect.parse(json({ ...base, transcript: 'x', context_id: 'a', continue: true }))).toMatchObject({
      kind: 'append',
      fields: { request_id: 'c1' },
    });
  });

  it.each([
    [0, { generate: true, holdMs: 0 }],
    [250, { holdMs: 250 }],
    [5000, { holdMs: 5000 }],
    [null, { holdMs: 3000 }],
  ] as const)('max_buffer_delay_ms %j: %j', (delay, taken) => {
    const dialect = cartesiaDialect(engine);
    expect(
      dialect.parse(
        json({ ...base, transcript: 'Hi', context_id: 'a', continue: true, max_buffer_delay_ms: delay }),
      ),
    ).toStrictEqual({
      kind: 'append',
      fields: { ...options, request_id: 'c1', text: 'Hi' },
      context: 'a',
      repeatsOptions: true,
      spaceSentences: true,
      ...taken,
    });
  });

  it('answers a turn’s refused messages once: the rest of that turn passes in silence', () => {
    const dialect = cartesiaDialect(engine);
    const embedding = { ...base, voice: { mode: 'embedding', embedding: [0.5] } };
    const bad = (id: string, transcript: string, more: boolean) =>
      dialect.parse(json({ ...embedding, context_id: id, transcript, continue: more }));
    expectError(refusal(bad('a', 'One. ', true)).error, 'invalid_option', /^voice embeddings/, 'voice');
    expect(bad('a', 'Two. ', true)).toStrictEqual({ kind: 'keep-alive', context: 'a' });
    // Another context is answered for itself.
    expect(refusal(bad('b', 'One. ', true)).context).toBe('b');
    expect(bad('a', ' ', false)).toStrictEqual({ kind: 'keep-alive', context: 'a' });
    // That turn is over: the id's next turn is answered again.
    expect(refusal(bad('a', 'Three. ', true)).context).toBe('a');
    // A cancel ends a turn too.
    dialect.parse(json({ context_id: 'a', cancel: true }));
    expect(refusal(bad('a', 'Four. ', true)).context).toBe('a');
    // So does a last message that is taken.
    expect(dialect.parse(json({ ...base, context_id: 'a', transcript: 'Fine.' }))).toHaveLength(2);
    expect(refusal(bad('a', 'Five. ', true)).context).toBe('a');
    // A turn of one message, refused, leaves nothing behind.
    expect(refusal(bad('c', 'Alone.', false)).context).toBe('c');
    expect(refusal(bad('c', 'Again.', true)).context).toBe('c');
  });

  it('refuses in a fresh context when the request names none', () => {
    const refused = refusal(cartesiaDialect(engine).parse(json({ ...base, transcript: 5 })));
    expectError(refused.error, 'invalid_option', /carries its text as a string/, 'transcript');
    expect(refused.context).toMatch(UUID);
  });

  it.each([5, '', null, 'x'.repeat(256)])('throws for context_id %j', (id) => {
    expectError(
      thrown(() => cartesiaDialect(engine).parse(json({ ...base, transcript: 'x', context_id: id }))),
      'invalid_option',
      /^context_id should be a non-empty string of at most 255 UTF-8 bytes; got /,
      'context_id',
    );
  });

  it('throws for what is not a JSON object', () => {
    expectError(
      thrown(() => cartesiaDialect(engine).parse(bytes('Hello'))),
      'invalid_option',
      /^Send JSON generation requests such as/,
      'transcript',
    );
    expectError(
      thrown(() => cartesiaDialect(engine).parse(bytes('{"transcript": '))),
      'invalid_json',
      /is not valid JSON/,
      undefined,
    );
  });
});

describe('startsSentenceAfterOne: sentences sent with nothing between them (Pipecat’s)', () => {
  it.each([
    ['Hello there.', 'How are you?', true],
    ['Really?', 'Yes.', true],
    ['Wow!', '"Great," she said.', true],
    ['He said "stop."', 'Then he left.', true],
    ['It ended…', 'Then more.', true],
    ['(See above.)', 'Next.', true],
    ['', 'Hello.', false],
    ['Hello there. ', 'How', false],
    ['Hello there.', ' How', false],
    ['The value is 3.', '5 percent', false],
    ['Visit example.', 'com today', false],
    ['Hello', 'World', false],
    ['你好。', '再见。', false],
  ] as const)('%j then %j: %s', (before, next, expected) => {
    expect(startsSentenceAfterOne(before, next)).toBe(expected);
  });
});

describe('cartesiaDialect: frames', () => {
  const base = { voice: 'af_heart', transcript: 'x', continue: true };

  it('sends audio as chunk messages, as it is for pcm_s16le', () => {
    const dialect = cartesiaDialect(engine);
    dialect.parse(
      json({
        ...base,
        context_id: 'a',
        output_format: { container: 'raw', encoding: 'pcm_s16le', sample_rate: 24000 },
      }),
    );
    const audio = pcm16([0, 16384, -32768]);
    const first = sentJson(oneFrame(dialect.audio({ requestId: 'c1', context: 'a' }, audio, SPAN)));
    expect(first).toStrictEqual({
      type: 'chunk',
      data: Buffer.from(audio).toString('base64'),
      done: false,
      status_code: 206,
      step_time: expect.any(Number),
      flush_id: 1,
      context_id: 'a',
    });
    expect(first.step_time).toBe(0);
    const second = sentJson(oneFrame(dialect.audio({ requestId: 'c1', context: 'a' }, audio, SPAN)));
    expect(second.step_time).toBeGreaterThanOrEqual(0);
    expect(Math.round((second.step_time as number) * 10)).toBeCloseTo((second.step_time as number) * 10, 6);
  });

  it('widens the audio of a pcm_f32le request to 32-bit floats', () => {
    const dialect = cartesiaDialect(engine);
    dialect.parse(
      json({
        ...base,
        context_id: 's',
        output_format: { container: 'raw', encoding: 'pcm_s16le', sample_rate: 24000 },
      }),
    );
    dialect.parse(
      json({
        ...base,
        context_id: 'f',
        output_format: { container: 'raw', encoding: 'pcm_f32le', sample_rate: 16000 },
      }),
    );
    const samples = [0, 1, -1, 16384, -16384, 32767, -32768];
    const frame = sentJson(oneFrame(dialect.audio({ requestId: 'f2', context: 'f' }, pcm16(samples), SPAN)));
    const data = Buffer.from(frame.data as string, 'base64');
    expect(data.length).toBe(samples.length * 4);
    expect(floats(data)).toEqual(samples.map((s) => s / 32768));
    expect(floats(data)).toEqual([0, 1 / 32768, -1 / 32768, 0.5, -0.5, 0.999969482421875, -1]);
    expect(frame.context_id).toBe('f');
    const plain = sentJson(oneFrame(dialect.audio({ requestId: 'c1', context: 's' }, pcm16(samples), SPAN)));
    expect(Buffer.from(plain.data as string, 'base64')).toEqual(Buffer.from(pcm16(samples)));
  });

  it('answers a flush with flush_done; chunks carry the number of the flush they come before', () => {
    const dialect = cartesiaDialect(engine);
    const turn = { requestId: 'c1', context: 'a' };
    const flushId = () => sentJson(oneFrame(dialect.audio(turn, pcm16([1, 2]), SPAN))).flush_id;
    expect(flushId()).toBe(1);
    expect(dialect.mark(turn, 'flush', 0.5)).toStrictEqual({
      type: 'flush_done',
      done: false,
      flush_done: true,
      flush_id: 1,
      status_code: 206,
      context_id: 'a',
    });
    expect(flushId()).toBe(2);
    expect(dialect.mark(turn, 'flush', 0.9)).toMatchObject({ flush_id: 2 });
    // Each turn counts its own, from 1.
    expect(
      sentJson(oneFrame(dialect.audio({ requestId: 'c2', context: 'b' }, pcm16([1]), SPAN))).flush_id,
    ).toBe(1);
    dialect.ended!(turn);
    expect(flushId()).toBe(1);
  });

  it('carries at most 16384 bytes of audio in a chunk, as Cartesia does: 8192 of PCM16 widened to floats', () => {
    const dialect = cartesiaDialect(engine);
    expect(dialect.maxAudioBytes!({ requestId: 'c1', context: 'a' })).toBe(16_384);
    expect(dialect.maxAudioBytes!({ requestId: 'f2', context: 'a' })).toBe(8192);
  });

  it('sends words as timestamps messages', () => {
    const dialect = cartesiaDialect(engine);
    expect(
      dialect.words({ requestId: 'c1', context: 'a' }, [
        { word: 'Hello', start_s: 0, end_s: 0.32 },
        { word: 'world', start_s: 0.32, end_s: 0.71 },
      ]),
    ).toStrictEqual({
      type: 'timestamps',
      done: false,
      status_code: 206,
      context_id: 'a',
      word_timestamps: { words: ['Hello', 'world'], start: [0, 0.32], end: [0.32, 0.71] },
    });
  });

  it('ends a request with done, and a cancel with done, cancelled and heard', () => {
    const dialect = cartesiaDialect(engine);
    expect(dialect.complete({ requestId: 'c1', context: 'a' }, FIGURES)).toStrictEqual({
      type: 'done',
      done: true,
      status_code: 200,
      context_id: 'a',
    });
    expect(dialect.contextClosed('a', ['c1'], HEARD)).toStrictEqual({
      type: 'done',
      done: true,
      status_code: 200,
      context_id: 'a',
      cancelled: true,
      heard: HEARD,
    });
    expect(dialect.contextClosed('a', [], undefined)).toStrictEqual({
      type: 'done',
      done: true,
      status_code: 200,
      context_id: 'a',
      cancelled: true,
    });
  });

  it('sends nothing for start, marks and cancels, and opens with nothing', () => {
    const dialect = cartesiaDialect(engine);
    expect(dialect.opening('s1')).toEqual([]);
    expect(dialect.start({ requestId: 'c1', context: 'a' })).toBeUndefined();
    expect(dialect.mark({ requestId: 'c1', context: 'a' }, 'm', 1)).toBeUndefined();
    expect(dialect.cancelled('c1', ['c1'], HEARD, 'a')).toBeUndefined();
    expect(dialect.defaults).toEqual({});
  });

  it.each([
    ['context_closed', 409, 'context closed'],
    ['too_many_contexts', 429, 'too many contexts'],
    ['invalid_option', 400, 'invalid option'],
    ['voice_not_found', 400, 'voice not found'],
    ['busy', 503, 'busy'],
    ['internal_error', 500, 'internal error'],
  ] as const)('words a %s error with status %d', (code, status, title) => {
    const dialect = cartesiaDialect(engine);
    expect(dialect.error(body(code, 'It failed.', 'c7'), 'a')).toStrictEqual({
      type: 'error',
      done: true,
      status_code: status,
      error: 'It failed.',
      title,
      message: 'It failed.',
      error_code: code,
      request_id: 'c7',
      context_id: 'a',
    });
    expect(dialect.error(body(code, 'It failed.'))).toStrictEqual({
      type: 'error',
      done: true,
      status_code: status,
      error: 'It failed.',
      title,
      message: 'It failed.',
      error_code: code,
    });
  });
});

describe('vendorVoice', () => {
  it('maps a table id, and takes a Kokoro id or blend as it is', () => {
    expect(vendorVoice('pNInz6obpgDQGcFmaJgB', ELEVENLABS_VOICES, engine)).toBe('am_adam');
    expect(vendorVoice('71a7ad14-091c-4e8e-a314-022ece01c121', CARTESIA_VOICES, engine)).toBe('bf_emma');
    expect(vendorVoice('af_sky', ELEVENLABS_VOICES, engine)).toBe('af_sky');
    expect(vendorVoice('af_bella+af_sky', CARTESIA_VOICES, engine)).toBe('af_bella+af_sky');
  });

  it('maps every vendor voice to a voice of the catalog', () => {
    for (const table of [ELEVENLABS_VOICES, CARTESIA_VOICES]) {
      for (const [id, kokoro] of Object.entries(table)) {
        expect(vendorVoice(id, table, engine)).toBe(kokoro);
        expect(() => engine.voices.resolve(kokoro)).not.toThrow();
      }
    }
  });

  it.each([
    ['nope', ELEVENLABS_VOICES],
    ['pNInz6obpgDQGcFmaJgB', CARTESIA_VOICES],
    ['a0e99841-438c-4a64-b679-ae501e7d6091', ELEVENLABS_VOICES],
    ['constructor', ELEVENLABS_VOICES],
    ['__proto__', CARTESIA_VOICES],
  ] as const)('refuses %s where it is not mapped', (id, table) => {
    expectError(
      thrown(() => vendorVoice(id, table, engine)),
      'voice_not_found',
      new RegExp(
        `^Unknown voice "${id}": name a Kokoro voice \\(such as af_heart, or a blend af_bella\\+af_sky\\) or one of the mapped vendor voice ids listed in docs/protocol\\.md$`,
      ),
      'voice',
    );
  });

  it('quotes at most 64 characters of an unknown id', () => {
    const err = thrown(() => vendorVoice('v'.repeat(100), ELEVENLABS_VOICES, engine));
    expectError(err, 'voice_not_found', new RegExp(`^Unknown voice "${'v'.repeat(64)}": `), 'voice');
  });
});

describe('elevenLabsOutput', () => {
  // Every output_format ElevenLabs documents (its SDKs' AllowedOutputFormats).
  const outputs = new Map<string, VendorOutput>([
    ['mp3_22050_32', { format: 'mp3', sampleRate: 22050 }],
    ['mp3_24000_48', { format: 'mp3', sampleRate: 24000 }],
    ['mp3_44100_32', { format: 'mp3', sampleRate: 44100 }],
    ['mp3_44100_64', { format: 'mp3', sampleRate: 44100 }],
    ['mp3_44100_96', { format: 'mp3', sampleRate: 44100 }],
    ['mp3_44100_128', { format: 'mp3', sampleRate: 44100 }],
    ['mp3_44100_192', { format: 'mp3', sampleRate: 44100 }],
    ['pcm_8000', { format: 'pcm', sampleRate: 8000 }],
    ['pcm_16000', { format: 'pcm', sampleRate: 16000 }],
    ['pcm_22050', { format: 'pcm', sampleRate: 22050 }],
    ['pcm_24000', { format: 'pcm', sampleRate: 24000 }],
    ['pcm_32000', { format: 'pcm', sampleRate: 32000 }],
    ['pcm_44100', { format: 'pcm', sampleRate: 44100 }],
    ['pcm_48000', { format: 'pcm', sampleRate: 48000 }],
    ['ulaw_8000', { format: 'mulaw', sampleRate: 8000 }],
    ['alaw_8000', { format: 'alaw', sampleRate: 8000 }],
    ['opus_48000_32', { format: 'opus', sampleRate: 48000 }],
    ['opus_48000_64', { format: 'opus', sampleRate: 48000 }],
    ['opus_48000_96', { format: 'opus', sampleRate: 48000 }],
    ['opus_48000_128', { format: 'opus', sampleRate: 48000 }],
    ['opus_48000_192', { format: 'opus', sampleRate: 48000 }],
    ['wav_16000', { format: 'wav', sampleRate: 16000 }],
  ]);
  it.each([...outputs])('%s', (value, expected) => {
    expect(elevenLabsOutput(value, 'mp3_44100_128')).toStrictEqual(expected);
  });

  it('falls back when none is named', () => {
    expect(elevenLabsOutput(undefined, 'pcm_24000')).toStrictEqual({ format: 'pcm', sampleRate: 24000 });
  });

  it.each([
    [
      'flac_44100',
      /^output_format "flac_44100" is not supported; use pcm_<rate> \(8000, 16000, 22050, 24000, 32000, 44100, 48000\), ulaw_8000, alaw_8000, mp3_<rate>_<bitrate> or opus_48000_<bitrate>$/,
    ],
    ['PCM_16000', /^output_format "PCM_16000" is not supported/],
    ['mp3_44100_128_x', /^output_format "mp3_44100_128_x" is not supported/],
    [`${'x'.repeat(60)}`, new RegExp(`^output_format "${'x'.repeat(40)}" is not supported`)],
    [
      'pcm_11025',
      /^output_format pcm_11025: sample rate 11025 is not offered for it; use one of 8000, 16000, 22050, 24000, 32000, 44100, 48000$/,
    ],
    ['mp3_32000_64', /^output_format mp3_32000_64: sample rate 32000 is not offered for it/],
    ['mp3_16_128', /^output_format mp3_16_128: sample rate 16 is not offered for it/],
    [
      'opus_22050_64',
      /^output_format opus_22050_64: sample rate 22050 is not offered for it; use one of 8000, 16000, 24000, 48000$/,
    ],
  ])('refuses %s', (value, message) => {
    expectError(
      thrown(() => elevenLabsOutput(value, 'mp3_44100_128')),
      'invalid_option',
      message,
      'output_format',
    );
  });
});

describe('cartesiaOutput', () => {
  const ALL = ['raw', 'wav', 'mp3'];
  const outputs: [Record<string, unknown>, readonly string[], VendorOutput][] = [
    [
      { container: 'raw', encoding: 'pcm_s16le', sample_rate: 16000 },
      ['raw'],
      { format: 'pcm', sampleRate: 16000 },
    ],
    [
      { container: 'raw', encoding: 'pcm_f32le', sample_rate: 24000 },
      ['raw'],
      { format: 'pcm', sampleRate: 24000, float: true },
    ],
    [
      { container: 'raw', encoding: 'pcm_mulaw', sample_rate: 8000 },
      ['raw'],
      { format: 'mulaw', sampleRate: 8000 },
    ],
    [
      { container: 'raw', encoding: 'pcm_alaw', sample_rate: 8000 },
      ['raw'],
      { format: 'alaw', sampleRate: 8000 },
    ],
    [
      { container: 'wav', encoding: 'pcm_s16le', sample_rate: 22050 },
      ALL,
      { format: 'wav', sampleRate: 22050 },
    ],
    [{ container: 'mp3', sample_rate: 44100, bit_rate: 128000 }, ALL, { format: 'mp3', sampleRate: 44100 }],
    [
      { container: 'mp3', encoding: 'pcm_f32le', sample_rate: 24000 },
      ALL,
      { format: 'mp3', sampleRate: 24000 },
    ],
    ...FORMATS.pcm.rates.map((rate): [Record<string, unknown>, readonly string[], VendorOutput] => [
      { container: 'raw', encoding: 'pcm_s16le', sample_rate: rate },
      ['raw'],
      { format: 'pcm', sampleRate: rate },
    ]),
  ];
  it.each(outputs)('%j in %j', (value, containers, expected) => {
    expect(cartesiaOutput(value, containers)).toStrictEqual(expected);
  });

  const refusals: [unknown, readonly string[], RegExp][] = [
    [null, ['raw'], /^output_format should be an object such as \{"container": "raw"/],
    ['raw', ['raw'], /^output_format should be an object/],
    [[], ['raw'], /^output_format should be an object/],
    [undefined, ['raw'], /^output_format should be an object/],
    [{ container: 'wav', encoding: 'pcm_s16le', sample_rate: 24000 }, ['raw'], /: container should be raw$/],
    [{ container: 'mp3', sample_rate: 24000 }, ['raw', 'wav'], /: container should be raw or wav$/],
    [{ encoding: 'pcm_s16le', sample_rate: 24000 }, ['raw'], /: container should be raw$/],
    [
      { container: 'raw', encoding: 'pcm_s16le', sample_rate: '24000' },
      ['raw'],
      /: sample_rate should be a number$/,
    ],
    [{ container: 'raw', encoding: 'pcm_s16le' }, ['raw'], /: sample_rate should be a number$/],
    [
      { container: 'raw', sample_rate: 24000 },
      ['raw'],
      /: encoding should be pcm_s16le, pcm_f32le, pcm_mulaw or pcm_alaw$/,
    ],
    [
      { container: 'raw', encoding: 'pcm_s24le', sample_rate: 8000 },
      ['raw'],
      /: encoding should be pcm_s16le, pcm_f32le, pcm_mulaw or pcm_alaw$/,
    ],
    [
      { container: 'raw', encoding: 'toString', sample_rate: 8000 },
      ['raw'],
      /: encoding should be pcm_s16le/,
    ],
    [
      { container: 'wav', encoding: 'pcm_f32le', sample_rate: 24000 },
      ALL,
      /: a wav container holds pcm_s16le here$/,
    ],
    [
      { container: 'wav', encoding: 'pcm_mulaw', sample_rate: 8000 },
      ALL,
      /: a wav container holds pcm_s16le here$/,
    ],
    [
      { container: 'raw', encoding: 'pcm_mulaw', sample_rate: 16000 },
      ['raw'],
      new RegExp(`: sample rate 16000 is not offered for it; use one of ${FORMATS.mulaw.rates.join(', ')}$`),
    ],
    [
      { container: 'raw', encoding: 'pcm_s16le', sample_rate: 44000 },
      ['raw'],
      new RegExp(`: sample rate 44000 is not offered for it; use one of ${FORMATS.pcm.rates.join(', ')}$`),
    ],
    [
      { container: 'raw', encoding: 'pcm_f32le', sample_rate: 12000 },
      ['raw'],
      /sample rate 12000 is not offered/,
    ],
    [{ container: 'mp3', sample_rate: 32000 }, ALL, /sample rate 32000 is not offered/],
    [
      { container: 'wav', encoding: 'pcm_s16le', sample_rate: 11025 },
      ALL,
      /sample rate 11025 is not offered/,
    ],
  ];
  it.each(refusals)('refuses %j in %j', (value, containers, message) => {
    const err = thrown(() => cartesiaOutput(value, containers));
    expectError(err, 'invalid_option', message, 'output_format');
    expect((err as TtsError).message).toMatch(/^output_format /);
  });
});

describe('pcm16ToFloat32', () => {
  it('divides each sample by 32768', () => {
    const out = pcm16ToFloat32(pcm16([0, 1, -1, 16384, -16384, 32767, -32768]));
    expect(out.length).toBe(28);
    expect(floats(out)).toEqual([0, 1 / 32768, -1 / 32768, 0.5, -0.5, 0.999969482421875, -1]);
  });

  it('ignores an odd trailing byte and takes nothing to nothing', () => {
    expect(floats(pcm16ToFloat32(new Uint8Array([0x00, 0x40, 0xff])))).toEqual([0.5]);
    expect(pcm16ToFloat32(new Uint8Array([0x7f])).length).toBe(0);
    expect(pcm16ToFloat32(new Uint8Array(0)).length).toBe(0);
  });

  it('reads a view from its byte offset, and only its bytes', () => {
    const buffer = new Uint8Array([0xaa, 0x00, 0x80, 0x00, 0x40, 0xbb, 0xcc]).buffer;
    const view = new Uint8Array(buffer, 1, 4);
    const out = pcm16ToFloat32(view);
    expect(out.byteOffset).toBe(0);
    expect(out.length).toBe(8);
    expect(floats(out)).toEqual([-1, 0.5]);
    expect(floats(pcm16ToFloat32(new Uint8Array(buffer, 2, 2)))).toEqual([128 / 32768]);
  });
});

describe('vendorSpeed', () => {
  const exportWith = (speedType: 'int32' | 'float32') =>
    ({ info: { contract: { speedType } } }) as unknown as Parameters<typeof vendorSpeed>[1];

  it('rounds a speed in range for an export whose speed input is int32, to 1 at least', () => {
    const int32 = exportWith('int32');
    expect([0.7, 1.1, 1.4, 1.6, 2].map((s) => vendorSpeed(s, int32))).toEqual([1, 1, 1, 2, 2]);
  });

  it('leaves a speed out of range (the parser refuses it), a non-number, and float32 exports alone', () => {
    expect(vendorSpeed(3, exportWith('int32'))).toBe(3);
    expect(vendorSpeed('fast', exportWith('int32'))).toBe('fast');
    expect(vendorSpeed(1.1, exportWith('float32'))).toBe(1.1);
  });
});
