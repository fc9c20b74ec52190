import { abortReason, backoffDelay, sleep, type Backoff } from "@envace/concurrency";
import { isRetryableStatus } from "@envace/errors";
import { HttpError, shouldRetry } from "./errors.js";

/**
 * When a failed request is tried again: capped exponential backoff (a longer `retry-after` from the
 * server wins, up to the cap), for at most `maxRetries` further attempts and, with `deadlineMs`,
 * no wait that would end past the deadline.
 */
export interface RetryOptions extends Backoff {
  /** Further attempts after the first; `Infinity` leaves the deadline alone to stop them. */
  maxRetries: number;
  /** From the first attempt. Default: none. */
  deadlineMs?: number;
  /** Error statuses worth another try. Default `isRetryableStatus` (408, 409, 429, 5xx). */
  retryStatus?: (status: number) => boolean;
}

/** 4 retries, the first after 500 ms, doubling, capped at 30 s, with a quarter of each delay drawn at random. */
export const defaultRetryOptions: RetryOptions = { maxRetries: 4, initialDelayMs: 500, maxDelayMs: 30_000, factor: 2, jitter: 0.25 };

export interface RetryEvent {
  /** The attempt that failed, from 0. */
  attempt: number;
  delayMs: number;
  error: HttpError;
}

/**
 * Run `attempt` until it succeeds, throws something other than a retryable `HttpError`, runs out
 * of retries or time, or `signal` aborts. What it throws last is thrown as it is; aborting throws
 * the signal's reason.
 */
export async function withRetry<T>(
  attempt: (attemptIndex: number) => Promise<T>,
  options: RetryOptions,
  signal?: AbortSignal,
  onRetry?: (event: RetryEvent) => void,
): Promise<T> {
  const deadline = Date.now() + (options.deadlineMs ?? Infinity);
  for (let index = 0; ; index++) {
    if (signal?.aborted) throw abortReason(signal);
    try {
      return await attempt(index);
    } catch (error) {
      if (!(error instanceof HttpError) || !shouldRetry(error, options.retryStatus ?? isRetryableStatus)) throw error;
      if (index >= options.maxRetries || signal?.aborted) throw error;
      const delayMs = backoffDelay(index, options, Math.random, error.retryAfterMs);
      if (Date.now() + delayMs > deadline) throw error;
      onRetry?.({ attempt: index, delayMs, error });
      await sleep(delayMs, signal);
    }
  }
}
