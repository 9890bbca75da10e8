import { describe, expect, it } from 'vitest';
import type { LanguageCode } from '../../../model/kokoro/constants.ts';
import { loadEspeak } from '../../../model/text/espeak.ts';
import { createEnglish } from '../../../model/text/en/english.ts';
import { SERVED_LANGUAGES, languageName, normalizeFor } from '../../../model/text/languages/index.ts';
import { MAX_SAY_AS_CHARS, SAY_AS_KINDS, sayAs, type SayAsOptions } from '../../../model/text/say-as.ts';

/** `kind|content` or `kind|content|format` → what American English reads. */
const AMERICAN = new Map<string, string>([
  ['characters|ABC', 'eh B C'],
  ['characters|abc123', 'eh B C one two three'],
  ['spell-out|a-b_c.d', 'eh dash B underscore C dot D'],
  ['verbatim|x y', 'X Y'],
  ['cardinal|1234', 'one thousand two hundred thirty-four'],
  ['number|-1,234.5', 'minus one thousand two hundred thirty-four point five'],
  ['cardinal|−7', 'minus seven'],
  ['cardinal|.5', 'point five'],
  ['cardinal|007', 'seven'],
  ['ordinal|21', 'twenty-first'],
  ['ordinal|21st', 'twenty-first'],
  ['ordinal|1,000th', 'one thousandth'],
  ['digits|907', 'nine zero seven'],
  ['digits|123-456', 'one two three four five six'],
  ['number_digit|0042', 'zero zero four two'],
  ['telephone|+1 (555) 123-4567', 'plus one, five five five, one two three, four five six seven'],
  ['telephone|555-1234', 'five five five, one two three four'],
  ['date|12/25/2024', 'December twenty-fifth, twenty twenty-four'],
  ['date|2024-12-25', 'December twenty-fifth, twenty twenty-four'],
  ['date|25/12/2024', 'December twenty-fifth, twenty twenty-four'], // no format: the other order when ours cannot be
  ['date|Dec 25, 2024', 'December twenty-fifth, twenty twenty-four'],
  ['date|December 25th', 'December twenty-fifth'],
  ['date|2024年12月25日', 'December twenty-fifth, twenty twenty-four'],
  ['date|12/25/24', 'December twenty-fifth, twenty-four'],
  ['date|1/1/05|mdy', 'January first, oh five'],
  ['date|25.12.2024|DMY', 'December twenty-fifth, twenty twenty-four'],
  ['date|2024/12/25|ymd', 'December twenty-fifth, twenty twenty-four'],
  ['date|12/25|md', 'December twenty-fifth'],
  ['date|25/12|dm', 'December twenty-fifth'],
  ['date|2024-12|ym', 'December twenty twenty-four'],
  ['date|12/2024|my', 'December twenty twenty-four'],
  ['date|2024|y', 'twenty twenty-four'],
  ['date|25|d', 'the twenty-fifth'],
  ['date|12|m', 'December'],
  ['date|2005-01-01', 'January first, two thousand five'],
  ['time|14:30', 'fourteen thirty'],
  ['time|14:00', 'fourteen hundred'],
  ['time|9:00', "nine o'clock"],
  ['time|9:05', 'nine oh five'],
  ['time|2:30pm', 'two thirty PM'],
  ['time|2:30 p.m.', 'two thirty PM'],
  ['time|2pm', 'two PM'],
  ['time|14:30:15', 'fourteen thirty and fifteen seconds'],
  ['time|14:30|hms12', 'two thirty PM'],
  ['time|0:05|hms12', 'twelve oh five AM'],
  ['time|2:30pm|hms24', 'fourteen thirty'],
  ['time|12:15am|hms24', 'zero fifteen'],
  ['currency|$5.20', 'five dollars and twenty cents'],
  ['currency|$1', 'one dollar'],
  ['currency|$0.99', 'ninety-nine cents'],
  ['currency|$1,000,000', 'one million dollars'],
  ['currency|-$5', 'minus five dollars'],
  ['currency|US$5', 'five US dollars'],
  ['currency|€3', 'three euros'],
  ['currency|5 USD', 'five dollars'],
  ['currency|EUR 2.50', 'two euros and fifty cents'],
  ['currency|¥500', 'five hundred yen'],
  ['unit|5 kg', 'five kilograms'],
  ['unit|1 km', 'one kilometer'],
  ['unit|3.5GB', 'three point five gigabytes'],
  ['unit|20%', 'twenty percent'],
  ['unit|72°F', 'seventy-two degrees Fahrenheit'],
]);

/** Where British English reads otherwise. */
const BRITISH = new Map<string, string>([
  ['cardinal|1234', 'one thousand two hundred and thirty-four'],
  ['ordinal|101', 'one hundred and first'],
  ['date|12/25/2024', 'the twenty-fifth of December, twenty twenty-four'],
  ['date|3/4/2024', 'the third of April, twenty twenty-four'],
  ['date|2005-01-01', 'the first of January, two thousand and five'],
  ['date|25 December 2024', 'the twenty-fifth of December, twenty twenty-four'],
  ['date|12/25|md', 'the twenty-fifth of December'],
  ['currency|£1.50', 'one pound and fifty pence'],
]);

