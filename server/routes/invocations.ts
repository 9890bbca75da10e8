/**
 * POST /invocations: one input, audio streamed back sentence by sentence as it is synthesized
 * (chunked transfer), or one complete file with `stream: false`.
 */
import { Readable } from 'node:stream';
import type { FastifyPluginAsync } from 'fastify';
import { FORMATS, wavHeader } from '../../model/audio.ts';
import type { Config } from '../config.ts';
import { ttsError, withRequestId } from '../errors.ts';
import type { Lifecycle } from '../lifecycle.ts';
import { PlainText, parseOptions, peekRequestId } from '../options.ts';
import { RunStats, encodedAudio } from '../synthesis.ts';

const HEADER_SAFE = /^[\x20-\x7e]+$/;

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
    let options;
    try {
      options = parseOptions(fields, { route: 'http', config, engine });
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

    const stats = new RunStats();
    const contentType = FORMATS[options.format](options.sampleRate);
    // Only ids that are valid header text go into the header (the body of errors carries any id).
    if (HEADER_SAFE.test(options.requestId)) reply.header('x-request-id', options.requestId);

    if (!options.stream) {
      // One complete file: encode as raw PCM and put real sizes in the WAV header.
      const pcm: Buffer[] = [];
      try {
        for await (const part of encodedAudio(
          engine,
          { ...options, format: 'pcm' },
          stats,
          controller.signal,
        ))
          pcm.push(part);
      } catch (err) {
        if (controller.signal.aborted) return reply; // the client went away: nobody to answer
        throw withRequestId(err, options.requestId);
      }
      const data = Buffer.concat(pcm);
      log.info({ chars: options.chars, ...stats.summary() }, 'synthesized');
      return reply
        .type(contentType)
        .send(
          options.format === 'wav' ? Buffer.concat([wavHeader(data.length, options.sampleRate), data]) : data,
        );
    }

    const audio = encodedAudio(engine, options, stats, controller.signal);
    // Wait for the first audio before committing to 200: an error before it is still a clean 4xx/5xx.
    let first: IteratorResult<Buffer>;
    try {
      first = await audio.next();
    } catch (err) {
      throw withRequestId(err, options.requestId);
    }

    async function* rest(): AsyncGenerator<Buffer> {
      try {
        if (!first.done) yield first.value;
        for await (const part of audio) yield part;
        log.info({ chars: options!.chars, ...stats.summary() }, 'synthesized');
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
