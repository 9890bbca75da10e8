/**
 * POST /invocations: one input, audio streamed back sentence by sentence as it is synthesized —
 * raw bytes with chunked transfer, or Server-Sent Events carrying base64 audio — or one complete
 * file with `stream: false`.
 */
import { Readable } from 'node:stream';
import type { FastifyBaseLogger, FastifyPluginAsync } from 'fastify';
import { wavHeader } from '../../model/audio/pcm.ts';
import type { Engine } from '../../model/engine.ts';
import { FORMATS } from '../../protocol/formats.ts';
import { formatSseEvent } from '../../protocol/sse.ts';
import type { Config } from '../config.ts';
import { toErrorBody, ttsError, withRequestId } from '../errors.ts';
import type { Lifecycle } from '../lifecycle.ts';
import { PlainText, parseOptions, peekRequestId, type SynthesisOptions } from '../request.ts';
import type { Metrics } from '../metrics.ts';
import { RunStats, encodedAudio, isCancelled } from '../synthesis.ts';

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
    const ended = lifecycle.beginHttp(() => {
      controller.abort();
      reply.raw.destroy();
    });
    reply.raw.on('close', () => {
      ended();
      if (!reply.raw.writableFinished) controller.abort();
    });
    // Only ids that are valid header text go into the header (the body of errors carries any id).
    if (HEADER_SAFE.test(options.requestId)) reply.header('x-request-id', options.requestId);

    const stats = new RunStats();
    if (options.transport === 'sse') {
      reply.header('cache-control', 'no-cache').header('x-accel-buffering', 'no');
      return reply
        .type('text/event-stream; charset=utf-8')
        .send(Readable.from(sseStream(engine, options, stats, controller.signal, log, lifecycle.metrics)));
    }

    const contentType = FORMATS[options.format].contentType(options.sampleRate);
    if (!options.stream) {
      // One complete file. WAV gets its real sizes, so it is built from raw PCM here.
      const parts: Uint8Array[] = [];
      const asPcm = options.format === 'wav' ? { ...options, format: 'pcm' as const } : options;
      try {
        for await (const part of encodedAudio(engine, asPcm, stats, controller.signal)) parts.push(part);
      } catch (err) {
        if (controller.signal.aborted || isCancelled(err)) return reply; // the client went away
        throw withRequestId(err, options.requestId);
      }
      const data = Buffer.concat(parts);
      const summary = stats.summary();
      log.info({ chars: options.chars, ...summary }, 'synthesized');
      lifecycle.metrics.observe('http', options.format, summary);
      return reply
        .type(contentType)
        .send(
          options.format === 'wav' ? Buffer.concat([wavHeader(data.length, options.sampleRate), data]) : data,
        );
    }

    const audio = encodedAudio(engine, options, stats, controller.signal);
    // Wait for the first audio before committing to 200: an error before it is still a clean 4xx/5xx.
    let first: IteratorResult<Uint8Array>;
    try {
      first = await audio.next();
    } catch (err) {
      throw withRequestId(err, options.requestId);
    }

    async function* rest(): AsyncGenerator<Uint8Array> {
      try {
        if (!first.done) yield first.value;
        for await (const part of audio) yield part;
        const summary = stats.summary();
        log.info({ chars: options.chars, ...summary }, 'synthesized');
        lifecycle.metrics.observe('http', options.format, summary);
      } catch (err) {
        // Headers are out: the stream ends without its final chunk, which tells the client.
        if (!controller.signal.aborted)
          log.error({ err, ...stats.summary() }, 'synthesis failed after audio started');
        throw err;
      }
    }
    return reply.type(contentType).send(Readable.from(rest(), { objectMode: false }));
  });
};

/**
 * The SSE body: `audio_stream_start` at once (before inference), one `audio_chunk` per encoded
 * buffer (whole frames, base64), then `audio_stream_end`, or `error` if synthesis fails.
 */
async function* sseStream(
  engine: Engine,
  options: SynthesisOptions,
  stats: RunStats,
  signal: AbortSignal,
  log: FastifyBaseLogger,
  metrics: Metrics,
): AsyncGenerator<string> {
  const request_id = options.requestId;
  yield formatSseEvent('audio_stream_start', {
    request_id,
    format: options.format,
    voice: options.voice.key,
    sample_rate: options.sampleRate,
  });
  let seq = 0;
  try {
    for await (const bytes of encodedAudio(engine, options, stats, signal)) {
      yield formatSseEvent('audio_chunk', {
        request_id,
        seq: seq++,
        data: Buffer.from(bytes).toString('base64'),
      });
    }
  } catch (err) {
    if (signal.aborted || isCancelled(err)) return;
    const { status, body } = toErrorBody(err, request_id);
    if (status >= 500)
      log.error({ err, ...stats.summary() }, 'synthesis failed after the event stream began');
    yield formatSseEvent('error', { request_id, code: body.code, message: body.message });
    return;
  }
  const summary = stats.summary();
  log.info({ chars: options.chars, transport: 'sse', ...summary }, 'synthesized');
  metrics.observe('http', options.format, summary);
  yield formatSseEvent('audio_stream_end', { request_id, total_chunks: seq, duration_s: summary.audioS });
}
