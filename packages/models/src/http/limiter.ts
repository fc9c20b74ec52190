import { abortReason } from "./errors.js";

/**
 * At most `limit` tasks at once; the rest wait in arrival order. A waiting task whose signal
 * aborts leaves the queue without ever running.
 */
interface Waiter {
  start: () => void;
  signal?: AbortSignal;
  onAbort?: () => void;
}

export class ConcurrencyLimiter {
  #active = 0;
  readonly #waiting: Waiter[] = [];

  constructor(readonly limit: number) {
    if (!Number.isInteger(limit) || limit < 1) throw new RangeError(`concurrency limit must be a positive integer, got ${limit}`);
  }

  get active(): number {
    return this.#active;
  }

  get waiting(): number {
    return this.#waiting.length;
  }

  async run<T>(task: () => Promise<T>, signal?: AbortSignal): Promise<T> {
    await this.#acquire(signal);
    try {
      return await task();
    } finally {
      this.#release();
    }
  }

  #acquire(signal?: AbortSignal): Promise<void> {
    if (signal?.aborted) return Promise.reject(abortReason(signal));
    if (this.#active < this.limit) {
      this.#active++;
      return Promise.resolve();
    }
    return new Promise<void>((resolve, reject) => {
      const entry: Waiter = { start: resolve };
      if (signal) {
        entry.signal = signal;
        entry.onAbort = () => {
          const at = this.#waiting.indexOf(entry);
          if (at >= 0) this.#waiting.splice(at, 1);
          reject(abortReason(signal));
        };
        signal.addEventListener("abort", entry.onAbort, { once: true });
      }
      this.#waiting.push(entry);
    });
  }

  #release(): void {
    const next = this.#waiting.shift();
    if (!next) {
      this.#active--;
      return;
    }
    if (next.onAbort) next.signal?.removeEventListener("abort", next.onAbort);
    // The slot passes straight to the next task; `#active` stays the same.
    next.start();
  }
}
