import { describe, expect, it } from 'vitest';
import { cpuRatio } from './cpu-time.ts';
import {
  DEFAULT_MARKUP_LIMITS,
  MarkupParser,
  hasMarkup,
  mergeText,
  parseMarkup,
  type MarkupEvent,
  type MarkupLimits,
  type MarkupMode,
} from '../../../model/text/markup.ts';
import { TtsError } from '../../../protocol/errors.ts';

/** An event as the tables write it: text as a plain string, other events without their spans. */
type Shown = string | Record<string, unknown>;

function show(events: readonly MarkupEvent[]): Shown[] {
  return events.map((event) => {
    if (event.type === 'text') return event.text;
    return Object.fromEntries(Object.entries(event).filter(([key]) => key !== 'start' && key !== 'end'));
  });
}

const shape = (text: string, mode?: MarkupMode): Shown[] => show(parseMarkup(text, mode).events);

/** The message of the `invalid_markup` error a parse ends with, or `none`. */
function failure(text: string, mode?: MarkupMode, limits?: Partial<MarkupLimits>): string {
  try {
    parseMarkup(text, mode, limits);
    return 'none';
  } catch (err) {
    return err instanceof TtsError && err.code === 'invalid_markup' ? err.message : `other: ${String(err)}`;
  }
}

const pause = (ms: number): Shown => ({ type: 'pause', ms });
const style = (voice: string | undefined, rate = 1): Shown => ({ type: 'style', style: { voice, rate } });
const BOUNDARY: Shown = { type: 'boundary' };
const ph = (phonemes: string, text: string, alphabet = 'kokoro'): Shown => ({
  type: 'phonemes',
  phonemes,
  alphabet,
  text,
});
const S = (body: string): string => `<speak>${body}</speak>`;
const text = (t: string, start: number): MarkupEvent => ({
  type: 'text',
  text: t,
  start,
  end: start + t.length,
});

describe('plain text with bracket syntax (auto mode)', () => {
  const BLEND = 'af_bella(2)+af_sky(1)';
  const cases = new Map<string, Shown[]>([
    ['Hello world.', ['Hello world.']],
    ['', []],
    ['Wait [pause:1.5s] now', ['Wait ', pause(1500), ' now']],
    ['[pause:500ms]', [pause(500)]],
    ['[pause:2]', [pause(2000)]],
    ['[PAUSE: 1.5 s]', [pause(1500)]],
    ['[Pause : 250 MS]', [pause(250)]],
    ['[pause:0]', [pause(0)]],
    ['[pause:.5s]', [pause(500)]],
    ['[pause:10s]', [pause(10_000)]],
    ['[voice:af_bella]Hi', [style('af_bella'), 'Hi']],
    [`[voice:${BLEND}]a[voice:default]b`, [style(BLEND), 'a', style(undefined), 'b']],
    ['[voice: af_sky ]a[voice]b', [style('af_sky'), 'a', style(undefined), 'b']],
    ['[voice:af_sky][voice:af_sky]a[voice:default]', [style('af_sky'), 'a', style(undefined)]],
    ['[voice:default]a', ['a']],
    ['[Kokoro](/kˈOkəɹO/) speaks', [ph('kˈOkəɹO', 'Kokoro'), ' speaks']],
    ['[New York](/nˈu jˈɔɹk/)', [ph('nˈu jˈɔɹk', 'New York')]],
    ['[x](/a//)', [ph('a', 'x')]],
    ['[read](+1)', [{ type: 'stress', stress: '+1', text: 'read' }]],
    ['[read](-1)', [{ type: 'stress', stress: '-1', text: 'read' }]],
    ['[read](-2)', [{ type: 'stress', stress: '-2', text: 'read' }]],
    ['[read](0.5) it', [{ type: 'stress', stress: '0.5', text: 'read' }, ' it']],
    ['[x](#abc#)', ['[x](#abc#)']],
    ['[docs](/api/v1) and [x](/)', ['[docs](/api/v1) and [x](/)']],
    ['[x](+1 2) [y](1.2.3)', ['[x](+1 2) [y](1.2.3)']],
    ['[a] b [] [c]', ['[a] b [] [c]']],
    ['a [b c', ['a [b c']],
    ['a ] b [', ['a ] b [']],
    ['[[pause:1s]', ['[', pause(1000)]],
    ['[a [b](+1)', ['[a ', { type: 'stress', stress: '+1', text: 'b' }]],
    ['[pauses] [voices] [pause]', ['[pauses] [voices] [pause]']],
    ['[voice', ['[voice']],
    ['[pause', ['[pause']],
    ['[word](', ['[word](']],
    ['[word](/ab', ['[word](/ab']],
    ['a < b & c &amp; <speak>', ['a < b & c &amp; <speak>']],
    ['<p>not SSML</p>', ['<p>not SSML</p>']],
    ['<speaker>', ['<speaker>']],
    ['  [pause:1s]', ['  ', pause(1000)]],
  ]);
  for (const [input, expected] of cases) {
    it(JSON.stringify(input), () => expect(shape(input)).toEqual(expected));
  }

  it('reads nothing in none mode', () => {
    expect(shape('[pause:1s] <speak>&amp;</speak>', 'none')).toEqual(['[pause:1s] <speak>&amp;</speak>']);
  });

  it('reads brackets in SSML text too', () => {
    expect(shape('<speak>a [pause:1s] [x](/ks/)</speak>')).toEqual(['a ', pause(1000), ' ', ph('ks', 'x')]);
  });
});

