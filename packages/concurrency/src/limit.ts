import { abortReason } from "./abort.js";

interface Waiter {
  start: () => void;
  signal?: AbortSignal;
  onAbort?: () => void;
}

/**
 * At most `limit` tasks at once; the rest wait and start first in, first out. One limit can be
 * shared by everything that should count against the same cap (every rollout group of a batch,
 * the requests of one client, judge calls). A waiting task whose signal aborts leaves the queue
 * without ever running; a task that throws frees its slot.
 */
export class ConcurrencyLimit {
  readonly limit: number;
  #active = 0;
  readonly #waiting: Waiter[] = [];

  constructor(limit: number) {
    if (!Number.isInteger(limit) || limit < 1) throw new RangeError(`concurrency limit must be a positive integer, got ${limit}`);
    this.limit = limit;
  }

  /** Tasks running now. */
  get active(): number {
    return this.#active;
  }

  /** Tasks waiting for a slot. */
  get pending(): number {
    return this.#waiting.length;
  }

  /**
   * Run `task` once a slot is free and settle as it does. Aborting `signal` while the task waits
   * rejects (see `abortReason`) without running it; once started, cancelling is up to the task.
   */
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
      const waiter: Waiter = { start: resolve };
      if (signal) {
        waiter.signal = signal;
        waiter.onAbort = () => {
          const at = this.#waiting.indexOf(waiter);
          if (at >= 0) this.#waiting.splice(at, 1);
          reject(abortReason(signal));
        };
        signal.addEventListener("abort", waiter.onAbort, { once: true });
      }
      this.#waiting.push(waiter);
    });
  }

  #release(): void {
    const next = this.#waiting.shift();
    if (!next) {
      this.#active--;
      return;
    }
    if (next.onAbort) next.signal?.removeEventListener("abort", next.onAbort);
    // The slot passes straight to the next task, so `active` never dips below the true count.
    next.start();
  }
}
