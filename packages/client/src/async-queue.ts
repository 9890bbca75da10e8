/**
 * Unbounded FIFO with one asynchronous reader; `end()` lets the reader finish after the backlog.
 * The one queue of the client and the scripts: session events, request payload parts, frames.
 */
export class AsyncQueue<T> {
  readonly #items: T[] = [];
  #waiter: ((result: IteratorResult<T, undefined>) => void) | undefined;
  #ended = false;

  get ended(): boolean {
    return this.#ended;
  }

  push(item: T): void {
    if (this.#ended) return;
    const waiter = this.#waiter;
    if (waiter) {
      this.#waiter = undefined;
      waiter({ value: item, done: false });
    } else this.#items.push(item);
  }

  end(): void {
    this.#ended = true;
    const waiter = this.#waiter;
    this.#waiter = undefined;
    waiter?.({ value: undefined, done: true });
  }

  next(): Promise<IteratorResult<T, undefined>> {
    if (this.#items.length > 0) return Promise.resolve({ value: this.#items.shift() as T, done: false });
    if (this.#ended) return Promise.resolve({ value: undefined, done: true });
    return new Promise((resolve) => {
      this.#waiter = resolve;
    });
  }

  /** Like {@link next}, or `'timeout'` once `deadline` (a `performance.now()` value) has passed. */
  nextBefore(deadline: number): Promise<IteratorResult<T, undefined> | 'timeout'> {
    if (this.#items.length > 0 || this.#ended) return this.next();
    const remaining = deadline - performance.now();
    if (remaining <= 0) return Promise.resolve('timeout');
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        this.#waiter = undefined;
        resolve('timeout');
      }, Math.ceil(remaining));
      this.#waiter = (result) => {
        clearTimeout(timer);
        resolve(result);
      };
    });
  }
}
