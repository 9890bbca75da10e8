import { describe, expect, it } from 'vitest';

import {
  digitsToWords,
  normalizeText,
  numberToWords,
  numeralToWords,
  toOrdinalWords,
  yearToWords,
  type EnglishLang,
} from '../../../model/text/normalize.ts';

type Case = readonly [input: string, expected: string];

/** Cases that read the same in American and British English, by category. */
const BOTH = new Map<string, readonly Case[]>([
  [
    'punctuation and whitespace',
    [
      ['\u201CHi,\u201D she said.', '\u201CHi,\u201D she said.'],
      ['\u2018Tis the season, isn\u2019t it?', "'Tis the season, isn't it?"],
      ['\u00ABBonjour\u00BB, he said.', '\u201CBonjour\u201D, he said.'],
      ['\u201EQuoted\u201F text', '\u201CQuoted\u201D text'],
      ['Hello\u3001world\u3002Yes\uFF01Really\uFF1F', 'Hello, world. Yes! Really?'],
      ['A\uFF1Ab\uFF1Bc\uFF0Cd', 'A: b; c, d'],
      ['\uFF08note\uFF09 here', '(note) here'],
      ['Fullwidth \uFF21\uFF22\uFF23', 'Fullwidth ABC'],
      ['too    many \t spaces', 'too many spaces'],
      ['  padded  ', 'padded'],
      ['line one\r\n\r\n  line two', 'line one\nline two'],
      ['no\u0000control\u0007chars\u200B here', 'nocontrolchars here'],
      ['soft\u00ADhyphen', 'softhyphen'],
      ['Wait... what?', 'Wait\u2026 what?'],
      ['Keep \u2014 and \u2026 as they are', 'Keep \u2014 and \u2026 as they are'],
      ['word--word', 'word\u2014word'],
      ['this \u2013 that', 'this \u2014 that'],
      ['', ''],
      ['   ', ''],
    ],
  ],
  [
    'integers',
    [
      ['0', 'zero'],
      ['7', 'seven'],
      ['13', 'thirteen'],
      ['40', 'forty'],
      ['99', 'ninety-nine'],
      ['10,000 people', 'ten thousand people'],
      ['1,000,000,000,000', 'one trillion'],
      ['5000000000000', 'five trillion'],
      ['1 000 000', 'one million'],
      ['10\u00A0000', 'ten thousand'],
      ['007', 'zero zero seven'],
      [
        '12345678901234567',
        'one two three four five six seven eight nine zero one two three four five six seven',
      ],
      ['1, 2, 3', 'one, two, three'],
      ['1,2,3', 'one,two,three'],
      ['I have 3.', 'I have three.'],
      ['3D and 4K', 'three D and four K'],
      ['5s and 10s', 'fives and tens'],
      ['Fullwidth \uFF11\uFF12', 'Fullwidth twelve'],
    ],
  ],
  [
    'negatives and decimals',
    [
      ['-5', 'minus five'],
      ['It was -5 outside.', 'It was minus five outside.'],
      ['\u22125', 'minus five'],
      ['3.14', 'three point one four'],
      ['-3.14', 'minus three point one four'],
      ['-0.5', 'minus zero point five'],
      ['0.05', 'zero point zero five'],
      ['.5', 'point five'],
      ['It grew 3.5.', 'It grew three point five.'],
      ['3.10', 'three point one zero'],
      ['COVID-19', 'COVID-nineteen'],
    ],
  ],
  [
    'ordinals',
    [
      ['1st 2nd 3rd 4th', 'first second third fourth'],
      ['11th 12th 13th', 'eleventh twelfth thirteenth'],
      ['21st 22nd 23rd', 'twenty-first twenty-second twenty-third'],
      ['100th', 'one hundredth'],
      ['the 90th', 'the ninetieth'],
      ['1,000,000th', 'one millionth'],
      ['2ND PLACE', 'second PLACE'],
    ],
  ],
  [
    'percentages',
    [
      ['45%', 'forty-five percent'],
      ['3.5%', 'three point five percent'],
      ['-2%', 'minus two percent'],
      ['100 %', 'one hundred percent'],
      ['It rose 5%.', 'It rose five percent.'],
    ],
  ],
  [
    'ranges and operators',
    [
      ['10-20', 'ten to twenty'],
      ['10\u201320 people', 'ten to twenty people'],
      ['pages 5 - 10', 'pages five to ten'],
      ['10-20%', 'ten to twenty percent'],
      ['3-5 km', 'three to five kilometers'],
      ['1990-1995', 'nineteen ninety to nineteen ninety-five'],
      ['9:00-17:00', "nine o'clock to seventeen hundred"],
      ['10am-2pm', 'ten AM to two PM'],
      ['The score was 3-2.', 'The score was three to two.'],
      ['2 + 2 = 4', 'two plus two equals four'],
      ['5 - 3 = 2', 'five minus three equals two'],
      ['x = 5', 'x equals five'],
      ['+5', 'plus five'],
      ['3 \u00D7 4', 'three times four'],
      ['a == b', 'a == b'],
      ['5 \u00B1 1', 'five plus or minus one'],
    ],
  ],
  [
    'years and decades',
    [
      ['1999', 'nineteen ninety-nine'],
      ['1100', 'eleven hundred'],
      ['1900', 'nineteen hundred'],
      ['1905', 'nineteen oh five'],
      ['2000', 'two thousand'],
      ['2010', 'twenty ten'],
      ['2024', 'twenty twenty-four'],
      ['2099', 'twenty ninety-nine'],
      ['2100', 'two thousand one hundred'],
      ['The 2024 Olympics', 'The twenty twenty-four Olympics'],
      ['Back in 1999.', 'Back in nineteen ninety-nine.'],
      ['1990s', 'nineteen nineties'],
      ["1990's", 'nineteen nineties'],
      ['1800s', 'eighteen hundreds'],
      ['2010s', 'twenty tens'],
      ["the '90s", 'the nineties'],
      ['in her 40s', 'in her forties'],
      ["class of '99", 'class of ninety-nine'],
      ["class of '05", 'class of oh five'],
    ],
  ],
  [
    'currency',
    [
      ['$5', 'five dollars'],
      ['$1', 'one dollar'],
      ['$0.99', 'ninety-nine cents'],
      ['$0.01', 'one cent'],
      ['$5.00', 'five dollars'],
      ['$3.5', 'three dollars and fifty cents'],
      ['$1,000,000', 'one million dollars'],
      ['It costs $5.', 'It costs five dollars.'],
      ['-$5', 'minus five dollars'],
      ['\u00A320', 'twenty pounds'],
      ['\u00A31', 'one pound'],
      ['\u00A30.01', 'one penny'],
      ['\u00A30.50', 'fifty pence'],
      ['\u20AC1', 'one euro'],
      ['\u20AC1.5 million', 'one point five million euros'],
      ['\u00A5100', 'one hundred yen'],
      ['\u00A51', 'one yen'],
      ['\u20B9500', 'five hundred rupees'],
      ['$2B', 'two billion dollars'],
      ['$3.5M', 'three point five million dollars'],
      ['$10k', 'ten thousand dollars'],
      ['\u00A35bn', 'five billion pounds'],
      ['$1 million', 'one million dollars'],
      ['$2.25 billion', 'two point two five billion dollars'],
      ['$5-10', 'five to ten dollars'],
      ['$10-$20', 'ten to twenty dollars'],
      ['$1-2 million', 'one to two million dollars'],
      ['$5 to $10', 'five to ten dollars'],
      ['50\u00A2', 'fifty cents'],
      ['US$5', 'five US dollars'],
      ['$1.999', 'one point nine nine nine dollars'],
      ['$ signs alone', '$ signs alone'],
    ],
  ],
  [
    'times',
    [
      ['10:30', 'ten thirty'],
      ['9:05', 'nine oh five'],
      ['12:00', "twelve o'clock"],
      ['14:45', 'fourteen forty-five'],
      ['00:30', 'zero thirty'],
      ['10:30 am', 'ten thirty AM'],
      ['10:30am', 'ten thirty AM'],
      ['10:30 PM', 'ten thirty PM'],
      ['10:30 a.m. and later', 'ten thirty AM and later'],
      ['Meet me at 5 p.m.', 'Meet me at five PM.'],
      ['At 5 p.m. Then we left.', 'At five PM. Then we left.'],
      ['At 5 p.m., we left.', 'At five PM, we left.'],
      ['5pm', 'five PM'],
      ['12 AM', 'twelve AM'],
      ['12:00 pm', 'twelve PM'],
      ['10:30:15', 'ten thirty and fifteen seconds'],
      ['John 3:16', 'John three sixteen'],
      ['He ran it in 25:30.', 'He ran it in twenty-five thirty.'],
      ['a 16:9 screen', 'a sixteen to nine screen'],
      ['The ratio was 3:1.', 'The ratio was three to one.'],
      ['I am 5 amazing', 'I am five amazing'],
    ],
  ],
  [
    'dates in words',
    [
      ['January 15, 2024', 'January fifteenth, twenty twenty-four'],
      ['Jan. 1st', 'January first'],
      ['Sept 3', 'September third'],
      ['on 4 July 1776', 'on the fourth of July seventeen seventy-six'],
      ['the 15th of May', 'the fifteenth of May'],
      ['May 2020', 'May twenty twenty'],
      ['February 30', 'February thirty'],
    ],
  ],
  [
    'abbreviations',
    [
      ['Dr. Smith', 'Doctor Smith'],
      ['Dr Smith', 'Doctor Smith'],
      ['Mr. and Mrs. Brown', 'Mister and Missus Brown'],
      ['Mr. Brown and Mrs. Brown', 'Mister Brown and Missus Brown'],
      ['Ms. Green', 'Miz Green'],
      ['Prof. Plum', 'Professor Plum'],
      ['Gen. Lee', 'General Lee'],
      ['Mt. Everest', 'Mount Everest'],
      ['St. Louis', 'Saint Louis'],
      ['Mount St. Helens', 'Mount Saint Helens'],
      ['He lives on Main St.', 'He lives on Main Street.'],
      ['He lives on Main St. She does not.', 'He lives on Main Street. She does not.'],
      ['Main St., Springfield', 'Main Street, Springfield'],
      ['Roe vs. Wade', 'Roe versus Wade'],
      ['cats vs dogs', 'cats versus dogs'],
      ['apples, pears, etc.', 'apples, pears, et cetera.'],
      ['apples, etc. are fruit', 'apples, et cetera are fruit'],
      ['apples, etc., are fruit', 'apples, et cetera, are fruit'],
      ['fruit, e.g. apples', 'fruit, for example apples'],
      ['fruit (e.g., apples)', 'fruit (for example, apples)'],
      ['one, i.e. the first', 'one, that is the first'],
      ['approx. 5 km', 'approximately five kilometers'],
      ['No. 5', 'number five'],
      ['Nos. 5 and 6', 'numbers five and six'],
      ['see Fig. 3', 'see figure three'],
      ['#1 fan', 'number one fan'],
      ['John Smith Jr. arrived.', 'John Smith Junior arrived.'],
      ['It was John Smith Jr.', 'It was John Smith Junior.'],
      ['Acme Inc. makes things', 'Acme Incorporated makes things'],
      ['w/ sugar, w/o milk', 'with sugar, without milk'],
      ['No way.', 'No way.'],
      ['the Dr. is in', 'the doctor is in'],
      ['I saw the Dr.', 'I saw the Dr.'],
    ],
  ],
  [
    'units and symbols',
    [
      ['5 km', 'five kilometers'],
      ['1 km', 'one kilometer'],
      ['1.0 km', 'one point zero kilometers'],
      ['2.5km', 'two point five kilometers'],
      ['10 kg', 'ten kilograms'],
      ['3 ft', 'three feet'],
      ['1 ft', 'one foot'],
      ['20 mph', 'twenty miles per hour'],
      ['90 km/h', 'ninety kilometers per hour'],
      ['5 min', 'five minutes'],
      ['1 min', 'one minute'],
      ['2 hrs', 'two hours'],
      ['24h', 'twenty-four hours'],
      ['100 MB', 'one hundred megabytes'],
      ['5 GB', 'five gigabytes'],
      ['100 Mbps', 'one hundred megabits per second'],
      ['2.4 GHz', 'two point four gigahertz'],
      ['500 mg', 'five hundred milligrams'],
      ['2 tsp', 'two teaspoons'],
      ['10k steps', 'ten thousand steps'],
      ['3 km\u00B2', 'three square kilometers'],
      ['25\u00B0C', 'twenty-five degrees Celsius'],
      ['-5 \u00B0C', 'minus five degrees Celsius'],
      ['77\u00B0F', 'seventy-seven degrees Fahrenheit'],
      ['1\u00B0C', 'one degree Celsius'],
      ['a 90\u00B0 angle', 'a ninety degrees angle'],
      ['It is 5 m long.', 'It is five meters long.'],
      ['5 mins.', 'five minutes.'],
      ['A & B', 'A and B'],
      ['R&D', 'R and D'],
      ['meet @ noon', 'meet at noon'],
      ['~5 people', 'about five people'],
      ['5 in the box', 'five in the box'],
    ],
  ],
  [
    'fractions',
    [
      ['1/2 cup', 'one half cup'],
      ['3/4', 'three quarters'],
      ['2/3', 'two thirds'],
      ['1/10', 'one tenth'],
      ['2 1/2 cups', 'two and a half cups'],
      ['1\u00BD', 'one and a half'],
      ['\u00BE', 'three quarters'],
      ['24/7', 'twenty-four seven'],
      ['50/50', 'fifty/fifty'],
    ],
  ],
  [
    'phone numbers',
    [
      ['555-123-4567', 'five five five, one two three, four five six seven'],
      ['(555) 123-4567', 'five five five, one two three, four five six seven'],
      ['Call 555-1234.', 'Call five five five, one two three four.'],
      ['1-800-555-1234', 'one, eight zero zero, five five five, one two three four'],
      ['+44 20 7946 0958', 'plus four four, two zero, seven nine four six, zero nine five eight'],
      ['100-1000 people', 'one hundred to one thousand people'],
    ],
  ],
  [
    'left alone',
    [
      ['v2.0', 'v2.0'],
      ['Upgrade to v2.0.', 'Upgrade to v2.0.'],
      ['Version 1.2.3 is out.', 'Version 1.2.3 is out.'],
      ['192.168.0.1', '192.168.0.1'],
      ['mp3 and A4 paper', 'mp3 and A4 paper'],
      ['Visit https://example.com/a?b=1&c=2.', 'Visit https://example.com/a?b=1&c=2.'],
      ['See www.example.com/page-2, then', 'See www.example.com/page-2, then'],
      ['Mail jane.doe+tag@example.co.uk now', 'Mail jane.doe+tag@example.co.uk now'],
      ['The quick brown fox jumps over the lazy dog.', 'The quick brown fox jumps over the lazy dog.'],
      ["It's a fine day, isn't it? Yes!", "It's a fine day, isn't it? Yes!"],
      [
        '(Parentheses); colons: and \u201Cquotes\u201D \u2014 fine\u2026',
        '(Parentheses); colons: and \u201Cquotes\u201D \u2014 fine\u2026',
      ],
      ['Unknown \u2603 symbols stay', 'Unknown \u2603 symbols stay'],
      ['50/50', 'fifty/fifty'],
    ],
  ],
]);

