import { abortReason, backoffDelay, sleep, type Backoff } from "@envace/concurrency";
import { ModelServerError } from "./errors.js";

/**
 * Retries of a model-server request: capped exponential backoff with jitter. Defaults: 4 retries,
 * the first after 500 ms, doubling, capped at 30 s, with a quarter of each delay drawn at random.
 */
export interface RetryOptions extends Backoff {
  /** Further attempts after the first. */
  maxRetries: number;
  jitter: number;
}

export const defaultRetryOptions: RetryOptions = { maxRetries: 4, initialDelayMs: 500, maxDelayMs: 30_000, factor: 2, jitter: 0.25 };

export interface RetryEvent {
  attempt: number;
  delayMs: number;
  error: ModelServerError;
}

/**
 * Run `attempt` until it succeeds, a non-retryable error occurs, retries run out, or `signal`
 * aborts. Only `ModelServerError`s marked retryable are retried, after `backoffDelay` (or longer
 * when the server asked for it with `retry-after`).
 */
export async function withRetry<T>(
  attempt: (attemptIndex: number) => Promise<T>,
  options: RetryOptions,
  signal?: AbortSignal,
  onRetry?: (event: RetryEvent) => void,
): Promise<T> {
  for (let index = 0; ; index++) {
    if (signal?.aborted) throw abortReason(signal);
    try {
      return await attempt(index);
    } catch (error) {
      if (!(error instanceof ModelServerError) || !error.retryable || index >= options.maxRetries || signal?.aborted) throw error;
      const delayMs = backoffDelay(index, options, Math.random, error.retryAfterMs);
      onRetry?.({ attempt: index, delayMs, error });
      await sleep(delayMs, signal);
    }
  }
}
