/**
 * What the engine reports as it runs, turned into log lines and metrics: one wiring, used by the
 * process (main.ts) and by the tests' servers alike, so that a test of a metric tests what ships.
 */
import type { FastifyBaseLogger } from 'fastify';
import type { EngineEvents } from '../../model/engine.ts';
import type { Metrics } from './metrics.ts';

export function engineEvents(log: FastifyBaseLogger, metrics: Metrics): EngineEvents {
  return {
    onEncoderWorkerExit: (reason) => {
      metrics.workerRestarts.inc({ kind: 'encoder' });
      log.error({ reason }, 'encoder worker died; replacing it');
    },
    onWorkerExit: ({ index, reason }) => {
      metrics.workerRestarts.inc({ kind: 'inference' });
      log.error({ worker: index, reason }, 'inference worker died; replacing it');
    },
    onStopTimeout: ({ index, timeoutMs }) =>
      log.error({ worker: index, timeoutMs }, 'an inference call outlived the shutdown; ending its thread'),
    onWorkerLog: ({ index, message }) => log.debug({ worker: index, message }, 'inference worker output'),
    onUnknownPhonemes: ({ index, lang, symbols }) => {
      const count = Object.values(symbols).reduce((a, b) => a + b, 0);
      metrics.unknownPhonemes.inc({ language: lang }, count);
      log.warn({ worker: index, lang, symbols }, 'phonemes outside Kokoro’s vocabulary were dropped');
    },
    onWorkerReady: ({ index, warmupMs }) => log.debug({ worker: index, warmupMs }, 'inference worker ready'),
    onDispatch: ({ index, jobId, solo, ahead }) =>
      log.trace({ worker: index, jobId, solo, ahead }, 'sentence dispatched'),
    onRefused: ({ reason, predictedMs }) => {
      metrics.admissionRefused.inc({ reason });
      log.debug({ reason, predictedMs }, 'request refused as busy before any work');
    },
    onModelInput: ({ index, phonemes, input }) =>
      log.debug({ worker: index, phonemes, ...input }, 'model input, as the model handed it back'),
  };
}
