import { EnvaceError } from "@envace/errors";
import { HttpError } from "@envace/http";
import { InputError } from "@envace/protocol";

/**
 * An HTTP reply the client cannot recover from (a 4xx other than the retryable ones): a wrong
 * key, model or route, or a reply the protocol does not allow. An `HttpError` named by its route.
 */
export class TinkerHttpError extends HttpError {
  declare readonly status: number;
  constructor(
    readonly route: string,
    status: number,
    detail: string,
  ) {
    super("status", route, detail, { status });
  }
}

/** Where the service says a failed request's fault lies. */
export type FailureCategory = "unknown" | "server" | "user";

/** A request the service accepted but could not complete (the future resolved to an error). */
export class TinkerRequestFailedError extends EnvaceError {
  override readonly code = "request-failed";
  constructor(
    readonly requestId: string,
    readonly detail: string,
    readonly category: FailureCategory,
  ) {
    super(`request ${requestId} failed (${category}): ${detail}`);
  }
}

/** The remote loss cannot express the requested objective; nothing was sent. */
export class TinkerLossError extends InputError {
  override readonly code: string = "tinker-loss";
}

/** Retries or a wait ran past their deadline: the server is down, unreachable at the address given, or overloaded. */
export class TinkerTimeoutError extends InputError {
  override readonly code: string = "tinker-timeout";
  override readonly isRetryable = true;
}

/** The server does not say how it reduces losses and the client was not told: training would scale gradients blindly. */
export class TinkerReductionError extends InputError {
  override readonly code: string = "tinker-reduction";
}

/** Arguments the Tinker client or server cannot use: an empty or misshapen datum, a bad checkpoint name, conflicting options. */
export class TinkerUsageError extends EnvaceError {
  override readonly code = "tinker-usage";
}

/** A value the protobuf wire format here has no encoding for. */
export class WireEncodingError extends EnvaceError {
  override readonly code = "wire-encoding";
}
