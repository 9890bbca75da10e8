/**
 * The project's own protocol as a dialect (dialects/native/messages.ts) and the message helpers
 * every dialect shares (dialects/messages.ts): what each message becomes with and without
 * contexts, what each event is sent as, and the error (code, message, param) of every input
 * refused.
 */
import { describe, expect, it } from 'vitest';
import type { WordTiming } from '../../../../dist/model/engine.js';
import { TtsError } from '../../../../dist/server/http/errors.js';
import type { Command } from '../../../../dist/server/dialects/dialect.js';
import { MAX_CONTEXT_ID_BYTES, contextIdOf } from '../../../../dist/server/dialects/messages.js';
import {
  contextAudioFrame,
  nativeDialect,
  parseMessage,
} from '../../../../dist/server/dialects/native/messages.js';
import {
  bytes,
  json,
  thrown,
  expectError,
  SPAN,
  oneFrame,
  body,
  HEARD,
  FIGURES,
  idOfBytes,
} from './dialect-helpers.ts';

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
