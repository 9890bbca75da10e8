/**
 * A dictionary's entries before matching: their types, their limits, the checks every entry goes
 * through whichever format it comes in (a JSON or PLS file, a request's field), and the problems
 * collected into one error.
 */
import type { LanguageCode } from '../../kokoro/constants.ts';
import { describeValue, ttsError } from '../../../protocol/errors.ts';
import { foreignPhonemeSymbols } from '../ipa.ts';

export const MAX_WORD_CHARS = 100;
export const MAX_WORDS = 8;
/** For phonemes and aliases alike. */
export const MAX_READING_CHARS = 200;
export const MAX_FILE_ENTRIES = 100_000;
export const MAX_REQUEST_ENTRIES = 1000;
const MAX_PROBLEMS_SHOWN = 20;
/** How deep a file's JSON or XML may nest. */
export const MAX_DEPTH = 32;

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

export const quote = (s: string): string =>
  JSON.stringify([...s].length > 40 ? `${[...s].slice(0, 40).join('')}…` : s);
export const collapse = (s: string): string => s.trim().replace(/\s+/g, ' ');
export const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

export function wordProblems(word: string): string[] {
  const chars = [...word].length;
  if (chars === 0) return ['the word is empty'];
  if (chars > MAX_WORD_CHARS) return [`the word has ${chars} characters; at most ${MAX_WORD_CHARS}`];
  const words = word.split(' ').length;
  return words > MAX_WORDS ? [`the phrase has ${words} words; at most ${MAX_WORDS}`] : [];
}

/** A JSON entry's value (`"phonemes"`, `{"phonemes": …}` or `{"alias": …}`) → its reading, or a problem. */
export function readingOf(value: unknown): PronunciationReading | string {
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
export function readingProblems(reading: PronunciationReading, ipa?: string): string[] {
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
export function listProblems(problems: readonly string[], separator: string): string {
  const more = problems.length - MAX_PROBLEMS_SHOWN;
  const shown = problems.slice(0, MAX_PROBLEMS_SHOWN);
  return (more > 0 ? [...shown, `… and ${more} more`] : shown).join(separator);
}

export type Problem = { readonly line: number; readonly column?: number; readonly message: string };

function fileError(name: string, problems: readonly Problem[]) {
  const lines = problems
    .toSorted((a, b) => a.line - b.line)
    .map((p) => `${name} line ${p.line}${p.column ? ` column ${p.column}` : ''}: ${p.message}`);
  return ttsError('TTS_ERR_INVALID_MARKUP', listProblems(lines, '\n'));
}

/** One file's entries and problems; entries past {@link MAX_FILE_ENTRIES} are refused. */
export class FileEntries {
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
