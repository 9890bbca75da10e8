/**
 * AAC-LC output in ADTS framing, produced by an `ffmpeg` subprocess (there is no pure-JS AAC
 * encoder). PCM16 mono goes to ffmpeg's stdin; ADTS frames come back on its stdout.
 *
 * Two costs of a subprocess are dealt with here:
 * - Start-up: a freshly spawned ffmpeg is slow to give its first frame, mostly loading the binary,
 *   so {@link FfmpegPool} keeps one idle process per (sample rate, bitrate) ready and replaces it
 *   when taken. The images ship an ffmpeg built with nothing but what this command line needs (the
 *   Dockerfile's ffmpeg stage), which loads far faster. docs/experiments.md has the figures.
 * - Asynchrony: ffmpeg's output trails its input by an unknown few milliseconds, so `push` cannot
 *   know exactly when "everything for this input" has arrived. See {@link AacEncoder} for the
 *   settle strategy.
 */
import { spawn, spawnSync, type ChildProcessWithoutNullStreams } from 'node:child_process';
import type { EncoderOptions, StreamEncoder } from './encoder.ts';

/** Sample rates accepted by {@link AacEncoder} (all valid AAC-LC rates the server may output). */
export const AAC_SAMPLE_RATES: readonly number[] = [8000, 16000, 22050, 24000, 44100, 48000];

/**
 * Default AAC bitrate: 48 kbit/s. Speech from a 24 kHz mono model is transparent well below this;
 * 48 kbit/s is also the highest rate AAC-LC allows at 8 kHz mono (6144 bits per 1024-sample frame),
 * so the default works at every supported rate.
 */
export const AAC_DEFAULT_BITRATE = 48_000;

/**
 * Default quiet time, in ms, that `push` allows for ffmpeg's last few (possibly held back) frames:
 * longer than nearly every gap between ffmpeg's output writes on an idle machine.
 */
export const AAC_DEFAULT_SETTLE_MS = 5;

/**
 * Default safety cap, in ms, on how long `push` waits for frames that are surely coming: above
 * what they take under full CPU load, so only a stalled or starved ffmpeg hits it.
 */
export const AAC_DEFAULT_MAX_WAIT_MS = 100;

/**
 * Cap, in ms, while ffmpeg has produced nothing yet: a process spawned on the request path is slow
 * to give its first frame, slower on a loaded machine. Returning early would not help, ffmpeg has
 * nothing to give yet.
 */
const START_WAIT_MS = 2000;

/**
 * Until its first frame, a process younger than this may simply still be loading, so silence says
 * nothing about held-back frames yet: the quiet window of `push` does not end before this age.
 */
const START_GRACE_MS = 400;

/** Samples per AAC-LC frame. */
const FRAME_SAMPLES = 1024;

/**
 * How many frames ffmpeg may still hold back, beyond the encoder's one-frame lookahead, once it has
 * had time to process its input: raw PCM is demuxed in packets of up to 1024 samples, a partial one
 * waits for more input, and the command-line tool's main loop lags by up to one more frame. Raised
 * per encoder, up to {@link MAX_LAG_FRAMES}, if an ffmpeg turns out to hold back more.
 */
const INITIAL_LAG_FRAMES = 2;
const MAX_LAG_FRAMES = 8;

/** Bytes of stderr kept for error messages. */
const STDERR_TAIL_BYTES = 4096;

/** ADTS header length without CRC. */
const ADTS_HEADER_BYTES = 7;

/** The ffmpeg binary when none is named (`FFMPEG_PATH`'s default): looked up on PATH. */
export const DEFAULT_FFMPEG = 'ffmpeg';

const availability = new Map<string, boolean>();

/**
 * Whether an ffmpeg binary runs at `ffmpegPath` and has the native `aac` encoder. The answer is
 * cached per path, so calling this on every request is cheap after the first call (which blocks
 * while ffmpeg runs).
 * @param ffmpegPath Binary to run; a bare name is looked up on PATH.
 */
