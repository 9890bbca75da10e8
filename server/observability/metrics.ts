/**
 * Prometheus metrics (prom-client), one registry per app so tests can build several apps in one
 * process. The engine's live figures (queue depth, busy workers) are read at scrape time.
 */
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import type { Engine, RunFigures } from '../../model/engine.ts';

const LATENCY_BUCKETS = [0.01, 0.025, 0.05, 0.1, 0.2, 0.35, 0.5, 0.75, 1, 1.5, 2.5, 5, 10];

export class Metrics {
  readonly registry = new Registry();
  readonly timeToFirstAudio = new Histogram({
    name: 'tts_time_to_first_audio_seconds',
    help: 'From a request arriving to its first audio leaving the server',
    labelNames: ['route'] as const,
    buckets: LATENCY_BUCKETS,
    registers: [this.registry],
  });
  readonly synthesisSeconds = new Histogram({
    name: 'tts_synthesis_seconds',
    help: 'Wall time of a whole request, from arrival to its last audio',
    labelNames: ['route'] as const,
    buckets: LATENCY_BUCKETS,
    registers: [this.registry],
  });
  readonly realTimeFactor = new Histogram({
    name: 'tts_real_time_factor',
    help: 'Wall time divided by audio duration, per request (below 1 is faster than real time)',
    buckets: [0.01, 0.02, 0.05, 0.1, 0.2, 0.3, 0.5, 0.75, 1, 1.5, 2],
    registers: [this.registry],
  });
  readonly audioSeconds = new Counter({
    name: 'tts_audio_seconds_total',
    help: 'Seconds of audio synthesized',
    labelNames: ['format'] as const,
    registers: [this.registry],
  });
  readonly requests = new Counter({
    name: 'tts_requests_total',
    help: 'Requests synthesized to the end',
    labelNames: ['route'] as const,
    registers: [this.registry],
  });
  readonly unknownPhonemes = new Counter({
    name: 'tts_unknown_phonemes_total',
    help: "Phoneme symbols outside Kokoro's vocabulary, dropped before inference, by language",
    labelNames: ['language'] as const,
    registers: [this.registry],
  });
  readonly errors = new Counter({
    name: 'tts_errors_total',
    help: 'Errors answered to clients, by code',
    labelNames: ['code'] as const,
    registers: [this.registry],
  });
  readonly admissionRefused = new Counter({
    name: 'tts_admission_refused_total',
    help: 'Requests refused as busy by the inference pool before any work: its queue full (queue), or their first audio predicted past MAX_FIRST_AUDIO_MS (first_audio)',
    labelNames: ['reason'] as const,
    registers: [this.registry],
  });
  readonly cancelAck = new Histogram({
    name: 'tts_cancel_ack_seconds',
    help: 'From a cancel arriving to its answer leaving, after the last audio of what it cut',
    buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1],
    registers: [this.registry],
  });
  readonly workerRestarts = new Counter({
    name: 'tts_worker_restarts_total',
    help: 'Worker threads that died and were replaced',
    labelNames: ['kind'] as const,
    registers: [this.registry],
  });
  constructor(engine: () => Engine | undefined, sessions: () => number) {
    collectDefaultMetrics({ register: this.registry });
    const load = () => engine()?.load();
    new Gauge({
      name: 'tts_queue_depth',
      help: 'Next-needed sentences waiting for an inference worker',
      registers: [this.registry],
      collect() {
        this.set(load()?.queued ?? 0);
      },
    });
    new Gauge({
      name: 'tts_lookahead_depth',
      help: 'Look-ahead sentences waiting for an idle inference worker',
      registers: [this.registry],
      collect() {
        this.set(load()?.ahead ?? 0);
      },
    });
    new Gauge({
      name: 'tts_workers_busy',
      help: 'Inference workers running a sentence now',
      registers: [this.registry],
      collect() {
        this.set(load()?.busy ?? 0);
      },
    });
    new Gauge({
      name: 'tts_workers_ready',
      help: 'Inference workers loaded and able to take work',
      registers: [this.registry],
      collect() {
        this.set(load()?.workers ?? 0);
      },
    });
    new Gauge({
      name: 'tts_execution_provider',
      help: 'The ONNX Runtime execution provider in use (value 1)',
      labelNames: ['provider', 'dtype'] as const,
      registers: [this.registry],
      collect() {
        this.reset();
        const info = engine()?.info;
        if (info) this.set({ provider: info.provider, dtype: info.dtype }, 1);
      },
    });
    new Gauge({
      name: 'tts_active_sessions',
      help: 'Open WebSocket sessions',
      registers: [this.registry],
      collect() {
        this.set(sessions());
      },
    });
  }

  /** Also receives every completed request's figures (the EMF reporter, when it is on). */
  completionSink: ((figures: RunFigures) => void) | undefined;

  /** Errors by code since the process started, from the `tts_errors_total` counter. */
  async errorCounts(): Promise<Map<string, number>> {
    const { values } = await this.errors.get();
    return new Map(values.map((v) => [String(v.labels.code), v.value]));
  }

  /** Records a request synthesized to the end. */
  observe(route: 'http' | 'ws', format: string, summary: RunFigures): void {
    this.completionSink?.(summary);
    this.requests.inc({ route });
    this.timeToFirstAudio.observe({ route }, summary.ttfaMs / 1000);
    this.synthesisSeconds.observe({ route }, summary.elapsedMs / 1000);
    this.audioSeconds.inc({ format }, summary.audioS);
    if (summary.audioS > 0) this.realTimeFactor.observe(summary.elapsedMs / 1000 / summary.audioS);
  }
}
