import { retryAfterMs } from "@envace/concurrency";
import { EnvaceError, isRetryableStatus } from "@envace/errors";

/** Why an HTTP exchange failed: a stable code to branch on, count in metrics and log. */
export type HttpErrorCode =
  /** The server answered with an error status. */
  | "status"
  /** No connection, a reset, or a body cut off mid-way. */
  | "connection"
  /** No answer within the per-attempt timeout. */
  | "timeout"
  /** A body that is not JSON. */
  | "malformed"
  /** JSON of the wrong shape: the server speaks a different dialect or version. */
  | "shape"
  /** A URL this client cannot send to: a scheme other than http or https. */
  | "url";

export interface HttpErrorOptions {
  status?: number;
  /** The reply's headers, for the delay and the retry advice the server gave. */
  headers?: Headers;
  cause?: unknown;
}

/**
 * A server that cannot be reached or used at the address given. The message names the URL (and
 * the status, for an error status), so a command can print it alone.
 */
export class HttpError extends EnvaceError {
  readonly status: number | undefined;
  /** Delay the server asked for (`retry-after-ms` / `retry-after`), in milliseconds. */
  readonly retryAfterMs: number | undefined;
  /** The server's `x-should-retry: false`: asking again cannot help, whatever the status. */
  readonly serverRefusesRetry: boolean;
  /** Whether another attempt may succeed, under the default status policy (`isRetryableStatus`). */
  override readonly isRetryable: boolean;

  constructor(
    override readonly code: HttpErrorCode,
    /** The endpoint, e.g. `http://localhost:8000/v1/chat/completions`. */
    readonly url: string,
    /** What went wrong, without the URL. */
    readonly detail: string,
    options: HttpErrorOptions = {},
  ) {
    const status = code === "status" && options.status !== undefined ? `HTTP ${options.status}: ` : "";
    super(`${url}: ${status}${detail}`, options.cause === undefined ? undefined : { cause: options.cause });
    this.status = options.status;
    this.retryAfterMs = retryAfterMs(options.headers);
    this.serverRefusesRetry = options.headers?.get("x-should-retry") === "false";
    this.isRetryable = shouldRetry(this);
  }
}

/**
 * Whether another attempt may succeed: dropped connections, timeouts and unparsable bodies are;
 * a dialect mismatch or an unusable URL is not; an error status is when `retryStatus` says so and the server did not
 * say otherwise.
 */
export function shouldRetry(error: HttpError, retryStatus: (status: number) => boolean = isRetryableStatus): boolean {
  if (error.code === "shape" || error.code === "url") return false;
  if (error.code !== "status") return true;
  return !error.serverRefusesRetry && retryStatus(error.status ?? 0);
}

/**
 * A request body that cannot be encoded as JSON (nested too deep for the stack, a BigInt, a
 * cycle). It is this process's fault, found before anything is sent: never retried, and never
 * reported as the server's failure.
 */
export class RequestBodyError extends EnvaceError {
  override readonly code = "request-body";

  constructor(
    /** The endpoint the body was meant for. */
    readonly url: string,
    cause: unknown,
  ) {
    super(`${url}: the request body cannot be encoded as JSON (${cause instanceof Error ? cause.message : String(cause)})`, { cause });
  }
}
