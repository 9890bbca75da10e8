/**
 * The markup reader's segments (model/synthesis/script.ts): what a text becomes, the same whole or
 * streamed, where each part was written, and how a bad construct is skipped with the rest read on.
 */
import { describe, expect, it } from 'vitest';
import type { ResolvedVoice } from '../../../model/kokoro/voices.ts';
import { MarkupParser } from '../../../model/text/markup.ts';
import { Segmenter, scriptOf, type ScriptSettings, type Segment } from '../../../model/synthesis/script.ts';
import { parseRequestPronunciations } from '../../../model/text/pronunciations/index.ts';

const voice = (key: string): ResolvedVoice =>
  ({ key, lang: key.startsWith('b') ? 'b' : 'a', parts: [] }) as unknown as ResolvedVoice;

const SETTINGS: ScriptSettings = {
  voice: voice('af_heart'),
  speed: 1,
  resolveVoice: (spec) => voice(spec),
  firstChunkMinChars: 0,
};

/** Segments as short strings: `voice@speed: part|part`, `pause 500`, `mark m`. */
function shown(segments: readonly Segment[]): string[] {
  return segments.map((s) =>
    s.kind === 'pause'
      ? `pause ${s.ms}`
      : s.kind === 'mark'
        ? `mark ${s.name}`
        : `${s.voice.key}@${s.speed}: ${s.parts
            .map((p) =>
              'phonemes' in p
                ? `/${p.phonemes}/`
                : 'spoken' in p
                  ? `{${p.spoken}}`
                  : 'stress' in p
                    ? `<${p.stress}>`
                    : p.text,
            )
            .join('|')}`,
  );
}

describe('Segmenter', () => {
  it.each([
    [
      'Hello there. [pause:1s] How are you?',
      ['af_heart@1: Hello there.', 'pause 1000', 'af_heart@1: How are you?'],
    ],
    ['I think [pause:250ms] so.', ['af_heart@1: I think', 'pause 250', 'af_heart@1: so.']],
    ['Say [Kokoro](/kˈOkəɹO/) now.', ['af_heart@1: Say |/kˈOkəɹO/| now.']],
    ['One. [voice:bf_emma] Two.', ['af_heart@1: One.', 'bf_emma@1: Two.']],
    [
      '<speak><prosody rate="slow">Slow.</prosody> <mark name="m"/>Fast, <sub alias="sequel">SQL</sub>.</speak>',
      ['af_heart@0.75: Slow.', 'mark m', 'af_heart@1: Fast, |{sequel}|.'],
    ],
    ['<speak><s>a</s><s>b</s></speak>', ['af_heart@1: a', 'af_heart@1: b']],
  ])('%s', (text, expected) => {
    const { segments } = scriptOf(text, SETTINGS);
    expect(shown(segments)).toEqual(expected);
    // The same fed a character at a time.
    const streamed = new Segmenter(SETTINGS);
    const pieces = [...text].flatMap((c) => streamed.push(c));
    expect(shown([...pieces, ...streamed.end()])).toEqual(expected);
  });

  it('sentences appended with nothing between them (as Pipecat sends them) are read apart', () => {
    const pieces = ['I can help with that.', 'Your order ships today.', 'Is that all?', 'Great!'];
    const segmenter = new Segmenter(SETTINGS);
    const segments = [...pieces.flatMap((p) => segmenter.push(p)), ...segmenter.end()];
    expect(shown(segments)).toEqual(pieces.map((p) => `af_heart@1: ${p}`));
    // Each sentence is placed where it was written in the text the pieces make.
    const text = pieces.join('');
    const placed = segments.map((s) =>
      s.kind === 'speech' ? text.slice(s.parts[0]!.at, s.parts.at(-1)!.to) : '',
    );
    expect(placed).toEqual(pieces);
  });

  it('places every part in the text it was written in', () => {
    const text = '<speak>See <sub alias="World Wide Web">WWW</sub> and Kokoro &amp; more.</speak>';
    const { segments } = scriptOf(text, {
      ...SETTINGS,
      pronunciations: () => parseRequestPronunciations({ Kokoro: { alias: 'cocoa row' } }, 'a'),
    });
    const parts = segments.flatMap((s) => (s.kind === 'speech' ? s.parts : []));
    const placed = parts.map((p) => text.slice(p.at, p.to));
    expect(placed.slice(0, 4)).toEqual(['See ', '<sub alias="World Wide Web">WWW</sub>', ' and ', 'Kokoro']);
    // Text decoded from an entity is placed from where it starts (its length is the decoded one).
    expect(placed[4]).toMatch(/^ &amp;/);
  });

  it('skips a construct that cannot be spoken, reads on, and says why once', () => {
    const segmenter = new Segmenter(SETTINGS);
    expect(shown(segmenter.read('Hello. Wait [pause:').segments)).toEqual(['af_heart@1: Hello.']);
    const { segments, error } = segmenter.read('99s] and more. [voice:nobody');
    expect(String((error as Error).message)).toMatch(/over the maximum/);
    expect(segments).toEqual([]); // the sentence may go on: the chunker waits
    const end = segmenter.read(undefined);
    expect(String((end.error as Error).message)).toMatch(/\[voice:…\] is not closed/);
    expect(shown(end.segments)).toEqual(['af_heart@1: Wait  and more.']);
  });

  it('a voice the catalog refuses is the error, and the voice stays as it was', () => {
    const segmenter = new Segmenter({
      ...SETTINGS,
      resolveVoice: (spec) => {
        if (spec === 'zz_nobody') throw new Error('no voice zz_nobody');
        return voice(spec);
      },
    });
    const { segments, error } = segmenter.read('One. [voice:zz_nobody] Two.');
    expect((error as Error).message).toBe('no voice zz_nobody');
    expect(shown([...segments, ...segmenter.end()])).toEqual(['af_heart@1: One.', 'af_heart@1: Two.']);
  });
});