describe('SSML', () => {
  const cases = new Map<string, Shown[]>([
    [S('Hello <break time="1.5s"/> world'), ['Hello ', pause(1500), ' world']],
    [S('a<break/>b'), ['a', pause(500), 'b']],
    [S('<break time="500ms"/>'), [pause(500)]],
    [S('<break strength="none"/>'), [pause(0)]],
    [S('<break strength="x-weak"/>'), [pause(100)]],
    [S('<break strength="weak"/>'), [pause(250)]],
    [S('<break strength="medium"/>'), [pause(500)]],
    [S('<break strength="strong"/>'), [pause(1000)]],
    [S('<break strength="x-strong"/>'), [pause(2000)]],
    [S('<break strength="weak" time="3s"/>'), [pause(3000)]],
    [S("<break time='2s'></break>"), [pause(2000)]],
    [S('<p>One</p><s>Two</s>'), [BOUNDARY, 'One', BOUNDARY, BOUNDARY, 'Two', BOUNDARY]],
    [S('<phoneme ph="təˈmɑːtoʊ">tomato</phoneme>'), [ph('təˈmɑːtoʊ', 'tomato', 'ipa')]],
    [
      S('<phoneme alphabet="ipa" ph="a">x</phoneme><phoneme alphabet="kokoro" ph="b">y</phoneme>'),
      [ph('a', 'x', 'ipa'), ph('b', 'y')],
    ],
    [S('<phoneme alphabet="misaki" ph="b"/>'), [ph('b', '')]],
    [S('<sub alias="World Wide Web">WWW</sub>'), [{ type: 'alias', spoken: 'World Wide Web', text: 'WWW' }]],
    [S('<sub alias="AT&amp;T">ATT</sub>'), [{ type: 'alias', spoken: 'AT&T', text: 'ATT' }]],
    [
      S('<say-as interpret-as="date" format="mdy" detail="1">1/2</say-as>'),
      [{ type: 'say-as', interpretAs: 'date', format: 'mdy', detail: '1', text: '1/2' }],
    ],
    [S('<say-as interpret-as="spell">ab</say-as>'), [{ type: 'say-as', interpretAs: 'spell', text: 'ab' }]],
    [S('<mark name="here"/>a'), [{ type: 'mark', name: 'here' }, 'a']],
    [S('<emphasis level="strong">big</emphasis> deal'), ['big deal']],
    [S('<emphasis/>a'), ['a']],
    [S('<voice name="af_sky">a</voice>b'), [style('af_sky'), 'a', style(undefined), 'b']],
    [S('<voice name="default">a</voice>'), ['a']],
    [S('<prosody rate="x-slow">a</prosody>'), [style(undefined, 0.5), 'a', style(undefined)]],
    [S('<prosody rate="slow">a</prosody>'), [style(undefined, 0.75), 'a', style(undefined)]],
    [S('<prosody rate="medium">a</prosody>'), ['a']],
    [S('<prosody rate="default">a</prosody>'), ['a']],
    [S('<prosody rate="fast">a</prosody>'), [style(undefined, 1.25), 'a', style(undefined)]],
    [S('<prosody rate="x-fast">a</prosody>'), [style(undefined, 1.5), 'a', style(undefined)]],
    [S('<prosody rate="80%">a</prosody>'), [style(undefined, 0.8), 'a', style(undefined)]],
    [S('<prosody rate="1.2">a</prosody>'), [style(undefined, 1.2), 'a', style(undefined)]],
    [
      S('<prosody rate="x-fast"><prosody rate="50%">a</prosody>b</prosody>'),
      [style(undefined, 1.5), style(undefined, 0.75), 'a', style(undefined, 1.5), 'b', style(undefined)],
    ],
    [
      S('<voice name="af_sky"><prosody rate="slow">a</prosody></voice>'),
      [style('af_sky'), style('af_sky', 0.75), 'a', style('af_sky'), style(undefined)],
    ],
    [
      S('<voice name="af_sky">[voice:am_adam]a</voice>b'),
      [style('af_sky'), style('am_adam'), 'a', style(undefined), 'b'],
    ],
    [S('<lang xml:lang="fr-FR">bonjour</lang>'), ['bonjour']],
    [S('<audio src="x.wav"><desc>a bell</desc></audio>'), ['a bell']],
    [S('<?xml version="1.0"?><!DOCTYPE speak [ <!ENTITY x "y"> ]><!-- note -->a'), ['a']],
    [S('<![CDATA[<b> & [pause:1s]]]>'), ['<b> & [pause:1s]']],
    [S('&amp; &lt; &gt; &quot; &apos; &#65; &#x263A; &#x1F600;'), [`& < > " ' A ☺ 😀`]],
    [S('&nbsp;x'), ['&nbsp;x']],
    [S('AT&T 1 < 2'), ['AT&T 1 < 2']],
    [S('<BREAK TIME="1s"/>'), [pause(1000)]],
    [S('<phoneme ph="x">a<emphasis>b</emphasis><break/>c</phoneme>'), [ph('x', 'abc', 'ipa')]],
    [S('<sub alias="x">a[pause:1s]b</sub>'), [{ type: 'alias', spoken: 'x', text: 'ab' }]],
    ['<speak>a</speak> after', ['a after']],
    ['  \n<speak>a</speak>', ['  \na']],
    ['<?xml version="1.0"?>\n<speak>a</speak>', ['\na']],
    ['<speak version="1.0" xmlns="http://www.w3.org/2001/10/synthesis" xml:lang="en-US">a</speak>', ['a']],
  ]);
  for (const [input, expected] of cases) {
    it(JSON.stringify(input), () => expect(shape(input)).toEqual(expected));
  }

  it('needs no root in ssml mode, and is SSML from the start', () => {
    expect(shape('a <break/> b &amp; c', 'ssml')).toEqual(['a ', pause(500), ' b & c']);
    expect(parseMarkup('plain', 'ssml').ssml).toBe(true);
  });

  it('says whether the text is SSML', () => {
    expect(parseMarkup('<speak>a</speak>').ssml).toBe(true);
    expect(parseMarkup('a <speak>').ssml).toBe(false);
    expect(parseMarkup('[pause:1s]', 'none').ssml).toBe(false);
  });
});

