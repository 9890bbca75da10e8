/**
 * Writes the stand-in Kokoro model (scripts/lib/standin-model.ts) to a folder.
 *
 * Usage: npm run standin-model -- --out DIR [options]   (see --help)
 */
import { parseArgs } from 'node:util';
import { intFlag, isMain } from './lib/cli.ts';
import { STANDIN_DEFAULTS, STANDIN_SAMPLES_PER_FRAME, writeStandinModelDir } from './lib/standin-model.ts';

const HELP = `Usage: npm run standin-model -- --out DIR [options]

Writes a stand-in for Kokoro-82M (same inputs and outputs, audio is a test tone) and voice files.

Options:
  --out DIR                 output directory (required)
  --layout NAME             onnx-community (onnx/model.onnx, input_ids -> waveform [1,N]) or
                            kokoro-onnx (kokoro-v1.0.onnx, tokens -> audio [N]); default ${STANDIN_DEFAULTS.layout}
  --speed-type TYPE         float32 or int32; default ${STANDIN_DEFAULTS.speedType}
  --layers N                MatMul+Tanh layers (compute and file size); default ${STANDIN_DEFAULTS.layers}
  --repeat N                passes through the layers, reusing weights (compute only); default ${STANDIN_DEFAULTS.repeat}
  --dim D                   embedding/layer width (compute and file size); default ${STANDIN_DEFAULTS.dim}
  --samples-per-token N     output samples per token at speed 1; default ${STANDIN_DEFAULTS.samplesPerToken}
  --timestamps              add a float32 output durations, one value per token ([1,T] for onnx-community,
                            [T] for kokoro-onnx): max(1, round((1 + id mod 3) / speed)) frames of ${STANDIN_SAMPLES_PER_FRAME} samples;
                            the audio is then sum(durations) * ${STANDIN_SAMPLES_PER_FRAME} samples long, so --samples-per-token
                            cannot be combined with it
  --echo                    add outputs echo_input_ids, echo_style and echo_speed that return the inputs
                            unchanged (for tests that check what reached ONNX Runtime); audio unchanged
  --voices ID,ID,...        voices to write; default ${STANDIN_DEFAULTS.voices.join(',')}
  --seed N                  seed for weights and voices; default ${STANDIN_DEFAULTS.seed}
  -h, --help                show this help
`;

/** A whole-number flag, or undefined (the generator's default) when absent. */
const optionalInt = (name: string, raw: string | undefined) =>
  raw === undefined ? undefined : intFlag(name, raw, 0, 0);

async function main(argv: string[]): Promise<void> {
  const { values } = parseArgs({
    args: argv,
    options: {
      out: { type: 'string' },
      layout: { type: 'string' },
      'speed-type': { type: 'string' },
      layers: { type: 'string' },
      repeat: { type: 'string' },
      dim: { type: 'string' },
      'samples-per-token': { type: 'string' },
      timestamps: { type: 'boolean' },
      echo: { type: 'boolean' },
      voices: { type: 'string' },
      seed: { type: 'string' },
      help: { type: 'boolean', short: 'h' },
    },
    strict: true,
    allowPositionals: false,
  });
  if (values.help) {
    process.stdout.write(HELP);
    return;
  }
  if (values.out === undefined) throw new RangeError('--out DIR is required (see --help)');
  const layout = values.layout ?? STANDIN_DEFAULTS.layout;
  if (layout !== 'onnx-community' && layout !== 'kokoro-onnx') {
    throw new RangeError(`--layout must be onnx-community or kokoro-onnx, got ${layout}`);
  }
  const speedType = values['speed-type'] ?? STANDIN_DEFAULTS.speedType;
  if (speedType !== 'float32' && speedType !== 'int32') {
    throw new RangeError(`--speed-type must be float32 or int32, got ${speedType}`);
  }
  if (values.timestamps === true && values['samples-per-token'] !== undefined) {
    throw new RangeError(
      `--samples-per-token cannot be combined with --timestamps: the audio is sum(durations) * ${STANDIN_SAMPLES_PER_FRAME} samples long`,
    );
  }
  const voices = values.voices?.split(',').filter((id) => id !== '');
  if (voices !== undefined && voices.length === 0)
    throw new RangeError('--voices must name at least one voice');

  await writeStandinModelDir(values.out, {
    layout,
    speedType,
    layers: optionalInt('layers', values.layers),
    repeat: optionalInt('repeat', values.repeat),
    dim: optionalInt('dim', values.dim),
    samplesPerToken: optionalInt('samples-per-token', values['samples-per-token']),
    timestamps: values.timestamps,
    echo: values.echo,
    seed: optionalInt('seed', values.seed),
    voices,
  });
}

// Run only when executed directly, so tests can import the builders.
if (isMain(import.meta.url)) {
  main(process.argv.slice(2)).catch((err: unknown) => {
    console.error(err instanceof Error ? err.message : err);
    process.exitCode = 1;
  });
}