/** Per language: cardinal, digits and what else it reads. */
const OTHERS: ReadonlyMap<LanguageCode, ReadonlyMap<string, string>> = new Map([
  [
    'e',
    new Map([
      ['cardinal|1234', '1234'],
      ['cardinal|1.234,5', '1234,5'],
      ['cardinal|1.5', '1,5'],
      ['cardinal|-5', 'menos 5'],
      ['digits|907', '9 0 7'],
      ['ordinal|21', '21º'],
      ['ordinal|2ª', '2ª'],
      ['characters|ab1', 'A B 1'],
      ['telephone|+34 612 345 678', 'más 3 4, 6 1 2, 3 4 5, 6 7 8'],
      ['currency|12,50 €', '12 euros con 50 céntimos'],
      ['currency|5 USD', '5 dólares'],
    ]),
  ],
  [
    'f',
    new Map([
      ['cardinal|1 234,5', '1234,5'],
      ['cardinal|-5', 'moins 5'],
      ['digits|907', '9 0 7'],
      ['ordinal|1', '1er'],
      ['ordinal|21e', '21ème'],
      ['telephone|+33 1 23', 'plus 3 3, 1, 2 3'],
      ['currency|12,50 €', '12 euros et 50 centimes'],
    ]),
  ],
  [
    'i',
    new Map([
      ['cardinal|1.234.567', '1234567'],
      ['cardinal|-5', 'meno 5'],
      ['digits|907', '9 0 7'],
      ['ordinal|3', '3º'],
      ['currency|€12,50', '12 euro e 50 centesimi'],
    ]),
  ],
  [
    'p',
    new Map([
      ['cardinal|1.234,5', '1234,5'],
      ['cardinal|-5', 'menos 5'],
      ['digits|907', '9 0 7'],
      ['ordinal|1', '1º'],
      ['currency|R$ 10,50', '10 reais e 50 centavos'],
    ]),
  ],
  [
    'h',
    new Map([
      ['cardinal|1,00,000', '100000'],
      ['cardinal|1,234.5', '1234.5'],
      ['cardinal|१२३', '123'],
      ['cardinal|-5', 'माइनस 5'],
      ['digits|907', '9 0 7'],
      ['digits|९०७', '9 0 7'],
      ['telephone|+91 98', 'प्लस 9 1, 9 8'],
      ['currency|₹1,00,000', '100000 रुपये'],
    ]),
  ],
  [
    'j',
    new Map([
      ['cardinal|1234', 'せんにひゃくさんじゅうよん'],
      ['cardinal|１２３', 'ひゃくにじゅうさん'],
      ['cardinal|1.5', 'いちてんご'],
      ['cardinal|-5', 'マイナス ご'],
      ['digits|907', 'きゅう ゼロ なな'],
      ['ordinal|21', 'だいにじゅういち'],
      ['characters|ab1', 'A B いち'],
      ['telephone|03-1234', 'ゼロ さん、いち に さん よん'],
    ]),
  ],
  [
    'z',
    new Map([
      ['cardinal|1234', '一千二百三十四'],
      ['cardinal|-1.5', '负一点五'],
      ['digits|907', '九零七'],
      ['ordinal|21', '第二十一'],
      ['characters|ab1', 'A B 一'],
      ['telephone|+86 138', '加 八六, 幺三八'],
      ['date|2024-12-25', '二零二四年十二月二十五日'],
      ['date|2024年1月5日', '二零二四年一月五日'],
      ['time|14:05', '十四点零五分'],
      ['time|2:30pm', '下午两点三十分'],
      ['time|9:00', '九点'],
      ['currency|$5.99', '五点九九美元'],
      ['currency|5 USD', '五美元'],
      ['currency|RMB 5', '五元'],
    ]),
  ],
]);

function read(key: string, lang: LanguageCode): ReturnType<typeof sayAs> {
  const [kind, content, format] = key.split('|');
  const options: SayAsOptions = format === undefined ? {} : { format };
  return sayAs(kind, content, lang, options);
}

const unsupported = (kind: string, why: string) => ({
  unsupported: `say-as interpret-as="${kind}" ${why}; its text is read as written`,
});