const AT7 = '(at character 7)';

describe('errors', () => {
  const MALFORMED = `should be <name attribute="value" …> ${AT7}`;
  const DURATION = 'should be seconds (1.5s, 2) or milliseconds (500ms), from 0 to 10 s';
  const VOICE = 'should name a voice (af_bella) or a blend (af_bella(2)+af_sky(1))';
  const RATE =
    'should be one of x-slow, slow, medium, fast, x-fast, default, a percentage (80%) or a multiplier up to 10';
  const cases = new Map<string, string>([
    ['[pause:12s]', 'pause "12s" is over the maximum of 10 s (at character 0)'],
    ['ab [pause:10001ms]', 'pause "10001ms" is over the maximum of 10 s (at character 3)'],
    ['[pause:-1s]', 'pause "-1s" is negative: should be from 0 to 10 s (at character 0)'],
    ['[pause:abc]', `pause "abc" is not a duration: ${DURATION} (at character 0)`],
    ['[pause:]', `pause "" is not a duration: ${DURATION} (at character 0)`],
    ['[pause:NaN]', `pause "NaN" is not a duration: ${DURATION} (at character 0)`],
    ['[pause:1', '[pause:…] is not closed by "]" (at character 0)'],
    ['a [pause:1[pause:2s]', '[pause:…] is not closed by "]" (at character 2)'],
    [`[pause:${'1'.repeat(3000)}]`, '[pause:…] is not closed within 2048 characters (at character 0)'],
    ['[voice:af', '[voice:…] is not closed by "]" (at character 0)'],
    ['[voice:]', `[voice:…] is empty: ${VOICE} (at character 0)`],
    [
      '[voice:af bella!]',
      `[voice:…] "af bella!" ${VOICE}, in letters, digits, spaces and _ ( ) + . , (at character 0)`,
    ],
    [`[voice:${'a'.repeat(300)}]`, '[voice:…] is over 256 characters (at character 0)'],
    ['[x](//)', 'empty phonemes in [x](//) (at character 0)'],
    ['[x](/ /)', 'empty phonemes in [x](/ /) (at character 0)'],
    [S('<break time="11s"/>'), `break time "11s" is over the maximum of 10 s ${AT7}`],
    [S('<break time="-1s"/>'), `break time "-1s" is negative: should be from 0 to 10 s ${AT7}`],
    [S('<break time="soon"/>'), `break time "soon" is not a duration: ${DURATION} ${AT7}`],
    [
      S('<break strength="loud"/>'),
      `break strength "loud" is not one of: none, x-weak, weak, medium, strong, x-strong ${AT7}`,
    ],
    [S('<phoneme>x</phoneme>'), `SSML <phoneme> needs a non-empty ph attribute ${AT7}`],
    [S('<phoneme ph="">x</phoneme>'), `SSML <phoneme> needs a non-empty ph attribute ${AT7}`],
    [
      S('<phoneme ph="x" alphabet="x-sampa">x</phoneme>'),
      `phoneme alphabet "x-sampa" is not one of: ipa, kokoro, misaki ${AT7}`,
    ],
    [S('<sub>x</sub>'), `SSML <sub> needs a non-empty alias attribute ${AT7}`],
    [S('<say-as format="x">1</say-as>'), `SSML <say-as> needs a non-empty interpret-as attribute ${AT7}`],
    [S('<mark/>'), `SSML <mark> needs a non-empty name attribute ${AT7}`],
    [S('<prosody rate="fastest">a</prosody>'), `prosody rate "fastest" ${RATE} ${AT7}`],
    [S('<prosody rate="0%">a</prosody>'), `prosody rate "0%" ${RATE} ${AT7}`],
    [S('<prosody rate="-1">a</prosody>'), `prosody rate "-1" ${RATE} ${AT7}`],
    [S('<prosody rate="11">a</prosody>'), `prosody rate "11" ${RATE} ${AT7}`],
    [
      S('<voice name="a;b">x</voice>'),
      `<voice> name "a;b" ${VOICE}, in letters, digits, spaces and _ ( ) + . , ${AT7}`,
    ],
    [S('<voice name="">x</voice>'), `<voice> name is empty: ${VOICE} ${AT7}`],
    [
      '<speak><p>a</s></speak>',
      'closing tag </s> does not match <p> opened at character 7 (at character 11)',
    ],
    ['<speak></speak></p>', 'closing tag </p> has no open element (at character 15)'],
    ['<speak>a', 'SSML element <speak> is not closed (at character 0)'],
    ['<speak><p>a</p>', 'SSML element <speak> is not closed (at character 0)'],
    ['<speak><break', `SSML tag <break is not closed ${AT7}`],
    ['<speak><break time="1s', `SSML tag <break time="1s is not closed ${AT7}`],
    ['<speak><!-- a', `SSML comment <!-- a is not closed ${AT7}`],
    ['<speak><![CDATA[ a', `SSML tag <![CDATA[ a is not closed ${AT7}`],
    [`<speak>${'<a>'.repeat(40)}`, 'SSML elements nest deeper than 32 levels (at character 100)'],
    [
      S(`<break time="${'x'.repeat(3000)}"/>`),
      `SSML tag <break time="${'x'.repeat(27)}… is longer than 2048 characters ${AT7}`,
    ],
    [
      S(`<!--${'x'.repeat(3000)}-->`),
      `SSML comment <!--${'x'.repeat(36)}… is longer than 2048 characters ${AT7}`,
    ],
    [S('&#0;'), `character reference &#0; names no character ${AT7}`],
    [S('&#xD800;'), `character reference &#xD800; names no character ${AT7}`],
    [S('&#x110000;'), `character reference &#x110000; names no character ${AT7}`],
    [S('&#xZZ;'), `character reference &#xZZ; names no character ${AT7}`],
    [S('<sub alias="&#0;">x</sub>'), `character reference &#0; names no character ${AT7}`],
    [S('<break time=5/>'), `malformed SSML tag <break time=5/>: ${MALFORMED}`],
    [S('<a b="1"c="2"></a>'), `malformed SSML tag <a b="1"c="2">: ${MALFORMED}`],
    [S('<a b></a>'), `malformed SSML tag <a b>: ${MALFORMED}`],
    [S('<a b="1" b="2"></a>'), `SSML tag <a b="1" b="2"> repeats attribute b ${AT7}`],
    [S('</ a>'), `malformed SSML tag </ a> ${AT7}`],
    [S(`<sub alias="x">${'a'.repeat(5000)}</sub>`), `the content of <sub> is over 4096 characters ${AT7}`],
  ]);
  for (const [input, message] of cases) {
    it(JSON.stringify(input.slice(0, 60)), () => expect(failure(input)).toBe(message));
  }

  const limited: [string, Partial<MarkupLimits>, string][] = [
    ['[pause:3s]', { maxPauseMs: 2000 }, 'pause "3s" is over the maximum of 2 s (at character 0)'],
    [
      S('<break strength="x-strong"/>'),
      { maxPauseMs: 1000 },
      `break strength "x-strong" is over the maximum of 1 s ${AT7}`,
    ],
    [S('<p><s>a</s></p>'), { maxDepth: 2 }, 'SSML elements nest deeper than 2 levels (at character 10)'],
    ['[pause:   1s]', { maxTagChars: 8 }, '[pause:…] is not closed within 8 characters (at character 0)'],
    [S('<sub alias="x">abcdefghij</sub>'), { maxHeldChars: 20 }, 'none'],
    [
      S('<sub alias="x">abcdefghijklmnopqrstu</sub>'),
      { maxHeldChars: 20 },
      `the content of <sub> is over 20 characters ${AT7}`,
    ],
  ];
  it.each(limited)('%j with %j', (input, limits, message) =>
    expect(failure(input, 'auto', limits)).toBe(message),
  );

  it('has the default limits, and refuses negative ones', () => {
    expect(Object.values(DEFAULT_MARKUP_LIMITS)).toEqual([10_000, 32, 2048, 4096]);
    expect(() => new MarkupParser('auto', { maxDepth: -1 })).toThrow(RangeError);
  });

  it('reads a [word](…) construct over maxTagChars as text', () => {
    const long = `[x](/${'a'.repeat(50)}/)`;
    expect(parseMarkup(long, 'auto', { maxTagChars: 20 }).events).toEqual([
      { type: 'text', text: long, start: 0, end: long.length },
    ]);
  });

  it('leaves the parser refusing more text after end()', () => {
    const parser = new MarkupParser();
    parser.end();
    expect(() => parser.push('a')).toThrow('push() after end()');
    expect(parser.end()).toEqual([]);
  });
});