describe('Segmenter bounds: what a text makes, after its readings are applied', () => {
  const bounded = (chars: number, pauseMs: number, streamed = false): ScriptSettings => ({
    ...SETTINGS,
    pronunciations: () => parseRequestPronunciations({ a: { alias: 'one two three four' } }, 'a'),
    bounds: { chars, pauseMs, streamed },
  });

  it('a whole text whose readings pass the bound is refused, naming what was counted', () => {
    // "a a a." speaks 3 × 18 + 3 = 57 characters for the 6 it holds.
    expect(() => scriptOf('<speak>a a a.</speak>', bounded(56, 1000))).toThrow(
      expect.objectContaining({
        code: 'text_too_long',
        message: expect.stringContaining(
          'would speak 57 characters once its pronunciations and aliases are applied, over the limit of 56',
        ),
      }),
    );
    expect(shown(scriptOf('<speak>a a a.</speak>', bounded(57, 1000)).segments)).toHaveLength(1);
  });

  it('pauses past the bound in all are skipped with audio_too_long; the rest is read', () => {
    const segmenter = new Segmenter(bounded(1000, 1500));
    const { segments, error } = segmenter.read('One. [pause:1s] Two. [pause:1s] Three.');
    const rest = segmenter.read(undefined);
    expect(shown([...segments, ...rest.segments])).toEqual([
      'af_heart@1: One.',
      'pause 1000',
      'af_heart@1: Two.',
      'af_heart@1: Three.',
    ]);
    expect(error).toMatchObject({ code: 'audio_too_long' });
  });

  it('a skipped pause still ends the sentence before it', () => {
    const { segments } = new Segmenter(bounded(1000, 1000)).read('One [pause:1s] two [pause:1s] three.');
    expect(shown(segments)).toEqual(['af_heart@1: One', 'pause 1000', 'af_heart@1: two']);
  });

  it('a streamed text: its readings may add the bound to what was written; a sentence past it is dropped and said', () => {
    const segmenter = new Segmenter(bounded(60, 1000, true));
    // Each sentence's two readings add 2 × 17 = 34 characters. A sentence is handed out once what
    // follows it is seen.
    const sentence = 'Here we say a and a again now. ';
    expect(segmenter.read(sentence)).toEqual({ segments: [] });
    expect(segmenter.read(sentence).segments).toHaveLength(1);
    const third = segmenter.read('Then plain words come at the end. ');
    expect(third.segments).toEqual([]);
    expect(third.error).toMatchObject({
      code: 'text_too_long',
      message: expect.stringContaining('would add 68 characters to what it was sent, over the limit of 60'),
    });
    // Plain words add nothing: they are spoken.
    expect(shown(segmenter.read(undefined).segments)).toEqual([
      'af_heart@1: Then plain words come at the end.',
    ]);
  });
});

