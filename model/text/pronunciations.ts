/**
 * Pronunciation dictionaries: a word or phrase → Kokoro phonemes for a language, or an alias (the
 * text read in its place). A server-wide file (JSON or W3C PLS) and a request's `pronunciations`
 * field are each read once into a {@link PronunciationMatcher}; {@link applyPronunciations} then
 * cuts every sentence into the parts the front end reads (parts.ts).
 *
 * Pure: the caller reads the file and passes its contents. A matcher is plain data (objects and
 * Maps), so it crosses to a worker by structured clone.
 */
import type { LanguageCode } from '../kokoro/constants.ts';
import { describeValue, ttsError } from '../../protocol/errors.ts';
import { foreignPhonemeSymbols, ipaToKokoro } from './ipa.ts';
import { REGISTRY, SERVED_LANGUAGES, isSupportedLanguage, languageOf } from './languages/index.ts';
import type { SpeechPart } from './parts.ts';

export const MAX_WORD_CHARS = 100;
export const MAX_WORDS = 8;
/** For phonemes and aliases alike. */
export const MAX_READING_CHARS = 200;
export const MAX_FILE_ENTRIES = 100_000;
export const MAX_REQUEST_ENTRIES = 1000;
const MAX_PROBLEMS_SHOWN = 20;

/** Phonemes: Kokoro's symbols for the language, checked. Alias: text read in the word's place. */
export type PronunciationReading = { readonly phonemes: string } | { readonly alias: string };

/** One entry; `line` is where a file gives its word. */
export type PronunciationEntry = PronunciationReading & { readonly word: string; readonly line?: number };

/** A file's keys: a Kokoro language letter, or `*` for every language (a language's own entry wins). */
export type PronunciationLanguage = LanguageCode | '*';

export type PronunciationEntries = { readonly [L in PronunciationLanguage]?: readonly PronunciationEntry[] };

export interface PronunciationFile {
  readonly name: string;
  readonly entries: PronunciationEntries;
  /** Entries over all languages. */
  readonly size: number;
}

/** A trie over tokens (see {@link applyPronunciations}). */
export interface PronunciationNode {
  next?: Map<string, PronunciationNode>;
  /** The fields of the part a match becomes, besides its text. */
  part?: { readonly phonemes: string } | { readonly spoken: string };
}

/** One dictionary: entries written in lower case (matched in any case), and the others (exactly). */
export interface PronunciationLayer {
  readonly folded: PronunciationNode;
  readonly exact: PronunciationNode;
}

export interface PronunciationMatcher {
  readonly lang: LanguageCode;
  /** Entries over all layers. */
  readonly size: number;
  /** Where the layers come from (file names, `request`), the overriding first, as `layers`. */
  readonly sources: readonly string[];
  readonly layers: readonly PronunciationLayer[];
}

const quote = (s: string): string =>
  JSON.stringify([...s].length > 40 ? `${[...s].slice(0, 40).join('')}…` : s);
const collapse = (s: string): string => s.trim().replace(/\s+/g, ' ');
const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

function wordProblems(word: string): string[] {
  const chars = [...word].length;
  if (chars === 0) return ['the word is empty'];
  if (chars > MAX_WORD_CHARS) return [`the word has ${chars} characters; at most ${MAX_WORD_CHARS}`];
  const words = word.split(' ').length;
  return words > MAX_WORDS ? [`the phrase has ${words} words; at most ${MAX_WORDS}`] : [];
}

/** A JSON entry's value (`"phonemes"`, `{"phonemes": …}` or `{"alias": …}`) → its reading, or a problem. */
function readingOf(value: unknown): PronunciationReading | string {
  if (typeof value === 'string') return { phonemes: collapse(value) };
  if (!isObject(value))
    return `should be a phoneme string, {"phonemes": …} or {"alias": …}; got ${describeValue(value)}`;
  const keys = Object.keys(value);
  const extra = keys.find((k) => k !== 'phonemes' && k !== 'alias');
  if (extra !== undefined) return `unknown field ${quote(extra)}; an entry has "phonemes" or "alias"`;
  if (keys.length !== 1)
    return `has ${keys.length === 0 ? 'neither "phonemes" nor' : 'both "phonemes" and'} "alias"`;
  const text = value[keys[0]!];
  if (typeof text !== 'string') return `${keys[0]} should be a string; got ${describeValue(text)}`;
  return keys[0] === 'phonemes' ? { phonemes: collapse(text) } : { alias: collapse(text) };
}

