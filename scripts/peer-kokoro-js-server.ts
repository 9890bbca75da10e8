/**
 * The server a kokoro-js user writes from its README, for the peer benchmark (`npm run bench --
 * peer`): Fastify, `POST /invocations` with `{"text", "voice"}` answering raw PCM16 at 24 kHz mono,
 * sentence by sentence as kokoro-js's `TextSplitterStream` hands them to `tts.stream()`, and
 * `GET /ping`. Nothing of ours is used but the telemetry switch: one model, one event loop,
 * kokoro-js's own front end and voices. `{"phonemes", "voice"}` instead runs kokoro-js's model on one
 * chunk of phonemes with the voice row Kokoro's reference pipeline takes for it (n − 1 for n
 * phonemes, where kokoro-js takes n), as our server does: from the same input both must then send
 * the same bytes, which the benchmark checks (their English front ends differ, so text cannot show it).
 *
 * Usage: node dist/scripts/peer-kokoro-js-server.js --model-dir DIR [--port N] [--host H]
 * (or PEER_MODEL_DIR, PORT and HOST). DIR is a folder written by scripts/lib/peer-model.ts.
 */
// First: ONNX Runtime's telemetry switch, before transformers.js loads onnxruntime-node.
import '../model/inference/ort-telemetry.ts';
import { readFile } from 'node:fs/promises';
import { Readable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { Tensor, env } from '@huggingface/transformers';
import Fastify from 'fastify';
import { KokoroTTS, TextSplitterStream } from 'kokoro-js';
import { UsageError, intFlag, parseFlags, runMain } from './lib/cli.ts';

type Voice = NonNullable<Parameters<KokoroTTS['generate']>[1]>['voice'];

/** Float samples in [-1, 1] → PCM16 little-endian, clipped and rounded to the nearest step. */
function toPcm16(samples: Float32Array): Buffer {
  const pcm = Int16Array.from(samples, (x) => Math.round(Math.max(-1, Math.min(1, x)) * 32767));
  return Buffer.from(pcm.buffer, pcm.byteOffset, pcm.byteLength);
}

/** Each sentence's audio as PCM16, as soon as kokoro-js has it. */
async function* pcmChunks(tts: KokoroTTS, text: string, voice: Voice): AsyncGenerator<Buffer> {
  const splitter = new TextSplitterStream();
  const stream = tts.stream(splitter, { voice });
  splitter.push(text);
  splitter.close();
  for await (const { audio } of stream) yield toPcm16(audio.audio);
}

/** kokoro-js's model on phonemes, with the voice row of the reference pipeline. */
async function fromPhonemes(tts: KokoroTTS, phonemes: string, voice: string): Promise<Buffer> {
  const { input_ids } = tts.tokenizer(phonemes, { truncation: true });
  const row = Math.min(Math.max((input_ids as Tensor).dims.at(-1)! - 3, 0), 509);
  const file = fileURLToPath(new URL(`../voices/${voice}.bin`, import.meta.resolve('kokoro-js')));
  const bytes = await readFile(file);
  const style = new Float32Array(bytes.buffer, bytes.byteOffset + row * 1024, 256);
  const run = tts.model as unknown as (inputs: Record<string, Tensor>) => Promise<{ waveform: Tensor }>;
  const { waveform } = await run({
    input_ids: input_ids as Tensor,
    style: new Tensor('float32', Float32Array.from(style), [1, 256]),
    speed: new Tensor('float32', [1], [1]),
  });
  return toPcm16(waveform.data as Float32Array);
}

async function main(argv: readonly string[]): Promise<number> {
  let values, port;
  try {
    values = parseFlags(argv, {
      'model-dir': { type: 'string' },
      port: { type: 'string' },
      host: { type: 'string' },
    });
    port = intFlag('port', values.port ?? process.env.PORT, 8081, 1, 65_535);
  } catch (err) {
    if (!(err instanceof UsageError)) throw err;
    process.stderr.write(`${err.message}\n`);
    return 2;
  }
  const modelDir = values['model-dir'] ?? process.env.PEER_MODEL_DIR;
  if (!modelDir) {
    process.stderr.write('--model-dir or PEER_MODEL_DIR is required\n');
    return 2;
  }
  // The local folder and nowhere else: no remote models, no file cache read or written.
  env.allowRemoteModels = false;
  env.allowLocalModels = true;
  env.useFSCache = false;
  const tts = await KokoroTTS.from_pretrained(modelDir, { dtype: 'fp32', device: 'cpu' });
  const app = Fastify({ logger: false });
  app.get('/ping', async () => ({ status: 'ok' }));
  const schema = {
    body: {
      type: 'object',
      oneOf: [{ required: ['text'] }, { required: ['phonemes'] }],
      properties: {
        text: { type: 'string', minLength: 1 },
        phonemes: { type: 'string', minLength: 1 },
        voice: { type: 'string' },
      },
    },
  } as const;
  type Body = { text?: string; phonemes?: string; voice?: string };
  app.post<{ Body: Body }>('/invocations', { schema }, async (request, reply) => {
    const { text = '', phonemes, voice = 'af_heart' } = request.body;
    if (!Object.hasOwn(tts.voices, voice))
      return reply
        .code(400)
        .send({ error: `Unknown voice; should be one of: ${Object.keys(tts.voices).join(', ')}` });
    if (phonemes !== undefined) return reply.type('audio/pcm').send(await fromPhonemes(tts, phonemes, voice));
    // Readable.from: written chunk by chunk with backpressure; a client that goes away destroys
    // the stream, which ends the generator (and kokoro-js's loop) after the current sentence.
    return reply.type('audio/pcm').send(Readable.from(pcmChunks(tts, text, voice as Voice)));
  });
  const host = values.host ?? process.env.HOST ?? '127.0.0.1';
  await app.listen({ port, host });
  process.stderr.write(`kokoro-js server listening on http://${host}:${port}\n`);
  await new Promise<void>((resolve) => {
    for (const signal of ['SIGTERM', 'SIGINT'] as const) process.once(signal, () => resolve());
  });
  await app.close();
  return 0;
}

runMain(import.meta.url, 'peer-kokoro-js-server', () => main(process.argv.slice(2)));