describe('warnings', () => {
  const UNKNOWN_AUDIO = 'unknown SSML element <audio> dropped; its text is spoken';
  const cases = new Map<string, string[]>([
    ['<speak><audio src="a">x</audio><audio>y</audio></speak>', [UNKNOWN_AUDIO]],
    [
      '<speak><audio/><desc>d</desc></speak>',
      [UNKNOWN_AUDIO, 'unknown SSML element <desc> dropped; its text is spoken'],
    ],
    [
      '<speak><lang xml:lang="fr">oui</lang></speak>',
      ["SSML <lang> is not applied: its text is read in the request's language"],
    ],
    [
      '<speak><prosody pitch="high" volume="loud" rate="fast">a</prosody><prosody pitch="low">b</prosody></speak>',
      ['SSML <prosody> pitch is not applied', 'SSML <prosody> volume is not applied'],
    ],
    ['<speak><voice gender="female">a</voice></speak>', ['SSML <voice> gender is not applied']],
    ['<speak>&nbsp; &nbsp;</speak>', ['unknown entity &nbsp; kept as written']],
    ['<speak><sub alias="&copy;">c</sub></speak>', ['unknown entity &copy; kept as written']],
    ['<speak>AT&T, A&B</speak>', ['a "&" that starts no entity is read as text (write &amp;)']],
    ['<speak>1 < 2 <</speak>', ['a "<" that starts no tag is read as text (write &lt;)']],
    ['<speak><phoneme ph="x">a<break/>b</phoneme></speak>', ['markup inside <phoneme> is read as its text']],
    ['<speak><sub alias="x">[voice:af_sky]a</sub></speak>', ['markup inside <sub> is read as its text']],
    [
      '<speak><say-as interpret-as="date">a<emphasis>b</emphasis></say-as></speak>',
      ['markup inside <say-as> is read as its text'],
    ],
    ['<speak xml:lang="en"><p>a</p><emphasis>b</emphasis></speak>', []],
    ['[pause:1s] <b>', []],
  ]);
  for (const [input, warnings] of cases) {
    it(JSON.stringify(input), () => expect(parseMarkup(input).warnings).toEqual(warnings));
  }

  it('keeps at most 20, each once', () => {
    const text = `<speak>${Array.from({ length: 30 }, (_, n) => `<x${n}/><x${n}/>`).join('')}</speak>`;
    const { warnings } = parseMarkup(text);
    expect(warnings).toHaveLength(20);
    expect(new Set(warnings).size).toBe(20);
  });
});