describe('MarkupParser after an error', () => {
  it('keeps what it read around the bad construct', () => {
    const parser = new MarkupParser();
    expect(() => parser.push('Hi [pause:99s] there')).toThrow(/over the maximum/);
    expect(parser.takeRecovered().map((e) => ('text' in e ? e.text : e.type))).toEqual(['Hi ', ' there']);
    expect(parser.push(' [pause:1s]').map((e) => e.type)).toEqual(['text', 'pause']);
  });
});

describe('Segmenter, seeded', () => {
  /** Pieces of markup, valid and not, that random texts are made of. */
  const TOKENS = [
    ...['<speak>', '</speak>', '<s>', '</s>', '<p>', '<break time="1s"/>', '<break/>', '<mark name="m"/>'],
    ...['<sub alias="x y">', '</sub>', '<phoneme ph="hɛlO" alphabet="kokoro">', '</phoneme>'],
    ...['<prosody rate="slow">', '</prosody>', '<voice name="bf_emma">', '</voice>', '<foo>', '</foo>'],
    ...['[pause:0.5s]', '[pause:99s]', '[voice:am_adam]', '[voice]', '[word](/wɜɹd/)', '[x](+1)'],
    ...['[', ']', '(', ')', '<', '>', '&amp;', '&', ';', ' ', '. ', 'Hello', 'world', ', ', '\n'],
    ...['<!-- c -->', '<![CDATA[ z ]]>'],
  ];

  function read(pieces: readonly string[]): { segments: string; error: string } {
    const segmenter = new Segmenter(SETTINGS);
    const segments: Segment[] = [];
    const errors: string[] = [];
    for (const piece of [...pieces, undefined]) {
      const { segments: out, error } = segmenter.read(piece);
      segments.push(...out);
      if (error !== undefined) errors.push((error as Error).message);
    }
    const parts = segments.map((s) => (s.kind === 'speech' ? [shown([s])[0], s.parts.map((p) => p.at)] : s));
    return { segments: JSON.stringify(parts), error: errors[0] ?? '' };
  }

  it('whole, a character at a time and split in two: the same segments, places and first error', () => {
    const failures: number[] = [];
    for (let seed = 1; seed <= 3000; seed++) {
      let state = seed;
      const next = () => (state = (state * 1103515245 + 12345) % 2147483648) / 2147483648;
      let text = next() < 0.5 ? '<speak>' : '';
      for (let n = 1 + Math.floor(next() * 12); n > 0; n--)
        text += TOKENS[Math.floor(next() * TOKENS.length)];
      const cut = Math.floor(next() * text.length);
      const whole = read([text]);
      if (
        JSON.stringify(read([...text])) !== JSON.stringify(whole) ||
        JSON.stringify(read([text.slice(0, cut), text.slice(cut)])) !== JSON.stringify(whole)
      )
        failures.push(seed);
    }
    expect(failures, 'seeds whose text reads differently streamed').toEqual([]);
  });
});
