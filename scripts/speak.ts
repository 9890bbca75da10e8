/**
 * Speaks text through a running server and writes a WAV: a text argument, a file, or standard
 * input read line by line as it arrives (pipe an LLM's output into it). Sentences go to the server
 * as soon as they are complete, over one WebSocket session, with a progress line on stderr.
 *
 * Usage:
 *   npm run speak -- "Hello there. How are you?" [--out hello.wav] [--voice af_heart] [--url ws://…]
 *   npm run speak -- --file story.txt --out story.wav
 *   some-llm | npm run speak -- --out answer.wav
 */
import { createReadStream, writeFileSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { parseArgs } from 'node:util';
import { IncrementalSentenceChunker, TtsSession } from 'kokoro-stream-client';
import { wavFile } from '../model/audio/wav.ts';
import { runMain } from './lib/cli.ts';

const HELP = `Usage: npm run speak -- [TEXT] [--file PATH] [--out speech.wav] [--voice af_heart] [--speed 1]
                     [--url ws://127.0.0.1:8080/invocations-bidirectional-stream]
Without TEXT or --file, reads standard input line by line.`;

/** The text source as a stream of pieces: the argument, a file's lines, or stdin's lines. */
async function* source(text: string | undefined, file: string | undefined): AsyncGenerator<string> {
  if (text !== undefined) {
    yield text;
    return;
  }
  const lines = createInterface({
    input: file ? createReadStream(file) : process.stdin,
    crlfDelay: Infinity,
  });
  for await (const line of lines) yield `${line}\n`;
}

async function main(): Promise<number> {
  const { values, positionals } = parseArgs({
    allowPositionals: true,
    options: {
      file: { type: 'string' },
      out: { type: 'string', default: 'speech.wav' },
      voice: { type: 'string' },
      speed: { type: 'string' },
      url: { type: 'string', default: 'ws://127.0.0.1:8080/invocations-bidirectional-stream' },
      help: { type: 'boolean', short: 'h' },
    },
  });
  if (values.help) {
    process.stdout.write(`${HELP}\n`);
    return 0;
  }
  const url = values.url!.startsWith('http')
    ? `${values.url!.replace(/^http/, 'ws').replace(/\/$/, '')}/invocations-bidirectional-stream`
    : values.url!;
  const options = {
    ...(values.voice ? { voice: values.voice } : {}),
    ...(values.speed ? { speed: Number(values.speed) } : {}),
    format: 'pcm' as const,
  };
  let session: TtsSession;
  try {
    session = await TtsSession.connect(url);
  } catch (err) {
    process.stderr.write(
      `cannot connect to ${url}: ${(err as Error).message}. Is the server running (npm start)?\n`,
    );
    return 1;
  }

  const started = performance.now();
  const pcm: Uint8Array[] = [];
  let sent = 0;
  let done = 0;
  let failed = 0;
  let audioBytes = 0;
  let inputDone = false;
  const progress = () => {
    const line = `sentences ${done}/${sent}${failed ? ` (${failed} failed)` : ''}, audio ${(audioBytes / 48000).toFixed(1)} s, ${((performance.now() - started) / 1000).toFixed(1)} s elapsed`;
    process.stderr.write(process.stderr.isTTY ? `\r${line}\x1b[K` : `${line}\n`);
  };

  const reader = (async () => {
    for await (const event of session.events()) {
      if (event.type === 'audio') {
        pcm.push(event.bytes);
        audioBytes += event.bytes.length;
      } else if (event.type === 'complete' || event.type === 'error') {
        done++;
        if (event.type === 'error') {
          failed++;
          process.stderr.write(`\nsentence failed: ${event.code}: ${event.message}\n`);
        }
        progress();
      } else if (event.type === 'closed') break;
      if (inputDone && done === sent) break;
    }
  })();

  const chunker = new IncrementalSentenceChunker();
  const send = (sentence: string) => {
    sent++;
    session.send(sentence, options);
  };
  for await (const piece of source(positionals.join(' ') || undefined, values.file))
    chunker.feed(piece).forEach(send);
  chunker.flush().forEach(send);
  inputDone = true;
  if (sent === 0) {
    process.stderr.write('nothing to speak\n');
    await session.close();
    return 1;
  }
  await reader;
  await session.close().catch(() => undefined);
  const data = Buffer.concat(pcm);
  writeFileSync(values.out!, wavFile(data));
  if (process.stderr.isTTY) process.stderr.write('\n');
  process.stdout.write(
    `wrote ${values.out} (${(data.length / 48000).toFixed(1)} s of audio, ${sent} sentences)\n`,
  );
  return failed > 0 ? 1 : 0;
}

runMain(import.meta.url, 'speak', () => main());
