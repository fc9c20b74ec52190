import { InputError } from "@envace/protocol";

/**
 * Failures talking to a model server, classified once so retry decisions and messages are the
 * same for the `openai` client and for plain HTTP (SGLang, llama.cpp).
 */
export type ModelServerFailure =
  /** The server answered with an error status. */
  | "status"
  /** No connection, a reset, or a body cut off mid-way. */
  | "connection"
  /** No answer within the per-attempt timeout. */
  | "timeout"
  /** A body that is not JSON. */
  | "malformed"
  /** JSON of the wrong shape: the server speaks a different dialect. */
  | "shape";

/** A server that cannot be reached or used at the address given: the message names the URL. */
export class ModelServerError extends InputError {
  override readonly name = "ModelServerError";
  constructor(
    readonly failure: ModelServerFailure,
    /** The endpoint, e.g. `http://localhost:8000/v1/chat/completions`. */
    readonly url: string,
    message: string,
    readonly status?: number,
    /** Delay the server asked for (`retry-after-ms` / `retry-after`), in milliseconds. */
    readonly retryAfterMs?: number,
    options?: { cause?: unknown },
  ) {
    super(`${url}: ${message}`, options);
  }

  /** 408, 409, 429 and 5xx, dropped connections, timeouts and unparsable bodies are worth another try. */
  get retryable(): boolean {
    if (this.failure === "status") {
      const status = this.status ?? 0;
      return status === 408 || status === 409 || status === 429 || status >= 500;
    }
    return this.failure !== "shape";
  }
}

/** Training needs token data (ids, logprobs) that this server does not return. */
export class TokenDataUnavailableError extends InputError {
  override readonly name = "TokenDataUnavailableError";
}
