export { AbortFlag, abortReason } from "./abort.js";
export { backoffDelay, retryAfterMs, sleep, type Backoff } from "./backoff.js";
export { ConcurrencyLimit } from "./limit.js";