export function ffmpegAvailable(ffmpegPath = DEFAULT_FFMPEG): boolean {
  const cached = availability.get(ffmpegPath);
  if (cached !== undefined) return cached;
  let ok = false;
  try {
    const r = spawnSync(ffmpegPath, ['-hide_banner', '-loglevel', 'error', '-encoders'], {
      encoding: 'utf8',
      timeout: 10_000,
      stdio: ['ignore', 'pipe', 'ignore'],
    });
    ok = r.status === 0 && /^\s*A\S*\s+aac\s/m.test(r.stdout ?? '');
  } catch {
    ok = false;
  }
  availability.set(ffmpegPath, ok);
  return ok;
}

/** The ffmpeg command line for one stream: s16le mono in at `sampleRate`, ADTS AAC-LC out. */
function ffmpegArgs(sampleRate: number, bitrate: number): string[] {
  return [
    '-hide_banner',
    '-nostdin',
    '-nostats',
    '-loglevel',
    'error',
    // Without these ffmpeg reads seconds of input to probe it before producing anything.
    '-probesize',
    '32',
    '-analyzeduration',
    '0',
    '-fflags',
    'nobuffer',
    '-f',
    's16le',
    '-ar',
    String(sampleRate),
    '-ac',
    '1',
    '-i',
    'pipe:0',
    '-c:a',
    'aac',
    '-b:a',
    String(bitrate),
    // Write each packet as soon as it is encoded instead of filling an I/O buffer first.
    '-flush_packets',
    '1',
    '-f',
    'adts',
    'pipe:1',
  ];
}

function checkConfig(sampleRate: number, bitrate: number): void {
  if (!AAC_SAMPLE_RATES.includes(sampleRate)) {
    throw new RangeError(
      `AAC: unsupported sample rate ${sampleRate} (supported: ${AAC_SAMPLE_RATES.join(', ')})`,
    );
  }
  if (!Number.isInteger(bitrate) || bitrate < 8000 || bitrate > 320_000) {
    throw new RangeError(`AAC: bitrate must be an integer from 8000 to 320000 bit/s, got ${bitrate}`);
  }
}

/** One ffmpeg process with its stderr tail and lifecycle tracked from the moment it is spawned. */
class FfmpegProcess {
  readonly proc: ChildProcessWithoutNullStreams;
  /** Settles once the process has started (resolves) or failed to start (rejects). */
  readonly started: Promise<void>;
  /** Resolves once the process has exited and its stdio is closed. */
  readonly closed: Promise<void>;
  private stderr: Buffer[] = [];
  private stderrBytes = 0;
  private spawnError: Error | undefined;
  /** `performance.now()` at spawn. */
  readonly spawnedAt = performance.now();

  constructor(
    readonly ffmpegPath: string,
    readonly sampleRate: number,
    readonly bitrate: number,
  ) {
    this.proc = spawn(ffmpegPath, ffmpegArgs(sampleRate, bitrate), { stdio: ['pipe', 'pipe', 'pipe'] });
    this.started = new Promise<void>((resolve, reject) => {
      this.proc.once('spawn', resolve);
      this.proc.once('error', (err) => {
        this.spawnError = err;
        reject(new Error(`cannot run ffmpeg at "${ffmpegPath}": ${err.message}`, { cause: err }));
      });
    });
    // Whoever takes the process awaits `started`; an idle one that fails must not be unhandled.
    this.started.catch(() => undefined);
    this.closed = new Promise<void>((resolve) => {
      this.proc.once('close', () => resolve());
      // 'close' does not follow a failed spawn.
      this.proc.once('error', () => {
        if (this.proc.pid === undefined) resolve();
      });
    });
    this.proc.stderr.on('data', (d: Buffer) => {
      this.stderr.push(d);
      this.stderrBytes += d.length;
      while (this.stderrBytes - this.stderr[0]!.length >= STDERR_TAIL_BYTES) {
        this.stderrBytes -= this.stderr.shift()!.length;
      }
    });
    // EPIPE on a dead process is reported through push/end; never as an uncaught stream error.
    this.proc.stdin.on('error', () => undefined);
  }

