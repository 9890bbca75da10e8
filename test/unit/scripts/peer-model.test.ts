/**
 * The kokoro-js model folder the peer benchmark builds (scripts/lib/peer-model.ts): transformers.js,
 * on local files only, tokenizes phoneme strings into exactly the ids our front end gives.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AutoTokenizer, env, type PreTrainedTokenizer } from '@huggingface/transformers';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { phonemize } from '../../../model/text/phonemes.ts';
import { KOKORO_VOCAB, padIds, phonemesToIds } from '../../../model/text/tokens.ts';
import {
  PEER_CONFIG,
  PEER_TOKENIZER_CONFIG,
  buildPeerTokenizerJson,
  writePeerModelDir,
  type PeerModelFiles,
} from '../../../scripts/lib/peer-model.ts';

const FIXTURE = join(import.meta.dirname, '..', '..', 'fixtures', 'standin-model');

/** English sentences phonemized by our front end: punctuation, stress marks, diphthongs, quotes. */
const SENTENCES = [
  'Thanks for waiting, I found three flights that match your dates and budget.',
  'Would you like me to hold a seat on either one while you decide?',
  '"Yes," she said; then, after a pause: "maybe tomorrow!"',
  'The quick brown fox jumps over the lazy dog.',
];

/** Fixed strings: empty, every vocabulary symbol, and symbols the vocabulary lacks (dropped by both). */
const FIXED = new Map<string, string>([
  ['empty', ''],
  ['one symbol', 'ə'],
  ['the whole vocabulary', [...KOKORO_VOCAB.keys()].join('')],
  ['unknown symbols', 'h#ə€$ l\nˈoʊ🙂'],
  ['combining tilde and tone arrows', 'ɑ̃ ↗↘ →↓'],
]);

const ours = (phonemes: string): number[] => Array.from(padIds(phonemesToIds(phonemes)), Number);

describe('peer model folder for kokoro-js', () => {
  let tmp: string;
  let files: PeerModelFiles;
  let tokenizer: PreTrainedTokenizer;
  const theirs = (phonemes: string): number[] =>
    // As kokoro-js calls it (KokoroTTS.generate / stream).
    Array.from((tokenizer(phonemes, { truncation: true }).input_ids as { data: BigInt64Array }).data, Number);

  beforeAll(async () => {
    tmp = mkdtempSync(join(tmpdir(), 'peer-model-'));
    files = await writePeerModelDir(FIXTURE, join(tmp, 'peer'));
    env.allowRemoteModels = false;
    env.allowLocalModels = true;
    env.useFSCache = false;
    tokenizer = await AutoTokenizer.from_pretrained(files.dir, { local_files_only: true });
  });
  afterAll(() => rmSync(tmp, { recursive: true, force: true }));

  it('writes config.json, the tokenizer files and a copy of the model', () => {
    expect(JSON.parse(readFileSync(files.config, 'utf8'))).toEqual(PEER_CONFIG);
    expect(JSON.parse(readFileSync(files.tokenizerConfig, 'utf8'))).toEqual(PEER_TOKENIZER_CONFIG);
    expect(readFileSync(files.model).equals(readFileSync(join(FIXTURE, 'onnx', 'model.onnx')))).toBe(true);
  });

  it('tokenizes phonemized English into exactly our padded ids', async () => {
    for (const sentence of SENTENCES) {
      const phonemes = await phonemize(sentence, 'a');
      expect(phonemes.length).toBeGreaterThan(20);
      expect({ sentence, ids: theirs(phonemes) }).toEqual({ sentence, ids: ours(phonemes) });
    }
  });

  it.each([...FIXED])('tokenizes %s into exactly our padded ids', (_name, phonemes) => {
    expect(theirs(phonemes)).toEqual(ours(phonemes));
  });

  it('maps every vocabulary symbol to its id, one id per character', () => {
    const all = FIXED.get('the whole vocabulary')!;
    expect(theirs(all)).toEqual([0, ...KOKORO_VOCAB.values(), 0]);
  });

  it('refuses a vocabulary that already uses the pad symbol or id', () => {
    expect(() => buildPeerTokenizerJson(new Map([['$', 5]]))).toThrow(RangeError);
    expect(() => buildPeerTokenizerJson(new Map([['a', 0]]))).toThrow(RangeError);
    expect(() => buildPeerTokenizerJson(new Map([['ab', 3]]))).toThrow(RangeError);
  });
});
