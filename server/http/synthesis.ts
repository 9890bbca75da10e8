/**
 * One synthesis answered over HTTP, whatever the route's dialect (POST /invocations, the OpenAI
 * speech route): the run is tied to the connection (a client that goes away stops it, and so does
 * the drain's deadline), its end is recorded once, and the audio goes out as a chunked body whose
 * status waits for the first audio, so that a failure before it is still a clean 4xx/5xx.
 */
import { Readable } from 'node:stream';
import type { FastifyBaseLogger, FastifyReply, FastifyRequest } from 'fastify';
import type { PhonemeTiming, RunFigures, SynthesisRun, WordTiming } from '../../model/engine.ts';
import { ttsError, withRequestId } from './errors.ts';
import type { Config } from '../config/config.ts';
import type { Lifecycle } from './lifecycle.ts';
import { isCancelled, recordClientGone, recordCompletion } from '../observability/outcomes.ts';
import { synthesisRequest, type SynthesisOptions } from './request.ts';

const HEADER_SAFE = /^[\x20-\x7e]+$/;

/**
 * A client's value as response header text: printable ASCII as it is, anything else
 * percent-encoded, since Node refuses to write a header with a byte outside Latin-1 (or a CR LF)
 * and the route would fail after its handler.
 */
export function headerText(value: string): string {
  return HEADER_SAFE.test(value) ? value : encodeURIComponent(value);
}

export interface HttpSynthesis {
  readonly run: SynthesisRun;
  readonly options: SynthesisOptions;
  /** Aborted when the client goes away or the drain cuts the request. */
  readonly signal: AbortSignal;
  readonly log: FastifyBaseLogger;
  /** Records the end of the run (log line, metrics) and returns its figures. */
  completed(transport?: 'sse'): RunFigures;
}

export function startHttpSynthesis(
  request: FastifyRequest,
  reply: FastifyReply,
  lifecycle: Lifecycle,
  options: SynthesisOptions,
  output: {
    /** The admission bound (MAX_HTTP_STREAMS) and what a complete reply may hold. */
    limits: Pick<Config, 'maxHttpStreams' | 'maxCompleteReplyBytes'>;
    complete?: boolean;
    onWords?: (words: readonly WordTiming[]) => void;
    onPhonemes?: (phonemes: readonly PhonemeTiming[]) => void;
    onMark?: (name: string, timeS: number) => void;
  },
): HttpSynthesis {
  const engine = lifecycle.requireEngine();
  const { maxHttpStreams } = output.limits;
  if (lifecycle.httpStreams >= maxHttpStreams) {
    // Admission: an instance at its planned capacity refuses at once, so that the client (or
    // SageMaker's router, on a retry) tries another instance instead of waiting in this one's queue.
    throw withRequestId(
      ttsError(
        'TTS_ERR_BUSY',
        `The server has ${maxHttpStreams} streams in flight, its limit (MAX_HTTP_STREAMS); retry shortly`,
        { data: { retryAfterS: 1 } },
      ),
      options.requestId,
    );
  }
  const log = request.log.child({ requestId: options.requestId });
  const controller = new AbortController();
  const ended = lifecycle.beginHttp(options.requestId, () => {
    controller.abort();
    reply.raw.destroy();
  });
  reply.raw.on('close', () => {
    ended();
    if (reply.raw.writableFinished) return;
    controller.abort();
    recordClientGone(log, lifecycle.metrics, options.requestId, 'http');
  });
  // Only ids that are valid header text go into the header (the body of errors carries any id).
  if (HEADER_SAFE.test(options.requestId)) reply.header('x-request-id', options.requestId);

  const run = engine.synthesize(
    synthesisRequest(options),
    {
      format: options.format,
      sampleRate: options.sampleRate,
      ...(output.complete ? { complete: { maxBytes: output.limits.maxCompleteReplyBytes } } : {}),
      ...(output.onWords ? { onWords: output.onWords } : {}),
      ...(output.onPhonemes ? { onPhonemes: output.onPhonemes } : {}),
      ...(output.onMark ? { onMark: output.onMark } : {}),
    },
    { signal: controller.signal },
  );
  let recorded: RunFigures | undefined;
  return {
    run,
    options,
    signal: controller.signal,
    log,
    completed(transport) {
      if (recorded) return recorded;
      recorded = run.figures();
      recordCompletion(log, lifecycle.metrics, {
        route: 'http',
        requestId: options.requestId,
        format: options.format,
        chars: options.chars,
        figures: recorded,
        ...(transport ? { transport } : {}),
      });
      return recorded;
    },
  };
}