describe('sayAs in English', () => {
  it.each([...AMERICAN])('American %s → %s', (key, spoken) => {
    expect(read(key, 'a')).toEqual({ spoken });
  });

  it.each([...BRITISH])('British %s → %s', (key, spoken) => {
    expect(read(key, 'b')).toEqual({ spoken });
  });

  it('reads the same kinds in both, apart from the British differences', () => {
    for (const [key, spoken] of AMERICAN) {
      const kind = key.split('|')[0];
      if (!['cardinal', 'number', 'ordinal', 'date'].includes(kind))
        expect(read(key, 'b')).toEqual({ spoken });
    }
  });

  it('spells letters as misaki reads letter names (a lone "A" would be the article)', async () => {
    const espeak = await loadEspeak();
    const us = createEnglish('a', process.env.KOKORO_LEXICON_DIR!, (t) => espeak.phonemes(t, 'en-us', '^'));
    const spoken = sayAs('characters', 'ABCH', 'a');
    expect(spoken).toEqual({ spoken: 'eh B C H' });
    if (!('spoken' in spoken)) return;
    expect(us.phonemize(spoken.spoken).phonemes.trim()).toBe('ˈA bˈi sˈi ˈAʧ');
  });

  it('takes interpret-as and format in any case, with spaces around', () => {
    expect(sayAs(' Cardinal ', ' 42 ', 'a', { format: 'ignored' })).toEqual({ spoken: 'forty-two' });
    expect(sayAs('date', '25/12', 'a', { format: ' DM ', detail: '2' })).toEqual({
      spoken: 'December twenty-fifth',
    });
  });
});

describe('sayAs in the other languages', () => {
  for (const [lang, table] of OTHERS) {
    it.each([...table])(`${languageName(lang)}: %s → %s`, (key, spoken) => {
      expect(read(key, lang)).toEqual({ spoken });
    });
  }

  it.each([
    ['e', 'date'],
    ['f', 'time'],
    ['i', 'unit'],
    ['h', 'ordinal'],
    ['j', 'currency'],
    ['j', 'date'],
    ['z', 'unit'],
  ] as const)('%s has no reader for %s', (lang, kind) => {
    expect(sayAs(kind, '12', lang)).toEqual(unsupported(kind, `is not supported in ${languageName(lang)}`));
  });
});

describe('what sayAs reads', () => {
  it("passes through the language's normalizer unchanged", () => {
    const tables: [LanguageCode, ReadonlyMap<string, string>][] = [
      ['a', AMERICAN],
      ['b', BRITISH],
      ...OTHERS,
    ];
    for (const [lang, table] of tables)
      for (const spoken of table.values()) expect(normalizeFor(spoken, lang), spoken).toBe(spoken);
  });
});

describe('sayAs refusals', () => {
  it('names the kinds it reads when asked for another', () => {
    expect(sayAs('fraction', '1/2', 'a')).toEqual(
      unsupported('fraction', `is not supported (one of: ${SAY_AS_KINDS.join(', ')})`),
    );
    expect(SAY_AS_KINDS).toContain('spell-out');
  });

  const NOT_OF_KIND = new Map<string, string>([
    ['cardinal|12abc', 'content is not a number'],
    ['ordinal|first', 'content is not an ordinal number'],
    ['digits|12a', 'content is not a string of digits'],
    ['characters|!!!', 'content is not text with letters or digits'],
    ['telephone|call me', 'content is not a telephone number'],
    ['telephone|+--', 'content is not a telephone number'],
    ['date|13/45/2024', 'content is not a date'],
    ['date|2/30/2024', 'content is not a date'],
    ['date|12/25/2024|dmy', 'content is not a date (format="dmy")'],
    ['date|tomorrow', 'content is not a date'],
    ['time|25:00', 'content is not a time'],
    ['time|13:00pm', 'content is not a time'],
    ['time|14', 'content is not a time'],
    ['currency|5 CHF', 'content is not an amount of money it knows'],
    ['unit|kg', 'content is not a number with a unit'],
    [
      'date|12/25/2024|xyz',
      'format="xyz" is not a date format (one of: mdy, dmy, ymd, md, dm, ym, my, y, d, m)',
    ],
    ['time|14:30|x', 'format="x" is not a time format (one of: hms12, hms24, hm12, hm24)'],
    ['cardinal|   ', 'is empty'],
  ]);
  it.each([...NOT_OF_KIND])('%s → %s', (key, why) => {
    expect(read(key, 'a')).toEqual(unsupported(key.split('|')[0], why));
  });

  it('refuses content past the cap, which keeps every reader cheap', () => {
    expect(sayAs('characters', 'a'.repeat(MAX_SAY_AS_CHARS), 'a')).toHaveProperty('spoken');
    expect(sayAs('characters', 'a'.repeat(MAX_SAY_AS_CHARS + 1), 'a')).toEqual(
      unsupported('characters', `has more than ${MAX_SAY_AS_CHARS} characters`),
    );
  });

  it('never throws, whatever the kind, content, format and language', () => {
    const contents = [
      '',
      '-',
      '+',
      '.',
      '$',
      '1'.repeat(256),
      '9'.repeat(40),
      '0',
      '-0.',
      '€€5',
      '１',
      'ß',
      '\u0301',
    ];
    const formats = [undefined, '', 'ymd', 'hms12', 'q'];
    for (const lang of SERVED_LANGUAGES)
      for (const kind of [...SAY_AS_KINDS, 'bogus'])
        for (const content of contents)
          for (const format of formats) {
            const result = sayAs(kind, content, lang, { format });
            expect(Object.keys(result)).toHaveLength(1);
          }
  });
});
