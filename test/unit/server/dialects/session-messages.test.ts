/**
 * How a WebSocket message becomes one of the session's commands, in the project's own protocol
 * (parseMessage) and in Deepgram's v1 and v2 (parseDeepgramMessage), what Deepgram's connection
 * query may ask for, and the frames each Deepgram dialect answers with (deepgramDialect).
 */
import { describe, expect, it } from 'vitest';
import { parseConfig } from '../../../../dist/server/config/config.js';
import {
  deepgramDialect,
  deepgramVersion,
  parseDeepgramMessage,
} from '../../../../dist/server/dialects/deepgram/socket.js';
import { TtsError } from '../../../../dist/server/http/errors.js';
import type { Command } from '../../../../dist/server/dialects/dialect.js';
import { parseJsonObject } from '../../../../dist/server/dialects/messages.js';
import { parseMessage } from '../../../../dist/server/dialects/native/messages.js';
import { fakeEngine } from '../../../app/fake-engine.ts';

const bytes = (text: string) => Buffer.from(text);
const INVALID_UTF8 = Buffer.from([0x7b, 0x22, 0xff, 0xfe, 0x22, 0x7d]);

/** The error `run` throws. */
function thrown(run: () => unknown): TtsError {
  try {
    run();
  } catch (err) {
    expect(err).toBeInstanceOf(TtsError);
    return err as TtsError;
  }
  throw new Error('nothing was thrown');
}

describe('parseMessage', () => {
  const commands = new Map<string, Command>([
    ['Hello there.', { kind: 'request', fields: { text: 'Hello there.' } }],
    ['  [laughs] Plain text.', { kind: 'request', fields: { text: '  [laughs] Plain text.' } }],
    ['[1, 2]', { kind: 'request', fields: { text: '[1, 2]' } }],
    ['{"text":"Hi."}', { kind: 'request', fields: { text: 'Hi.' } }],
    [' \n{"text":"Hi.","voice":"af_sky"}', { kind: 'request', fields: { text: 'Hi.', voice: 'af_sky' } }],
    ['{"type":"synthesize","text":"Hi."}', { kind: 'request', fields: { type: 'synthesize', text: 'Hi.' } }],
    ['{"type":"Synthesize","text":"Hi."}', { kind: 'request', fields: { type: 'Synthesize', text: 'Hi.' } }],
    ['{"voice":"af_sky"}', { kind: 'request', fields: { voice: 'af_sky' } }],
    ['{"type":"close"}', { kind: 'close' }],
    ['{"type":"Close","text":"ignored"}', { kind: 'close' }],
    ['{"type":"append","text":"Hel"}', { kind: 'append', fields: { type: 'append', text: 'Hel' } }],
    ['{"type":"FLUSH"}', { kind: 'flush', fields: { type: 'FLUSH' } }],
    ['{"type":"cancel"}', { kind: 'cancel', requestId: undefined }],
    ['{"type":"clear"}', { kind: 'cancel', requestId: undefined }],
    ['{"type":"Interrupt","request_id":"r1"}', { kind: 'cancel', requestId: 'r1' }],
  ]);
  it.each([...commands])('%s', (message, command) => {
    expect(parseMessage(bytes(message))).toEqual(command);
  });

  const refusals: [string, Buffer, string, RegExp, string | undefined][] = [
    [
      'invalid UTF-8',
      INVALID_UTF8,
      'invalid_utf8',
      /^The message is not valid UTF-8 text; send UTF-8/,
      undefined,
    ],
    [
      'broken JSON',
      bytes('{"text": "unterminated'),
      'invalid_json',
      /^The message starts with "\{" but is not valid JSON \(.+\); send a JSON object such as \{"text": "Hello"\}, or plain text that does not start with "\{"$/,
      undefined,
    ],
    ['JSON and more', bytes('{}}'), 'invalid_json', /not valid JSON/, undefined],
    [
      'an unknown type',
      bytes('{"type":"dance","request_id":"u1"}'),
      'unknown_type',
      /^Unknown message type "dance"; should be "synthesize" \(or no type\) for a text to speak, "append" and "flush" for text as it is written, "cancel" to stop, or "close" to end the session$/,
      'u1',
    ],
    ['a numeric type', bytes('{"type":7}'), 'unknown_type', /^Unknown message type 7;/, undefined],
    ['a null type', bytes('{"type":null}'), 'unknown_type', /^Unknown message type null;/, undefined],
    [
      'an object as type',
      bytes('{"type":{"a":1}}'),
      'unknown_type',
      /^Unknown message type an object;/,
      undefined,
    ],
    ['an array as type', bytes('{"type":[1]}'), 'unknown_type', /^Unknown message type an array;/, undefined],
    [
      'a long type, cut',
      bytes(JSON.stringify({ type: 'x'.repeat(100) })),
      'unknown_type',
      /^Unknown message type "x{40}…";/,
      undefined,
    ],
    [
      'an unknown type with an unusable request id',
      bytes(JSON.stringify({ type: 'dance', request_id: 'r'.repeat(129) })),
      'unknown_type',
      /dance/,
      undefined,
    ],
    ...['""', '5', JSON.stringify('r'.repeat(129))].map(
      (id): [string, Buffer, string, RegExp, string | undefined] => [
        `a cancel with request_id ${id.slice(0, 8)}`,
        bytes(`{"type":"cancel","request_id":${id}}`),
        'invalid_option',
        /^request_id on a cancel should be the id of a request of this session .*; leave it out to cancel everything$/,
        undefined,
      ],
    ),
  ];
  it.each(refusals)('refuses %s', (_name, message, code, text, requestId) => {
    const err = thrown(() => parseMessage(message));
    expect(err.code).toBe(code);
    expect(err.message).toMatch(text);
    expect(err.requestId).toBe(requestId);
  });

  it('parseJsonObject refuses JSON that is not one object', () => {
    for (const json of ['[1]', 'null', '"text"']) {
      const err = thrown(() => parseJsonObject(json));
      expect(err.code).toBe('invalid_json');
      expect(err.message).toBe('The message should be one JSON object such as {"text": "Hello"}');
    }
  });
});

