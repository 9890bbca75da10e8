/**
 * Pronunciation dictionaries: a word or phrase → Kokoro phonemes for a language, or an alias (the
 * text read in its place). A server-wide file (JSON or W3C PLS) and a request's `pronunciations`
 * field are each read once into a {@link PronunciationMatcher}; {@link applyPronunciations} then
 * cuts every sentence into the parts the front end reads (parts.ts).
 *
 * Pure: the caller reads the file and passes its contents. A matcher is plain data (objects and
 * Maps), so it crosses to a worker by structured clone.
 */
import type { LanguageCode } from '../../kokoro/constants.ts';
import { describeValue, ttsError } from '../../../protocol/errors.ts';
import {
  FileEntries,
  MAX_REQUEST_ENTRIES,
  collapse,
  isObject,
  listProblems,
  quote,
  readingOf,
  readingProblems,
  wordProblems,
  type PronunciationEntry,
  type PronunciationFile,
} from './entries.ts';
import { compilePronunciations, type PronunciationMatcher } from './matcher.ts';
import { parseJsonFile } from './read-json.ts';
import { parsePls } from './read-pls.ts';

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

export {
  MAX_FILE_ENTRIES,
  MAX_READING_CHARS,
  MAX_REQUEST_ENTRIES,
  MAX_WORD_CHARS,
  MAX_WORDS,
  type PronunciationEntries,
  type PronunciationEntry,
  type PronunciationFile,
  type PronunciationLanguage,
  type PronunciationReading,
} from './entries.ts';
export {
  applyPronunciations,
  compilePronunciations,
  mergePronunciations,
  type PronunciationLayer,
  type PronunciationMatcher,
  type PronunciationNode,
} from './matcher.ts';
