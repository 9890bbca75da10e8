/**
 * Japanese text → Kokoro phonemes, after misaki's JAG2P as Kokoro-82M v1.0 calls it (its "cutlet"
 * version: hexgrad/misaki, misaki/cutlet.py, adapted there from polm/cutlet). Numbers become
 * hiragana readings; a morphological analyzer gives each word's pronunciation in kana (kuromoji
 * with the IPA dictionary here, MeCab with UniDic there); each kana becomes IPA by misaki's table
 * (japanese-kana.ts), with っ as ʔ, ー as ː and ん by the sound after it; words are separated by
 * spaces, punctuation attached as misaki attaches it.
 *
 * Where this differs from misaki: misaki groups analyzer tokens into words with a 147,000-entry
 * word list before spacing them; here an auxiliary verb or suffix joins the word before it. And
 * parentheses are dropped (misaki turns them into « », which Kokoro's vocabulary lacks).
 *
 * Loaded at first use, as kuromoji's dictionary is slow to load (the README's Languages table has
 * the figure); calls are synchronous.
 */
import { dirname, join } from 'node:path';
import { createRequire } from 'node:module';
import { JAPANESE_PUNCTUATION, KANA } from './japanese-kana.ts';

/* ------------------------------------------------------------------------------------------------
 * Numbers (misaki: num2kana's Convert, hiragana readings)
 * ---------------------------------------------------------------------------------------------- */

const ONES = ['', 'いち', 'に', 'さん', 'よん', 'ご', 'ろく', 'なな', 'はち', 'きゅう'];
const HUNDREDS = [
  '',
  'ひゃく',
  'にひゃく',
  'さんびゃく',
  'よんひゃく',
  'ごひゃく',
  'ろっぴゃく',
  'ななひゃく',
  'はっぴゃく',
  'きゅうひゃく',
];
const THOUSANDS = [
  '',
  'せん',
  'にせん',
  'さんぜん',
  'よんせん',
  'ごせん',
  'ろくせん',
  'ななせん',
  'はっせん',
  'きゅうせん',
];
const BIG = ['', 'まん', 'おく', 'ちょう'];

function belowTenThousand(n: number): string {
  const th = Math.floor(n / 1000);
  const h = Math.floor((n % 1000) / 100);
  const t = Math.floor((n % 100) / 10);
  const o = n % 10;
  return THOUSANDS[th]! + HUNDREDS[h]! + (t === 0 ? '' : (t === 1 ? '' : ONES[t]!) + 'じゅう') + ONES[o]!;
}

/** Reads a whole number in hiragana (up to 16 digits; longer ones digit by digit): 1500 → せんごひゃく. */
export function integerToKana(digits: string): string {
  const n = digits.replace(/^0+(?=\d)/, '');
  if (n === '0') return 'ゼロ';
  if (n.length > 16) return [...n].map((d) => (d === '0' ? 'ゼロ' : ONES[Number(d)])).join('');
  let out = '';
  const groups: number[] = [];
  for (let end = n.length; end > 0; end -= 4) groups.unshift(Number(n.slice(Math.max(0, end - 4), end)));
  groups.forEach((g, i) => {
    if (g === 0) return;
    const unit = BIG[groups.length - 1 - i]!;
    // 一千万 reads いっせんまん; 一万 reads いちまん.
    const words = unit !== '' && g === 1000 ? 'いっせん' : belowTenThousand(g);
    out += (unit !== '' && g === 1 ? 'いち' : words) + unit;
  });
  return out;
}

/** Numbers in text → hiragana readings (decimals: てん and the digits), as misaki does before tagging. */
export function numbersToKana(text: string): string {
  return text
    .replace(/(?<=\d),(?=\d{3})/g, '')
    .replace(/[〜～](?=\d)/g, 'から')
    .replace(/\d+(?:\.\d+)?/g, (m) => {
      const [whole, fraction] = m.split('.');
      const read = integerToKana(whole!);
      const decimals = fraction
        ? `てん${[...fraction].map((d) => (d === '0' ? 'ゼロ' : ONES[Number(d)])).join('')}`
        : '';
      return ` ${read}${decimals}`;
    });
}

// Katakana phonetic extensions (small ㇰ … ㇿ) → their full-size kana, as misaki does.
const EXTENSIONS = 'クシストヌハヒフヘホムラリルレロ';