/** What is wrong with a reading; `ipa`: the IPA its phonemes were converted from. */
function readingProblems(reading: PronunciationReading, ipa?: string): string[] {
  const [what, text] = 'alias' in reading ? ['alias', reading.alias] : ['phonemes', reading.phonemes];
  const chars = [...text].length;
  const [is, has] = what === 'alias' ? ['is', 'has'] : ['are', 'have'];
  if (chars === 0) return [`${what} ${is} empty`];
  if (chars > MAX_READING_CHARS) return [`${what} ${has} ${chars} characters; at most ${MAX_READING_CHARS}`];
  const foreign = what === 'alias' ? [] : foreignPhonemeSymbols(text);
  if (foreign.length === 0) return [];
  const written = ipa === undefined ? quote(text) : `${quote(ipa)} (as Kokoro's: ${quote(text)})`;
  const symbols = `${foreign.slice(0, 10).join(', ')}${foreign.length > 10 ? ', …' : ''}`;
  return [`phonemes ${written} have symbols outside Kokoro's vocabulary: ${symbols}`];
}

/** Problems as one message: the first {@link MAX_PROBLEMS_SHOWN}, then how many more. */
function listProblems(problems: readonly string[], separator: string): string {
  const more = problems.length - MAX_PROBLEMS_SHOWN;
  const shown = problems.slice(0, MAX_PROBLEMS_SHOWN);
  return (more > 0 ? [...shown, `… and ${more} more`] : shown).join(separator);
}

type Problem = { readonly line: number; readonly column?: number; readonly message: string };

function fileError(name: string, problems: readonly Problem[]) {
  const lines = problems
    .toSorted((a, b) => a.line - b.line)
    .map((p) => `${name} line ${p.line}${p.column ? ` column ${p.column}` : ''}: ${p.message}`);
  return ttsError('TTS_ERR_INVALID_MARKUP', listProblems(lines, '\n'));
}

/** One file's entries and problems; entries past {@link MAX_FILE_ENTRIES} are refused. */
class FileEntries {
  readonly entries: { [L in PronunciationLanguage]?: PronunciationEntry[] } = {};
  readonly problems: Problem[] = [];
  #count = 0;
  #size = 0;

  constructor(readonly name: string) {}

  readonly problem = (line: number, message: string) => void this.problems.push({ line, message });

  /** Checks an entry and keeps it when it is valid; false once the file has too many. */
  add(lang: PronunciationLanguage, word: string, at: number[], reading: PronunciationReading, ipa?: string) {
    if (++this.#count > MAX_FILE_ENTRIES) {
      this.problem(at[0]!, `more than ${MAX_FILE_ENTRIES} entries; split the dictionary or trim it`);
      return false;
    }
    const before = this.problems.length;
    for (const p of wordProblems(word)) this.problem(at[0]!, `${quote(word)}: ${p}`);
    for (const p of readingProblems(reading, ipa)) this.problem(at[1]!, `${quote(word)}: ${p}`);
    if (this.problems.length === before) {
      (this.entries[lang] ??= []).push({ word, line: at[0]!, ...reading });
      this.#size++;
    }
    return true;
  }

  /** A failure outright: one problem, the file read no further. */
  readonly fail = (line: number, message: string, column?: number) =>
    fileError(this.name, [{ line, column, message }]);