describe('offsets', () => {
  it('point at the source of each construct', () => {
    expect(parseMarkup('ab [pause:1s] cd').events).toEqual([
      { type: 'text', text: 'ab ', start: 0, end: 3 },
      { type: 'pause', ms: 1000, start: 3, end: 13 },
      { type: 'text', text: ' cd', start: 13, end: 16 },
    ]);
    expect(parseMarkup('x [w](+1) [v](/vi/)').events).toEqual([
      { type: 'text', text: 'x ', start: 0, end: 2 },
      { type: 'stress', stress: '+1', text: 'w', start: 2, end: 9 },
      { type: 'text', text: ' ', start: 9, end: 10 },
      { type: 'phonemes', phonemes: 'vi', alphabet: 'kokoro', text: 'v', start: 10, end: 19 },
    ]);
  });

  it('span an element from its start tag to its end tag, and decoded text over its source', () => {
    const text = '<speak>a&amp;b<sub alias="s">t</sub><mark name="m"/></speak>';
    expect(parseMarkup(text).events).toEqual([
      { type: 'text', text: 'a&b', start: 7, end: 14 },
      { type: 'alias', spoken: 's', text: 't', start: 14, end: 36 },
      { type: 'mark', name: 'm', start: 36, end: 52 },
    ]);
    const sayAs = '<speak><say-as interpret-as="date">1/2</say-as></speak>';
    expect(parseMarkup(sayAs).events).toStrictEqual([
      { type: 'say-as', interpretAs: 'date', text: '1/2', start: 7, end: sayAs.length - '</speak>'.length },
    ]);
    const cdata = '<speak><![CDATA[<x>]]></speak>';
    expect(parseMarkup(cdata).events).toEqual([{ type: 'text', text: '<x>', start: 16, end: 19 }]);
  });

  it('count across pushes', () => {
    const parser = new MarkupParser();
    expect(parser.push('ab')).toEqual([{ type: 'text', text: 'ab', start: 0, end: 2 }]);
    expect(parser.push('[pause:1s]c')).toEqual([
      { type: 'pause', ms: 1000, start: 2, end: 12 },
      { type: 'text', text: 'c', start: 12, end: 13 },
    ]);
    const none = new MarkupParser('none');
    none.push('abc');
    expect(none.push('[d]')).toEqual([{ type: 'text', text: '[d]', start: 3, end: 6 }]);
  });

  it('merge adjacent text events only', () => {
    const events: MarkupEvent[] = [
      { type: 'text', text: 'a', start: 0, end: 1 },
      { type: 'text', text: 'b', start: 5, end: 6 },
      { type: 'boundary' },
      { type: 'text', text: 'c', start: 6, end: 7 },
    ];
    expect(mergeText(events)).toEqual([
      { type: 'text', text: 'ab', start: 0, end: 6 },
      { type: 'boundary' },
      { type: 'text', text: 'c', start: 6, end: 7 },
    ]);
  });
});