describe('parseDeepgramMessage', () => {
  const commands = new Map<string, Command>([
    ['{"type":"Speak","text":"Hello.","voice":"ignored"}', { kind: 'append', fields: { text: 'Hello.' } }],
    [' {"type":"speak","text":"Hi."}', { kind: 'append', fields: { text: 'Hi.' } }],
    ['{"type":"Flush"}', { kind: 'flush', fields: {} }],
    ['{"type":"Clear"}', { kind: 'cancel', requestId: undefined }],
    ['{"type":"Close"}', { kind: 'close' }],
  ]);
  it.each([...commands])('%s', (message, command) => {
    expect(parseDeepgramMessage(bytes(message))).toEqual(command);
  });

  it.each([
    ['{"type":"Speak","text":"Hi."}', { kind: 'append', fields: { text: 'Hi.' } }],
    ['{"type":"Flush"}', { kind: 'flush', fields: {} }],
    [
      '{"type":"Interrupt","playback_offset":{"type":"time_ms","value":500}}',
      { kind: 'cancel', requestId: undefined },
    ],
    ['{"type":"Close"}', { kind: 'close' }],
  ])('v2: %s', (message, command) => {
    expect(parseDeepgramMessage(bytes(message), 2)).toEqual(command);
  });

  it.each([
    [
      1,
      '{"type":"Interrupt"}',
      /^Unknown message type "Interrupt"; should be Speak, Flush, Clear, KeepAlive or Close$/,
    ],
    [
      2,
      '{"type":"Clear"}',
      /^Unknown message type "Clear"; should be Speak, Flush, Interrupt, KeepAlive or Close$/,
    ],
    [
      2,
      '{"type":"Configure","speed":1.1}',
      /^Configure is not supported here; set the speed in the connection's query/,
    ],
  ] as const)('v%i refuses %s', (version, message, text) => {
    const err = thrown(() => parseDeepgramMessage(bytes(message), version));
    expect(err.code).toBe('unknown_type');
    expect(err.message).toMatch(text);
  });

  it.each([
    [
      'plain text',
      bytes('Hello.'),
      'invalid_json',
      /^Send JSON messages such as \{"type": "Speak", "text": "Hello"\}$/,
    ],
    ['broken JSON', bytes('{"type":'), 'invalid_json', /not valid JSON/],
    ['invalid UTF-8', INVALID_UTF8, 'invalid_utf8', /not valid UTF-8/],
    [
      'an unknown type',
      bytes('{"type":"Dance"}'),
      'unknown_type',
      /^Unknown message type "Dance"; should be Speak, Flush, Clear, KeepAlive or Close$/,
    ],
    ['no type', bytes('{"text":"Hi."}'), 'unknown_type', /^Unknown message type "undefined";/],
    ['the native synthesize', bytes('{"type":"synthesize","text":"Hi."}'), 'unknown_type', /"synthesize"/],
  ])('refuses %s', (_name, message, code, text) => {
    const err = thrown(() => parseDeepgramMessage(message));
    expect(err.code).toBe(code);
    expect(err.message).toMatch(text);
  });
});

