import { abortReason } from "@envace/concurrency";
import { APIConnectionError, APIConnectionTimeoutError, APIError, APIUserAbortError } from "openai";
import { HttpError } from "./errors.js";
import { describeCause } from "./request.js";

/**
 * Whatever the official `openai` client threw, as the `HttpError` plain requests give, so one
 * retry policy (`withRetry`) and one set of messages cover both; the caller's abort passes through
 * as its reason. A separate entry (`@envace/http/openai`): only callers of that client need it.
 */
export function fromOpenAIError(error: unknown, url: string, signal?: AbortSignal): Error {
  if (signal?.aborted || error instanceof APIUserAbortError) return signal ? abortReason(signal) : (error as Error);
  if (error instanceof APIConnectionTimeoutError) return new HttpError("timeout", url, "no answer within the timeout", { cause: error });
  if (error instanceof APIConnectionError)
    return new HttpError("connection", url, `connection failed (${describeCause(error.cause ?? error)})`, { cause: error });
  if (error instanceof APIError) {
    const { status, headers } = error as { status: number | undefined; headers: Headers | undefined };
    return new HttpError("status", url, error.message, { status: status ?? 0, ...(headers ? { headers } : {}), cause: error });
  }
  if (error instanceof SyntaxError) return new HttpError("malformed", url, `reply is not JSON (${error.message})`, { cause: error });
  // undici reports a body cut off mid-way as `TypeError: terminated`.
  if (error instanceof TypeError) return new HttpError("connection", url, `connection failed (${describeCause(error)})`, { cause: error });
  return error instanceof Error ? error : new Error(String(error));
}
