/**
 * The server's lifecycle: starting (model loading, /ping 503) → ready → draining (SIGTERM) →
 * closed. It holds the engine once it exists and knows the work in flight, so shutdown can finish
 * what was accepted before it closes anything.
 */
import type { Engine } from '../../model/engine.ts';
import { ttsError } from './errors.ts';
import { Metrics } from '../observability/metrics.ts';

export type State = 'starting' | 'ready' | 'draining' | 'failed';

/** Something that can be asked to finish its work and go away (a WebSocket session). */
export interface Drainable {
  /** Finish what was accepted, then close; resolves when closed. */
  drain(): Promise<void>;
  /** Close now. */
  abort(): void;
  /** What would be lost by closing now, for the log: the request in progress and those waiting. */
  describe(): { sessionId: string; requestId?: string; queued: number };
}

/** Work still in flight when the shutdown deadline came, and was cut. */
export type CutWork =
  | { kind: 'ws'; sessionId: string; requestId?: string; queued: number }
  | { kind: 'http'; requestId: string };

export class Lifecycle {
  /** The app's Prometheus metrics; they read the engine and sessions from here. */
  readonly metrics: Metrics = new Metrics(
    () => this.#engine,
    () => this.#sessions.size,
  );
  #state: State = 'starting';
  #engine: Engine | undefined;
  readonly #sessions = new Set<Drainable>();
  #httpInFlight = 0;
  /** POSTs in flight: how to cut each, by request id. */
  readonly #httpAborts = new Map<() => void, string>();
  #idleWaiters: (() => void)[] = [];

  get state(): State {
    return this.#state;
  }

  get engine(): Engine | undefined {
    return this.#engine;
  }

  get sessions(): number {
    return this.#sessions.size;
  }

  /** Streaming POSTs in flight (either route). */
  get httpStreams(): number {
    return this.#httpInFlight;
  }

  setReady(engine: Engine): void {
    this.#engine = engine;
    if (this.#state === 'starting') this.#state = 'ready';
  }

  setFailed(): void {
    this.#state = 'failed';
  }

  /**
   * The engine for a request, or the reason there is none. While draining, only work `accepted`
   * before shutdown began (messages already queued in a session) is still served.
   */
  requireEngine(options: { accepted?: boolean } = {}): Engine {
    const engine = this.#engine;
    if (this.#state === 'ready' && engine) return engine;
    if (this.#state === 'draining') {
      if (options.accepted && engine) return engine;
      throw ttsError('TTS_ERR_SHUTTING_DOWN', 'The server is shutting down and takes no new requests');
    }
    throw ttsError('TTS_ERR_NOT_READY', 'The model is still loading; retry when GET /ping answers 200');
  }

  track(session: Drainable): () => void {
    this.#sessions.add(session);
    return () => {
      this.#sessions.delete(session);
      this.#checkIdle();
    };
  }

  /**
   * Marks a POST in flight; call the returned function when its response has ended. `abort` is
   * called if it is still running when the shutdown grace period ends.
   */
  beginHttp(requestId: string, abort: () => void): () => void {
    this.#httpInFlight++;
    this.#httpAborts.set(abort, requestId);
    let ended = false;
    return () => {
      if (ended) return;
      ended = true;
      this.#httpInFlight--;
      this.#httpAborts.delete(abort);
      this.#checkIdle();
    };
  }

  /**
   * Stops taking new work and waits, at most `graceMs`, for sessions and POSTs in flight to
   * finish. What is still open then is cut (sessions are closed with 1001, POSTs destroyed) and
   * returned, so the caller can log it.
   */
  async drain(graceMs: number): Promise<CutWork[]> {
    this.#state = 'draining';
    const sessions = [...this.#sessions];
    const drained = Promise.all([...sessions.map((s) => s.drain()), this.#whenHttpIdle()]);
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<'timeout'>(
      (resolve) => (timer = setTimeout(() => resolve('timeout'), graceMs)),
    );
    const outcome = await Promise.race([drained.then(() => 'done' as const), timeout]);
    clearTimeout(timer);
    if (outcome === 'done') return [];
    const cut: CutWork[] = [
      ...[...this.#sessions].map((s) => ({ kind: 'ws' as const, ...s.describe() })),
      ...[...this.#httpAborts.values()].map((requestId) => ({ kind: 'http' as const, requestId })),
    ];
    for (const s of this.#sessions) s.abort();
    for (const abort of this.#httpAborts.keys()) abort();
    return cut;
  }

  #whenHttpIdle(): Promise<void> {
    if (this.#httpInFlight === 0) return Promise.resolve();
    return new Promise((resolve) => this.#idleWaiters.push(resolve));
  }

  #checkIdle(): void {
    if (this.#httpInFlight > 0) return;
    for (const wake of this.#idleWaiters.splice(0)) wake();
  }
}
