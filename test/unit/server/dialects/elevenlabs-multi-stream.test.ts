/**
 * ElevenLabs' multi-stream-input socket (dialects/elevenlabs/socket.ts): what each message of a
 * context becomes, and the error (code, message, param) of every input refused.
 */
import { describe, expect, it } from 'vitest';
import { elevenLabsDialect } from '../../../../dist/server/dialects/elevenlabs/socket.js';
import { engine, json, thrown, expectError, refusal } from './dialect-helpers.ts';

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
