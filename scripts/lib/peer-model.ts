/**
 * The model folder kokoro-js loads (`KokoroTTS.from_pretrained(dir, { dtype: 'fp32', device: 'cpu' })`
 * with transformers.js on local files only), built from one of our model directories: the peer
 * benchmark runs a kokoro-js server on exactly the model file our server runs.
 *
 * transformers.js needs, besides `onnx/model.onnx`, a `config.json` naming the model type and a
 * tokenizer (`tokenizer.json` + `tokenizer_config.json`) that turns a phoneme string into Kokoro's
 * ids. The tokenizer is built here from Kokoro's vocabulary so that it gives exactly the ids our
 * front end gives (`phonemesToIds` then `padIds`, model/text/tokens.ts):
 *
 *  1. normalizer: `Replace` of every character outside the vocabulary by nothing (ours skips them);
 *  2. pre-tokenizer: `Split` on the empty regex, `Isolated`: one piece per character (transformers.js
 *     compiles patterns with the `u` flag, so per code point, as our `for…of`);
 *  3. model: a word-level vocabulary, `$` → 0 added to Kokoro's 114 symbols (transformers.js 3.8 has no
 *     `WordLevel` class: a `vocab` object without `merges` or `continuing_subword_prefix` makes its
 *     `LegacyTokenizerModel`, which maps each piece through the vocabulary as it is);
 *  4. post-processor: `TemplateProcessing` `$ A $`, the pad that starts and ends every sequence.
 *
 * `$` is deliberately not an added token: an added token is matched in the raw text before the
 * normalizer runs, so a stray `$` in the input would become id 0, where ours drops it.
 */
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { locateModel } from '../../model/kokoro/model-dir.ts';
import { KOKORO_VOCAB, type Vocab } from '../../model/text/tokens.ts';

/** The pad symbol and its id: Kokoro's `0`, which starts and ends every input. */
export const PAD_TOKEN = '$';
export const PAD_ID = 0;

/** What transformers.js reads to pick `StyleTextToSpeech2Model`. */
export const PEER_CONFIG = { model_type: 'style_text_to_speech_2' } as const;

/** The tokenizer's settings: at most 512 ids (510 phonemes and the two pads), `$` as pad and unknown. */
export const PEER_TOKENIZER_CONFIG = {
  model_max_length: 512,
  pad_token: PAD_TOKEN,
  tokenizer_class: 'PreTrainedTokenizer',
  unk_token: PAD_TOKEN,
} as const;

/** A character as a regex class member (`u` flag): only `\`, `]`, `[`, `^` and `-` need escaping. */
function classMember(ch: string): string {
  return /[\\\][^-]/.test(ch) ? `\\${ch}` : ch;
}

/**
 * The `tokenizer.json` (Hugging Face tokenizers format, the subset transformers.js 3.8 reads) that
 * maps a phoneme string to `[0, …ids, 0]` exactly as `padIds(phonemesToIds(phonemes))`.
 * @throws RangeError if the vocabulary already uses the pad symbol or id, or holds multi-character
 *   symbols (the pre-tokenizer splits into single characters).
 */
export function buildPeerTokenizerJson(vocab: Vocab = KOKORO_VOCAB): Record<string, unknown> {
  for (const [symbol, id] of vocab) {
    if (symbol === PAD_TOKEN || id === PAD_ID) {
      throw new RangeError(`the vocabulary already has ${JSON.stringify(symbol)} → ${id}`);
    }
    if ([...symbol].length !== 1) {
      throw new RangeError(`vocabulary symbol ${JSON.stringify(symbol)} is not a single character`);
    }
  }
  const known = [...vocab.keys()].map(classMember).join('');
  const pad = { SpecialToken: { id: PAD_TOKEN, type_id: 0 } };
  return {
    version: '1.0',
    truncation: null,
    padding: null,
    added_tokens: [],
    normalizer: { type: 'Replace', pattern: { Regex: `[^${known}]` }, content: '' },
    pre_tokenizer: { type: 'Split', pattern: { Regex: '' }, behavior: 'Isolated', invert: false },
    post_processor: {
      type: 'TemplateProcessing',
      single: [pad, { Sequence: { id: 'A', type_id: 0 } }, pad],
      pair: [pad, { Sequence: { id: 'A', type_id: 0 } }, { Sequence: { id: 'B', type_id: 1 } }, pad],
      special_tokens: { [PAD_TOKEN]: { id: PAD_TOKEN, ids: [PAD_ID], tokens: [PAD_TOKEN] } },
    },
    decoder: null,
    model: {
      type: 'WordLevel',
      vocab: Object.fromEntries([[PAD_TOKEN, PAD_ID], ...vocab]),
      unk_token: PAD_TOKEN,
    },
  };
}

/** Paths written by {@link writePeerModelDir}, all absolute. */
export interface PeerModelFiles {
  readonly dir: string;
  readonly model: string;
  readonly config: string;
  readonly tokenizer: string;
  readonly tokenizerConfig: string;
}

/**
 * Writes the folder kokoro-js loads into `outDir` from the model directory `sourceDir` (onnx-community
 * layout, as the stand-in writes it): `config.json`, `tokenizer.json`, `tokenizer_config.json` and a
 * copy of `onnx/model.onnx` (a copy, not a link: regenerating the source in place must not change
 * it). kokoro-js takes its voices from its own package, so no `voices/` is written; our server on this
 * folder falls back to the same files (model/kokoro/voices.ts).
 */
export async function writePeerModelDir(sourceDir: string, outDir: string): Promise<PeerModelFiles> {
  const source = locateModel(sourceDir, 'fp32');
  if (source.layout !== 'onnx-community') {
    throw new Error(
      `${source.modelFile} is a single-file export; kokoro-js needs the onnx-community export (inputs input_ids/style/speed, output waveform) in onnx/model.onnx`,
    );
  }
  const dir = resolve(outDir);
  if (dir === source.dir)
    throw new Error(`writing the kokoro-js folder into ${dir} would replace its config.json`);
  await mkdir(join(dir, 'onnx'), { recursive: true });
  const json = async (name: string, value: unknown): Promise<string> => {
    const file = join(dir, name);
    await writeFile(file, `${JSON.stringify(value, null, 1)}\n`);
    return file;
  };
  const model = join(dir, 'onnx', 'model.onnx');
  // Read and write rather than copyFile, which keeps a read-only source's mode (see standin-model.ts).
  await writeFile(model, await readFile(source.modelFile));
  return {
    dir,
    model,
    config: await json('config.json', PEER_CONFIG),
    tokenizer: await json('tokenizer.json', buildPeerTokenizerJson()),
    tokenizerConfig: await json('tokenizer_config.json', PEER_TOKENIZER_CONFIG),
  };
}
