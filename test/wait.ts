/**
 * Waiting in tests: on a condition, an event or a message, each with a deadline of its own that
 * names what was awaited, so a test that waits in vain fails at once with a reason rather than at
 * the test's timeout. A fixed pause is for one thing only: a test that nothing happens for a while.
 */
import type { EventEmitter } from 'node:events';
import type WebSocket from 'ws';

export interface WaitOptions {
  /** How long to wait before failing (default 10 s). */
  readonly timeoutMs?: number;
  /** What is awaited, for the failure's message (a function is called when it fails). */
  readonly what?: string | (() => string);
}

const named = (what: string | (() => string)) => (typeof what === 'function' ? what() : what);

const DEFAULT_TIMEOUT_MS = 10_000;

function describeValue(value: unknown): string {
  try {
    const text = JSON.stringify(value);
    return (text ?? String(value)).slice(0, 500);
  } catch {
    return String(value);
  }
}

/**
 * Reads `check` every `intervalMs` (default 10 ms) until its value is truthy (or `until` holds of
 * it), and resolves with that value; past the deadline it fails naming `what` and the last value.
 */
export async function waitFor<T>(
  check: () => T | Promise<T>,
  options: WaitOptions & { readonly intervalMs?: number; readonly until?: (value: T) => boolean } = {},
): Promise<T> {
  const { timeoutMs = DEFAULT_TIMEOUT_MS, what = 'a condition', intervalMs = 10, until = Boolean } = options;
  const deadline = performance.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (until(value)) return value;
    if (performance.now() > deadline) {
      throw new Error(
        `timed out after ${timeoutMs} ms waiting for ${named(what)}; last value: ${describeValue(value)}`,
      );
    }
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
  }
}

/**
 * The next `name` event of `emitter` for which `accept` holds (any, by default): its arguments. An
 * `error` event before it rejects, unless `name` is `error`.
 */
export function nextEvent<A extends unknown[] = unknown[]>(
  emitter: EventEmitter,
  name: string,
  options: WaitOptions & { readonly accept?: (...args: A) => boolean } = {},
): Promise<A> {
  const { timeoutMs = DEFAULT_TIMEOUT_MS, what = `the '${name}' event`, accept } = options;
  return new Promise<A>((resolve, reject) => {
    const finish = () => {
      clearTimeout(timer);
      emitter.off(name, onEvent);
      if (name !== 'error') emitter.off('error', onError);
    };
    const onEvent = (...args: unknown[]) => {
      if (accept && !accept(...(args as A))) return;
      finish();
      resolve(args as A);
    };
    const onError = (err: Error) => {
      finish();
      reject(err);
    };
    const timer = setTimeout(() => {
      finish();
      reject(new Error(`timed out after ${timeoutMs} ms waiting for ${named(what)}`));
    }, timeoutMs);
    emitter.on(name, onEvent);
    if (name !== 'error') emitter.on('error', onError);
  });
}

/**
 * The next text message of `socket` that parses as JSON and for which `predicate` holds. A close
 * before it rejects with the close code.
 */
export function nextMessage(
  socket: WebSocket,
  predicate: (message: Record<string, unknown>) => boolean = () => true,
  options: WaitOptions = {},
): Promise<Record<string, unknown>> {
  const { timeoutMs = DEFAULT_TIMEOUT_MS, what = 'a message' } = options;
  return new Promise((resolve, reject) => {
    const finish = () => {
      clearTimeout(timer);
      socket.off('message', onMessage);
      socket.off('close', onClose);
    };
    const onMessage = (data: Buffer, binary: boolean) => {
      if (binary) return;
      const message = JSON.parse(data.toString('utf8')) as Record<string, unknown>;
      if (!predicate(message)) return;
      finish();
      resolve(message);
    };
    const onClose = (code: number) => {
      finish();
      reject(new Error(`socket closed (${code}) before ${named(what)}`));
    };
    const timer = setTimeout(() => {
      finish();
      reject(new Error(`timed out after ${timeoutMs} ms waiting for ${named(what)}`));
    }, timeoutMs);
    socket.on('message', onMessage);
    socket.on('close', onClose);
  });
}
