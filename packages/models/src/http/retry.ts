import { abortReason, ModelServerError } from "./errors.js";

export interface RetryOptions {
  /** Further attempts after the first. Default 4. */
  maxRetries: number;
  /** Delay before the first retry. Default 500 ms. */
  initialDelayMs: number;
  /** Upper bound of any delay, including one the server asks for. Default 30 s. */
  maxDelayMs: number;
  /** Growth of the delay per attempt. Default 2. */
  factor: number;
  /** Fraction of the delay drawn at random (0 = none, 1 = "full jitter"). Default 0.25. */
  jitter: number;
}

export const defaultRetryOptions: RetryOptions = { maxRetries: 4, initialDelayMs: 500, maxDelayMs: 30_000, factor: 2, jitter: 0.25 };

/**
 * The delay before retry number `attempt` (0-based): exponential, capped, with the last
 * `jitter` fraction randomised so that many clients do not retry in lockstep. A delay the server
 * asked for wins when it is longer.
 */
export function backoffDelay(attempt: number, options: RetryOptions, random: () => number = Math.random, serverAskedMs?: number): number {
  const exponential = Math.min(options.maxDelayMs, options.initialDelayMs * options.factor ** attempt);
  const jittered = exponential * (1 - options.jitter) + exponential * options.jitter * random();
  return Math.min(options.maxDelayMs, Math.max(jittered, serverAskedMs ?? 0));
}

export interface RetryEvent {
  attempt: number;
  delayMs: number;
  error: ModelServerError;
}

/**
 * Run `attempt` until it succeeds, a non-retryable error occurs, retries run out, or `signal`
 * aborts. Only `ModelServerError`s marked retryable are retried.
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

export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) {
      reject(abortReason(signal));
      return;
    }
    const onAbort = (): void => {
      clearTimeout(timer);
      reject(abortReason(signal!));
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    signal?.addEventListener("abort", onAbort, { once: true });
  });
}