describe('streaming', () => {
  /** What a parse gives, whole or in pieces: the merged events and warnings, or the error. */
  function feed(pieces: readonly string[], mode?: MarkupMode): unknown {
    const parser = new MarkupParser(mode);
    const events: MarkupEvent[] = [];
    try {
      for (const piece of pieces) events.push(...parser.push(piece));
      events.push(...parser.end());
    } catch (err) {
      return { error: (err as Error).message };
    }
    return { events: mergeText(events), warnings: parser.warnings, ssml: parser.ssml };
  }

  const inputs: [string, MarkupMode?][] = [
    ['Hello world. [pause:1.5s] How are [you](+1)?'],
    ['[voice:af_bella(2)+af_sky(1)]Hi[voice] [x](/ks/) [a] [b](#c#) [[pause:1s] [pause'],
    ['  <speak>Hi <break time="1s"/> <p>one</p><s>two</s></speak> after'],
    [`<?xml version="1.0"?><!DOCTYPE speak>${S('<!-- c --><![CDATA[<a>]]]]>&amp;&#65;&#x263A;&nbsp;&')}`],
    [S('<phoneme ph="x">a<emphasis>b</emphasis></phoneme><say-as interpret-as="d">1</say-as>')],
    [S('<voice name="af_sky"><prosody rate="slow" pitch="+1">[voice:am_adam]a</prosody>b</voice>c')],
    ['<speak>1 < 2 AT&T <mark name="m"/><audio>bell</audio><lang xml:lang="fr">oui</lang></speak>'],
    ['a <b> & [c](d) ]['],
    ['[pause:12s] after'],
    ['<speak><p>a</s></speak>'],
    ['<speak><!-- never closed'],
    ['<speak>a [x](/y/) [z](-2) [q](/) [voice:af_sky]</speak>'],
    ['x [pause:1] y', 'ssml'],
    ['<speak>[pause:1s]</speak>', 'none'],
    ['<spea'],
    ['   '],
    [''],
  ];

  describe.each(inputs)('%j', (input, mode) => {
    const whole = feed([input], mode);

    it('gives the same pushed one character at a time', () => {
      expect(feed([...input], mode)).toEqual(whole);
    });

    it('gives the same split in two anywhere', () => {
      for (let k = 0; k <= input.length; k++) {
        expect({ k, result: feed([input.slice(0, k), input.slice(k)], mode) }).toEqual({ k, result: whole });
      }
    });
  });

  it('releases plain text at once', () => {
    const parser = new MarkupParser();
    expect(parser.push('Hello world. ')).toEqual([text('Hello world. ', 0)]);
    expect(parser.heldChars).toBe(0);
    expect(parser.ssml).toBe(false);
  });

  it('releases SSML text at once after a tag', () => {
    const parser = new MarkupParser();
    expect(parser.push('<speak>Hello world. ')).toEqual([text('Hello world. ', 7)]);
    expect(parser.ssml).toBe(true);
    expect(parser.heldChars).toBe(0);
  });

  it('holds only what may start a construct', () => {
    const parser = new MarkupParser();
    expect(parser.push('Hello [')).toEqual([{ type: 'text', text: 'Hello ', start: 0, end: 6 }]);
    expect(parser.heldChars).toBe(1);
    expect(parser.push('word]')).toEqual([]);
    expect(parser.heldChars).toBe(6);
    expect(mergeText(parser.push(' more'))).toEqual([text('[word] more', 6)]);
    expect(parser.heldChars).toBe(0);
  });

  it('decides the mode once the first characters are seen', () => {
    const parser = new MarkupParser();
    expect(parser.push('  ')).toEqual([{ type: 'text', text: '  ', start: 0, end: 2 }]);
    expect(parser.push('<spe')).toEqual([]);
    expect(parser.ssml).toBe(false);
    expect(parser.heldChars).toBe(4);
    expect(parser.push('ak>')).toEqual([]);
    expect(parser.ssml).toBe(true);
  });

  it('holds a CDATA section whole', () => {
    const parser = new MarkupParser('ssml');
    expect(parser.push('<![CDATA[abc]')).toEqual([]);
    expect(parser.heldChars).toBe(13);
    // Text on either side of the section's end is two events: each span is its own text's.
    expect(parser.push(']]>x')).toEqual([
      { type: 'text', text: 'abc]', start: 9, end: 13 },
      { type: 'text', text: 'x', start: 16, end: 17 },
    ]);
  });

  it('holds the content of a capturing element', () => {
    const parser = new MarkupParser();
    expect(parser.push('<speak><sub alias="x">abc')).toEqual([]);
    expect(parser.heldChars).toBe(3);
    expect(parser.push('</sub>')).toEqual([{ type: 'alias', spoken: 'x', text: 'abc', start: 7, end: 31 }]);
  });
});

