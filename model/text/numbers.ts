/**
 * English number words: cardinals, ordinals, years, digit strings and written numerals.
 * Pure string building with small constant tables; used by the text normalizer.
 */

// prettier-ignore
const ONES = [
  'zero', 'one', 'two', 'three', 'four', 'five', 'six', 'seven', 'eight', 'nine', 'ten',
  'eleven', 'twelve', 'thirteen', 'fourteen', 'fifteen', 'sixteen', 'seventeen', 'eighteen', 'nineteen',
];

const TENS = ['', '', 'twenty', 'thirty', 'forty', 'fifty', 'sixty', 'seventy', 'eighty', 'ninety'];

/** Short-scale names, one per group of three digits. */
// prettier-ignore
const SCALES = [
  '', 'thousand', 'million', 'billion', 'trillion', 'quadrillion', 'quintillion', 'sextillion',
  'septillion', 'octillion', 'nonillion', 'decillion',
];

/** Integers with more digits than the scale table can name are read digit by digit. */
const MAX_NAMED_DIGITS = SCALES.length * 3;

// prettier-ignore
const IRREGULAR_ORDINALS: Readonly<Record<string, string>> = {
  one: 'first', two: 'second', three: 'third', five: 'fifth', eight: 'eighth', nine: 'ninth',
  twelve: 'twelfth',
};

const NUMERAL = /^([-−])?(\d[\d,]*)?(?:\.(\d+))?$/;

/** Options for {@link numberToWords} and {@link numeralToWords}. */
export interface NumberWordsOptions {
  /**
   * British style: "and" after "hundred" and before a final group below one hundred
   * ("one hundred and five", "two thousand and one"). American style (default) omits it.
   */
  and?: boolean;
  /** Read an integer as an ordinal ("twenty-first"). Not allowed with a fractional part. */
  ordinal?: boolean;
}

function belowHundred(n: number): string {
  if (n < 20) return ONES[n];
  const unit = n % 10;
  return unit === 0 ? TENS[(n - unit) / 10] : `${TENS[(n - unit) / 10]}-${ONES[unit]}`;
}

function belowThousand(n: number, and: boolean): string {
  const rest = n % 100;
  const hundreds = (n - rest) / 100;
  if (hundreds === 0) return belowHundred(rest);
  const head = `${ONES[hundreds]} hundred`;
  if (rest === 0) return head;
  return `${head}${and ? ' and ' : ' '}${belowHundred(rest)}`;
}

/** Each digit as a word: "907" → "nine zero seven". Characters other than digits are skipped. */
export function digitsToWords(digits: string): string {
  const words: string[] = [];
  for (let i = 0; i < digits.length; i++) {
    const code = digits.charCodeAt(i) - 48;
    if (code >= 0 && code <= 9) words.push(ONES[code]);
  }
  return words.join(' ');
}

/**
 * Cardinal words for a string of ASCII digits (no sign, no separators). Leading zeros are ignored;
 * integers too long for the scale table (over 36 digits) are read digit by digit.
 */
export function integerToWords(digits: string, options: NumberWordsOptions = {}): string {
  const and = options.and === true;
  let start = 0;
  while (start < digits.length && digits.charCodeAt(start) === 48) start++;
  const d = digits.slice(start);
  let words: string;
  if (d === '') words = 'zero';
  else if (d.length > MAX_NAMED_DIGITS) words = digitsToWords(d);
  else {
    const parts: string[] = [];
    const groups = Math.ceil(d.length / 3);
    let end = d.length - (groups - 1) * 3;
    let begin = 0;
    for (let g = groups - 1; g >= 0; g--) {
      const chunk = Number(d.slice(begin, end));
      begin = end;
      end += 3;
      if (chunk === 0) continue;
      // British: "one thousand and five", "two million and ten".
      if (and && g === 0 && chunk < 100 && parts.length > 0) parts.push('and');
      parts.push(g === 0 ? belowThousand(chunk, and) : `${belowThousand(chunk, and)} ${SCALES[g]}`);
    }
    words = parts.join(' ');
  }
  return options.ordinal === true ? toOrdinalWords(words) : words;
}

