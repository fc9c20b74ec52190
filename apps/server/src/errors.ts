import { ContextLengthError } from "@envace/protocol";
import { EnvaceError, isRetryableStatus } from "@envace/errors";
import { HttpError } from "@envace/http";

/** The `type` of an OpenAI error body. */
export type ApiErrorType = "invalid_request_error" | "authentication_error" | "not_found_error" | "rate_limit_error" | "server_error" | "upstream_error";

/**
 * An error the server answers with, in OpenAI's shape: `{ error: { message, type, param, code } }`.
 * 4xx statuses are the client's fault, 502/504 the upstream model server's.
 *
 * `code` is the OpenAI code (`queue_full`, `model_not_found`, …): already a stable name a client
 * switches on. An error given none answers `code: null` but, as every EnvaceError must have a
 * code, reads its `type` as `code`.
 */
export class ApiError extends EnvaceError {
  override readonly code: string;
  /** Worth asking again: a full queue (429), an upstream failure or timeout (5xx). */
  override readonly isRetryable: boolean;
  readonly #wireCode: string | null;

  constructor(
    readonly status: number,
    message: string,
    readonly type: ApiErrorType,
    readonly param: string | null = null,
    code: string | null = null,
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
    this.code = code ?? type;
    this.#wireCode = code;
    this.isRetryable = isRetryableStatus(status);
  }

  get body(): ErrorBody {
    return { error: { message: this.message, type: this.type, param: this.param, code: this.#wireCode } };
  }
}

export interface ErrorBody {
  error: { message: string; type: string; param: string | null; code: string | null };
}

/** A request field the server cannot honour (or that is malformed): 400 naming the field. */
export function badField(param: string, message: string, code = "invalid_value"): ApiError {
  return new ApiError(400, `${param}: ${message}`, "invalid_request_error", param, code);
}

/**
 * What to answer for any error a request ran into. Upstream failures are 504 (timed out) or 502
 * (anything else); a prompt over the model's context is the client's 400; the rest is a 500.
 * A client never sees the upstream's URL, a path or a stack: 5xx messages are generic and their
 * `code` stable, and the detail goes to the log.
 */
export function toApiError(error: unknown): ApiError {
  if (error instanceof ApiError) return error;
  if (error instanceof HttpError) {
    return error.code === "timeout"
      ? new ApiError(504, "the model server did not answer in time", "upstream_error", null, "upstream_timeout")
      : new ApiError(502, "the model server failed", "upstream_error", null, "upstream_error");
  }
  if (error instanceof ContextLengthError) return new ApiError(400, error.message, "invalid_request_error", "messages", "context_length_exceeded");
  // Fastify's own client errors (a body too large, malformed JSON, a wrong content type) carry their status.
  const status = (error as { statusCode?: unknown } | null)?.statusCode;
  if (typeof status === "number" && status >= 400 && status < 500) {
    const code = (error as { code?: unknown }).code;
    return new ApiError(status, (error as Error).message, "invalid_request_error", null, typeof code === "string" ? code : null);
  }
  return new ApiError(500, "internal server error", "server_error", null, "internal_error");
}
