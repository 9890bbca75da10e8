/**
 * English text normalization before phonemization: turns written forms (numbers, money, times,
 * dates, units, abbreviations, symbols, typographic punctuation) into words that espeak-ng reads
 * well. Pure and synchronous; every regex is compiled once at module load.
 *
 * American (`a`) and British (`b`) output differ only in:
 * - "and" inside numbers: British "one hundred and five", "two thousand and five" (years too);
 *   American "one hundred five", "two thousand five".
 * - Numeric dates: `3/4/2024` is March 4 in American, 3 April in British (either falls back to the
 *   other order when its own is impossible, e.g. `25/12/2024`). Dates are read "January fifteenth,
 *   twenty twenty-four" (American) and "the fifteenth of January, twenty twenty-four" (British).
 */

import {
  digitsToWords,
  integerToWords,
  numeralToWords,
  toOrdinalWords,
  yearToWords,
  type NumberWordsOptions,
} from './numbers.ts';

export {
  digitsToWords,
  integerToWords,
  numberToWords,
  numeralToWords,
  toOrdinalWords,
  yearToWords,
  type NumberWordsOptions,
} from './numbers.ts';

/** Kokoro's English language codes: `a` American, `b` British. */
export type EnglishLang = 'a' | 'b';

/* ------------------------------------------------------------------------------------------------
 * Characters
 * ---------------------------------------------------------------------------------------------- */

// eslint-disable-next-line no-control-regex -- stripping control characters is the point
const CONTROL = /[\u0000-\u0008\u000E-\u001F\u007F-\u009F\u00AD\u200B-\u200D\u2060\uFEFF]/g;

/** Typographic and CJK punctuation → forms in Kokoro's vocabulary or plain ASCII. */
// prettier-ignore
const CHAR_MAP: Readonly<Record<string, string>> = {
  '\u2018': "'", '\u2019': "'", '\u201A': "'", '\u201B': "'", '\u2032': "'", '\u2039': "'", '\u203A': "'",
  '\u00AB': '\u201C', '\u00BB': '\u201D', '\u201E': '\u201C', '\u201F': '\u201D', '\u300C': '\u201C',
  '\u300D': '\u201D', '\u300E': '\u201C', '\u300F': '\u201D', '\u301D': '\u201C', '\u301E': '\u201D',
  '\u2033': '"', '\uFF02': '"', '\u3001': ', ', '\uFF0C': ', ', '\u3002': '. ', '\uFF0E': '. ',
  '\uFF01': '! ', '\uFF1F': '? ', '\uFF1A': ': ', '\uFF1B': '; ', '\uFF08': ' (', '\uFF09': ') ',
  '\u2010': '-', '\u2011': '-', '\u2212': '-', '\u2012': '\u2013', '\u2015': '\u2014', '\u22EF': '\u2026',
};
const CHARS =
  /[\u2018\u2019\u201A\u201B\u2032\u2039\u203A\u00AB\u00BB\u201E\u201F\u300C-\u300F\u301D\u301E\u2033\u3001\u3002\u2010\u2011\u2212\u2012\u2015\u22EF\uFF01-\uFF5E]/g;

/** Thin, narrow and no-break spaces used as thousands separators: `10 000` → `10000`. */
const DIGIT_GROUP_SPACE = /(?<=\d)[\u00A0\u2009\u202F](?=\d{3}(?!\d))/g;
const LINE_BREAKS = /\r\n?|[\u2028\u2029\u0085]/g;
const SPACES = /[^\S\n]+/g;
const NEWLINES = / ?\n[\s]*/g;
const DOTS = /\.{3,}/g;
const DOUBLE_HYPHEN = /(?<!-)-{2,3}(?!-)/g;

/**
 * Line breaks, control characters, typographic and full-width punctuation, digit-group spaces,
 * dot runs and double hyphens → plain forms; runs of spaces collapsed. Shared by every language.
 */
export function cleanCharacters(text: string): string {
  return text
    .replace(LINE_BREAKS, '\n')
    .replace(CONTROL, '')
    .replace(CHARS, (c) => CHAR_MAP[c] ?? String.fromCharCode(c.charCodeAt(0) - 0xfee0))
    .replace(DIGIT_GROUP_SPACE, '')
    .replace(DOTS, '\u2026')
    .replace(DOUBLE_HYPHEN, '\u2014')
    .replace(SPACES, ' ')
    .replace(NEWLINES, '\n')
    .trim();
}