  /** Still running and usable for a new stream. */
  get alive(): boolean {
    return this.spawnError === undefined && this.proc.exitCode === null && this.proc.signalCode === null;
  }

  /** The last few KB of ffmpeg's stderr, trimmed. */
  stderrTail(): string {
    const s = Buffer.concat(this.stderr).toString('utf8');
    return s.slice(-STDERR_TAIL_BYTES).trim();
  }

  kill(): void {
    if (this.proc.exitCode === null && this.proc.signalCode === null && this.proc.pid !== undefined) {
      // SIGKILL: on SIGTERM ffmpeg would try to finish the file, which nobody wants any more.
      this.proc.kill('SIGKILL');
    }
    this.proc.stdin.destroy();
  }
}

/**
 * Keeps one idle, already started ffmpeg per (sample rate, bitrate) so that
 * {@link AacEncoder.create} does not pay ffmpeg's start-up on the request path. Each start costs
 * CPU, so warm only the configurations in use.
 *
 * A configuration's first `take` spawns on demand (unless {@link FfmpegPool.warm} was called); every
 * `take` hands out the idle process, if any, and immediately spawns its replacement in the
 * background. An idle process that dies is dropped and replaced on the next `take`. Call
 * {@link FfmpegPool.close} on shutdown: idle processes otherwise keep the event loop alive.
 */
export class FfmpegPool {
  private readonly idle = new Map<string, FfmpegProcess>();
  private closed = false;

  /** @param ffmpegPath Binary used for every process of this pool; a bare name is looked up on PATH. */
  constructor(readonly ffmpegPath = DEFAULT_FFMPEG) {}

  /** Pre-spawns one idle process for each configuration (bitrate defaults to {@link AAC_DEFAULT_BITRATE}). */
  warm(configs: readonly { sampleRate: number; bitrate?: number }[]): void {
    for (const c of configs) {
      const bitrate = c.bitrate ?? AAC_DEFAULT_BITRATE;
      checkConfig(c.sampleRate, bitrate);
      this.ensureIdle(c.sampleRate, bitrate);
    }
  }

  /** Number of idle processes currently held (for tests and metrics). */
  get idleCount(): number {
    return this.idle.size;
  }

  /** @internal Hands out an idle process for this configuration (or a fresh one) and refills. */
  take(sampleRate: number, bitrate: number): FfmpegProcess {
    if (this.closed) throw new Error('FfmpegPool is closed');
    const key = `${sampleRate}/${bitrate}`;
    let p = this.idle.get(key);
    this.idle.delete(key);
    if (p === undefined || !p.alive) {
      p?.kill();
      p = new FfmpegProcess(this.ffmpegPath, sampleRate, bitrate);
    }
    // spawn() blocks while it forks and execs: refill after the caller has started its stream.
    setImmediate(() => this.ensureIdle(sampleRate, bitrate));
    return p;
  }

  /** Kills every idle process; later `take` calls throw. Processes already taken are unaffected. */
  close(): void {
    this.closed = true;
    for (const p of this.idle.values()) p.kill();
    this.idle.clear();
  }

  private ensureIdle(sampleRate: number, bitrate: number): void {
    const key = `${sampleRate}/${bitrate}`;
    if (this.closed || this.idle.has(key)) return;
    const p = new FfmpegProcess(this.ffmpegPath, sampleRate, bitrate);
    this.idle.set(key, p);
    // Forget it if it fails to start or dies while idle; the next take spawns afresh.
    void p.closed.then(() => {
      if (this.idle.get(key) === p) this.idle.delete(key);
    });
  }
}

