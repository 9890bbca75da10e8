import { describe, expect, it } from 'vitest';

import { cardinal, decimal, ordinal, year } from '../../../model/text/en/num2words.ts';

// Cases marked "test_en" are num2words' own, from tests/test_en.py at tag v0.5.14
// (savoirfairelinux/num2words); the rest were checked against num2words 0.5.14 itself.

const CARDINALS = new Map<number | bigint, string>([
  [199, 'one hundred and ninety-nine'], // test_en: test_and_join_199
  [0, 'zero'],
  [7, 'seven'],
  [15, 'fifteen'],
  [20, 'twenty'],
  [21, 'twenty-one'],
  [99, 'ninety-nine'],
  [100, 'one hundred'],
  [101, 'one hundred and one'],
  [110, 'one hundred and ten'],
  [999, 'nine hundred and ninety-nine'],
  [1000, 'one thousand'],
  [1001, 'one thousand and one'],
  [1010, 'one thousand and ten'],
  [1100, 'one thousand, one hundred'],
  [1234, 'one thousand, two hundred and thirty-four'],
  [100_001, 'one hundred thousand and one'],
  [1_000_000, 'one million'],
  [1_000_001, 'one million and one'],
  [1_000_100, 'one million, one hundred'],
  [1_234_567, 'one million, two hundred and thirty-four thousand, five hundred and sixty-seven'],
  [1e9, 'one billion'],
  [1e12, 'one trillion'],
  [10n ** 27n, 'one octillion'],
  [5n * 10n ** 27n + 3n, 'five octillion and three'],
  [10n ** 33n, 'one decillion'],
  [10n ** 36n, 'one undecillion'],
  [10n ** 303n, 'one centillion'],
  [-1, 'minus one'],
  [-42, 'minus forty-two'],
  [-1000n, 'minus one thousand'],
]);

const ORDINALS = new Map<number | bigint, string>([
  [0, 'zeroth'], // test_en: test_ordinal, from here …
  [1, 'first'],
  [13, 'thirteenth'],
  [22, 'twenty-second'],
  [12, 'twelfth'],
  [130, 'one hundred and thirtieth'],
  [1003, 'one thousand and third'], // … to here
  [2, 'second'],
  [3, 'third'],
  [5, 'fifth'],
  [8, 'eighth'],
  [9, 'ninth'],
  [11, 'eleventh'],
  [20, 'twentieth'],
  [21, 'twenty-first'],
  [99, 'ninety-ninth'],
  [100, 'one hundredth'],
  [101, 'one hundred and first'],
  [1000, 'one thousandth'],
  [1001, 'one thousand and first'],
  [1234, 'one thousand, two hundred and thirty-fourth'],
  [1_000_000n, 'one millionth'],
]);

const YEARS = new Map<number, string>([
  [1990, 'nineteen ninety'], // test_en: test_to_year, from here …
  [5555, 'fifty-five fifty-five'],
  [2017, 'twenty seventeen'],
  [1066, 'ten sixty-six'],
  [1865, 'eighteen sixty-five'],
  [3000, 'three thousand'],
  [2001, 'two thousand and one'],
  [1901, 'nineteen oh-one'],
  [2000, 'two thousand'],
  [905, 'nine oh-five'],
  [6600, 'sixty-six hundred'],
  [1900, 'nineteen hundred'],
  [600, 'six hundred'],
  [50, 'fifty'],
  [0, 'zero'],
  [-44, 'forty-four BC'],
  [-66_000_000, 'sixty-six million BC'], // … to here
  [1000, 'one thousand'],
  [1100, 'eleven hundred'],
  [1905, 'nineteen oh-five'],
  [1984, 'nineteen eighty-four'],
  [2005, 'two thousand and five'],
  [2010, 'twenty ten'],
  [2024, 'twenty twenty-four'],
  [10_000, 'ten thousand'],
  [12_345, 'twelve thousand, three hundred and forty-five'],
  [-2024, 'twenty twenty-four BC'],
]);

const DECIMALS = new Map<string, string>([
  ['12.5', 'twelve point five'], // test_en: test_cardinal_for_float_number, from here …
  ['12.51', 'twelve point five one'],
  ['12.53', 'twelve point five three'],
  ['12.59', 'twelve point five nine'], // … to here
  ['3.14', 'three point one four'],
  ['0.5', 'zero point five'],
  ['.5', 'zero point five'],
  ['0.12', 'zero point one two'],
  ['0.05', 'zero point zero five'],
  ['100.001', 'one hundred point zero zero one'],
  ['-3.14', 'minus three point one four'],
  // 0.5.14 drops the sign when the whole part is zero (fixed after that release).
  ['-0.12', 'zero point one two'],
  // The places are those of the double's repr: trailing zeros go, an integral value is a cardinal.
  ['1.10', 'one point one'],
  ['2.50', 'two point five'],
  ['3.0', 'three'],
  ['12.', 'twelve'],
  ['-2.0', 'minus two'],
  ['-0.0', 'zero'],
  ['1e3', 'one thousand'],
  ['1.5e-7', 'zero point zero zero zero zero zero zero one five'],
  ['1_000.5', 'one thousand point five'],
  // Places past 0.01 of an integer are floored, in doubles: the last digit can come out one low.
  [
    '0.9999999999999999',
    'zero point nine nine nine nine nine nine nine nine nine nine nine nine nine nine nine eight',
  ],
  [
    '12345678.63506935',
    'twelve million, three hundred and forty-five thousand, six hundred and seventy-eight point six three five zero six nine three four',
  ],
  // Integral doubles past 2^53 are read from the double's value.
  [
    '1e23',
    'ninety-nine sextillion, nine hundred and ninety-nine quintillion, nine hundred and ninety-nine quadrillion, nine hundred and ninety-nine trillion, nine hundred and ninety-nine billion, nine hundred and ninety-one million, six hundred and eleven thousand, three hundred and ninety-two',
  ],
]);

describe('num2words port', () => {
  it.each([...CARDINALS])('cardinal(%s)', (n, expected) => {
    expect(cardinal(n)).toBe(expected);
  });

  it.each([...ORDINALS])('ordinal(%s)', (n, expected) => {
    expect(ordinal(n)).toBe(expected);
  });

  it.each([...YEARS])('year(%s)', (n, expected) => {
    expect(year(n)).toBe(expected);
  });

  it.each([...DECIMALS])('decimal(%j)', (text, expected) => {
    expect(decimal(text)).toBe(expected);
  });

  it('takes a number and the same bigint alike', () => {
    expect(cardinal(123_456_789)).toBe(cardinal(123_456_789n));
    expect(ordinal(42)).toBe(ordinal(42n));
  });

  it('overflows from 10^306, as num2words does (test_en: test_overflow)', () => {
    expect(cardinal(10n ** 306n - 1n)).toMatch(/^nine hundred and ninety-nine centillion, /);
    expect(() => cardinal(10n ** 306n)).toThrow(RangeError);
    expect(() => cardinal(-(10n ** 306n))).toThrow(RangeError);
    expect(() => decimal('1e306')).toThrow(RangeError);
  });

  it('rejects what num2words rejects', () => {
    expect(() => ordinal(-1)).toThrow('Cannot treat negative num -1 as ordinal.');
    expect(() => cardinal(2.5)).toThrow(RangeError);
    expect(() => year(1984.5)).toThrow(RangeError);
    for (const text of ['', 'abc', '1.2.3', '1,000.5', 'nan', 'inf', '1e400', '5e-324']) {
      expect(() => decimal(text), text).toThrow(RangeError);
    }
  });
});