/** Cases where American and British English differ: [input, American, British]. */
const DIFFERING = new Map<string, readonly (readonly [input: string, american: string, british: string])[]>([
  [
    '"and" in numbers',
    [
      ['105', 'one hundred five', 'one hundred and five'],
      ['1,005', 'one thousand five', 'one thousand and five'],
      ['1,000,001', 'one million one', 'one million and one'],
      ['1,234', 'one thousand two hundred thirty-four', 'one thousand two hundred and thirty-four'],
      ['101st', 'one hundred first', 'one hundred and first'],
      ['2005', 'two thousand five', 'two thousand and five'],
      [
        '\u00A3105.50',
        'one hundred five pounds and fifty pence',
        'one hundred and five pounds and fifty pence',
      ],
      ['-150.5', 'minus one hundred fifty point five', 'minus one hundred and fifty point five'],
      [
        '1,234,567',
        'one million two hundred thirty-four thousand five hundred sixty-seven',
        'one million two hundred and thirty-four thousand five hundred and sixty-seven',
      ],
      [
        '999,999,999,999,999',
        'nine hundred ninety-nine trillion nine hundred ninety-nine billion nine hundred ninety-nine million nine hundred ninety-nine thousand nine hundred ninety-nine',
        'nine hundred and ninety-nine trillion nine hundred and ninety-nine billion nine hundred and ninety-nine million nine hundred and ninety-nine thousand nine hundred and ninety-nine',
      ],
    ],
  ],
  [
    // Four digits that the year heuristic must not take: out of range, with a unit, a currency
    // sign, a percent sign, a separator, a decimal part, or glued to a letter.
    'numbers that are not years',
    [
      ['In 1066', 'In one thousand sixty-six', 'In one thousand and sixty-six'],
      ['1920x1080', 'nineteen twenty by one thousand eighty', 'nineteen twenty by one thousand and eighty'],
      ['2024 km', 'two thousand twenty-four kilometers', 'two thousand and twenty-four kilometers'],
      ['$2024', 'two thousand twenty-four dollars', 'two thousand and twenty-four dollars'],
      ['2024%', 'two thousand twenty-four percent', 'two thousand and twenty-four percent'],
      ['2,024', 'two thousand twenty-four', 'two thousand and twenty-four'],
      ['2024.5', 'two thousand twenty-four point five', 'two thousand and twenty-four point five'],
    ],
  ],
  [
    'numeric dates',
    [
      ['2024-01-15', 'January fifteenth, twenty twenty-four', 'the fifteenth of January, twenty twenty-four'],
      ['3/4/2024', 'March fourth, twenty twenty-four', 'the third of April, twenty twenty-four'],
      [
        '25/12/2024',
        'December twenty-fifth, twenty twenty-four',
        'the twenty-fifth of December, twenty twenty-four',
      ],
      [
        '12/25/2024',
        'December twenty-fifth, twenty twenty-four',
        'the twenty-fifth of December, twenty twenty-four',
      ],
      ['2005-07-04', 'July fourth, two thousand five', 'the fourth of July, two thousand and five'],
    ],
  ],
]);