  result(): PronunciationFile {
    if (this.problems.length > 0) throw fileError(this.name, this.problems);
    return { name: this.name, entries: this.entries, size: this.#size };
  }
}

/**
 * A dictionary file's contents → its entries, checked; `fileName` names it in errors. W3C PLS when
 * the contents start with `<` (after white space and a byte-order mark), else JSON:
 *
 * ```json
 * { "a": { "Kokoro": "kˈOkəɹO", "SQL": { "alias": "sequel" }, "nginx": { "phonemes": "ˈɛnʤɪnˌɛks" } },
 *   "*": { "GPU": { "alias": "G P U" } } }
 * ```
 *
 * Keys are Kokoro's language letters or `*` (every language); phonemes are Kokoro's symbols. A word
 * given twice in one language is an error. Every problem is collected, and one
 * `TTS_ERR_INVALID_MARKUP` error lists them (20 at most), each with its line:
 * `pronunciations.json line 4: "nginx": phonemes "§x" have symbols outside Kokoro's vocabulary: …`.
 */
export function parsePronunciationFile(content: string, fileName: string): PronunciationFile {
  const text = content.replace(/^\uFEFF/, '');
  const file = new FileEntries(fileName);
  if (/^\s*</.test(text)) parsePls(text, file);
  else parseJsonFile(text, file);
  return file.result();
}

const isLanguageKey = (key: string): key is PronunciationLanguage => key === '*' || isSupportedLanguage(key);
const LANGUAGE_KEYS = `${SERVED_LANGUAGES.join(', ')} or *`;

function parseJsonFile(text: string, file: FileEntries): void {
  const root = readJson(text, (line, column, message) => file.fail(line, message, column));
  const got = (node: JsonNode) => `got ${describeValue(plain(node))}`;
  if (root.kind !== 'object')
    throw file.fail(root.line, `should be an object keyed by language; ${got(root)}`);
  const wordLines = new Map<string, number>(); // by language and word: a word given twice is refused
  for (const { key: lang, line, value } of root.members) {
    if (!isLanguageKey(lang))
      file.problem(line, `unknown language ${quote(lang)}; use one of: ${LANGUAGE_KEYS}`);
    else if (value.kind !== 'object')
      file.problem(line, `${quote(lang)}: should be an object; ${got(value)}`);
    else {
      for (const { key, line, value: entry } of value.members) {
        const word = collapse(key);
        const before = wordLines.get(`${lang} ${word}`);
        wordLines.set(`${lang} ${word}`, before ?? line);
        const reading = readingOf(plain(entry));
        if (before !== undefined)
          file.problem(line, `${quote(word)} is given twice (first at line ${before})`);
        else if (typeof reading === 'string') file.problem(line, `${quote(word)}: ${reading}`);
        else if (!file.add(lang, word, [line, line], reading)) return;
      }
    }
  }
}

const LEXEME_CHILDREN = new Set(['grapheme', 'phoneme', 'alias', 'example']);
const localName = (name: string): string => name.slice(name.indexOf(':') + 1);

/**
 * `<lexicon alphabet="ipa" | "x-kokoro" xml:lang="en-US">` of `<lexeme>`s, each with one or more
 * `<grapheme>` and one or more `<phoneme>` or `<alias>`: the first marked `prefer="true"`, else the
 * first, is read (PLS's rule), and a grapheme given twice keeps its first lexeme. IPA goes through
 * {@link ipaToKokoro}; a `<phoneme alphabet>` overrides the lexicon's, which defaults to `ipa`.
 */
function parsePls(text: string, file: FileEntries): void {
  const root = readXml(text, (line, message) => file.fail(line, message));
  if (localName(root.name) !== 'lexicon')
    throw file.fail(root.line, `the root element should be <lexicon>, not <${root.name}>`);
  const tag = root.attrs.get('xml:lang');
  const lang = tag === undefined ? undefined : REGISTRY.parsePls(tag);
  if (lang === undefined)
    throw file.fail(
      root.line,
      `<lexicon> needs xml:lang ${REGISTRY.plsNames}; got ${tag ? quote(tag) : 'none'}`,
    );
  const seen = new Set<string>();
  for (const lexeme of root.children) {
    const kind = localName(lexeme.name);
    if (kind === 'meta' || kind === 'metadata') continue;
    if (kind !== 'lexeme') {
      file.problem(lexeme.line, `unexpected <${lexeme.name}>; a lexicon holds <lexeme> elements`);
      continue;
    }
    const of = (...names: string[]) => lexeme.children.filter((c) => names.includes(localName(c.name)));
    const other = lexeme.children.find((c) => !LEXEME_CHILDREN.has(localName(c.name)));
    if (other !== undefined) file.problem(other.line, `unexpected <${other.name}> in a <lexeme>`);
    const readings = of('phoneme', 'alias');
    const chosen = readings.find((r) => r.attrs.get('prefer') === 'true') ?? readings[0];
    if (of('grapheme').length === 0 || chosen === undefined) {
      file.problem(lexeme.line, `<lexeme> has no ${chosen ? '<grapheme>' : '<phoneme> or <alias>'}`);
      continue;
    }
    const written = collapse(chosen.text);
    let reading: PronunciationReading = { alias: written };
    let ipa: string | undefined;
    if (localName(chosen.name) === 'phoneme') {
      const alphabet = (chosen.attrs.get('alphabet') ?? root.attrs.get('alphabet') ?? 'ipa').toLowerCase();
      if (alphabet !== 'ipa' && alphabet !== 'x-kokoro') {
        file.problem(chosen.line, `alphabet ${quote(alphabet)} is not supported; use "ipa" or "x-kokoro"`);
        continue;
      }
      ipa = alphabet === 'ipa' ? written : undefined;
      reading = { phonemes: ipa === undefined ? written : collapse(ipaToKokoro(ipa, lang)) };
    }
    for (const grapheme of of('grapheme')) {
      const word = collapse(grapheme.text);
      if (seen.has(word)) continue;
      seen.add(word);
      if (!file.add(lang, word, [grapheme.line, chosen.line], reading, ipa)) return;
    }
  }
}

/**
 * A request's `pronunciations` field (`{ "word": "phonemes" | {"phonemes": …} | {"alias": …} }`,
 * for the request's language, at most {@link MAX_REQUEST_ENTRIES}) → a matcher, checked as a
 * file's entries are; every problem is a `TTS_ERR_INVALID_OPTION` with `param: 'pronunciations'`.
 */
export function parseRequestPronunciations(value: unknown, lang: LanguageCode): PronunciationMatcher {
  const invalid = (message: string) =>
    ttsError('TTS_ERR_INVALID_OPTION', message, { data: { param: 'pronunciations' } });
  const example = '{"Kokoro": "kˈOkəɹO", "SQL": {"alias": "sequel"}}';
  if (!isObject(value))
    throw invalid(`pronunciations should be an object such as ${example}; got ${describeValue(value)}`);
  const words = Object.keys(value);
  if (words.length > MAX_REQUEST_ENTRIES)
    throw invalid(`pronunciations has ${words.length} entries; at most ${MAX_REQUEST_ENTRIES}`);
  const entries: PronunciationEntry[] = [];
  const problems: string[] = [];
  for (const key of words) {
    const word = collapse(key);
    const reading = readingOf(value[key]);
    const readingIssues = typeof reading === 'string' ? [reading] : readingProblems(reading);
    const found = [...wordProblems(word), ...readingIssues];
    problems.push(...found.map((p) => `pronunciations ${quote(key)}: ${p}`));
    if (found.length === 0 && typeof reading !== 'string') entries.push({ word, ...reading });
  }
  if (problems.length > 0) throw invalid(listProblems(problems, '; '));
  return compilePronunciations({ [lang]: entries }, lang, 'request');
}

/** Languages written without spaces (Japanese, Mandarin): their entries match inside longer runs. */
const isSpaced = (lang: LanguageCode): boolean => languageOf(lang).spaced;

const SPACED_TOKENS = /[\p{L}\p{N}\p{M}]+|\s+|[^]/gu;
const UNSPACED_TOKENS = /\s+|[^]/gu;
const WORD_START = /^[\p{L}\p{N}\p{M}]/u;
const tokensOf = (text: string, spaced: boolean): string[] =>
  text.match(spaced ? SPACED_TOKENS : UNSPACED_TOKENS) ?? [];
/** A token's key in the trie: any run of white space is one space. */
const keyOf = (token: string): string => (/^\s/.test(token) ? ' ' : token);

/**
 * The matcher of one language: `entries` for `lang` and for `*`, a language's own entry winning
 * over `*`'s for the same word. `source` names where they come from (a file name), for logs.
 */
export function compilePronunciations(
  entries: PronunciationEntries,
  lang: LanguageCode,
  source: string,
): PronunciationMatcher {
  const layer: PronunciationLayer = { folded: {}, exact: {} };
  const spaced = isSpaced(lang);
  let size = 0;
  for (const entry of [...(entries['*'] ?? []), ...(entries[lang] ?? [])]) {
    let node = entry.word === entry.word.toLowerCase() ? layer.folded : layer.exact;
    for (const key of tokensOf(entry.word, spaced).map(keyOf)) {
      node.next ??= new Map();
      node = node.next.get(key) ?? node.next.set(key, {}).get(key)!;
    }
    if (node.part === undefined) size++;
    node.part = 'phonemes' in entry ? { phonemes: entry.phonemes } : { spoken: entry.alias };
  }
  return { lang, size, sources: [source], layers: [layer] };
}

/**
 * `override`'s entries over `base`'s (a request's over the server's file), without copying either:
 * where both match at a position, the longer match wins, and for the same span `override`'s.
 */
export function mergePronunciations(
  base: PronunciationMatcher | undefined,
  override: PronunciationMatcher | undefined,
): PronunciationMatcher | undefined {
  if (override === undefined || override.size === 0) return base;
  if (base === undefined || base.size === 0) return override;
  if (base.lang !== override.lang)
    throw new Error(`cannot merge pronunciations of language ${override.lang} over ${base.lang}`);
  return {
    lang: base.lang,
    size: base.size + override.size,
    sources: [...override.sources, ...base.sources],
    layers: [...override.layers, ...base.layers],
  };
}

type Match = { readonly end: number; readonly chars: number; readonly part: PronunciationNode['part'] & {} };

/**
 * `text` cut into parts: each span an entry matches becomes `{ text: span, phonemes }` or
 * `{ text: span, spoken: alias }`, the rest `{ text }`; the parts' texts joined give `text` back.
 *
 * Matching rules:
 * - Whole words, except in Japanese and Mandarin: no letter, digit or mark (`[\p{L}\p{N}\p{M}]`)
 *   right before or after a match. Punctuation is a boundary: `Kokoro` matches in `Kokoro's` and
 *   `(Kokoro)`, not in `Kokoros`. Japanese and Mandarin have no spaces: an entry matches anywhere.
 * - Case: an entry written all in lower case matches in any case (`kokoro` matches `KOKORO`); an
 *   entry with a capital matches only as written (`US` does not match `us`).
 * - A phrase's words match across any run of white space (`New York` matches `New\n  York`).
 * - Left to right, the longest match (most characters) at each position, no overlaps. For the same
 *   span, an overriding dictionary's entry wins (see {@link mergePronunciations}), then one written
 *   with capitals over one in lower case.
 * - Aliases are read as they are, not through the dictionary again.
 *
 * Linear: the text's tokens (words, white-space runs, other characters) × the most tokens in an
 * entry. Without entries, no work at all.
 */
export function applyPronunciations(text: string, matcher: PronunciationMatcher | undefined): SpeechPart[] {
  if (matcher === undefined || matcher.size === 0 || text === '') return [{ text }];
  const spaced = isSpaced(matcher.lang);
  const tokens = tokensOf(text, spaced);
  const keys = tokens.map(keyOf);
  const lower = keys.map((k) => k.toLowerCase());
  const isWord = tokens.map((t) => spaced && WORD_START.test(t));

  /** The longest match from token `from` in one trie, when longer than `best`. */
  const walk = (root: PronunciationNode, from: number, byKey: readonly string[], best: Match | undefined) => {
    let node: PronunciationNode | undefined = root;
    let chars = 0;
    for (let j = from; j < tokens.length && node !== undefined; j++) {
      node = node.next?.get(byKey[j]!);
      chars += tokens[j]!.length;
      if (node?.part !== undefined && !isWord[j + 1] && j + 1 > (best?.end ?? 0))
        best = { end: j + 1, chars, part: node.part };
    }
    return best;
  };

  const parts: SpeechPart[] = [];
  let plainFrom = 0;
  let offset = 0;
  for (let i = 0; i < tokens.length; ) {
    let best: Match | undefined;
    if (!isWord[i - 1])
      for (const layer of matcher.layers)
        best = walk(layer.folded, i, lower, walk(layer.exact, i, keys, best));
    if (best === undefined) {
      offset += tokens[i++]!.length;
      continue;
    }
    if (offset > plainFrom) parts.push({ text: text.slice(plainFrom, offset) });
    parts.push({ text: text.slice(offset, offset + best.chars), ...best.part });
    offset = plainFrom = offset + best.chars;
    i = best.end;
  }
  if (plainFrom < text.length) parts.push({ text: text.slice(plainFrom) });
  return parts;
}

/* ------------------------------------------------------------------------------------------------
 * Readers: just enough JSON and XML, linear, with line numbers
 * ---------------------------------------------------------------------------------------------- */

/** A JSON value; an object's members in order, duplicates kept, each with the line of its key. */
type JsonNode =
  | { readonly kind: 'object'; readonly line: number; readonly members: readonly JsonMember[] }
  | { readonly kind: 'value'; readonly line: number; readonly value: unknown };

type JsonMember = { readonly key: string; readonly line: number; readonly value: JsonNode };

/** A node as JSON.parse gives it (arrays come back empty: they are refused anyway). */
function plain(node: JsonNode): unknown {
  if (node.kind === 'value') return node.value;
  return Object.fromEntries(node.members.map((m) => [m.key, plain(m.value)]));
}

const JSON_SCALAR = /-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?|true|false|null/y;
const MAX_DEPTH = 32;

function readJson(src: string, fail: (line: number, column: number, message: string) => Error): JsonNode {
  let pos = 0;
  let line = 1;
  let lineStart = 0;
  const error = (message: string) => fail(line, pos - lineStart + 1, message);
  const space = () => {
    for (; pos < src.length; pos++) {
      const c = src.charCodeAt(pos);
      if (c === 10) [line, lineStart] = [line + 1, pos + 1];
      else if (c !== 32 && c !== 9 && c !== 13) return;
    }
  };
  const string = (): string => {
    if (src[pos] !== '"') throw error('expected a string');
    let end = pos + 1; // the closing quote, escapes skipped: JSON.parse checks the rest
    while (end < src.length && src[end] !== '"') end += src[end] === '\\' ? 2 : 1;
    try {
      const text = JSON.parse(src.slice(pos, end + 1)) as string;
      pos = end + 1;
      return text;
    } catch {
      throw error('a string is not closed, or has a bad escape or a control character');
    }
  };
  const value = (depth: number): JsonNode => {
    space();
    if (depth > MAX_DEPTH) throw error('nested too deeply');
    const [at, c] = [line, src[pos]];
    if (c === '"') return { kind: 'value', line: at, value: string() };
    if (c !== '{' && c !== '[') {
      JSON_SCALAR.lastIndex = pos;
      const m = JSON_SCALAR.exec(src);
      if (m === null) throw error(c ? `unexpected ${JSON.stringify(c)}` : 'the JSON ends too soon');
      pos = JSON_SCALAR.lastIndex;
      return { kind: 'value', line: at, value: JSON.parse(m[0]) };
    }
    const close = c === '{' ? '}' : ']';
    const members: JsonMember[] = [];
    pos++;
    space();
    if (src[pos] === close) pos++;
    else
      for (;;) {
        space();
        if (c === '{') {
          const [keyLine, key] = [line, string()];
          space();
          if (src[pos] !== ':') throw error("expected ':' after a key");
          pos++;
          members.push({ key, line: keyLine, value: value(depth + 1) });
        } else value(depth + 1);
        space();
        if (src[pos] !== ',' && src[pos] !== close) throw error(`expected ',' or '${close}'`);
        if (src[pos++] === close) break;
      }
    return c === '{' ? { kind: 'object', line: at, members } : { kind: 'value', line: at, value: [] };
  };
  const root = value(0);
  space();
  if (pos < src.length) throw error('unexpected text after the JSON value');
  return root;
}

type XmlNode = { name: string; line: number; text: string };
type XmlElement = XmlNode & { attrs: Map<string, string>; children: XmlElement[] };

const XML_TAG = /<([^\s/>=<]+)((?:\s+[^\s/>=<]+\s*=\s*(?:"[^"<]*"|'[^'<]*'))*)\s*(\/?)>/y;
const XML_ATTR = /([^\s/>=<]+)\s*=\s*("[^"]*"|'[^']*')/g;
const XML_REF = /&(?:#x([0-9a-fA-F]{1,6})|#([0-9]{1,7})|([a-z]+));|&/g;
const XML_CLOSE = /<\/([^\s/>=<]+)\s*>/y;
const XML_ENTITIES: Readonly<Record<string, string>> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'" };

/** Elements, attributes, text, the five entities and character references, comments, `<?…?>`, CDATA. */
function readXml(src: string, fail: (line: number, message: string) => Error): XmlElement {
  let pos = 0;
  let line = 1;
  const advance = (to: number) => {
    for (; pos < to; pos++) if (src.charCodeAt(pos) === 10) line++;
  };
  const decode = (text: string) =>
    text.replace(XML_REF, (all, hex?: string, dec?: string, name?: string) => {
      if (name !== undefined && Object.hasOwn(XML_ENTITIES, name)) return XML_ENTITIES[name]!;
      const code = hex === undefined ? Number(dec) : parseInt(hex, 16);
      if (code > 0 && code <= 0x10ffff) return String.fromCodePoint(code);
      throw fail(line, `unknown entity ${quote(all)}; write & as &amp;`);
    });
  const skipPast = (end: string, what: string) => {
    const at = src.indexOf(end, pos);
    if (at < 0) throw fail(line, `${what} is not closed`);
    advance(at + end.length);
  };
  const stack: XmlElement[] = [];
  let root: XmlElement | undefined;
  while (pos < src.length) {
    const top = stack.at(-1);
    const lt = src.indexOf('<', pos);
    if (lt !== pos) {
      const text = src.slice(pos, lt < 0 ? src.length : lt);
      if (top !== undefined) top.text += decode(text);
      else if (text.trim() !== '') throw fail(line, 'text outside the root element');
      advance(pos + text.length);
    } else if (src.startsWith('<!--', pos)) skipPast('-->', 'a comment');
    else if (src.startsWith('<?', pos)) skipPast('?>', 'a processing instruction');
    else if (src.startsWith('<![CDATA[', pos)) {
      const end = src.indexOf(']]>', pos);
      if (top === undefined || end < 0) throw fail(line, 'CDATA outside an element, or not closed');
      top.text += src.slice(pos + 9, end);
      advance(end + 3);
    } else if (src.startsWith('<!', pos)) {
      const end = src.indexOf('>', pos);
      if (end < 0 || src.slice(pos, end).includes('['))
        throw fail(line, 'a DOCTYPE with declarations is not supported');
      advance(end + 1);
    } else if (src.startsWith('</', pos)) {
      XML_CLOSE.lastIndex = pos;
      if (top === undefined) throw fail(line, 'a closing tag without an open element');
      if (XML_CLOSE.exec(src)?.[1] !== top.name)
        throw fail(line, `expected </${top.name}> (opened at line ${top.line})`);
      stack.pop();
      advance(XML_CLOSE.lastIndex);
    } else {
      XML_TAG.lastIndex = pos;
      const tag = XML_TAG.exec(src);
      if (tag === null) throw fail(line, 'a malformed tag: expected <name attribute="value" …>');
      const element: XmlElement = { name: tag[1]!, attrs: new Map(), children: [], line, text: '' };
      for (const [, name, value] of tag[2]!.matchAll(XML_ATTR))
        element.attrs.set(name!, decode(value!.slice(1, -1)));
      if (top !== undefined) top.children.push(element);
      else if (root === undefined) root = element;
      else throw fail(line, 'a second root element');
      if (tag[3] === '') stack.push(element);
      if (stack.length > MAX_DEPTH) throw fail(line, 'nested too deeply');
      advance(XML_TAG.lastIndex);
    }
  }
  const open = stack.at(-1);
  if (open !== undefined) throw fail(line, `<${open.name}> (line ${open.line}) is not closed`);
  if (root === undefined) throw fail(line, 'no <lexicon> element');
  return root;
}
