export { AbortFlag, abortReason } from "./abort.js";
export { backoffDelay, sleep, type Backoff } from "./backoff.js";
export { ConcurrencyLimit } from "./limit.js";
