/**
 * docs/protocol.md is the living contract: its tables must say what the server really accepts and
 * sends. The error and format tables are compared with the registries the code uses; the options
 * table with the fields the parser reads; the control frames and SSE events with what a running
 * server sends.
 */
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readSse } from 'kokoro-stream-client';
import { ERROR_CODES, FORMATS, OPENAI_MODELS, OPENAI_VOICES } from '../../protocol/index.ts';
import type { Engine } from '../../dist/model/engine.js';
import { parseConfig } from '../../dist/server/config/config.js';
import { parseOptions } from '../../dist/server/http/request.js';
import { CARTESIA_VOICES } from '../../dist/server/dialects/cartesia/voices.js';
import { DEEPGRAM_VOICES } from '../../dist/server/dialects/deepgram/voices.js';
import { ELEVENLABS_VOICES } from '../../dist/server/dialects/elevenlabs/voices.js';
import { MARKS_AFTER, MARKS_BEFORE, VISEMES, VISEME_SYMBOLS } from '../../dist/model/text/visemes.js';
import { TIMESTAMPED_MODEL_DIR, sharedServer, TestClient, type TestServer } from './harness.ts';

const doc = readFileSync(new URL('../../docs/protocol.md', import.meta.url), 'utf8');

/** The rows of the first table under the heading `title` (any level), as arrays of cell texts. */
function table(title: string): string[][] {
  const start = doc.search(new RegExp(`^#+ ${title.replace(/[.*+?^${}()|[\]\\`]/g, '\\$&')}\\s*$`, 'm'));
  if (start < 0) throw new Error(`docs/protocol.md has no heading "${title}"`);
  const lines = doc.slice(start).split('\n');
  const first = lines.findIndex((l) => l.startsWith('|'));
  const rows: string[][] = [];
  for (const line of lines.slice(first + 2)) {
    if (!line.startsWith('|')) break;
    rows.push(
      line
        .slice(1, -1)
        .split(' | ')
        .map((c) => c.trim()),
    );
  }
  return rows;
}

/** `a`, `b` and `c` in a cell → ['a', 'b', 'c']. */
const ticked = (cell: string) => [...cell.matchAll(/`([^`]+)`/g)].map((m) => m[1]!);
const unticked = (cell: string) => ticked(cell)[0] ?? cell;

describe('docs/protocol.md against the code', () => {
  it('lists exactly the error codes the server can send, with their HTTP status', () => {
    const rows = table('Errors').map(([code, status]) => [unticked(code!), Number(status)]);
    const codes = Object.values(ERROR_CODES).map((e) => [e.code, e.status]);
    expect(rows.sort()).toEqual(codes.sort());
  });

  it('lists exactly the audio formats, with their rates, default rate and content type', () => {
    const rows = table('Audio formats').map(([format, rates, rate, type]) => [
      unticked(format!),
      rates!.split(', ').map(Number),
      Number(rate),
      unticked(type!),
    ]);
    const formats = Object.entries(FORMATS).map(([name, f]) => [
      name,
      [...f.rates],
      f.defaultRate,
      f.contentType(f.defaultRate),
    ]);
    expect(rows).toEqual(formats);
  });

  it('lists exactly the option fields the request parser reads', () => {
    const read = new Set<string>();
    const body = new Proxy({ text: 'Hello.' } as Record<string, unknown>, {
      get(target, key) {
        if (typeof key !== 'string') return undefined;
        read.add(key);
        return target[key];
      },
    });
    const engine = {
      voices: { resolve: () => ({ id: 'af_heart', lang: 'a' }) },
      info: { contract: { speedType: 'float32' }, formats: Object.keys(FORMATS) },
      readText: () => ({ warnings: [] }),
    } as unknown as Engine;
    parseOptions(body, { route: 'http', config: parseConfig({}), engine });
    const documented = table('Synthesis options').map(([field]) => unticked(field!));
    expect(documented.sort()).toEqual([...read].sort());
  });

  /** A cell's symbols: each in backticks, `space` for the space, `U+XXXX` by its code point. */
  const symbols = (cell: string) =>
    [
      ...ticked(cell),
      ...(/(^| )space( |$)/.test(cell) ? [' '] : []),
      ...[...cell.matchAll(/U\+([0-9A-F]{4})/g)].map((m) => String.fromCodePoint(parseInt(m[1]!, 16))),
    ].sort();

  it('maps Kokoro’s symbols to the visemes, with their ids, exactly as the phoneme timestamps do', () => {
    const rows = table('Visemes').map(([viseme, id, , cell]) => [
      unticked(viseme!),
      Number(id),
      symbols(cell!),
    ]);
    expect(rows).toEqual(VISEMES.map((v, i) => [v, i, [...VISEME_SYMBOLS[v]].sort()]));
    const marks = table('Phoneme marks').map(([, cell]) => symbols(cell!));
    expect(marks).toEqual([[...MARKS_BEFORE].sort(), [...MARKS_AFTER].sort()]);
  });
});