describe('hasMarkup', () => {
  const cases = new Map<string, boolean>([
    ['Hello world.', false],
    ['a < b & c', false],
    ['a ] b', false],
    ['  <speak>x</speak>', true],
    ['<?xml version="1.0"?><speak/>', true],
    ['<speaker>', false],
    ['say [pause:1s]', true],
    ['[word', true],
  ]);
  for (const [input, expected] of cases) {
    it(JSON.stringify(input), () => expect(hasMarkup(input)).toBe(expected));
  }

  it('follows the mode', () => {
    expect(hasMarkup('[pause:1s]', 'none')).toBe(false);
    expect(hasMarkup('a & b', 'ssml')).toBe(true);
    expect(hasMarkup('a b', 'ssml')).toBe(false);
  });

  it('is exact when it says no: parseMarkup then gives nothing but text', () => {
    const texts = ['plain', '<p>x</p>', 'a<b', ' \n x', '<speakers>', 'x]', '&amp;', '<spea', '', '  '];
    for (const mode of ['auto', 'ssml', 'none'] as const) {
      for (const text of texts) {
        const ok = hasMarkup(text, mode) || parseMarkup(text, mode).events.every((e) => e.type === 'text');
        expect({ mode, text, ok }).toEqual({ mode, text, ok: true });
      }
    }
  });
});