/** Options of {@link AacEncoder.create}. */
export interface AacEncoderOptions extends EncoderOptions {
  /** Target bitrate in bit/s; default {@link AAC_DEFAULT_BITRATE} (48 kbit/s). */
  readonly bitrate?: number;
  /** ffmpeg binary when no `pool` is given; default `DEFAULT_FFMPEG`. */
  readonly ffmpegPath?: string;
  /** Warm pool to take a pre-spawned process from; its own `ffmpegPath` is used. */
  readonly pool?: FfmpegPool;
  /** Quiet time allowed for frames ffmpeg may be holding back; default {@link AAC_DEFAULT_SETTLE_MS}. */
  readonly settleMs?: number;
  /** Cap on each `push`'s wait for frames after writing; default {@link AAC_DEFAULT_MAX_WAIT_MS}. */
  readonly maxWaitMs?: number;
}

/**
 * Streams PCM16 mono through ffmpeg into ADTS AAC-LC. Every non-empty result is a sequence of whole
 * ADTS frames (each self-contained and decodable on its own); the concatenation of all results is a
 * valid `.aac` file. Output includes ffmpeg's 1024-sample encoder priming at the start (ADTS cannot
 * signal it), so decoded audio is about one frame longer than the input.
 *
 * **Settle strategy of `push`.** ffmpeg answers asynchronously and holds a few frames back, so
 * `push` cannot know when "everything for this input" has arrived. After handing the PCM to
 * ffmpeg's stdin it counts whole frames as they arrive and resolves with all of them (including
 * frames that came late for earlier pushes; a partial frame stays buffered) as soon as:
 * 1. every frame ffmpeg can possibly have produced has arrived (input frames − 1: the encoder
 *    looks one frame ahead) — at once; or
 * 2. at most the usual lag (2 frames) is missing and stdout has been quiet for `settleMs`
 *    (default 5 ms) — those frames usually stay inside ffmpeg until more input comes. Before its
 *    first frame, a process younger than 400 ms may still be loading, so the quiet window lasts
 *    at least until that age (matters only without a warm pool); or
 * 3. the cap passes: `maxWaitMs` (default 100 ms), or 2 s while ffmpeg has not produced its first
 *    frame yet (start-up). Late frames are then returned by the next `push` or by `end`.
 * While more than the lag is missing, frames are surely coming, so `push` keeps waiting for them
 * instead of returning part of the audio early. The added latency is ffmpeg's encoding time plus
 * `settleMs`. After a push, the last 3–4 frames of input (130–190 ms at 24 kHz) are still inside
 * ffmpeg; they come out with the next push or with `end`, since the only way to flush ffmpeg is to
 * close its input.
 *
 * Calls are serialised: a `push` or `end` issued before the previous one settled waits for it.
 */
export class AacEncoder implements StreamEncoder {
  /** Sample rate of input and output. */
  readonly sampleRate: number;
  /** Target bitrate in bit/s. */
  readonly bitrate: number;
  private readonly ff: FfmpegProcess;
  private readonly settleMs: number;
  private readonly maxWaitMs: number;
  /** Whole frames not yet returned. */
  private ready: Buffer[] = [];
  private readyBytes = 0;
  /** Bytes of an incomplete frame. */
  private partial: Buffer = Buffer.alloc(0);
  private framesReceived = 0;
  private lagFrames = INITIAL_LAG_FRAMES;
  private samplesWritten = 0;
  private lastDataAt = 0;
  private dataWaiter: (() => void) | undefined;
  private formatError: Error | undefined;
  private queue: Promise<unknown> = Promise.resolve();
  private ended = false;
  private aborted = false;

  private constructor(ff: FfmpegProcess, settleMs: number, maxWaitMs: number) {
    this.ff = ff;
    this.sampleRate = ff.sampleRate;
    this.bitrate = ff.bitrate;
    this.settleMs = settleMs;
    this.maxWaitMs = maxWaitMs;
    ff.proc.stdout.on('data', (d: Buffer) => this.onData(d));
    void ff.closed.then(() => this.dataWaiter?.());
  }