/** Turns cardinal words into ordinal words by changing the last word: "twenty-one" → "twenty-first". */
export function toOrdinalWords(cardinal: string): string {
  const cut = Math.max(cardinal.lastIndexOf(' '), cardinal.lastIndexOf('-')) + 1;
  const head = cardinal.slice(0, cut);
  const last = cardinal.slice(cut);
  const irregular = IRREGULAR_ORDINALS[last];
  if (irregular !== undefined) return head + irregular;
  if (last.endsWith('y')) return `${head}${last.slice(0, -1)}ieth`;
  return `${head}${last}th`;
}

/**
 * Words for a written numeral: optional sign (`-` or `−`), digits with optional `,` thousands
 * separators, optional decimal part (`1,234.05`, `-3.5`, `.25`). The decimal part is read digit by
 * digit after "point"; a sign reads "minus".
 * @throws RangeError when `numeral` is not of that form, or when an ordinal is asked for a decimal.
 */
export function numeralToWords(numeral: string, options: NumberWordsOptions = {}): string {
  const m = NUMERAL.exec(numeral);
  if (m === null || (m[2] === undefined && m[3] === undefined)) {
    throw new RangeError(`not a numeral: ${JSON.stringify(numeral)}`);
  }
  const [, sign, whole, fraction] = m;
  if (fraction !== undefined && options.ordinal === true) {
    throw new RangeError('an ordinal needs an integer');
  }
  let words = whole === undefined ? '' : integerToWords(whole.replaceAll(',', ''), options);
  if (fraction !== undefined)
    words = words === '' ? `point ${digitsToWords(fraction)}` : `${words} point ${digitsToWords(fraction)}`;
  return sign === undefined ? words : `minus ${words}`;
}

/**
 * English words for a number: `numberToWords(1234)` → "one thousand two hundred thirty-four",
 * `numberToWords(-0.5)` → "minus zero point five", `numberToWords(21, { ordinal: true })` →
 * "twenty-first", `numberToWords(105, { and: true })` → "one hundred and five". Bigints of any size
 * are accepted (past the decillions they are read digit by digit).
 * @throws RangeError for NaN or infinities, or for an ordinal of a non-integer.
 */
export function numberToWords(n: number | bigint, options: NumberWordsOptions = {}): string {
  if (typeof n === 'bigint') {
    const words = integerToWords((n < 0n ? -n : n).toString(), options);
    return n < 0n ? `minus ${words}` : words;
  }
  if (!Number.isFinite(n)) throw new RangeError(`cannot read ${n} as words`);
  const abs = Math.abs(n);
  let text: string;
  if (Number.isInteger(abs)) text = Number.isSafeInteger(abs) ? String(abs) : BigInt(abs).toString();
  else {
    text = String(abs);
    // Tiny values print in exponent form; spell them out in full instead.
    if (text.includes('e')) text = abs.toFixed(20).replace(/0+$/, '');
  }
  const words = numeralToWords(text, options);
  // -0 reads as plain "zero".
  return n < 0 ? `minus ${words}` : words;
}

/**
 * A year as it is usually said: 1999 → "nineteen ninety-nine", 1905 → "nineteen oh five",
 * 1900 → "nineteen hundred", 2005 → "two thousand five" (British "two thousand and five"),
 * 2024 → "twenty twenty-four". Years outside 1000–9999 are read as cardinals.
 */
export function yearToWords(year: number, options: { and?: boolean } = {}): string {
  if (!Number.isInteger(year) || year < 1000 || year > 9999) return numberToWords(year, options);
  const low = year % 100;
  const high = (year - low) / 100;
  // 2000–2009 (and 1000, 3000, ...) read as plain thousands.
  if (high % 10 === 0 && low < 10) return integerToWords(String(year), options);
  if (low === 0) return `${belowHundred(high)} hundred`;
  if (low < 10) return `${belowHundred(high)} oh ${ONES[low]}`;
  return `${belowHundred(high)} ${belowHundred(low)}`;
}