/* ------------------------------------------------------------------------------------------------
 * Spans left alone: URLs, e-mail addresses, versions and other dotted numbers (espeak reads
 * "v2.0" and "1.2.3" sensibly on its own; reading them as decimals would not).
 * ---------------------------------------------------------------------------------------------- */

const PROTECTED = new RegExp(
  [
    String.raw`\b(?:https?|ftp)://[^\s<>"“”]*[^\s<>"“”.,;:!?'()]`,
    String.raw`\bwww\.[^\s<>"“”]*[^\s<>"“”.,;:!?'()]`,
    String.raw`(?<![\w.+-])[\w.+-]+@[A-Za-z\d-]+(?:\.[A-Za-z\d-]+)+`,
    String.raw`(?<![\w.])[vV]\d+(?:\.\d+)+(?!\w)`,
    // Dotted phone numbers (555.123.4567) are not versions; the phone rule reads them.
    String.raw`(?<![\w.])(?!\d{3}\.\d{3}\.\d{4}(?![\w.]))\d+(?:\.\d+){2,}(?!\w)`,
  ].join('|'),
  'g',
);

/* ------------------------------------------------------------------------------------------------
 * Sentence ends after abbreviations
 * ---------------------------------------------------------------------------------------------- */

const CONTINUATION = /[\p{Ll}\p{N},;:!?)\]\u2026\u2014\u2013-]/u;

/** True when the text after `end` goes on with the same sentence (lower case, digit, comma...). */
function continuesSentence(s: string, end: number): boolean {
  let i = end;
  while (i < s.length && s[i] === ' ') i++;
  return i < s.length && CONTINUATION.test(s[i]);
}

/** True when nothing but spaces and closing quotes follow `end` before the end of text or line. */
function atTextEnd(s: string, end: number): boolean {
  let i = end;
  while (i < s.length && (s[i] === ' ' || s[i] === '"' || s[i] === '\u201D' || s[i] === "'")) i++;
  return i >= s.length || s[i] === '\n';
}

/* ------------------------------------------------------------------------------------------------
 * Abbreviations and symbols
 * ---------------------------------------------------------------------------------------------- */

// prettier-ignore
const TITLES: Readonly<Record<string, string>> = {
  Mr: 'Mister', Mrs: 'Missus', Ms: 'Miz', Dr: 'Doctor', St: 'Saint', Prof: 'Professor', Gen: 'General',
  Mt: 'Mount', Ft: 'Fort', Sgt: 'Sergeant', Capt: 'Captain', Lt: 'Lieutenant', Col: 'Colonel', Maj: 'Major',
  Adm: 'Admiral', Cmdr: 'Commander', Rev: 'Reverend', Fr: 'Father', Gov: 'Governor', Sen: 'Senator',
  Rep: 'Representative', Pres: 'President', Hon: 'Honorable',
};
// A title is expanded only before a capitalized word; British style drops the period on the first five.
// "Main St. He left" ends a sentence: "St" before a pronoun or article is a street, not a saint.
const TITLE = new RegExp(
  String.raw`\b(?:(Mrs|Mr|Ms|Dr)\.?|(St)\.?(?! +(?:The|A|An|I|He|She|It|We|You|They|This|That|There|Then|But|And|So|If|In|On|At|My|His|Her|Our|Their)\b)|(Prof|Gen|Mt|Ft|Sgt|Capt|Lt|Col|Maj|Adm|Cmdr|Rev|Fr|Gov|Sen|Rep|Pres|Hon)\.)(?= +[A-Z])`,
  'g',
);

/** "Mr." and company are never anything else, and "the Dr. said" means a doctor: expand before any word. */
const TITLE_BEFORE_LOWER = /\b(Mrs|Mr|Ms|Dr)\.(?= +\p{Ll})/gu;
// prettier-ignore
const LOWER_TITLES: Readonly<Record<string, string>> = {
  Mr: 'Mister', Mrs: 'Missus', Ms: 'Miz', Dr: 'doctor',
};

/** Abbreviations that can end a sentence: their period is kept unless the sentence clearly goes on. */
// prettier-ignore
const TRAILING: Readonly<Record<string, string>> = {
  etc: 'et cetera', Etc: 'Et cetera', Jr: 'Junior', Sr: 'Senior', Inc: 'Incorporated', Ltd: 'Limited',
  Corp: 'Corporation', Bros: 'Brothers', Ave: 'Avenue', Rd: 'Road', Blvd: 'Boulevard', St: 'Street',
};
// "St" left over after the title rule (not before a capitalized word) follows a street name.
const TRAILING_ABBR = /\b(?:(etc|Etc|Jr|Sr|Inc|Ltd|Corp|Bros|Ave|Rd|Blvd)\.|(?<=[\p{L}\p{N}] )(St)\b\.?)/gu;