/**
 * Waits for the first audio (the whole file for a complete run). Undefined when the client went
 * away meanwhile; a failure is thrown tagged with the request id, for the route's error handler.
 */
export async function firstAudio(
  synthesis: HttpSynthesis,
  audio: AsyncIterator<Uint8Array>,
): Promise<IteratorResult<Uint8Array> | undefined> {
  try {
    return await audio.next();
  } catch (err) {
    if (synthesis.signal.aborted || isCancelled(err)) return undefined;
    throw withRequestId(err, synthesis.options.requestId);
  }
}

/**
 * The audio as a chunked body: the first result, then the rest as it is encoded. A failure after
 * the headers ends the body without its final chunk, which tells the client.
 */
export function audioBody(
  synthesis: HttpSynthesis,
  audio: AsyncIterator<Uint8Array>,
  first: IteratorResult<Uint8Array>,
): Readable {
  let ended = false;
  async function* rest(): AsyncGenerator<Uint8Array> {
    try {
      for (let next = first; !next.done; next = await audio.next()) yield next.value;
      ended = true;
      synthesis.completed();
    } catch (err) {
      ended = true;
      if (!synthesis.signal.aborted)
        synthesis.log.error({ err, ...synthesis.run.figures() }, 'synthesis failed after audio started');
      throw err;
    } finally {
      // The body was destroyed (the client left): end the run's iteration too, so its encoder is
      // given back rather than left waiting for a reader.
      if (!ended) void audio.return?.(undefined);
    }
  }
  const body = Readable.from(rest(), { objectMode: false });
  // Destroyed before it was read at all (a reply that failed as it started): `rest` never ran, so
  // its `finally` cannot give the run back; this does.
  body.once('close', () => {
    if (!ended) void audio.return?.(undefined);
  });
  return body;
}

/** Sends the audio streamed as it is synthesized, after the first audio is known. */
export async function sendAudioStream(
  reply: FastifyReply,
  synthesis: HttpSynthesis,
  contentType: string,
): Promise<FastifyReply> {
  const audio = synthesis.run[Symbol.asyncIterator]();
  const first = await firstAudio(synthesis, audio);
  if (!first) return reply; // the client went away
  return reply.type(contentType).send(audioBody(synthesis, audio, first));
}

/**
 * The synthesis with each piece of its audio turned into something else (base64 in a JSON line,
 * wider samples), so that the shared sender streams it: the status waits for the first piece, a
 * failure after it cuts the body, and the end is recorded once.
 */
export function mapAudio(
  synthesis: HttpSynthesis,
  map: (bytes: Uint8Array) => Uint8Array,
  end?: () => Uint8Array | undefined,
): HttpSynthesis {
  return withAudio(synthesis, async function* (run) {
    for await (const bytes of run) yield map(bytes);
    const last = end?.();
    if (last) yield last;
  });
}

/**
 * The synthesis with its audio in pieces of at most `maxBytes` (a multiple of the sample size, so
 * that every piece holds whole samples): a vendor's stream that sends its audio in bounded
 * messages, however long a sentence is.
 */
export function pieceAudio(synthesis: HttpSynthesis, maxBytes: number): HttpSynthesis {
  return withAudio(synthesis, async function* (run) {
    for await (const bytes of run) {
      for (let at = 0; at < bytes.length; at += maxBytes) yield bytes.subarray(at, at + maxBytes);
    }
  });
}

/** The synthesis with its run's audio as `audio` makes it of the run's own, figures unchanged. */
function withAudio(
  synthesis: HttpSynthesis,
  audio: (run: SynthesisRun) => AsyncGenerator<Uint8Array>,
): HttpSynthesis {
  const { run } = synthesis;
  return {
    ...synthesis,
    run: {
      figures: () => run.figures(),
      samplesSoFar: () => run.samplesSoFar(),
      [Symbol.asyncIterator]: () => audio(run),
    },
  };
}
