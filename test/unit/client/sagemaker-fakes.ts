/**
 * What the SageMaker client tests share: a fake of the HTTP/2 bidirectional client that records
 * what it is sent and answers through a channel, payload parts as SageMaker delivers them, and
 * answers recorded from the container.
 */
import type {
  BidiCommandFactory,
  BidiInvokeInput,
  BidiPayloadPart,
  BidiResponseEvent,
  BidiStreamClient,
} from '../../../packages/client/src/sagemaker.ts';

export const utf8 = new TextEncoder();
export const fromUtf8 = new TextDecoder();

/** A push-fed async iterable: the fake's response stream. */
class Channel<T> implements AsyncIterable<T> {
  readonly #items: T[] = [];
  readonly #waiters: {
    resolve: (result: IteratorResult<T, undefined>) => void;
    reject: (err: unknown) => void;
  }[] = [];
  #ended = false;
  #error: unknown;

  push(...items: T[]): void {
    for (const item of items) {
      const waiter = this.#waiters.shift();
      if (waiter) waiter.resolve({ value: item, done: false });
      else this.#items.push(item);
    }
  }

  end(): void {
    this.#ended = true;
    for (const waiter of this.#waiters.splice(0)) {
      if (this.#error !== undefined) waiter.reject(this.#error);
      else waiter.resolve({ value: undefined, done: true });
    }
  }

  /** Makes the iterator throw once the backlog is read, as the SDK does for exception events. */
  fail(error: unknown): void {
    this.#error = error;
    this.end();
  }

  [Symbol.asyncIterator](): AsyncIterator<T, undefined> {
    return {
      next: async () => {
        if (this.#items.length > 0) return { value: this.#items.shift() as T, done: false };
        if (this.#ended) {
          if (this.#error !== undefined) throw this.#error;
          return { value: undefined, done: true };
        }
        return new Promise((resolve, reject) => this.#waiters.push({ resolve, reject }));
      },
    };
  }
}

export type Message = Record<string, unknown>;

/**
 * Stands in for `SageMakerRuntimeHTTP2Client`: records every request part (by iterating the request
 * Body as the SDK would), hands each complete message to `onMessage`, and answers through a channel.
 */
export class FakeBidiClient implements BidiStreamClient {
  readonly parts: BidiPayloadPart[] = [];
  readonly messages: Message[] = [];
  readonly response = new Channel<BidiResponseEvent>();
  input: BidiInvokeInput | undefined;
  abortSignal: AbortSignal | undefined;
  bodyDone = false;
  #bodyEnded!: () => void;
  readonly bodyEnded = new Promise<void>((resolve) => {
    this.#bodyEnded = resolve;
  });

  constructor(private readonly onMessage: (message: Message, fake: FakeBidiClient) => void = () => {}) {}

  async send(command: object, options?: { abortSignal?: AbortSignal }): Promise<unknown> {
    const { input } = command as { input: BidiInvokeInput };
    this.input = input;
    this.abortSignal = options?.abortSignal;
    void (async () => {
      for await (const event of input.Body) {
        this.parts.push(event.PayloadPart);
        const message = JSON.parse(fromUtf8.decode(event.PayloadPart.Bytes as Uint8Array)) as Message;
        this.messages.push(message);
        this.onMessage(message, this);
      }
      this.bodyDone = true;
      this.#bodyEnded();
    })();
    return { Body: this.response };
  }
}

export const commandFactory: BidiCommandFactory = (input) => ({ input });

export const part = (
  bytes: Uint8Array | string,
  DataType?: 'BINARY' | 'UTF8',
  CompletionState?: 'PARTIAL' | 'COMPLETE',
): BidiResponseEvent => ({
  PayloadPart: {
    Bytes: typeof bytes === 'string' ? utf8.encode(bytes) : bytes,
    ...(DataType ? { DataType } : {}),
    ...(CompletionState ? { CompletionState } : {}),
  },
});
export const control = (message: Message): BidiResponseEvent =>
  part(JSON.stringify(message), 'UTF8', 'COMPLETE');
export const pcm = (samples: number, seed: number): Uint8Array => {
  const out = new Uint8Array(samples * 2);
  for (let i = 0; i < out.length; i++) out[i] = (i * 7 + seed) & 0xff;
  return out;
};

export async function collect<T>(iterable: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const item of iterable) out.push(item);
  return out;
}

/**
 * The shape recorded from the container through SageMaker: control frames as UTF8 parts, audio as
 * BINARY parts; fragmented frames arrive as PARTIAL parts closed by a COMPLETE part.
 */
export function recordedAnswers(ids: readonly string[]): {
  events: BidiResponseEvent[];
  audio: Uint8Array[][];
} {
  const [first, second] = ids as [string, string];
  const a1 = pcm(2400, 1);
  const a2 = pcm(1200, 2);
  // Starts with "{" (0x7b) but is not JSON: audio by the contract's rule.
  const a3 = pcm(600, 3);
  a3[0] = 0x7b;
  const complete1 = JSON.stringify({
    type: 'synthesis_complete',
    request_id: first,
    total_duration_s: 0.15,
    elapsed_s: 0.02,
    rtf: 0.13,
  });
  const events: BidiResponseEvent[] = [
    control({ type: 'synthesis_start', request_id: first }),
    part(a1, 'BINARY', 'COMPLETE'),
    part(a2.subarray(0, 1000), 'BINARY', 'PARTIAL'),
    part(a2.subarray(1000, 1801), 'BINARY', 'PARTIAL'),
    part(a2.subarray(1801), 'BINARY', 'COMPLETE'),
    part(complete1.slice(0, 25), 'UTF8', 'PARTIAL'),
    part(complete1.slice(25), 'UTF8', 'COMPLETE'),
    // The second answer omits the optional synthesis_start, leaves CompletionState out (COMPLETE by
    // default) and sends its control frame as BINARY: the fallback rule must still find it.
    part(a3),
    part(
      JSON.stringify({
        type: 'synthesis_complete',
        request_id: second,
        total_duration_s: 0.025,
        elapsed_s: 0.01,
      }),
      'BINARY',
    ),
    control({ type: 'some_future_frame', request_id: second }),
  ];
  return { events, audio: [[a1, a2], [a3]] };
}