const LANGS: readonly EnglishLang[] = ['a', 'b'];

describe('normalizeText', () => {
  for (const [category, cases] of BOTH) {
    describe(category, () => {
      for (const lang of LANGS) {
        it.each(cases)(`[${lang}] %j → %j`, (input, expected) => {
          expect(normalizeText(input, lang)).toBe(expected);
        });
      }
    });
  }

  for (const [category, cases] of DIFFERING) {
    describe(category, () => {
      it.each(cases)('%j → a: %j, b: %j', (input, american, british) => {
        expect(normalizeText(input, 'a')).toBe(american);
        expect(normalizeText(input, 'b')).toBe(british);
      });
    });
  }

  it('is idempotent on its own output', () => {
    for (const lang of LANGS) {
      for (const cases of BOTH.values()) {
        for (const [, expected] of cases) expect(normalizeText(expected, lang)).toBe(expected);
      }
      for (const cases of DIFFERING.values()) {
        for (const [, american, british] of cases) {
          const own = lang === 'a' ? american : british;
          expect(normalizeText(own, lang)).toBe(own);
        }
      }
    }
  });

  it('never drops words from text it does not recognise', () => {
    const text =
      'Zebras, quixotic jackdaws; vexing fjords: \u201Cwhy?\u201D \u2014 because\u2026 (maybe) ok!';
    expect(normalizeText(text, 'a')).toBe(text);
    expect(normalizeText(text, 'b')).toBe(text);
  });
});