describe('deepgramDialect', () => {
  const config = parseConfig({ KOKORO_MODEL_DIR: '/nonexistent' });
  const engine = fakeEngine();
  const dialect = (query: string) => deepgramDialect(new URLSearchParams(query), engine, config);

  it.each<[string, Record<string, unknown>]>([
    ['', { voice: 'af_heart', format: 'pcm', sample_rate: 24000 }],
    ['model=af_bella%2Baf_sky', { voice: 'af_bella+af_sky', format: 'pcm', sample_rate: 24000 }],
    ['encoding=mulaw', { voice: 'af_heart', format: 'mulaw', sample_rate: 8000 }],
    ['encoding=alaw', { voice: 'af_heart', format: 'alaw', sample_rate: 8000 }],
    ['encoding=alaw&sample_rate=16000', { format: 'alaw', sample_rate: 16000 }],
    ['model=aura-2-helena-en', { voice: 'af_bella' }],
    ['model=flux-alexis-en', { voice: 'af_heart' }],
    ['encoding=linear16&sample_rate=16000', { format: 'pcm', sample_rate: 16000 }],
    ['speed=1.5', { speed: 1.5 }],
    ['speed=0.5&model=bf_emma', { voice: 'bf_emma', speed: 0.5 }],
  ])('query %j gives the session’s defaults', (query, defaults) => {
    expect(dialect(query).defaults).toMatchObject(defaults);
  });

  it('opens with Metadata, and a Warning when the model is not a Kokoro voice', () => {
    expect(dialect('model=af_sky').opening('s1')).toEqual([
      {
        type: 'Metadata',
        request_id: 's1',
        model_name: 'af_sky',
        model_version: 'kokoro-82m-v1.0',
        model_uuid: expect.stringMatching(/^[0-9a-f-]{36}$/),
      },
    ]);
    const fallback = dialect(`model=aura-2-zeus-en${'x'.repeat(100)}`);
    expect(fallback.defaults).toMatchObject({ voice: 'af_heart' });
    const description = `model "aura-2-zeus-en${'x'.repeat(50)}" is not a Kokoro voice; speaking with the default voice af_heart`;
    expect(fallback.opening('s2')[1]).toEqual({
      type: 'Warning',
      code: 'MODEL_NOT_FOUND',
      description,
      warn_msg: description,
    });
    // A Deepgram model the vendor table maps speaks with its voice, without a Warning.
    expect(dialect('model=aura-2-andromeda-en').opening('s3')).toEqual([
      expect.objectContaining({ type: 'Metadata', model_name: 'af_heart' }),
    ]);
  });

  it('answers flushes and clears with numbered Flushed and Cleared, errors as Warnings, and nothing else', () => {
    const d = dialect('');
    const turn = { requestId: 'r' };
    expect([d.complete(turn, undefined), d.complete(turn, undefined)]).toEqual([
      { type: 'Flushed', sequence_id: 0 },
      { type: 'Flushed', sequence_id: 1 },
    ]);
    expect(d.cancelled(undefined, [], undefined)).toEqual({ type: 'Cleared', sequence_id: 0 });
    const heard = { request_id: 'r', samples: 2400, sample_rate: 24000, ms: 100 };
    expect(d.cancelled(undefined, ['r'], heard)).toEqual({ type: 'Cleared', sequence_id: 1, heard });
    expect(d.error({ type: 'error', code: 'busy', message: 'queue_saturated: full' })).toEqual({
      type: 'Warning',
      description: 'queue_saturated: full',
      code: 'busy',
      warn_msg: 'queue_saturated: full',
    });
    expect([d.start(turn), d.words(turn, []), d.contextClosed('c', undefined, undefined)]).toEqual([
      undefined,
      undefined,
      undefined,
    ]);
  });

  it.each([
    ['encoding=opus', /^encoding "opus" is not supported; use linear16, mulaw or alaw$/],
    [
      'encoding=alaw&sample_rate=24000',
      /^sample_rate "24000" is not supported for alaw; use one of 8000, 16000$/,
    ],
    [`encoding=${'o'.repeat(100)}`, /^encoding "o{32}" is not supported/],
    ['encoding=mulaw&sample_rate=44100', /^sample_rate "44100" is not supported for mulaw; use one of 8000$/],
    [
      'sample_rate=11025',
      /^sample_rate "11025" is not supported for linear16; use one of 8000, 16000, 22050, 24000, 32000, 44100, 48000$/,
    ],
    ['sample_rate=', /^sample_rate "" is not supported/],
    ['speed=2.5', /^speed "2.5" should be from 0.5 to 2$/],
    ['speed=fast', /^speed "fast" should be from 0.5 to 2$/],
    ['speed=', /^speed "" should be from 0.5 to 2$/],
  ])('refuses the query %j', (query, message) => {
    const err = thrown(() => dialect(query));
    expect(err.code).toBe('invalid_option');
    expect(err.message).toMatch(message);
  });

  it.each([
    ['v1/speak', 1],
    ['/v1/speak', 1],
    ['//v1/speak?model=x', 1],
    ['v2/speak', 2],
    ['/v2/speak?model=flux-alexis-en', 2],
    ['v1/speak/more', undefined],
    ['v3/speak', undefined],
    ['invocations', undefined],
    [undefined, undefined],
  ])('deepgramVersion(%j) is %s', (path, expected) => {
    expect(deepgramVersion(path)).toBe(expected);
  });
});

