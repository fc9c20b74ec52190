import type { Backoff } from "@envace/concurrency";

/** Retries of a judge call: capped exponential backoff, counted in attempts. */
export interface RetryPolicy extends Backoff {
  /** Attempts in all, the first included. */
  maxAttempts: number;
}

/** 1 s, 2 s, 4 s, 8 s between five attempts; no wait is longer than 30 s, whatever `retry-after` asks. */
export const DEFAULT_RETRY: RetryPolicy = { maxAttempts: 5, initialDelayMs: 1_000, maxDelayMs: 30_000, factor: 2 };
