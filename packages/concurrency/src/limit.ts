import { abortReason } from "./abort.js";

interface Waiter {
  start: () => void;
  reject: (error: Error) => void;
  signal: AbortSignal | undefined;
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
  /**
   * One abort listener per signal that waiting tasks carry, with how many wait on it: one listener
   * per waiting task would pass Node's leak warning as soon as ten tasks wait on one signal.
   */
  readonly #watched = new Map<AbortSignal, { onAbort: () => void; waiters: number }>();

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
      this.#waiting.push({ start: resolve, reject, signal });
      if (signal) this.#watch(signal);
    });
  }

  #watch(signal: AbortSignal): void {
    const watched = this.#watched.get(signal);
    if (watched) {
      watched.waiters++;
      return;
    }
    const onAbort = (): void => {
      this.#watched.delete(signal);
      const error = abortReason(signal);
      for (const waiter of this.#waiting.filter((w) => w.signal === signal)) {
        this.#waiting.splice(this.#waiting.indexOf(waiter), 1);
        waiter.reject(error);
      }
    };
    this.#watched.set(signal, { onAbort, waiters: 1 });
    signal.addEventListener("abort", onAbort, { once: true });
  }

  #unwatch(signal: AbortSignal): void {
    const watched = this.#watched.get(signal);
    if (!watched) return;
    watched.waiters--;
    if (watched.waiters > 0) return;
    this.#watched.delete(signal);
    signal.removeEventListener("abort", watched.onAbort);
  }

  #release(): void {
    const next = this.#waiting.shift();
    if (!next) {
      this.#active--;
      return;
    }
    if (next.signal) this.#unwatch(next.signal);
    // The slot passes straight to the next task, so `active` never dips below the true count.
    next.start();
  }
}
