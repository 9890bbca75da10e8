/**
 * The JSON format of a dictionary file, read with just enough JSON of its own: linear, with the
 * line of every key (for errors), duplicate keys kept (so a word given twice is reported).
 */
import { describeValue } from '../../../protocol/errors.ts';
import { SERVED_LANGUAGES, isSupportedLanguage } from '../languages/index.ts';
import {
  MAX_DEPTH,
  collapse,
  quote,
  readingOf,
  type FileEntries,
  type PronunciationLanguage,
} from './entries.ts';

const isLanguageKey = (key: string): key is PronunciationLanguage => key === '*' || isSupportedLanguage(key);
const LANGUAGE_KEYS = `${SERVED_LANGUAGES.join(', ')} or *`;

/** A dictionary file in JSON (see parsePronunciationFile) → `file`'s entries and problems. */
export function parseJsonFile(text: string, file: FileEntries): void {
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
