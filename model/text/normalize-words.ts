/**
 * What the English rules of normalize.ts and normalize-numbers.ts read into words: the tables
 * (magnitudes, currencies, units, months, vulgar fractions), the readers that turn a matched
 * numeral, date, clock time or fraction into words, and the test whether a period after a match
 * ends the sentence. Pure and synchronous.
 */
import {
  digitsToWords,
  integerToWords,
  numeralToWords,
  toOrdinalWords,
  yearToWords,
  type NumberWordsOptions,
} from './numbers.ts';

/* ------------------------------------------------------------------------------------------------
 * Tables
 * ---------------------------------------------------------------------------------------------- */

// prettier-ignore
export const MAGNITUDE_WORDS: Readonly<Record<string, string>> = {
  k: 'thousand', K: 'thousand', m: 'million', M: 'million', mn: 'million', b: 'billion', B: 'billion',
  bn: 'billion', T: 'trillion', tn: 'trillion',
};

interface Currency {
  readonly one: string;
  readonly many: string;
  readonly minorOne?: string;
  readonly minorMany?: string;
}
// prettier-ignore
export const CURRENCIES: Readonly<Record<string, Currency>> = {
  $: { one: 'dollar', many: 'dollars', minorOne: 'cent', minorMany: 'cents' },
  '£': { one: 'pound', many: 'pounds', minorOne: 'penny', minorMany: 'pence' },
  '€': { one: 'euro', many: 'euros', minorOne: 'cent', minorMany: 'cents' },
  '¥': { one: 'yen', many: 'yen' },
  '₹': { one: 'rupee', many: 'rupees', minorOne: 'paisa', minorMany: 'paise' },
};

/** Unit symbols after a number: [singular, plural]. Matched case-sensitively ("MB" is not "mb"). */
// prettier-ignore
export const UNITS: Readonly<Record<string, readonly [string, string]>> = {
  mm: ['millimeter', 'millimeters'], cm: ['centimeter', 'centimeters'], m: ['meter', 'meters'],
  km: ['kilometer', 'kilometers'], µm: ['micrometer', 'micrometers'], μm: ['micrometer', 'micrometers'],
  ft: ['foot', 'feet'], yd: ['yard', 'yards'], mi: ['mile', 'miles'], mg: ['milligram', 'milligrams'],
  g: ['gram', 'grams'], kg: ['kilogram', 'kilograms'], lb: ['pound', 'pounds'], lbs: ['pound', 'pounds'],
  oz: ['ounce', 'ounces'], ml: ['milliliter', 'milliliters'], mL: ['milliliter', 'milliliters'],
  L: ['liter', 'liters'], gal: ['gallon', 'gallons'], mph: ['mile per hour', 'miles per hour'],
  kph: ['kilometer per hour', 'kilometers per hour'], 'km/h': ['kilometer per hour', 'kilometers per hour'],
  'm/s': ['meter per second', 'meters per second'], ms: ['millisecond', 'milliseconds'],
  sec: ['second', 'seconds'], secs: ['second', 'seconds'], min: ['minute', 'minutes'],
  mins: ['minute', 'minutes'], h: ['hour', 'hours'], hr: ['hour', 'hours'], hrs: ['hour', 'hours'],
  wk: ['week', 'weeks'], wks: ['week', 'weeks'], yr: ['year', 'years'], yrs: ['year', 'years'],
  KB: ['kilobyte', 'kilobytes'], kB: ['kilobyte', 'kilobytes'], MB: ['megabyte', 'megabytes'],
  GB: ['gigabyte', 'gigabytes'], TB: ['terabyte', 'terabytes'], PB: ['petabyte', 'petabytes'],
  KiB: ['kibibyte', 'kibibytes'], MiB: ['mebibyte', 'mebibytes'], GiB: ['gibibyte', 'gibibytes'],
  TiB: ['tebibyte', 'tebibytes'], Kb: ['kilobit', 'kilobits'], Mb: ['megabit', 'megabits'],
  Gb: ['gigabit', 'gigabits'], kbps: ['kilobit per second', 'kilobits per second'],
  Kbps: ['kilobit per second', 'kilobits per second'], Mbps: ['megabit per second', 'megabits per second'],
  Gbps: ['gigabit per second', 'gigabits per second'], Hz: ['hertz', 'hertz'],
  kHz: ['kilohertz', 'kilohertz'], MHz: ['megahertz', 'megahertz'], GHz: ['gigahertz', 'gigahertz'],
  V: ['volt', 'volts'], W: ['watt', 'watts'], kW: ['kilowatt', 'kilowatts'], MW: ['megawatt', 'megawatts'],
  kWh: ['kilowatt hour', 'kilowatt hours'], mA: ['milliamp', 'milliamps'],
  mAh: ['milliamp hour', 'milliamp hours'], kcal: ['kilocalorie', 'kilocalories'],
  tsp: ['teaspoon', 'teaspoons'], tbsp: ['tablespoon', 'tablespoons'],
  fps: ['frame per second', 'frames per second'], px: ['pixel', 'pixels'],
  dpi: ['dot per inch', 'dots per inch'], ppm: ['part per million', 'parts per million'],
  k: ['thousand', 'thousand'], bn: ['billion', 'billion'],
};