/** Abbreviations inside a sentence: their period is dropped unless the text ends there. */
// prettier-ignore
const MIDDLE: Readonly<Record<string, string>> = {
  'e.g': 'for example', 'i.e': 'that is', vs: 'versus', approx: 'approximately', cf: 'compare',
};
const MIDDLE_ABBR = /(?<![\p{L}\p{N}.])(e\.g|i\.e|vs|approx|cf)(\.)?(?![\p{L}\p{N}])/giu;

/** Labels before a number: "No. 5" → "number 5". */
// prettier-ignore
const LABELS: Readonly<Record<string, string>> = {
  no: 'number', nos: 'numbers', fig: 'figure', figs: 'figures', vol: 'volume', ch: 'chapter', eq: 'equation',
  pp: 'pages',
};
const LABEL = /\b(No|Nos|Fig|Figs|Vol|Ch|Eq|pp)\. ?(?=#?\d)/giu;

const SYMBOLS: readonly (readonly [RegExp, string])[] = [
  [/(?<!\w)w\/o(?!\w)/g, 'without'],
  [/(?<!\w)w\/(?= )/g, 'with'],
  [/#(?=\d)/g, 'number '],
  [/~ ?(?=[$£€¥₹]?\d)/g, 'about '],
  [/ *& */g, ' and '],
  [/ *@ */g, ' at '],
  [/ *± */g, ' plus or minus '],
];

/* ------------------------------------------------------------------------------------------------
 * Numbers: regex pieces
 * ---------------------------------------------------------------------------------------------- */

/** An integer, with correct `,` thousands grouping or none. */
const INT = String.raw`(?:\d{1,3}(?:,\d{3})+(?!\d)|\d+)`;
/** A numeral with optional decimal part. */
const DEC = String.raw`${INT}(?:\.\d+)?`;
/**
 * A numeral starts here only when not glued to a word ("v2", "mp3" stay for espeak) or inside
 * another numeral. Checking this first also keeps every number regex linear on long digit runs.
 */
const B = String.raw`(?<![\p{L}\p{N}_]|\d\.)`;
/** A numeral with an optional minus sign; the sign must not follow a word ("COVID-19"). */
const SIGNED = String.raw`(?:(?<![\p{L}\p{N}_)\]])-)?${B}${DEC}`;
const CURRENCY_SYMBOL = '[$£€¥₹]';
const MAGNITUDE = String.raw`(?: (hundred|thousand|million|billion|trillion)(?!\p{L})|(k|K|mn|m|M|bn|b|B|tn|T)(?![\p{L}\p{N}]))`;
/** am/pm in its written forms; group 1 (+ group 2, the final period) or group 3 holds the letter. */
const AMPM = String.raw` ?(?:([AaPp])\. ?[Mm](\.)?|([AaPp])[Mm])(?![\p{L}\p{N}])`;

// prettier-ignore
const MAGNITUDE_WORDS: Readonly<Record<string, string>> = {
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
const CURRENCIES: Readonly<Record<string, Currency>> = {
  $: { one: 'dollar', many: 'dollars', minorOne: 'cent', minorMany: 'cents' },
  '£': { one: 'pound', many: 'pounds', minorOne: 'penny', minorMany: 'pence' },
  '€': { one: 'euro', many: 'euros', minorOne: 'cent', minorMany: 'cents' },
  '¥': { one: 'yen', many: 'yen' },
  '₹': { one: 'rupee', many: 'rupees', minorOne: 'paisa', minorMany: 'paise' },
};

/** Unit symbols after a number: [singular, plural]. Matched case-sensitively ("MB" is not "mb"). */
// prettier-ignore
const UNITS: Readonly<Record<string, readonly [string, string]>> = {
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
const UNIT_ALTERNATION = Object.keys(UNITS)
  .sort((x, y) => y.length - x.length)
  .map((u) => u.replace(/[/.]/g, '\\$&'))
  .join('|');

// prettier-ignore
const MONTHS = [
  'January', 'February', 'March', 'April', 'May', 'June',
  'July', 'August', 'September', 'October', 'November', 'December',
];
const DAYS_IN_MONTH = [31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];
const MONTH_BY_NAME = new Map<string, number>();
MONTHS.forEach((name, i) => {
  MONTH_BY_NAME.set(name, i);
  MONTH_BY_NAME.set(name.slice(0, 3), i);
});
MONTH_BY_NAME.set('Sept', 8);
const MONTH_NAME = String.raw`(January|February|March|April|May|June|July|August|September|October|November|December|(?:Jan|Feb|Mar|Apr|Jun|Jul|Aug|Sept|Sep|Oct|Nov|Dec)\.?)`;

// prettier-ignore
const VULGAR: Readonly<Record<string, readonly [number, number]>> = {
  '½': [1, 2], '⅓': [1, 3], '⅔': [2, 3], '¼': [1, 4], '¾': [3, 4], '⅕': [1, 5], '⅖': [2, 5],
  '⅗': [3, 5], '⅘': [4, 5], '⅙': [1, 6], '⅚': [5, 6], '⅐': [1, 7], '⅛': [1, 8], '⅜': [3, 8],
  '⅝': [5, 8], '⅞': [7, 8], '⅑': [1, 9], '⅒': [1, 10],
};

/* ------------------------------------------------------------------------------------------------
 * Numbers: rules, applied in this order (earlier rules consume digits later ones would misread)
 * ---------------------------------------------------------------------------------------------- */

const ISO_DATE = /(?<![\p{L}\p{N}_.-])(\d{4})-(\d{2})-(\d{2})(?![\p{N}_]|-\d)/gu;
const SLASH_DATE = /(?<![\p{L}\p{N}_./])(\d{1,2})\/(\d{1,2})\/(\d{4})(?![\p{N}_]|\/\d)/gu;
// The last form, 555-1234, would otherwise read as a range; a range of that shape nearly always has
// round ends (100-1000, 250-1500), so those are left to the range rule.
const PHONE = new RegExp(
  String.raw`(?<![\p{L}\p{N}_+.-])(?:(\+)\d{1,3}(?:[ .-]\(?\d{1,5}\)?){1,5}|(?:\(\d{3}\) ?|\d{3} )\d{3}[-. ]\d{4}|\d{1,4}(?:-\d{2,5}){2,}|\d{3}\.\d{3}\.\d{4}|[2-9]\d[1-9]-\d{3}[1-9])(?![\p{N}_]|[-.]\d)`,
  'gu',
);
/**
 * Thousands grouped with plain spaces ("1 000 000", "10 000"). Only merged when a later group
 * starts with 0: "100 200 300" is more likely a list than a number.
 */
const SPACE_GROUPED = /(?<![\p{L}\p{N}_.,])\d{1,3}(?: \d{3})+(?![\p{N}]|[.,]\d| \d)/gu;
const ZERO_GROUP = / 0/;
const SPACE = / /g;
const DIGIT_RUNS = /\d+/g;
const OPERATORS: readonly (readonly [RegExp, string])[] = [
  // "5 - 3 = 2" is arithmetic; other dashes between numbers are ranges.
  [/(?<=\d) +- +(?=\d[\d.,]* *=)/g, ' minus '],
  [/(?<=\d) *\+ *(?=\d)/g, ' plus '],
  [/(?<![\p{L}\p{N}_)\]])\+(?=\d)/gu, 'plus '],
  [/(?<=\d) *× *(?=\d)/g, ' times '],
  // Dimensions and resolutions: "1920x1080", "10 x 20".
  [/(?<=\d) ?x ?(?=\d)/g, ' by '],
  [/(?<=\d) *÷ *(?=\d)/g, ' divided by '],
  [/(?<=[\p{L}\p{N})\]]) *(?<![=<>!])=(?![=>]) *(?=[\p{L}\p{N}([$£€¥₹.-])/gu, ' equals '],
];
const CURRENCY_RANGE = new RegExp(
  String.raw`(${CURRENCY_SYMBOL}) ?(${DEC})(?: ?[-–] ?| to )\1?(${DEC})${MAGNITUDE}?(?![\p{N}])`,
  'gu',
);
const RANGE = new RegExp(
  String.raw`(?<![\p{L}\p{N}_:]|\d[.-])(\d{1,2}:\d{2}|${DEC})((?:${AMPM})?) ?[-–] ?(?=${CURRENCY_SYMBOL}?(?:\d{1,2}:\d{2}|${DEC})(?![\p{N}]|[-–]\d))`,
  'gu',
);
const TIME = new RegExp(
  String.raw`${B}(\d{1,2}):([0-5]\d)(?::([0-5]\d))?(?![\p{N}]|:\d|\.\d)(?:${AMPM})?`,
  'gu',
);
/** What is left of n:m after the time rule ("3:1", "16:9") is a ratio. */
const RATIO = new RegExp(String.raw`${B}(\d+):(\d+)(?![\p{N}]|:\d)`, 'gu');
const HOUR_AMPM = new RegExp(String.raw`${B}(\d{1,2})${AMPM}`, 'gu');
const MONTH_DAY = new RegExp(
  String.raw`\b${MONTH_NAME} (\d{1,2})(?:st|nd|rd|th)?(?![\p{L}\p{N}_]|:\d|\.\d)`,
  'gu',
);
const DAY_MONTH = new RegExp(
  String.raw`(?<!\bthe )${B}(\d{1,2})(?:st|nd|rd|th)? ${MONTH_NAME}(?!\p{L})`,
  'gu',
);
const CURRENCY = new RegExp(
  String.raw`(?:(?<![\p{L}\p{N}_)\]])(-))?(US)?(${CURRENCY_SYMBOL}) ?(-)?(${INT})(?:\.(\d+))?${MAGNITUDE}?(?![\p{N}])`,
  'gu',
);
const CENTS = new RegExp(String.raw`${B}(${INT}) ?¢`, 'gu');
const PERCENT = new RegExp(String.raw`(${SIGNED}) ?%`, 'gu');
const DEGREES = new RegExp(String.raw`(${SIGNED}) ?(?:°(?: ?([CF])(?![\p{L}]))?|(℃)|(℉))`, 'gu');
const UNIT = new RegExp(String.raw`(${SIGNED}) ?(${UNIT_ALTERNATION})([²³])?(?![\p{L}\p{N}_])`, 'gu');
const VULGAR_FRACTION = new RegExp(String.raw`(?:${B}(\d+) ?)?([${Object.keys(VULGAR).join('')}])`, 'gu');
const SLASH_FRACTION = /(?<![\p{L}\p{N}_/]|\d\.)(?:(\d+) )?(\d{1,2})\/(\d{1,2})(?![\p{N}_/]|\.\d)/gu;
const ORDINAL = new RegExp(String.raw`${B}(${INT})(st|nd|rd|th)(?![\p{L}\p{N}_])`, 'giu');
const DECADE = /(?<![\p{L}\p{N}_.,])(?:'(\d)0|(1[1-9]|20)?(\d)0)'?s(?![\p{L}\p{N}_])/gu;
const YEAR = /(?<![\p{L}\p{N}_.,'$£€¥₹#-])(1[1-9]\d\d|20\d\d)(?![\p{L}\p{N}_]|[.,]\d)/gu;
const SHORT_YEAR = /(?<![\p{L}\p{N}_])'(\d\d)(?![\p{L}\p{N}_])/gu;
const NUMBER = new RegExp(
  String.raw`((?:(?<![\p{L}\p{N}_)\]])-)?)(?:${B}(${INT})(?:\.(\d+))?|(?<![\p{L}\p{N}_.])\.(\d+))`,
  'gu',
);
const HAS_DIGIT = /[\d\u00BC-\u00BE\u2150-\u215E]/;
const LETTER = /\p{L}/u;
const ZERO_AMOUNT = /^[0,]*$/;
const EN_DASH = / ?\u2013 ?/g;
const MULTI_SPACE = / {2,}/g;

/* ------------------------------------------------------------------------------------------------
 * Readers
 * ---------------------------------------------------------------------------------------------- */

/**
 * Words for a numeral as written in running text. Ungrouped integers longer than 15 digits (past
 * the hundreds of trillions) and integers with a leading zero ("007") are read digit by digit.
 */
function readNumeral(numeral: string, opts: NumberWordsOptions): string {
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

function isOne(numeral: string): boolean {
  return numeral === '1' || numeral === '-1';
}

function pluralWords(words: string): string {
  return words.endsWith('y') ? `${words.slice(0, -1)}ies` : `${words}s`;
}

function readDate(year: number | undefined, month: number, day: number, british: boolean): string {
  const dayWords = toOrdinalWords(integerToWords(String(day)));
  const head = british ? `the ${dayWords} of ${MONTHS[month]}` : `${MONTHS[month]} ${dayWords}`;
  return year === undefined ? head : `${head}, ${yearToWords(year, { and: british })}`;
}

function validDay(month: number, day: number): boolean {
  return month >= 0 && month < 12 && day >= 1 && day <= DAYS_IN_MONTH[month];
}

function readClock(hour: number, minute: string, ampm: string | undefined): string {
  const h = integerToWords(String(hour));
  const suffix = ampm === undefined ? '' : ` ${ampm}`;
  if (minute === '00') {
    if (ampm !== undefined) return `${h}${suffix}`;
    return hour >= 1 && hour <= 12 ? `${h} o'clock` : `${h} hundred`;
  }
  const m = minute.startsWith('0') ? `oh ${integerToWords(minute)}` : integerToWords(minute);
  return `${h} ${m}${suffix}`;
}

function fractionWords(numerator: number, denominator: number, afterWhole: boolean): string {
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

/** What normalizeText leaves to the front end after it. */
export interface NormalizeOptions {
  /**
   * misaki reads plain numbers, decimals, 4-digit years, ordinals and $ £ € amounts itself (`Lexicon.get_number`): leave them to it, since its reading is what Kokoro was trained
   * on. Dates, times, phone numbers, units, ranges, fractions and magnitudes stay ours.
   */
  readonly misaki?: boolean;
}

const MISAKI_CURRENCIES = new Set(['$', '£', '€']);

function normalizeNumbers(s: string, british: boolean, misaki: boolean): string {
  const opts: NumberWordsOptions = { and: british };
  const num = (numeral: string): string => readNumeral(numeral, opts);

  s = s.replace(ISO_DATE, (m, y: string, mo: string, d: string) =>
    validDay(Number(mo) - 1, Number(d)) ? readDate(Number(y), Number(mo) - 1, Number(d), british) : m,
  );
  s = s.replace(SLASH_DATE, (m, a: string, b: string, y: string) => {
    // American month/day/year, British day/month/year; fall back to the other order when impossible.
    let [month, day] = british ? [Number(b) - 1, Number(a)] : [Number(a) - 1, Number(b)];
    if (!validDay(month, day))
      [month, day] = british ? [Number(a) - 1, Number(b)] : [Number(b) - 1, Number(a)];
    return validDay(month, day) ? readDate(Number(y), month, day, british) : m;
  });
  s = s.replace(SPACE_GROUPED, (m) => (ZERO_GROUP.test(m) ? m.replace(SPACE, '') : m));
  s = s.replace(PHONE, (m, plus: string | undefined) => {
    const groups = m.match(DIGIT_RUNS) ?? [];
    let digits = 0;
    for (const g of groups) digits += g.length;
    if (digits < 7) return m;
    return (plus === undefined ? '' : 'plus ') + groups.map(digitsToWords).join(', ');
  });
  for (const [re, words] of OPERATORS) s = s.replace(re, words);
  s = s.replace(CURRENCY_RANGE, (m, sym: string, a: string, b: string, word?: string, letter?: string) => {
    const magnitude = word ?? (letter === undefined ? undefined : MAGNITUDE_WORDS[letter]);
    // Decimal amounts without a magnitude read better with their cents, one by one.
    if (magnitude === undefined && (a.includes('.') || b.includes('.'))) return m;
    const c = CURRENCIES[sym];
    const unit = magnitude === undefined && isOne(b) ? c.one : c.many;
    return `${num(a)} to ${num(b)}${magnitude === undefined ? '' : ` ${magnitude}`} ${unit}`;
  });
  s = s.replace(RANGE, '$1$2 to ');
  s = s.replace(
    TIME,
    (
      m,
      hh: string,
      mm: string,
      ss?: string,
      a1?: string,
      dot?: string,
      a2?: string,
      offset?: number,
      str?: string,
    ) => {
      const hour = Number(hh);
      const letter = a1 ?? a2;
      // Hours past 24 are minutes of a duration ("25:30" → "twenty-five thirty"); read them alike.
      if (letter !== undefined && (hour < 1 || hour > 12)) return m;
      const ampm = letter === undefined ? undefined : `${letter.toUpperCase()}M`;
      let words = readClock(hour, mm, ampm);
      if (ss !== undefined) words += ` and ${integerToWords(ss)} ${ss === '01' ? 'second' : 'seconds'}`;
      const keep = dot !== undefined && !continuesSentence(str ?? '', (offset ?? 0) + m.length);
      return keep ? `${words}.` : words;
    },
  );
  s = s.replace(RATIO, '$1 to $2');
  s = s.replace(
    HOUR_AMPM,
    (m, hh: string, a1?: string, dot?: string, a2?: string, offset?: number, str?: string) => {
      const hour = Number(hh);
      if (hour < 1 || hour > 12) return m;
      const words = `${integerToWords(hh)} ${(a1 ?? a2 ?? '').toUpperCase()}M`;
      const keep = dot !== undefined && !continuesSentence(str ?? '', (offset ?? 0) + m.length);
      return keep ? `${words}.` : words;
    },
  );
  s = s.replace(MONTH_DAY, (m, name: string, d: string) => {
    const month = MONTH_BY_NAME.get(name.endsWith('.') ? name.slice(0, -1) : name) ?? -1;
    if (!validDay(month, Number(d))) return m;
    return `${MONTHS[month]} ${toOrdinalWords(integerToWords(d))}`;
  });
  s = s.replace(DAY_MONTH, (m, d: string, name: string) => {
    const month = MONTH_BY_NAME.get(name.endsWith('.') ? name.slice(0, -1) : name) ?? -1;
    if (!validDay(month, Number(d))) return m;
    return `the ${toOrdinalWords(integerToWords(d))} of ${MONTHS[month]}`;
  });
  s = s.replace(
    CURRENCY,
    (
      _m,
      sign1?: string,
      us?: string,
      sym = '$',
      sign2?: string,
      whole = '0',
      fraction?: string,
      word?: string,
      letter?: string,
    ) => {
      const c = CURRENCIES[sym];
      // misaki reads $, £ and € amounts itself (dollars and cents, pounds and pence).
      if (
        misaki &&
        MISAKI_CURRENCIES.has(sym) &&
        us === undefined &&
        sign1 === undefined &&
        sign2 === undefined &&
        word === undefined &&
        letter === undefined &&
        (fraction === undefined || fraction.length <= 2)
      )
        return _m;
      const minus = sign1 !== undefined || sign2 !== undefined ? 'minus ' : '';
      const many = us === undefined ? c.many : `US ${c.many}`;
      const one = us === undefined ? c.one : `US ${c.one}`;
      const magnitude = word ?? (letter === undefined ? undefined : MAGNITUDE_WORDS[letter]);
      const amount = fraction === undefined ? whole : `${whole}.${fraction}`;
      if (magnitude !== undefined) return `${minus}${num(amount)} ${magnitude} ${many}`;
      if (
        fraction === undefined ||
        fraction.length > 2 ||
        c.minorOne === undefined ||
        c.minorMany === undefined
      ) {
        return `${minus}${num(amount)} ${amount === '1' ? one : many}`;
      }
      const cents = Number(fraction.length === 1 ? `${fraction}0` : fraction);
      const majorIsZero = ZERO_AMOUNT.test(whole);
      const major = `${num(whole)} ${whole === '1' ? one : many}`;
      const minor = `${integerToWords(String(cents))} ${cents === 1 ? c.minorOne : c.minorMany}`;
      if (cents === 0) return `${minus}${major}`;
      return majorIsZero ? `${minus}${minor}` : `${minus}${major} and ${minor}`;
    },
  );
  s = s.replace(CENTS, (_m, n: string) => `${num(n)} ${n === '1' ? 'cent' : 'cents'}`);
  // Ours even before misaki: misaki would carry a $ amount's currency onto a following percentage.
  s = s.replace(PERCENT, (_m, n: string) => `${num(n)} percent`);
  s = s.replace(DEGREES, (_m, n: string, scale?: string, celsius?: string, fahrenheit?: string) => {
    const degrees = isOne(n) ? 'degree' : 'degrees';
    const name =
      scale === 'C' || celsius !== undefined
        ? ' Celsius'
        : scale === 'F' || fahrenheit !== undefined
          ? ' Fahrenheit'
          : '';
    return `${num(n)} ${degrees}${name}`;
  });
  s = s.replace(UNIT, (_m, n: string, unit: string, power?: string) => {
    const [one, many] = UNITS[unit];
    const prefix = power === '²' ? 'square ' : power === '³' ? 'cubic ' : '';
    return `${num(n)} ${prefix}${isOne(n) ? one : many}`;
  });
  s = s.replace(VULGAR_FRACTION, (_m, whole: string | undefined, glyph: string) => {
    const [n, d] = VULGAR[glyph];
    return whole === undefined
      ? fractionWords(n, d, false)
      : `${num(whole)} and ${fractionWords(n, d, true)}`;
  });
  s = s.replace(SLASH_FRACTION, (m, whole: string | undefined, a: string, b: string) => {
    const n = Number(a);
    const d = Number(b);
    if (whole === undefined && n === 24 && d === 7) return 'twenty-four seven';
    // Only proper fractions with small denominators: "9/11" and "50/50" are not fractions.
    if (n < 1 || n >= d || d > 10) return m;
    return whole === undefined
      ? fractionWords(n, d, false)
      : `${num(whole)} and ${fractionWords(n, d, true)}`;
  });
  if (!misaki)
    s = s.replace(ORDINAL, (_m, n: string) => toOrdinalWords(integerToWords(n.replaceAll(',', ''), opts)));
  s = s.replace(DECADE, (_m, shortDecade?: string, century?: string, decade?: string) => {
    if (shortDecade !== undefined) return pluralWords(integerToWords(`${shortDecade}0`));
    const year = Number(`${century ?? ''}${decade ?? ''}0`);
    return pluralWords(century === undefined ? integerToWords(String(year)) : yearToWords(year, opts));
  });
  if (!misaki) s = s.replace(YEAR, (_m, y: string) => yearToWords(Number(y), opts));
  s = s.replace(SHORT_YEAR, (_m, y: string) =>
    y.startsWith('0') ? `oh ${integerToWords(y)}` : integerToWords(y),
  );
  if (misaki) return s; // plain numbers, decimals and signs: misaki's get_number reads them
  s = s.replace(
    NUMBER,
    (m, sign: string, whole?: string, fraction?: string, bare?: string, offset?: number, str?: string) => {
      const numeral =
        whole === undefined ? `.${bare ?? ''}` : fraction === undefined ? whole : `${whole}.${fraction}`;
      const words = readNumeral(sign + numeral, opts);
      // Keep a glued letter apart ("3D" → "three D"), but not a plural s ("5s" → "fives").
      const end = (offset ?? 0) + m.length;
      const next = str?.[end];
      if (next === undefined || !LETTER.test(next)) return words;
      return next === 's' && !LETTER.test(str?.[end + 1] ?? ' ') ? words : `${words} `;
    },
  );
  return s;
}

function normalizeSpan(s: string, british: boolean, misaki: boolean): string {
  s = s.replace(
    TITLE,
    (_m, short?: string, saint?: string, long?: string) => TITLES[short ?? saint ?? long ?? ''],
  );
  s = s.replace(TITLE_BEFORE_LOWER, (_m, title: string) => LOWER_TITLES[title]);
  s = s.replace(TRAILING_ABBR, (m, abbr?: string, street?: string, offset?: number, str?: string) => {
    const words = TRAILING[abbr ?? street ?? ''];
    const hadPeriod = m.endsWith('.');
    return hadPeriod && !continuesSentence(str ?? '', (offset ?? 0) + m.length) ? `${words}.` : words;
  });
  s = s.replace(MIDDLE_ABBR, (m, abbr: string, dot?: string, offset?: number, str?: string) => {
    const key = abbr.toLowerCase();
    if (dot === undefined && key !== 'vs') return m;
    const words = MIDDLE[key];
    const capitalized = abbr[0] !== key[0] ? words[0].toUpperCase() + words.slice(1) : words;
    const keep = dot !== undefined && atTextEnd(str ?? '', (offset ?? 0) + m.length);
    return keep ? `${capitalized}.` : capitalized;
  });
  s = s.replace(LABEL, (_m, label: string) => `${LABELS[label.toLowerCase()]} `);
  for (const [re, words] of SYMBOLS) s = s.replace(re, words);
  if (HAS_DIGIT.test(s)) s = normalizeNumbers(s, british, misaki);
  return s;
}

/**
 * Rewrites written English into speakable words for espeak-ng: typographic and CJK punctuation,
 * numbers, money, percentages, times, dates, units, common abbreviations and symbols. Sentence
 * punctuation is kept; anything not recognised passes through unchanged. URLs, e-mail addresses,
 * versions (`v2.0`, `1.2.3`) and other dotted numbers are left for espeak.
 *
 * Years: a bare 4-digit number from 1100 to 2099 (no thousands separator, not part of a decimal,
 * not after a currency sign, not before `%`, a unit or a magnitude, not glued to letters) is read
 * as a year: 1999 → "nineteen ninety-nine", 2005 → "two thousand five", 2024 → "twenty twenty-four".
 * So "1500 people" reads "fifteen hundred people", which is also fine English.
 *
 * @param text - one sentence or a few; any length.
 * @param lang - `a` American or `b` British English (see the module notes for what differs).
 */
export function normalizeText(text: string, lang: EnglishLang, options: NormalizeOptions = {}): string {
  const misaki = options.misaki ?? false;
  const british = lang === 'b';
  const clean = cleanCharacters(text);
  if (clean === '') return clean;
  let out = '';
  let last = 0;
  for (const m of clean.matchAll(PROTECTED)) {
    out += normalizeSpan(clean.slice(last, m.index), british, misaki) + m[0];
    last = m.index + m[0].length;
  }
  out +=
    last === 0 ? normalizeSpan(clean, british, misaki) : normalizeSpan(clean.slice(last), british, misaki);
  return out
    .replace(EN_DASH, (m) => (m.length > 1 ? ' \u2014 ' : '\u2014'))
    .replace(MULTI_SPACE, ' ')
    .trim();
}
