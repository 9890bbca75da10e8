/**
 * The encoder worker: holds the encoders of the requests assigned to it (resampling, MP3, Opus,
 * FLAC, μ-law, AAC) so that no encoding runs on the server's main thread. Each request's messages
 * are handled in order; different requests interleave freely.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { SAMPLE_RATE } from '../kokoro/constants.ts';
import { FfmpegPool, ffmpegAvailable } from './aac.ts';
import { createStreamEncoder } from './formats.ts';
import type { StreamEncoder } from './encoder.ts';
import type { EncoderWorkerInit, FromEncoder, ToEncoder } from './encoder-messages.ts';

const port = parentPort;
if (!port) throw new Error('model/audio/encoder-worker.ts must run in a worker thread');
const init = workerData as EncoderWorkerInit;

// AAC comes from ffmpeg; keep one process per common configuration spawned ahead, as spawning one
// on demand would delay every AAC request's first byte.
const aacPool = ffmpegAvailable(init.ffmpegPath) ? new FfmpegPool(init.ffmpegPath) : undefined;
aacPool?.warm([{ sampleRate: SAMPLE_RATE }]);

interface Stream {
  encoder: Promise<StreamEncoder>;
  chain: Promise<unknown>;
}
const streams = new Map<number, Stream>();

function reply(message: FromEncoder): void {
  const transfer =
    message.type === 'data' && message.bytes.byteLength > 0 ? [message.bytes.buffer as ArrayBuffer] : [];
  port!.postMessage(message, transfer);
}

function errorText(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

port.on('message', (message: ToEncoder) => {
  switch (message.type) {
    case 'open': {
      if (init.faultInjection && message.crash) process.exit(70);
      const encoder = createStreamEncoder({
        format: message.format,
        sampleRate: message.sampleRate,
        ...(aacPool ? { aacPool } : {}),
      });
      // A failed open is reported on the first push/end of the stream.
      encoder.catch(() => undefined);
      streams.set(message.id, { encoder, chain: Promise.resolve() });
      break;
    }
    case 'push':
    case 'end': {
      const stream = streams.get(message.id);
      if (!stream) {
        reply({ type: 'error', id: message.id, seq: message.seq, message: 'unknown encoder stream' });
        return;
      }
      stream.chain = stream.chain.then(async () => {
        try {
          const encoder = await stream.encoder;
          const bytes = message.type === 'push' ? await encoder.push(message.pcm) : await encoder.end();
          // Copy out of shared or pooled memory so the buffer can be transferred. A copy by
          // `new Uint8Array`: a Buffer's slice() is a view, and Node 26 refuses to transfer the
          // pool a small Buffer lives in ("Cannot transfer object of unsupported type").
          const own =
            bytes.byteOffset === 0 && bytes.byteLength === bytes.buffer.byteLength
              ? bytes
              : new Uint8Array(bytes);
          reply({ type: 'data', id: message.id, seq: message.seq, bytes: own });
        } catch (err) {
          reply({ type: 'error', id: message.id, seq: message.seq, message: errorText(err) });
        }
        if (message.type === 'end') streams.delete(message.id);
      });
      break;
    }
    case 'shutdown': {
      for (const stream of streams.values())
        stream.encoder.then(
          (e) => e.abort(),
          () => undefined,
        );
      aacPool?.close();
      process.exit(0);
      break;
    }
    case 'abort': {
      const stream = streams.get(message.id);
      streams.delete(message.id);
      stream?.encoder.then(
        (e) => e.abort(),
        () => undefined,
      );
      break;
    }
  }
});

reply({ type: 'ready' });