// prettier-ignore
export const MONTHS = [
  'January', 'February', 'March', 'April', 'May', 'June',
  'July', 'August', 'September', 'October', 'November', 'December',
];
const DAYS_IN_MONTH = [31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];
export const MONTH_BY_NAME = new Map<string, number>();
MONTHS.forEach((name, i) => {
  MONTH_BY_NAME.set(name, i);
  MONTH_BY_NAME.set(name.slice(0, 3), i);
});
MONTH_BY_NAME.set('Sept', 8);

// prettier-ignore
export const VULGAR: Readonly<Record<string, readonly [number, number]>> = {
  '½': [1, 2], '⅓': [1, 3], '⅔': [2, 3], '¼': [1, 4], '¾': [3, 4], '⅕': [1, 5], '⅖': [2, 5],
  '⅗': [3, 5], '⅘': [4, 5], '⅙': [1, 6], '⅚': [5, 6], '⅐': [1, 7], '⅛': [1, 8], '⅜': [3, 8],
  '⅝': [5, 8], '⅞': [7, 8], '⅑': [1, 9], '⅒': [1, 10],
};

/* ------------------------------------------------------------------------------------------------
 * Sentence ends: whether a period after an abbreviation, a time or an hour ends the sentence
 * ---------------------------------------------------------------------------------------------- */

const CONTINUATION = /[\p{Ll}\p{N},;:!?)\]\u2026\u2014\u2013-]/u;

/** True when the text after `end` goes on with the same sentence (lower case, digit, comma...). */
export function continuesSentence(s: string, end: number): boolean {
  let i = end;
  while (i < s.length && s[i] === ' ') i++;
  return i < s.length && CONTINUATION.test(s[i]);
}

/** True when nothing but spaces and closing quotes follow `end` before the end of text or line. */
export function atTextEnd(s: string, end: number): boolean {
  let i = end;
  while (i < s.length && (s[i] === ' ' || s[i] === '"' || s[i] === '\u201D' || s[i] === "'")) i++;
  return i >= s.length || s[i] === '\n';
}

/* ------------------------------------------------------------------------------------------------
 * Readers
 * ---------------------------------------------------------------------------------------------- */

/**
 * Words for a numeral as written in running text. Ungrouped integers longer than 15 digits (past
 * the hundreds of trillions) and integers with a leading zero ("007") are read digit by digit.
 */
export function readNumeral(numeral: string, opts: NumberWordsOptions): string {
  const negative = numeral.startsWith('-');
  const body = negative ? numeral.slice(1) : numeral;
  const dot = body.indexOf('.');
  const whole = dot < 0 ? body : body.slice(0, dot);
  let words: string;
  if (!whole.includes(',') && (whole.length > 15 || (whole.length > 1 && whole.startsWith('0')))) {
    words = digitsToWords(whole);
    if (dot >= 0) words += ` point ${digitsToWords(body.slice(dot + 1))}`;
  } else {
    words = numeralToWords(body, opts);
  }
  return negative ? `minus ${words}` : words;
}

export function isOne(numeral: string): boolean {
  return numeral === '1' || numeral === '-1';
}

export function pluralWords(words: string): string {
  return words.endsWith('y') ? `${words.slice(0, -1)}ies` : `${words}s`;
}

export function readDate(year: number | undefined, month: number, day: number, british: boolean): string {
  const dayWords = toOrdinalWords(integerToWords(String(day)));
  const head = british ? `the ${dayWords} of ${MONTHS[month]}` : `${MONTHS[month]} ${dayWords}`;
  return year === undefined ? head : `${head}, ${yearToWords(year, { and: british })}`;
}

export function validDay(month: number, day: number): boolean {
  return month >= 0 && month < 12 && day >= 1 && day <= DAYS_IN_MONTH[month];
}

export function readClock(hour: number, minute: string, ampm: string | undefined): string {
  const h = integerToWords(String(hour));
  const suffix = ampm === undefined ? '' : ` ${ampm}`;
  if (minute === '00') {
    if (ampm !== undefined) return `${h}${suffix}`;
    return hour >= 1 && hour <= 12 ? `${h} o'clock` : `${h} hundred`;
  }
  const m = minute.startsWith('0') ? `oh ${integerToWords(minute)}` : integerToWords(minute);
  return `${h} ${m}${suffix}`;
}

export function fractionWords(numerator: number, denominator: number, afterWhole: boolean): string {
  const plural = numerator !== 1;
  let unit: string;
  if (denominator === 2) unit = plural ? 'halves' : 'half';
  else if (denominator === 4) unit = plural ? 'quarters' : 'quarter';
  else {
    const ordinal = toOrdinalWords(integerToWords(String(denominator)));
    unit = plural ? `${ordinal}s` : ordinal;
  }
  const count = numerator === 1 ? (afterWhole ? 'a' : 'one') : integerToWords(String(numerator));
  return `${count} ${unit}`;
}
