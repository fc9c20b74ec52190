import { abortReason } from "./abort.js";

/** Capped exponential backoff: how long to wait before each retry of a failed call. */
export interface Backoff {
  /** Delay before the first retry. */
  initialDelayMs: number;
  /** Upper bound of any delay, including one the server asks for. */
  maxDelayMs: number;
  /** Growth of the delay per retry. */
  factor: number;
  /** Fraction of the delay drawn at random (0 = none, 1 = "full jitter"). Default 0. */
  jitter?: number;
}

/**
 * The delay before retry number `retry` (0 for the first): `initialDelayMs · factor^retry`,
 * capped, with its last `jitter` fraction drawn from `random` so that many clients do not retry
 * in lockstep. A longer delay the server asked for (`retry-after`) wins, up to the cap.
 */
export function backoffDelay(retry: number, backoff: Backoff, random: () => number = Math.random, serverAskedMs?: number): number {
  const jitter = backoff.jitter ?? 0;
  const exponential = Math.min(backoff.maxDelayMs, backoff.initialDelayMs * backoff.factor ** retry);
  const jittered = exponential * (1 - jitter) + exponential * jitter * random();
  return Math.min(backoff.maxDelayMs, Math.max(jittered, serverAskedMs ?? 0));
}

/**
 * The delay a server asked for, in milliseconds: `retry-after-ms`, else `retry-after` as seconds or
 * as an HTTP date (relative to `now`). `undefined` when it asked for none or wrote something else.
 */
export function retryAfterMs(headers: { get(name: string): string | null } | undefined, now = Date.now()): number | undefined {
  if (!headers) return undefined;
  const ms = Number(headers.get("retry-after-ms") ?? Number.NaN);
  if (Number.isFinite(ms) && ms >= 0) return ms;
  const raw = headers.get("retry-after");
  if (raw === null) return undefined;
  const seconds = Number(raw);
  if (Number.isFinite(seconds) && seconds >= 0) return seconds * 1000;
  const date = Date.parse(raw);
  return Number.isFinite(date) ? Math.max(0, date - now) : undefined;
}

/** Resolve after `ms`, or reject (see `abortReason`) as soon as `signal` aborts. */
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
