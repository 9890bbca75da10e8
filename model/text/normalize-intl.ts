/**
 * Normalization for the languages espeak-ng phonemizes on its own rules (Spanish, French, Italian,
 * Brazilian Portuguese, Hindi): typographic punctuation and money become words, and plain numbers
 * become digits without group separators, which espeak-ng reads in the voice's language ("1.250"
 * → "1250" → "mil doscientos cincuenta"), percentages included ("20%" → "vingt pour cent"), as
 * misaki leaves them to espeak. Pure and synchronous.
 *
 * A money amount is a currency sign or ISO code before or after a number: `12,50 €`, `€12.50`,
 * `R$ 10`, `₹1,00,000`, `30 USD`. Its last separator followed by one or two digits is the decimal
 * mark (either `,` or `.`, so `$5.99` and `5,99 $` both work); other separators group thousands.
 */
import { cleanCharacters } from './normalize.ts';

/** A currency's words in one language. */
export interface Currency {
  /** Unit, singular and plural. */
  readonly unit: readonly [string, string];
  /** Hundredth, singular and plural. */
  readonly cent: readonly [string, string];
}

/** How a language espeak-ng reads writes numbers and says money: stated by its module (languages/). */
export interface EspeakNumbers {
  /** Joins units and hundredths: "doce euros con cincuenta céntimos". */
  readonly and: string;
  /** The decimal mark of plain numbers. */
  readonly decimal: ',' | '.';
  /** Indian numerals: Devanagari digits read as ASCII ones, lakh grouping (1,00,000) dropped. */
  readonly indian?: boolean;
  readonly currencies: Readonly<Record<CurrencyCode, Currency>>;
}

export type CurrencyCode = 'EUR' | 'USD' | 'GBP' | 'JPY' | 'BRL' | 'INR';

const SIGNS: Readonly<Record<string, CurrencyCode>> = {
  '€': 'EUR',
  $: 'USD',
  US$: 'USD',
  '£': 'GBP',
  '¥': 'JPY',
  R$: 'BRL',
  '₹': 'INR',
  'Rs.': 'INR',
  EUR: 'EUR',
  USD: 'USD',
  GBP: 'GBP',
  JPY: 'JPY',
  BRL: 'BRL',
  INR: 'INR',
};

const SIGN = String.raw`(?:US\$|R\$|Rs\.|[$€£¥₹]|EUR|USD|GBP|JPY|BRL|INR)`;
/** A number with optional group separators (`.`, `,`, thin or no-break spaces) and decimals. */
const AMOUNT = String.raw`\d{1,3}(?:[.,\u00A0\u202F ]\d{2,3})+(?:[.,]\d{1,2})?|\d+(?:[.,]\d{1,2})?`;
const MONEY_BEFORE = new RegExp(String.raw`(?<![\p{L}\d])(${SIGN}) ?(${AMOUNT})(?![\d\p{L}])`, 'gu');
// Not starting inside a run of digit groups (`100 100 100 €`), or every group would be a start
// that scans to the run's end: quadratic.
const MONEY_AFTER = new RegExp(
  String.raw`(?<![\p{L}\d.,]|\d[\u00A0\u202F ])(${AMOUNT}) ?(${SIGN})(?![\p{L}\d])`,
  'gu',
);
/** Digits grouped by `.` (or `,` where that is not the decimal mark) or thin/no-break spaces. */
const GROUPED = /(?<![\d.,])\d{1,3}(?:([.,\u00A0\u202F])\d{3})(?:\1\d{3})*(?![\d]|[.,]\d)/g;
const DEVANAGARI_DIGITS = /[०-९]/g;
const INDIAN_GROUP = /(?<=\d),(?=\d\d)/g;
/**
 * Marks Kokoro's vocabulary lacks, dropped: ¿ ¡ (misaki keeps them and Kokoro's tokenizer drops
 * them) and the danda । ॥ (espeak drops it in misaki's Hindi, so Kokoro never saw a stop there).
 */
const INVERTED = /[¿¡]/g;
const DANDA = /[।॥]+/g;

/** Splits an amount into whole units and hundredths, by the rule in the module notes. */
export function parseAmount(amount: string): { units: string; cents: number } {
  const m = /^(.*?)(?:[.,](\d{1,2}))?$/.exec(amount)!;
  const whole = m[1]!.replace(/[.,\u00A0\u202F ]/g, '') || '0';
  const cents = m[2] === undefined ? 0 : Number(m[2].padEnd(2, '0'));
  return { units: whole.replace(/^0+(?=\d)/, ''), cents };
}

function moneyWords(words: EspeakNumbers, code: CurrencyCode, amount: string): string {
  const { unit, cent } = words.currencies[code];
  const { units, cents } = parseAmount(amount);
  const main = `${units} ${units === '1' ? unit[0] : unit[1]}`;
  if (cents === 0) return main;
  return `${main} ${words.and} ${cents} ${cents === 1 ? cent[0] : cent[1]}`;
}

/**
 * Rewrites written text in one of espeak's languages, by its `words`, into what espeak-ng should
 * read: see the module notes. Sentence punctuation is kept (inverted marks and dandas dropped: see
 * INVERTED).
 */
export function normalizeIntl(text: string, words: EspeakNumbers): string {
  let s = cleanCharacters(text);
  if (s === '') return s;
  if (words.indian) {
    // Devanagari digits → ASCII (espeak's Hindi reads both); Indian grouping (1,00,000) → none.
    s = s.replace(DEVANAGARI_DIGITS, (d) => String(d.charCodeAt(0) - 0x966)).replace(INDIAN_GROUP, '');
  }
  s = s
    .replace(MONEY_BEFORE, (_m, sign: string, amount: string) => moneyWords(words, SIGNS[sign]!, amount))
    .replace(MONEY_AFTER, (_m, amount: string, sign: string) => moneyWords(words, SIGNS[sign]!, amount))
    .replace(GROUPED, (m, sep: string) => (sep === words.decimal ? m : m.split(sep).join('')))
    .replace(INVERTED, '')
    // French sets guillemets off with spaces (« Bonjour »): Kokoro's quotes hug the words.
    .replace(/“\s+/g, '“')
    .replace(/\s+”/g, '”')
    .replace(DANDA, '');
  return s.replace(/ {2,}/g, ' ').trim();
}