describe('number helpers', () => {
  it.each([
    [0, 'zero'],
    [15, 'fifteen'],
    [20, 'twenty'],
    [21, 'twenty-one'],
    [100, 'one hundred'],
    [101, 'one hundred one'],
    [1000, 'one thousand'],
    [1_000_000, 'one million'],
    [2_000_000_000, 'two billion'],
    [3_000_000_000_000, 'three trillion'],
    [-42, 'minus forty-two'],
    [-0, 'zero'],
    [0.5, 'zero point five'],
    [-2.25, 'minus two point two five'],
    [1e-7, 'zero point zero zero zero zero zero zero one'],
  ] as const)('numberToWords(%d) → %j', (n, expected) => {
    expect(numberToWords(n)).toBe(expected);
  });

  it('reads bigints and British "and"', () => {
    expect(numberToWords(10n ** 18n)).toBe('one quintillion');
    expect(numberToWords(-123n, { and: true })).toBe('minus one hundred and twenty-three');
    expect(numberToWords(10n ** 40n)).toBe(`one ${'zero '.repeat(39)}zero`);
    expect(numberToWords(2e21)).toBe('two sextillion');
  });

  it('reads ordinals', () => {
    expect(numberToWords(1, { ordinal: true })).toBe('first');
    expect(numberToWords(12, { ordinal: true })).toBe('twelfth');
    expect(numberToWords(40, { ordinal: true })).toBe('fortieth');
    expect(numberToWords(1_000_000, { ordinal: true })).toBe('one millionth');
    expect(numberToWords(103, { ordinal: true, and: true })).toBe('one hundred and third');
    expect(toOrdinalWords('twenty-nine')).toBe('twenty-ninth');
  });

  it('rejects what it cannot read', () => {
    expect(() => numberToWords(Number.NaN)).toThrow(RangeError);
    expect(() => numberToWords(Number.POSITIVE_INFINITY)).toThrow(RangeError);
    expect(() => numberToWords(1.5, { ordinal: true })).toThrow(RangeError);
    expect(() => numeralToWords('12a')).toThrow(RangeError);
    expect(() => numeralToWords('-')).toThrow(RangeError);
  });

  it('reads numerals, digits and years', () => {
    expect(numeralToWords('-1,234.50')).toBe('minus one thousand two hundred thirty-four point five zero');
    expect(numeralToWords('.25')).toBe('point two five');
    expect(digitsToWords('4096')).toBe('four zero nine six');
    expect(yearToWords(1999)).toBe('nineteen ninety-nine');
    expect(yearToWords(1901)).toBe('nineteen oh one');
    expect(yearToWords(2000)).toBe('two thousand');
    expect(yearToWords(2009, { and: true })).toBe('two thousand and nine');
    expect(yearToWords(2024)).toBe('twenty twenty-four');
    expect(yearToWords(800)).toBe('eight hundred');
  });
});