/** NFKC (half-width kana → full, full-width Latin → half), the small extensions, numbers. */
export function normalizeJapanese(text: string): string {
  const widened = text.replace(/[\u31F0-\u31FF]/g, (c) => EXTENSIONS[c.charCodeAt(0) - 0x31f0] ?? c);
  return numbersToKana(widened.normalize('NFKC')).trim();
}

/* ------------------------------------------------------------------------------------------------
 * Kana → IPA (misaki: Cutlet._get_single_mapping)
 * ---------------------------------------------------------------------------------------------- */

const SUTEGANA = new Set('ゃゅょぁぃぅぇぉ');

const toHiragana = (s: string): string =>
  s.replace(/[\u30A1-\u30F6]/g, (c) => String.fromCharCode(c.charCodeAt(0) - 0x60));

function kanaAt(prev: string | undefined, kana: string, next: string | undefined): string {
  if (kana === 'ゝ' || kana === 'ヽ') return prev ? kanaAt(undefined, prev, undefined) : '';
  if ('〃々ゞヾ'.includes(kana)) return '';
  if (prev && KANA[prev + kana] !== undefined) return KANA[prev + kana]!;
  if (next && KANA[kana + next] !== undefined) return '';
  if (next && SUTEGANA.has(next)) {
    if (kana === 'っ') return '';
    const own = KANA[kana];
    return own === undefined ? '' : own.slice(0, -1) + KANA[next]!;
  }
  if (SUTEGANA.has(kana)) return '';
  if (kana === 'ー') return 'ː';
  if (kana === 'っ') return 'ʔ';
  if (kana === 'ん') {
    const after = next === undefined ? undefined : KANA[next];
    if (after) {
      if ('mpb'.includes(after[0]!)) return 'm';
      if ('kɡ'.includes(after[0]!)) return 'ŋ';
      if (/^[ɲʨʥ]/.test(after)) return 'ɲ';
      if ('ntdɾz'.includes(after[0]!)) return 'n';
    }
    return 'ɴ';
  }
  return KANA[kana] ?? JAPANESE_PUNCTUATION[kana] ?? '';
}

/** A word's kana reading → IPA. */
export function kanaToIpa(reading: string): string {
  const hira = [...toHiragana(reading)];
  return hira.map((k, i) => kanaAt(hira[i - 1], k, hira[i + 1])).join('');
}

/* ------------------------------------------------------------------------------------------------
 * The pipeline
 * ---------------------------------------------------------------------------------------------- */

interface KuromojiToken {
  readonly surface_form: string;
  readonly pos: string;
  readonly pos_detail_1: string;
  readonly word_type: 'KNOWN' | 'UNKNOWN';
  readonly pronunciation?: string;
}
interface Tokenizer {
  tokenize(text: string): KuromojiToken[];
}

let tokenizer: Tokenizer | undefined;
let loading: Promise<void> | undefined;

/** Loads kuromoji and its dictionary in this thread (once). */
export function loadJapanese(): Promise<void> {
  loading ??= (async () => {
    const require = createRequire(import.meta.url);
    const kuromoji = require('kuromoji') as {
      builder(o: { dicPath: string }): { build(cb: (err: Error | null, t: Tokenizer) => void): void };
    };
    const dicPath = join(dirname(require.resolve('kuromoji/package.json')), 'dict');
    tokenizer = await new Promise<Tokenizer>((resolve, reject) =>
      kuromoji.builder({ dicPath }).build((err, t) => (err ? reject(err) : resolve(t))),
    );
  })();
  loading.catch(() => (loading = undefined));
  return loading;
}

const OPENERS = new Set(['「', '『', '«', '(', '[', '“']);
const CLOSERS = new Set(['」', '』', '»']);
const KATAKANA_ONLY = /^[\u30A0-\u30FF]+$/;
const SYMBOLS_ONLY = /^[\p{P}\p{S}\s]+$/u;
// eslint-disable-next-line no-control-regex -- printable ASCII is the point
const ASCII = /^[\x00-\x7F]+$/;

/** How a token is read: a kana reading, Latin text, or punctuation (misaki's Cutlet._romaji_word). */
type Reading = { readonly kana: string } | { readonly latin: string } | { readonly mark: string };

