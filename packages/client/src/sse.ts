/**
 * A Server-Sent Events reader that reassembles events across arbitrary transport boundaries
 * (SageMaker may deliver one event in several parts, or several in one), plus the decoding of this
 * server's audio events.
 */

export interface SseEvent {
  /** The `event:` field; `message` when absent. */
  readonly event: string;
  /** The `data:` lines joined with newlines. */
  readonly data: string;
  readonly id?: string;
}

/**
 * Incremental parser (the WHATWG event-stream rules): feed bytes or text as they arrive, get the
 * events each piece completes. UTF-8 sequences and line endings (`\n`, `\r\n`, `\r`) split across
 * pieces are handled.
 */
export class SseParser {
  readonly #decoder = new TextDecoder('utf-8');
  #buffer = '';
  #event = '';
  #data: string[] = [];
  #id: string | undefined;
  #hasData = false;
  /** A piece ended in `\r`: a `\n` starting the next one belongs to the same line ending. */
  #pendingCr = false;

  push(piece: Uint8Array | string): SseEvent[] {
    let text = typeof piece === 'string' ? piece : this.#decoder.decode(piece, { stream: true });
    if (this.#pendingCr && text.startsWith('\n')) text = text.slice(1);
    this.#pendingCr = false;
    this.#buffer += text;
    return this.#drain(false);
  }

  /** End of stream: an event without its closing blank line is dropped, as the standard says. */
  end(): SseEvent[] {
    this.#buffer += this.#decoder.decode();
    return this.#drain(true);
  }

  #drain(final: boolean): SseEvent[] {
    const events: SseEvent[] = [];
    let start = 0;
    for (;;) {
      let i = start;
      while (i < this.#buffer.length && this.#buffer[i] !== '\n' && this.#buffer[i] !== '\r') i++;
      if (i >= this.#buffer.length) break;
      const line = this.#buffer.slice(start, i);
      if (this.#buffer[i] === '\r') {
        if (i + 1 < this.#buffer.length) start = this.#buffer[i + 1] === '\n' ? i + 2 : i + 1;
        else {
          start = i + 1;
          this.#pendingCr = true;
        }
      } else start = i + 1;
      const event = this.#line(line);
      if (event) events.push(event);
    }
    this.#buffer = final ? '' : this.#buffer.slice(start);
    return events;
  }

  #line(line: string): SseEvent | undefined {
    if (line === '') {
      if (!this.#hasData) {
        this.#event = '';
        return undefined;
      }
      const event: SseEvent = {
        event: this.#event || 'message',
        data: this.#data.join('\n'),
        ...(this.#id !== undefined ? { id: this.#id } : {}),
      };
      this.#event = '';
      this.#data = [];
      this.#hasData = false;
      return event;
    }
    if (line.startsWith(':')) return undefined; // comment
    const colon = line.indexOf(':');
    const field = colon < 0 ? line : line.slice(0, colon);
    let value = colon < 0 ? '' : line.slice(colon + 1);
    if (value.startsWith(' ')) value = value.slice(1);
    if (field === 'event') this.#event = value;
    else if (field === 'data') {
      this.#data.push(value);
      this.#hasData = true;
    } else if (field === 'id' && !value.includes('\0')) this.#id = value;
    return undefined;
  }
}

/** Reads events from a byte stream (a fetch body, an SDK event stream mapped to bytes…). */
export async function* readSse(body: AsyncIterable<Uint8Array | string>): AsyncGenerator<SseEvent> {
  const parser = new SseParser();
  for await (const piece of body) yield* parser.push(piece);
  yield* parser.end();
}

/** This server's SSE events, decoded. */
export type AudioStreamEvent =
  | { type: 'audio_stream_start'; request_id: string; format: string; voice: string; sample_rate: number }
  | { type: 'audio_chunk'; request_id: string; seq: number; audio: Uint8Array }
  | { type: 'audio_stream_end'; request_id: string; total_chunks: number; duration_s: number }
  | { type: 'error'; request_id?: string; code: string; message: string }
  | { type: 'unknown'; event: string; data: string };

/** Decodes one SSE event of this server; `audio_chunk` base64 becomes bytes. */
export function decodeAudioEvent(event: SseEvent): AudioStreamEvent {
  let data: Record<string, unknown>;
  try {
    data = JSON.parse(event.data) as Record<string, unknown>;
  } catch {
    return { type: 'unknown', event: event.event, data: event.data };
  }
  switch (event.event) {
    case 'audio_chunk':
      return {
        type: 'audio_chunk',
        request_id: String(data.request_id),
        seq: Number(data.seq),
        audio: base64ToBytes(String(data.data)),
      };
    case 'audio_stream_start':
      return {
        type: 'audio_stream_start',
        ...(data as Omit<Extract<AudioStreamEvent, { type: 'audio_stream_start' }>, 'type'>),
      };
    case 'audio_stream_end':
      return {
        type: 'audio_stream_end',
        ...(data as Omit<Extract<AudioStreamEvent, { type: 'audio_stream_end' }>, 'type'>),
      };
    case 'error':
      return { type: 'error', ...(data as Omit<Extract<AudioStreamEvent, { type: 'error' }>, 'type'>) };
    default:
      return { type: 'unknown', event: event.event, data: event.data };
  }
}

/** Base64 to bytes in any JavaScript runtime (no Buffer needed). */
export function base64ToBytes(b64: string): Uint8Array {
  const binary = atob(b64);
  const out = new Uint8Array(binary.length);
  for (let i = 0; i < binary.length; i++) out[i] = binary.charCodeAt(i);
  return out;
}