describe('deepgramDialect v2 (Flux)', () => {
  const config = parseConfig({ KOKORO_MODEL_DIR: '/nonexistent' });
  const engine = fakeEngine();
  const flux = (query = 'model=flux-alexis-en') =>
    deepgramDialect(new URLSearchParams(query), engine, config, 2);
  const figures = (audioS: number) => ({ audioS }) as never;
  const SPEECH_ID = /^dg_sp_[0-9a-f]{12}$/;
  const speak = (d: ReturnType<typeof flux>, text: string) =>
    d.parse(bytes(JSON.stringify({ type: 'Speak', text }))) as Command & { fields: { request_id: string } };

  it('opens with Connected naming the voice and the model', () => {
    expect(flux().opening('s1')).toEqual([
      {
        type: 'Connected',
        request_id: 's1',
        model_name: 'af_heart',
        model_version: 'kokoro-82m-v1.0',
        model_uuids: [expect.stringMatching(/^[0-9a-f-]{36}$/)],
      },
    ]);
  });

  it('names each turn: its Speaks and its Flush carry one speech id, the next turn another', () => {
    const d = flux();
    const first = speak(d, 'Hello ');
    const id = first.fields.request_id;
    expect(id).toMatch(SPEECH_ID);
    expect(first).toEqual({ kind: 'append', fields: { text: 'Hello ', request_id: id } });
    expect(speak(d, 'there.').fields.request_id).toBe(id);
    expect(d.parse(bytes('{"type":"Flush"}'))).toEqual({ kind: 'flush', fields: { request_id: id } });
    const next = speak(d, 'Again.').fields.request_id;
    expect(next).toMatch(SPEECH_ID);
    expect(next).not.toBe(id);
    // After an Interrupt, the next Speak starts a turn of its own.
    d.parse(bytes('{"type":"Interrupt"}'));
    expect(speak(d, 'After.').fields.request_id).not.toBe(next);
  });

  it('reports a turn: SpeechStarted, then SpeechMetadata and Flushed; SessionMetadata adds them up', () => {
    const d = flux();
    const id = speak(d, 'Héllo there.').fields.request_id;
    d.parse(bytes('{"type":"Flush"}'));
    expect(d.start({ requestId: id })).toEqual({ type: 'SpeechStarted', speech_id: id });
    expect(d.complete({ requestId: id }, figures(1.2345))).toEqual([
      {
        type: 'SpeechMetadata',
        speech_id: id,
        audio_duration_ms: 1235,
        input_character_count: 12,
        billable_character_count: 12,
        controls_applied: { pronunciations_applied: 0, breaks_applied: 0, pronunciation_warnings: 0 },
      },
      { type: 'Flushed', speech_id: id },
    ]);
    // A Flush with nothing to speak: a turn of no audio.
    const empty = (d.parse(bytes('{"type":"Flush"}')) as unknown as { fields: { request_id: string } }).fields
      .request_id;
    expect(d.complete({ requestId: empty }, undefined)).toEqual([
      expect.objectContaining({
        type: 'SpeechMetadata',
        speech_id: empty,
        audio_duration_ms: 0,
        input_character_count: 0,
      }),
      { type: 'Flushed', speech_id: empty },
    ]);
    expect(d.closing!()).toEqual({
      type: 'SessionMetadata',
      total_audio_duration_ms: 1235,
      total_input_character_count: 12,
      total_billable_character_count: 12,
    });
  });

  it('answers an Interrupt with SpeechInterrupted, or a Warning when no turn was cut', () => {
    const d = flux();
    const id = speak(d, 'Cut me.').fields.request_id;
    d.parse(bytes('{"type":"Interrupt"}'));
    const heard = { request_id: id, samples: 2400, sample_rate: 24000, ms: 100 };
    expect(d.cancelled(undefined, [id], heard)).toEqual({
      type: 'SpeechInterrupted',
      audio_played_ms: 100,
      metadata: {
        speech_id: id,
        audio_duration_ms: 100,
        input_character_count: 7,
        billable_character_count: 7,
        controls_applied: { pronunciations_applied: 0, breaks_applied: 0, pronunciation_warnings: 0 },
      },
      heard,
    });
    expect(d.cancelled(undefined, [], undefined)).toEqual({
      type: 'Warning',
      code: 'NO_ACTIVE_SPEECH',
      description: 'Interrupt arrived with no turn to interrupt',
      warn_msg: 'Interrupt arrived with no turn to interrupt',
    });
  });

  it('errors: a Warning for what the client sent, an Error for a failure of the server', () => {
    const d = flux();
    expect(d.error({ type: 'error', code: 'invalid_option', message: 'bad' })).toEqual({
      type: 'Warning',
      description: 'bad',
      code: 'invalid_option',
      warn_msg: 'bad',
    });
    expect(d.error({ type: 'error', code: 'inference_failed', message: 'Synthesis failed' })).toEqual({
      type: 'Error',
      code: 'inference_failed',
      description: 'Synthesis failed',
    });
  });

  it('a turn that fails ends its Speaks: the next Speak starts another turn', () => {
    const d = flux();
    const id = speak(d, 'Fails.').fields.request_id;
    d.ended!({ requestId: id });
    expect(speak(d, 'Next.').fields.request_id).not.toBe(id);
  });
});