describe('linear time (100 KB / 10 KB ≤ 30)', () => {
  const INPUTS: Record<string, (n: number) => string> = {
    'a run of [': (n) => '['.repeat(n),
    'a run of <': (n) => '<'.repeat(n),
    'a run of &': (n) => '&'.repeat(n),
    '[pause: repeated': (n) => '[pause:'.repeat(n / 7),
    '[pause:1s] repeated': (n) => '[pause:1s]'.repeat(n / 10),
    '<a> nested deep': (n) => `<speak>${'<a>'.repeat(n / 3)}`,
    '<b>x</b> repeated': (n) => `<speak>${'<b>x</b>'.repeat(n / 8)}</speak>`,
    '&amp; repeated': (n) => '&amp;'.repeat(n / 5),
    '[x]( repeated': (n) => '[x]('.repeat(n / 4),
    '[x](/y repeated': (n) => '[x](/y'.repeat(n / 6),
    '[ then text': (n) => `[${'a'.repeat(n)}`,
    '<!-- unclosed': (n) => `<speak><!--${'-'.repeat(n)}`,
    'quotes in a tag': (n) => `<speak><a b="${'"'.repeat(n)}`,
  };
  const PARSERS: Record<string, (input: string) => void> = {
    auto: (input) => parseMarkup(input),
    ssml: (input) => parseMarkup(input, 'ssml'),
    'ssml, 100-character pieces': (input) => {
      const parser = new MarkupParser('ssml');
      for (let i = 0; i < input.length; i += 100) parser.push(input.slice(i, i + 100));
      parser.end();
    },
  };
  const quietly = (parse: (input: string) => void, input: string): void => {
    try {
      parse(input);
    } catch {
      // refused: what matters is how long it took
    }
  };

  describe.each(Object.entries(PARSERS))('%s', (_name, parse) => {
    it.each(Object.entries(INPUTS))('%s', (_input, make) => {
      const small = make(10_000);
      const large = make(100_000);
      quietly(parse, small); // warm up the code paths first
      const ratio = cpuRatio(
        () => quietly(parse, large),
        () => quietly(parse, small),
        30,
      );
      expect(ratio).toBeLessThanOrEqual(30);
    });
  });
});
