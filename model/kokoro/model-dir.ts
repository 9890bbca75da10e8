/**
 * Finds the model file and voice directories in a model directory. Two layouts are understood:
 *
 * - onnx-community (what kokoro-js loads): `onnx/model.onnx`, `onnx/model_fp16.onnx`, … chosen by
 *   dtype, and `voices/<id>.bin`;
 * - kokoro-onnx's single-file export: one `*.onnx` file at the top (e.g. `kokoro-v1.0.onnx`),
 *   voices in `voices/` if present.
 *
 * Voices missing from the model directory are taken from the copies kokoro-js ships.
 */
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { DTYPE_FILES, type Dtype } from './constants.ts';
import { kokoroJsVoiceDir } from './voices.ts';

export class ModelDirError extends Error {
  override readonly name = 'ModelDirError';
}

export interface ModelFiles {
  readonly dir: string;
  readonly modelFile: string;
  readonly layout: 'onnx-community' | 'single-file';
  /** Searched in order for `<id>.bin`. */
  readonly voiceDirs: readonly string[];
}

/** How to get a model onto this machine; appended to "no model" errors. */
export const FETCH_HINT =
  'Fetch Kokoro-82M v1.0 with `npm run fetch-model` (writes ./models/kokoro-82m) and start with `KOKORO_MODEL_DIR=./models/kokoro-82m npm start`, or start with KOKORO_FETCH_MODEL=1 to fetch into KOKORO_MODEL_DIR first. In the container image, mount the model at /opt/ml/model (docker run -v "$PWD/models/kokoro-82m:/opt/ml/model:ro" …) or build it in with --build-arg BAKE_MODEL=1. For tests, KOKORO_MODEL_DIR=test/fixtures/standin-model runs a stand-in model (test tone, not speech).';

const MIN_MODEL_BYTES = 1024;

/** Locates the model file for `dtype` in `dir`, or explains exactly what is missing. */
export function locateModel(dir: string, dtype: Dtype): ModelFiles {
  const root = resolve(dir);
  if (!existsSync(root) || !statSync(root).isDirectory()) {
    throw new ModelDirError(`Model directory ${root} does not exist. ${FETCH_HINT}`);
  }
  const voiceDirs = [join(root, 'voices'), kokoroJsVoiceDir()].filter(
    (d): d is string => d !== undefined && existsSync(d),
  );

  const onnxDir = join(root, 'onnx');
  if (existsSync(onnxDir) && statSync(onnxDir).isDirectory()) {
    const file = join(onnxDir, DTYPE_FILES[dtype]);
    if (!existsSync(file)) {
      const present = readdirSync(onnxDir).filter((f) => f.endsWith('.onnx'));
      const dtypes = (Object.keys(DTYPE_FILES) as Dtype[]).filter((d) => present.includes(DTYPE_FILES[d]));
      throw new ModelDirError(
        `KOKORO_DTYPE=${dtype} needs ${file}, which is missing. ${
          dtypes.length > 0
            ? `Present in ${onnxDir}: ${present.join(', ')}; set KOKORO_DTYPE to one of: ${dtypes.join(', ')}.`
            : `${onnxDir} holds no model file. ${FETCH_HINT}`
        }`,
      );
    }
    checkSize(file);
    return { dir: root, modelFile: file, layout: 'onnx-community', voiceDirs };
  }

  const top = readdirSync(root).filter((f) => f.endsWith('.onnx'));
  if (top.length === 0) {
    throw new ModelDirError(
      `No model in ${root}: expected onnx/${DTYPE_FILES[dtype]} (onnx-community layout) or a single *.onnx file (kokoro-onnx export). ${FETCH_HINT}`,
    );
  }
  const file = top.length === 1 ? top[0]! : pickByDtype(top, dtype);
  if (!file) {
    throw new ModelDirError(
      `Several model files in ${root} (${top.join(', ')}) and none matches KOKORO_DTYPE=${dtype}; keep one, or use the onnx/ layout.`,
    );
  }
  checkSize(join(root, file));
  return { dir: root, modelFile: join(root, file), layout: 'single-file', voiceDirs };
}

/** kokoro-onnx names its exports kokoro-v1.0.onnx, kokoro-v1.0.fp16.onnx, kokoro-v1.0.int8.onnx. */
function pickByDtype(files: string[], dtype: Dtype): string | undefined {
  const tags: Record<Dtype, string[]> = {
    fp32: [],
    fp16: ['fp16'],
    q8: ['int8', 'q8', 'quantized'],
    q8f16: ['q8f16'],
    q4: ['q4'],
    q4f16: ['q4f16'],
  };
  const all = Object.values(tags).flat();
  if (dtype === 'fp32')
    return files.find((f) => !all.some((t) => f.includes(`.${t}.`) || f.includes(`_${t}.`)));
  return files.find((f) => tags[dtype].some((t) => f.includes(`.${t}.`) || f.includes(`_${t}.`)));
}

function checkSize(file: string): void {
  const size = statSync(file).size;
  if (size < MIN_MODEL_BYTES) {
    throw new ModelDirError(`Model file ${file} is ${size} bytes: truncated or not a model. ${FETCH_HINT}`);
  }
}