const marks = (s: string): string => [...s].map((c) => JAPANESE_PUNCTUATION[c] ?? c).join('');

function readingOf(token: KuromojiToken): Reading {
  const surface = token.surface_form;
  if (ASCII.test(surface)) return /[A-Za-z0-9]/.test(surface) ? { latin: surface } : { mark: surface };
  if (token.word_type === 'KNOWN' || KATAKANA_ONLY.test(surface)) {
    // The auxiliary う of ましょう, でしょう lengthens the vowel before it, as UniDic writes it.
    if (token.pos === '助動詞' && surface === 'う') return { kana: 'ー' };
    const kana = token.pronunciation && token.pronunciation !== '*' ? token.pronunciation : surface;
    return SYMBOLS_ONLY.test(kana) ? { mark: marks(kana) } : { kana };
  }
  if (SYMBOLS_ONLY.test(surface)) return { mark: marks(surface) };
  return { kana: /^[\u3040-\u309F]+$/.test(surface) ? surface : '' };
}

/**
 * Whether a token belongs to the word before it, as misaki's word list groups UniDic's tokens: a
 * conjunctive particle (して, 行けば), an auxiliary after an auxiliary (られない, ました), the past
 * た after a verb (行った), a suffix after a noun (三年); not ます or です after their stem, nor a
 * dependent verb (してください).
 */
function joinsPrevious(token: KuromojiToken, previous: KuromojiToken | undefined): boolean {
  if (!previous) return false;
  if (token.pos === '助詞' && token.pos_detail_1 === '接続助詞')
    return previous.pos === '動詞' || previous.pos === '助動詞';
  if (token.pos === '助動詞') {
    return (
      previous.pos === '助動詞' ||
      (previous.pos === '動詞' && previous.pos_detail_1 === '接尾') ||
      (previous.pos === '動詞' && (token.surface_form === 'た' || token.surface_form === 'だ'))
    );
  }
  return token.pos_detail_1 === '接尾' && previous.pos === '名詞';
}

/**
 * Already-normalized Japanese (see normalizeJapanese) → Kokoro phonemes. Latin words go to
 * `english` when given (misaki passes them through as letters).
 */
export async function phonemizeJapanese(text: string, english?: (word: string) => string): Promise<string> {
  if (!tokenizer) await loadJapanese();
  type Word = { kana: string; ipa?: string; space: boolean };
  const words: Word[] = [];
  let previous: KuromojiToken | undefined;
  for (const token of tokenizer!.tokenize(text)) {
    const last = words.at(-1);
    if (/^\s+$/.test(token.surface_form)) {
      if (last) last.space = true;
      previous = undefined;
      continue;
    }
    const reading = readingOf(token);
    if ('kana' in reading && last && last.ipa === undefined && joinsPrevious(token, previous)) {
      last.kana += reading.kana;
      previous = token;
      continue;
    }
    previous = token;
    let word: Word;
    if ('kana' in reading) word = { kana: reading.kana, space: true };
    else if ('latin' in reading) {
      const latin = reading.latin;
      word = { kana: '', ipa: english && /[A-Za-z]/.test(latin) ? english(latin) : latin, space: true };
    } else word = { kana: '', ipa: reading.mark, space: true };
    const ipa = word.ipa ?? '';
    if (OPENERS.has(token.surface_form) || /^[([“]+$/.test(ipa)) {
      if (last) last.space = true;
      word.space = false;
    } else if (CLOSERS.has(token.surface_form) || /^[\]).,?!:;—”…]+$/.test(ipa)) {
      if (last) last.space = false;
    } else if (word.ipa === undefined && word.kana === '' && last) {
      // Nothing to say (an unknown kanji): as misaki, it ends the word before it.
      last.space = false;
    }
    words.push(word);
  }
  const joined = words
    .map((w) => (w.ipa ?? kanaToIpa(w.kana)) + (w.space ? ' ' : ''))
    .join('')
    .replace(/\s+/g, ' ')
    .trim()
    .replace(/[()]/g, '');
  // No space around ʔ (a geminate joins what follows), unless punctuation or a quote is there.
  return joined.replace(/(?<![!",.:;?»—…”]) (?=ʔ)|(?<=ʔ) (?!["«“])/g, '');
}