  /**
   * Starts an encoder. With a `pool`, takes its pre-spawned process (no start-up cost); otherwise
   * spawns ffmpeg. Rejects with a clear error if ffmpeg cannot be run, and with a RangeError for an
   * unsupported sample rate or bitrate.
   */
  static async create(options: AacEncoderOptions): Promise<AacEncoder> {
    const bitrate = options.bitrate ?? AAC_DEFAULT_BITRATE;
    checkConfig(options.sampleRate, bitrate);
    const ff = options.pool
      ? options.pool.take(options.sampleRate, bitrate)
      : new FfmpegProcess(options.ffmpegPath ?? DEFAULT_FFMPEG, options.sampleRate, bitrate);
    await ff.started;
    return new AacEncoder(
      ff,
      options.settleMs ?? AAC_DEFAULT_SETTLE_MS,
      options.maxWaitMs ?? AAC_DEFAULT_MAX_WAIT_MS,
    );
  }

  /** The ffmpeg child process (diagnostics and tests: pid, exitCode, signalCode). */
  get process(): ChildProcessWithoutNullStreams {
    return this.ff.proc;
  }

  /** Writes `pcm` to ffmpeg and returns the whole ADTS frames available after the settle window. */
  push(pcm: Int16Array): Promise<Uint8Array> {
    return this.serialise(async () => {
      this.checkUsable('push');
      if (pcm.length > 0) {
        await this.write(pcm);
        this.samplesWritten += pcm.length;
        await this.settle();
      }
      if (this.aborted) throw new Error('AAC encoder was aborted');
      if (this.formatError) throw this.formatError;
      if (!this.ff.alive) {
        await this.closedOrTimeout();
        throw this.exitError('while encoding');
      }
      return this.takeReady();
    });
  }

  /** Closes ffmpeg's input and returns the remaining frames once ffmpeg has exited successfully. */
  end(): Promise<Uint8Array> {
    return this.serialise(async () => {
      this.checkUsable('end');
      this.ended = true;
      this.ff.proc.stdin.end();
      await this.ff.closed;
      if (this.aborted) throw new Error('AAC encoder was aborted');
      if (this.ff.proc.exitCode !== 0) throw this.exitError('at end of stream');
      if (this.formatError) throw this.formatError;
      if (this.partial.length > 0) {
        throw new Error(`ffmpeg output ended inside an ADTS frame (${this.partial.length} stray bytes)`);
      }
      return this.takeReady();
    });
  }

  /** Kills ffmpeg (SIGKILL) and drops buffered output. Safe to call more than once. */
  abort(): void {
    if (this.aborted) return;
    this.aborted = true;
    this.ff.kill();
    this.ready = [];
    this.readyBytes = 0;
    this.partial = Buffer.alloc(0);
    this.dataWaiter?.();
  }

  private serialise<T>(fn: () => Promise<T>): Promise<T> {
    const run = this.queue.then(fn, fn);
    this.queue = run.catch(() => undefined);
    return run;
  }

  private checkUsable(what: string): void {
    if (this.aborted) throw new Error('AAC encoder was aborted');
    if (this.ended) throw new Error(`AAC encoder: ${what} after end()`);
  }

  private write(pcm: Int16Array): Promise<void> {
    // s16le: Int16Array is in host order, little-endian on every platform Node supports here.
    const bytes = Buffer.from(pcm.buffer, pcm.byteOffset, pcm.byteLength);
    return new Promise<void>((resolve, reject) => {
      this.ff.proc.stdin.write(bytes, (err) => {
        if (!err) return resolve();
        if (this.aborted) return reject(new Error('AAC encoder was aborted'));
        // Give ffmpeg a moment to exit so the error carries its stderr.
        void this.closedOrTimeout().then(() => reject(this.exitError(`while writing (${err.message})`)));
      });
    });
  }

