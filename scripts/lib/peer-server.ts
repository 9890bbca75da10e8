/**
 * The server a kokoro-js user writes from its README, for the peer benchmark (scripts/bench-peer.ts):
 * Fastify, `POST /invocations` with `{"text", "voice"}` answering raw PCM16 at 24 kHz mono, sentence
 * by sentence as kokoro-js's `TextSplitterStream` hands them to `tts.stream()`, and `GET /ping`.
 * Nothing of ours is used but the telemetry switch: one model, one event loop, kokoro-js's own front end and voices.
 *
 * `scripts/peer-kokoro-js-server.ts` runs it as a process.
 */
// First: ONNX Runtime's telemetry switch, before transformers.js loads onnxruntime-node.
import '../../model/inference/ort-telemetry.ts';
import { Readable } from 'node:stream';
import { env } from '@huggingface/transformers';
import Fastify, { type FastifyInstance } from 'fastify';
import { KokoroTTS, TextSplitterStream } from 'kokoro-js';

type Voice = NonNullable<Parameters<KokoroTTS['generate']>[1]>['voice'];

/**
 * Loads the model from a local folder (see scripts/lib/peer-model.ts) and nowhere else: remote
 * models off, and no file cache, so nothing is read from or written to transformers.js's cache.
 */
export async function loadPeerTts(modelDir: string): Promise<KokoroTTS> {
  env.allowRemoteModels = false;
  env.allowLocalModels = true;
  env.useFSCache = false;
  return KokoroTTS.from_pretrained(modelDir, { dtype: 'fp32', device: 'cpu' });
}

/** Float samples in [-1, 1] → PCM16 little-endian, clipped and rounded to the nearest step. */
function toPcm16(samples: Float32Array): Buffer {
  const pcm = new Int16Array(samples.length);
  for (let i = 0; i < samples.length; i++) {
    pcm[i] = Math.round(Math.max(-1, Math.min(1, samples[i]!)) * 32767);
  }
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

const invocationSchema = {
  body: {
    type: 'object',
    required: ['text'],
    properties: {
      text: { type: 'string', minLength: 1 },
      voice: { type: 'string' },
    },
  },
} as const;

/** The app, not listening yet. */
export function buildPeerApp(tts: KokoroTTS): FastifyInstance {
  const app = Fastify({ logger: false });
  app.get('/ping', async () => ({ status: 'ok' }));
  app.post<{ Body: { text: string; voice?: string } }>(
    '/invocations',
    { schema: invocationSchema },
    async (request, reply) => {
      const { text, voice = 'af_heart' } = request.body;
      if (!Object.hasOwn(tts.voices, voice)) {
        return reply
          .code(400)
          .send({ error: `Unknown voice; should be one of: ${Object.keys(tts.voices).join(', ')}` });
      }
      // Readable.from: written chunk by chunk with backpressure; a client that goes away destroys
      // the stream, which ends the generator (and kokoro-js's loop) after the current sentence.
      return reply.type('audio/pcm').send(Readable.from(pcmChunks(tts, text, voice as Voice)));
    },
  );
  return app;
}