describe('robustness', () => {
  // Guards against catastrophic regex backtracking: each must finish well inside the per-test timeout.
  const adversarial: readonly (readonly [name: string, text: string])[] = [
    ['10,000 digits', '7'.repeat(10_000)],
    ['5,000 dots', '.'.repeat(5_000)],
    ['digits and dots', '1.'.repeat(5_000)],
    ['digits and commas', '1,'.repeat(5_000)],
    ['digits and hyphens', '1-'.repeat(5_000)],
    ['digits and colons', '1:'.repeat(5_000)],
    ['digits and slashes', '1/'.repeat(5_000)],
    ['spaced digit groups', '1 000'.repeat(3_000)],
    ['dotted local part without a domain', `${'a.'.repeat(5_000)}@`],
    ['URL of dots', `http://${'.'.repeat(5_000)}`],
    ['currency signs', `${'$'.repeat(5_000)}1`],
    ['abbreviations', 'e.g. St. Dr. '.repeat(2_000)],
    ['whitespace', `a${' \t\n'.repeat(5_000)}b`],
    ['mixed numerals', '$1.5-2 million at 10:30 a.m. on 2024-01-15, 45%, 3rd. '.repeat(500)],
  ];

  it.each(adversarial)('%s completes', { timeout: 5_000 }, (_name, text) => {
    expect(typeof normalizeText(text, 'a')).toBe('string');
    expect(typeof normalizeText(text, 'b')).toBe('string');
  });

  it('reads 10,000 digits one by one', { timeout: 5_000 }, () => {
    const out = normalizeText('7'.repeat(10_000), 'a');
    expect(out.split(' ')).toHaveLength(10_000);
  });

  it('collapses 5,000 dots to one ellipsis', { timeout: 5_000 }, () => {
    expect(normalizeText('.'.repeat(5_000), 'a')).toBe('\u2026');
  });

  it('normalizes 10,000 sentences consistently', { timeout: 10_000 }, () => {
    const inputs = [...BOTH.values()].flat().map(([input]) => input);
    const expected = new Map(inputs.map((input) => [input, normalizeText(input, 'a')]));
    let checked = 0;
    for (let i = 0; i < 10_000; i++) {
      const input = inputs[i % inputs.length];
      expect(normalizeText(input, 'a')).toBe(expected.get(input));
      checked++;
    }
    expect(checked).toBe(10_000);
  });
});