  /** Waits per the settle strategy documented on the class. */
  private settle(): Promise<void> {
    // The encoder looks one frame ahead, so this many frames is all ffmpeg can have produced.
    const maxFrames = Math.max(0, Math.floor(this.samplesWritten / FRAME_SAMPLES) - 1);
    const start = performance.now();
    const capMs = this.framesReceived === 0 ? Math.max(this.maxWaitMs, START_WAIT_MS) : this.maxWaitMs;
    return new Promise<void>((resolve) => {
      let quiet: NodeJS.Timeout | undefined;
      const finish = (): void => {
        clearTimeout(quiet);
        clearTimeout(cap);
        this.dataWaiter = undefined;
        resolve();
      };
      const cap = setTimeout(() => {
        // Frames that should have come did not while ffmpeg stayed silent: assume it holds back
        // more than expected, so later pushes stop waiting for them.
        const missing = maxFrames - this.framesReceived;
        const silentMs = performance.now() - Math.max(start, this.lastDataAt);
        if (missing > this.lagFrames && silentMs >= capMs / 2) {
          this.lagFrames = Math.min(MAX_LAG_FRAMES, missing);
        }
        finish();
      }, capMs);
      const check = (): void => {
        if (this.aborted || !this.ff.alive || this.framesReceived >= maxFrames) return finish();
        // Frames are surely on their way: wait for them (bounded by the cap).
        if (this.framesReceived < maxFrames - this.lagFrames) return;
        // Only frames ffmpeg may be holding back remain: give them `settleMs` of quiet.
        let wait = this.settleMs;
        if (this.framesReceived === 0) {
          wait = Math.max(wait, this.ff.spawnedAt + START_GRACE_MS - performance.now());
        }
        clearTimeout(quiet);
        quiet = setTimeout(finish, wait);
      };
      this.dataWaiter = check;
      check();
    });
  }

  private onData(d: Buffer): void {
    this.lastDataAt = performance.now();
    let buf = this.partial.length > 0 ? Buffer.concat([this.partial, d]) : d;
    let off = 0;
    while (buf.length - off >= ADTS_HEADER_BYTES) {
      if (buf[off] !== 0xff || (buf[off + 1]! & 0xf0) !== 0xf0) {
        this.formatError ??= new Error(`ffmpeg output lost ADTS sync after ${this.framesReceived} frames`);
        buf = Buffer.alloc(0);
        off = 0;
        break;
      }
      const len = ((buf[off + 3]! & 0x03) << 11) | (buf[off + 4]! << 3) | (buf[off + 5]! >> 5);
      if (len < ADTS_HEADER_BYTES) {
        this.formatError ??= new Error(`ffmpeg output has an invalid ADTS frame length ${len}`);
        buf = Buffer.alloc(0);
        off = 0;
        break;
      }
      if (buf.length - off < len) break;
      off += len;
      this.framesReceived++;
    }
    if (off > 0) {
      this.ready.push(buf.subarray(0, off));
      this.readyBytes += off;
    }
    // Copy the remainder so a small tail does not pin a large read buffer.
    this.partial = Buffer.from(buf.subarray(off));
    this.dataWaiter?.();
  }

  private takeReady(): Uint8Array {
    // A fresh, exactly sized array: safe to transfer to another thread, unlike pooled Buffers.
    const out = new Uint8Array(this.readyBytes);
    let off = 0;
    for (const b of this.ready) {
      out.set(b, off);
      off += b.length;
    }
    this.ready = [];
    this.readyBytes = 0;
    return out;
  }

  /** Waits (briefly) for ffmpeg to close, so that its whole stderr is there for the error. */
  private closedOrTimeout(): Promise<unknown> {
    return Promise.race([this.ff.closed, new Promise((r) => setTimeout(r, 200))]);
  }

  private exitError(when: string): Error {
    const p = this.ff.proc;
    const how =
      p.signalCode !== null
        ? `killed by ${p.signalCode}`
        : p.exitCode !== null
          ? `exit code ${p.exitCode}`
          : 'running';
    const tail = this.ff.stderrTail();
    return new Error(`ffmpeg AAC encoder failed ${when} (${how})${tail ? `: ${tail}` : ''}`);
  }
}
