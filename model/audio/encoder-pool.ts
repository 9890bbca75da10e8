/**
 * Encoder workers, seen from the main thread. A request's encoder lives in one worker for the
 * request's lifetime (encoders keep state between chunks); requests are spread over the workers
 * by how many streams each holds. The main thread only moves buffers (transferred, not copied).
 */
import type { Worker } from 'node:worker_threads';
import { restartDelayMs, startWorker } from '../threads.ts';
import { abortError, ttsError } from '../../protocol/errors.ts';
import type { AudioFormat } from '../../protocol/formats.ts';
import type { EncoderWorkerInit, FromEncoder, ToEncoder } from './encoder-messages.ts';
import type { StreamEncoder } from './encoder.ts';

interface Waiter {
  resolve(bytes: Uint8Array): void;
  reject(err: Error): void;
}

interface Slot {
  worker: Worker;
  /** Open streams, by id: their pending replies by sequence number. */
  streams: Map<number, Map<number, Waiter>>;
}

/** Encoding failed: an internal error, whose detail is logged and never shown to the client. */
const encoderError = (detail: string) =>
  ttsError('TTS_ERR_INTERNAL', `Encoding the audio failed: ${detail}`, { data: { stage: 'encoding' } });

export class EncoderPool {
  readonly #init: EncoderWorkerInit;
  readonly #slots: Slot[] = [];
  #nextId = 1;
  #closed = false;
  readonly #onWorkerExit: ((reason: string) => void) | undefined;

  private constructor(init: EncoderWorkerInit, onWorkerExit?: (reason: string) => void) {
    this.#init = init;
    this.#onWorkerExit = onWorkerExit;
  }

  static async create(
    size: number,
    init: EncoderWorkerInit,
    onWorkerExit?: (reason: string) => void,
  ): Promise<EncoderPool> {
    const pool = new EncoderPool(init, onWorkerExit);
    await Promise.all(Array.from({ length: size }, (_, i) => pool.#spawn(i)));
    return pool;
  }

  /**
   * Opens a request's encoder stream in the least loaded worker. `crash` (tests only, with the
   * pool's faultInjection) makes that worker die.
   */
  open(format: AudioFormat, sampleRate: number, crash = false): StreamEncoder {
    if (this.#closed) throw encoderError('the encoder pool is shut down');
    const slot = this.#slots.reduce((a, b) => (b.streams.size < a.streams.size ? b : a));
    const id = this.#nextId++;
    slot.streams.set(id, new Map());
    this.#post(slot, { type: 'open', id, format, sampleRate, ...(crash ? { crash: true } : {}) });
    let seq = 0;
    let finished = false;
    const call = (message: ToEncoder & { seq: number }, transfer: ArrayBuffer[]): Promise<Uint8Array> =>
      new Promise((resolve, reject) => {
        const waiters = slot.streams.get(id);
        if (!waiters) return reject(encoderError('the encoder stream is closed'));
        waiters.set(message.seq, { resolve, reject });
        this.#post(slot, message, transfer);
      });
    return {
      push: (pcm) => {
        // Transfer the samples when they own their buffer; copy a view of a larger one.
        const own = pcm.byteOffset === 0 && pcm.byteLength === pcm.buffer.byteLength ? pcm : pcm.slice();
        return call({ type: 'push', id, seq: seq++, pcm: own }, [own.buffer as ArrayBuffer]);
      },
      end: async () => {
        finished = true;
        try {
          return await call({ type: 'end', id, seq: seq++ }, []);
        } finally {
          slot.streams.delete(id);
        }
      },
      abort: () => {
        if (!slot.streams.has(id)) return;
        const waiters = slot.streams.get(id)!;
        slot.streams.delete(id);
        for (const w of waiters.values()) w.reject(abortError('the encoder stream was aborted'));
        if (!finished) this.#post(slot, { type: 'abort', id });
      },
    };
  }

  /** Stops every worker, letting each kill its pre-spawned ffmpeg processes first. */
  async close(): Promise<void> {
    this.#closed = true;
    await Promise.all(
      this.#slots.map(async (s) => {
        const exited = new Promise<void>((resolve) => s.worker.once('exit', () => resolve()));
        this.#post(s, { type: 'shutdown' });
        const timer = setTimeout(() => void s.worker.terminate(), 1000);
        await exited;
        clearTimeout(timer);
      }),
    );
  }

  /** Replaces a worker; the others keep serving meanwhile. Retries with backoff if it fails. */
  #respawn(index: number, attempt: number): void {
    setTimeout(() => {
      if (this.#closed) return;
      this.#spawn(index).catch((err: Error) => {
        if (this.#closed) return;
        this.#onWorkerExit?.(`restart failed: ${err.message}`);
        this.#respawn(index, attempt + 1);
      });
    }, restartDelayMs(attempt)).unref();
  }

  #post(slot: Slot, message: ToEncoder, transfer: ArrayBuffer[] = []): void {
    slot.worker.postMessage(message, transfer);
  }

  #spawn(index: number): Promise<void> {
    const worker = startWorker(import.meta.url, 'encoder-worker', {
      workerData: this.#init,
      name: `kokoro-encoder-${index}`,
    });
    const slot: Slot = { worker, streams: new Map() };
    this.#slots[index] = slot;
    return new Promise((resolve, reject) => {
      let ready = false;
      worker.on('message', (message: FromEncoder) => {
        if (message.type === 'ready') {
          ready = true;
          resolve();
          return;
        }
        const waiter = slot.streams.get(message.id)?.get(message.seq);
        if (!waiter) return;
        slot.streams.get(message.id)!.delete(message.seq);
        if (message.type === 'data') waiter.resolve(message.bytes);
        else waiter.reject(encoderError(message.message));
      });
      const gone = (reason: string) => {
        if (!ready) reject(new Error(`encoder worker failed to start: ${reason}`));
        if (this.#slots[index] !== slot) return;
        for (const waiters of slot.streams.values()) {
          for (const w of waiters.values()) w.reject(encoderError(`encoder worker failed: ${reason}`));
        }
        slot.streams.clear();
        if (this.#closed || !ready) return;
        this.#onWorkerExit?.(reason);
        this.#respawn(index, 0);
      };
      worker.on('error', (err) => gone(err.message));
      worker.on('exit', (code) => gone(`exited with code ${code}`));
    });
  }
}
