/**
 * POST /invocations: one input, audio streamed back sentence by sentence as it is synthesized —
 * raw bytes with chunked transfer, or Server-Sent Events carrying base64 audio — or one complete
 * file with `stream: false`.
 */
import { Readable } from 'node:stream';
import type { FastifyBaseLogger, FastifyPluginAsync } from 'fastify';
import type { RunFigures, SynthesisRun, WordTiming } from '../../model/engine.ts';
import { FORMATS } from '../../protocol/formats.ts';
import { formatSseEvent } from '../../protocol/sse.ts';
import type { Config } from '../config.ts';
import { toErrorBody, ttsError, withRequestId } from '../errors.ts';
import type { Lifecycle } from '../lifecycle.ts';
import {
  PlainText,
  parseOptions,
  peekRequestId,
  synthesisRequest,
  type SynthesisOptions,
} from '../request.ts';
import { isCancelled, recordClientGone, recordCompletion } from '../outcomes.ts';

const HEADER_SAFE = /^[\x20-\x7e]+$/;

function wantsSse(accept: string | undefined): boolean {
  return accept !== undefined && /(^|,)\s*text\/event-stream\s*(;|,|$)/i.test(accept);
}

export const invocationRoutes: FastifyPluginAsync<{ config: Config; lifecycle: Lifecycle }> = async (
  app,
  { config, lifecycle },
) => {
  app.post('/invocations', async (request, reply) => {
    const engine = lifecycle.requireEngine();
    const body = request.body;
    let fields: Record<string, unknown>;
    if (body instanceof PlainText) fields = { text: body.text };
    else if (body !== null && typeof body === 'object' && !Array.isArray(body))
      fields = body as Record<string, unknown>;
    else {
      throw ttsError(
        'TTS_ERR_BAD_REQUEST',
        `The JSON body should be an object such as {"text": "Hello"}; got ${Array.isArray(body) ? 'an array' : body === null ? 'null' : typeof body}`,
      );
    }
    const requestId = peekRequestId(fields);
    let options: SynthesisOptions;
    try {
      options = parseOptions(fields, {
        route: 'http',
        config,
        engine,
        defaultTransport: wantsSse(request.headers.accept) ? 'sse' : 'binary',
      });
    } catch (err) {
      throw withRequestId(err, requestId);
    }
    const log = request.log.child({ requestId: options.requestId });

    // Stop synthesizing for a client that went away.
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

    // With timestamps (SSE only), each chunk's words wait here until its audio event goes out.
    const words: (readonly WordTiming[])[] = [];
    const run = engine.synthesize(
      synthesisRequest(options),
      {
        format: options.format,
        sampleRate: options.sampleRate,
        complete: !options.stream,
        ...(options.timestamps ? { onWords: (w: readonly WordTiming[]) => words.push(w) } : {}),
      },
      { signal: controller.signal },
    );
    /** Records the end of the run once; returns its figures. */
    const completed = (transport?: 'sse'): RunFigures => {
      const figures = run.figures();
      recordCompletion(log, lifecycle.metrics, {
        route: 'http',
        requestId: options.requestId,
        format: options.format,
        chars: options.chars,
        figures,
        ...(transport ? { transport } : {}),
      });
      return figures;
    };

    if (options.transport === 'sse') {
      reply.header('cache-control', 'no-cache').header('x-accel-buffering', 'no');
      return reply
        .type('text/event-stream; charset=utf-8')
        .send(Readable.from(sseStream(run, words, options, controller.signal, log, () => completed('sse'))));
    }

    const audio = run[Symbol.asyncIterator]();
    // Wait for the first audio (the whole file with `stream: false`) before committing to 200: an
    // error before it is still a clean 4xx/5xx.
    let first: IteratorResult<Uint8Array>;
    try {
      first = await audio.next();
    } catch (err) {
      if (controller.signal.aborted || isCancelled(err)) return reply; // the client went away
      throw withRequestId(err, options.requestId);
    }
    const contentType = FORMATS[options.format].contentType(options.sampleRate);
    if (!options.stream) {
      // One complete file: its figures are known before the body goes out, so they travel as
      // headers (as the reference container sends them).
      const figures = completed();
      reply
        .header('X-Audio-Duration', String(figures.audioS))
        .header('X-Inference-Time-Ms', String(figures.inferenceMs))
        .header('X-RTF', String(figures.rtf))
        .header('X-Characters-Processed', String(options.chars));
      return reply.type(contentType).send(first.done ? Buffer.alloc(0) : Buffer.from(first.value));
    }

    async function* rest(): AsyncGenerator<Uint8Array> {
      try {
        for (let next = first; !next.done; next = await audio.next()) yield next.value;
        completed();
      } catch (err) {
        // Headers are out: the stream ends without its final chunk, which tells the client.
        if (!controller.signal.aborted)
          log.error({ err, ...run.figures() }, 'synthesis failed after audio started');
        throw err;
      }
    }
    return reply.type(contentType).send(Readable.from(rest(), { objectMode: false }));
  });
};

/**
 * The SSE body: `audio_stream_start` at once (before inference), one `audio_chunk` per encoded
 * buffer (whole frames, base64), each after the `word_timestamps` of its chunk when asked for, then
 * `audio_stream_end`, or `error` if synthesis fails.
 */
async function* sseStream(
  run: SynthesisRun,
  words: (readonly WordTiming[])[],
  options: SynthesisOptions,
  signal: AbortSignal,
  log: FastifyBaseLogger,
  completed: () => RunFigures,
): AsyncGenerator<string> {
  const request_id = options.requestId;
  yield formatSseEvent('audio_stream_start', {
    request_id,
    format: options.format,
    voice: options.voiceSpec,
    sample_rate: options.sampleRate,
  });
  let seq = 0;
  try {
    for await (const bytes of run) {
      for (const chunk of words.splice(0))
        yield formatSseEvent('word_timestamps', { request_id, words: chunk });
      yield formatSseEvent('audio_chunk', {
        request_id,
        seq: seq++,
        data: Buffer.from(bytes).toString('base64'),
      });
    }
  } catch (err) {
    if (signal.aborted || isCancelled(err)) return;
    const { status, body } = toErrorBody(err, request_id);
    if (status >= 500) log.error({ err, ...run.figures() }, 'synthesis failed after the event stream began');
    yield formatSseEvent('error', { request_id, code: body.code, message: body.message });
    return;
  }
  for (const chunk of words.splice(0)) yield formatSseEvent('word_timestamps', { request_id, words: chunk });
  const { audioS } = completed();
  yield formatSseEvent('audio_stream_end', { request_id, total_chunks: seq, duration_s: audioS });
}