describe('docs/protocol.md against a running server', () => {
  let server: TestServer;
  beforeAll(async () => {
    // The timestamped stand-in, so that word timestamps are sent too.
    server = await sharedServer({ KOKORO_MODEL_DIR: TIMESTAMPED_MODEL_DIR });
  });
  afterAll(() => server.close());

  it('names every control frame type the WebSocket route sends, with its fields', async () => {
    const client = await TestClient.open(server.ws);
    // A mark, and a tag the server drops (so completion carries warnings).
    client.send({
      text: '<speak>One sentence. <mark name="m"/>And <foo>another</foo>.</speak>',
      request_id: 'doc-1',
      timestamps: true,
      phoneme_timestamps: true,
    });
    client.send({ text: 'Bad speed.', speed: 9, request_id: 'doc-2' });
    client.send({ type: 'cancel', request_id: 'doc-3' });
    await client.untilControls('error', 1);
    await client.untilControls('synthesis_complete', 1);
    await client.untilControls('synthesis_cancelled', 1);
    // A cancel that cuts a request in flight: its answer says what was heard.
    const long = `Codes ${Array.from({ length: 60 }, () => '987654321').join(', ')} end.`;
    client.send({ text: `${long} ${long}`, request_id: 'doc-4' });
    await client.untilControls('synthesis_start', 2);
    client.send({ type: 'cancel' });
    await client.untilControls('synthesis_cancelled', 2);
    expect(client.controls('synthesis_cancelled')[1]!.heard).toBeDefined();
    client.close();
    const sent = new Map<string, string[]>();
    for (const frame of client.controls()) sent.set(String(frame.type), Object.keys(frame).sort());
    const documented = new Map(
      table('Server to client').map(([type, , fields]) => [
        unticked(type!),
        ['type', ...ticked(fields!)].sort(),
      ]),
    );
    expect(sent).toEqual(documented);
  });

  it('names every message Flux’s dialect (/v2/speak) sends, with its fields', async () => {
    const base = server.ws.replace(/\/invocations-bidirectional-stream$/, '');
    const client = await TestClient.open(`${base}/v2/speak?model=flux-alexis-en`);
    client.send({ type: 'Interrupt' }, false); // no turn: a Warning
    client.send({ type: 'Speak', text: 'Hello there. A second sentence.' }, false);
    client.send({ type: 'Flush' }, false);
    await client.untilControls('Flushed', 1);
    // A turn cut while open: its answer says what was heard.
    client.send({ type: 'Speak', text: 'A turn cut before its flush. More to come' }, false);
    await client.until((c) => c.frames.at(-1)?.kind === 'audio', 'the cut turn’s audio');
    client.send({ type: 'Interrupt' }, false);
    await client.untilControls('SpeechInterrupted', 1);
    client.send({ type: 'Close' }, false);
    expect(await client.closed()).toBe(1000);
    const sent = new Map<string, string[]>();
    for (const frame of client.controls()) sent.set(String(frame.type), Object.keys(frame).sort());
    const documented = new Map(
      table("Flux's messages to the client").map(([type, fields]) => [
        unticked(type!),
        ['type', ...ticked(fields!)].sort(),
      ]),
    );
    // A failure of the server's cannot be provoked on a healthy one: the Error frame is checked by
    // its fields in the dialect's unit tests.
    expect(documented.get('Error')).toEqual(['code', 'description', 'type']);
    documented.delete('Error');
    expect(sent).toEqual(documented);
  });

  it('names every SSE event, with the fields of its data', async () => {
    const events = new Map<string, string[]>();
    const response = await fetch(`${server.http}/invocations`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'text/event-stream' },
      body: JSON.stringify({
        text: '<speak>Hello there. <mark name="m"/>How are <foo>you</foo>?</speak>',
        timestamps: true,
        phoneme_timestamps: true,
      }),
    });
    for await (const event of readSse(response.body!)) {
      events.set(event.event, Object.keys(JSON.parse(event.data) as object).sort());
    }
    const documented = new Map(
      table('Server-Sent Events (`transport: "sse"`)').map(([name, data]) => [
        unticked(name!),
        ticked(data!)
          .filter((f) => !f.includes(' '))
          .sort(),
      ]),
    );
    // A failure after the stream began cannot be provoked on a healthy server: the error event is
    // checked by its fields in the invocations tests; here every other event must match.
    expect(documented.get('error')).toEqual(['code', 'message', 'request_id']);
    documented.delete('error');
    expect(events).toEqual(documented);
  });

  it('maps exactly the vendors’ voice ids the code maps, to the same Kokoro voices', () => {
    const rows = table('Vendor voices');
    const of = (vendor: string) =>
      Object.fromEntries(
        rows.filter(([v]) => v === vendor).map(([, id, , voice]) => [unticked(id!), unticked(voice!)]),
      );
    expect(of('ElevenLabs')).toEqual(ELEVENLABS_VOICES);
    expect(of('Cartesia')).toEqual(CARTESIA_VOICES);
    expect(of('Deepgram')).toEqual(DEEPGRAM_VOICES);
    expect(new Set(rows.map(([vendor]) => vendor))).toEqual(new Set(['ElevenLabs', 'Cartesia', 'Deepgram']));
  });

  it('maps exactly OpenAI’s voice names, to the Kokoro voices the code maps them to', () => {
    const documented = Object.fromEntries(
      table('OpenAI voices').map(([name, id]) => [unticked(name!), unticked(id!)]),
    );
    expect(documented).toEqual(OPENAI_VOICES);
  });

  it('names the OpenAI model ids the speech route accepts', () => {
    const modelRow = table('`POST /v1/audio/speech`').find(([field]) => unticked(field!) === 'model')!;
    expect(
      ticked(modelRow[2]!).filter((id) => !/\d{4}-\d{2}-\d{2}/.test(id) && id !== 'model_not_found'),
    ).toEqual([...OPENAI_MODELS]);
  });

  it('names every OpenAI speech event, with the fields of its data', async () => {
    const response = await fetch(`${server.http}/v1/audio/speech`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'kokoro', input: 'Hello there. How are you?', stream_format: 'sse' }),
    });
    const events = new Map<string, string[]>();
    for await (const event of readSse(response.body!)) {
      events.set(event.event, Object.keys(JSON.parse(event.data) as object).sort());
    }
    const documented = new Map(
      table('Speech events').map(([name, data]) => [unticked(name!), ticked(data!).sort()]),
    );
    // As for /invocations, the error event cannot be provoked on a healthy server.
    expect(documented.get('error')).toEqual(['error', 'type']);
    documented.delete('error');
    expect(events).toEqual(documented);
  });
});
