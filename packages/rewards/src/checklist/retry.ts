/** Capped exponential backoff for judge calls. */
export interface RetryPolicy {
  /** Attempts in all, the first included. */
  maxAttempts: number;
  /** Wait before the second attempt. */
  initialDelayMs: number;
  /** No wait is longer than this, whatever the server's `retry-after` asks. */
  maxDelayMs: number;
  multiplier: number;
}

export const DEFAULT_RETRY: RetryPolicy = { maxAttempts: 5, initialDelayMs: 1_000, maxDelayMs: 30_000, multiplier: 2 };

/**
 * How long to wait after failed attempt `attempt` (1-based): `initial × multiplier^(attempt-1)`,
 * at least what the server asked for, never more than the cap.
 */
export function backoffDelay(attempt: number, policy: RetryPolicy, serverAskedMs = 0): number {
  const exponential = policy.initialDelayMs * policy.multiplier ** (attempt - 1);
  return Math.min(policy.maxDelayMs, Math.max(exponential, serverAskedMs));
}

/** Resolve after `ms`, or reject as soon as `signal` aborts. */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) {
      reject(signal.reason as Error);
      return;
    }
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal!.reason as Error);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    signal?.addEventListener("abort", onAbort, { once: true });
  });
}
