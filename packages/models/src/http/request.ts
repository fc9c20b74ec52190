import { abortReason, retryAfterMs } from "@envace/concurrency";
import { APIConnectionError, APIConnectionTimeoutError, APIError, APIUserAbortError } from "openai";
import { ModelServerError } from "./errors.js";

export interface HttpOptions {
  /** Per-attempt timeout. */
  timeoutMs: number;
  headers?: Record<string, string>;
  fetch?: typeof fetch;
  signal?: AbortSignal;
}

/**
 * One JSON request with a timeout, every failure turned into a `ModelServerError` (or the
 * caller's abort reason). Used for the non-OpenAI routes: SGLang `/generate`, llama.cpp
 * `/completion`, and server detection.
 */
export async function requestJson(method: "GET" | "POST", url: string, body: unknown, options: HttpOptions): Promise<unknown> {
  const timeout = AbortSignal.timeout(options.timeoutMs);
  const signal = options.signal ? AbortSignal.any([options.signal, timeout]) : timeout;
  let text: string;
  let response: Response;
  try {
    response = await (options.fetch ?? fetch)(url, {
      method,
      headers: { accept: "application/json", ...(body === undefined ? {} : { "content-type": "application/json" }), ...options.headers },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      signal,
    });
    text = await response.text();
  } catch (error) {
    if (options.signal?.aborted) throw abortReason(options.signal);
    if (timeout.aborted) throw new ModelServerError("timeout", url, `no answer within ${options.timeoutMs} ms`, undefined, undefined, { cause: error });
    throw new ModelServerError("connection", url, `connection failed (${describeCause(error)})`, undefined, undefined, { cause: error });
  }
  if (!response.ok) {
    throw new ModelServerError("status", url, `HTTP ${response.status}: ${errorMessage(text)}`, response.status, retryAfterMs(response.headers));
  }
  try {
    return JSON.parse(text) as unknown;
  } catch (error) {
    throw new ModelServerError("malformed", url, `response is not JSON: ${snippet(text)}`, response.status, undefined, { cause: error });
  }
}

/** Map whatever the `openai` client threw to a `ModelServerError`; abort errors pass through. */
export function fromOpenAIError(error: unknown, url: string, signal?: AbortSignal): Error {
  if (signal?.aborted || error instanceof APIUserAbortError) return signal ? abortReason(signal) : (error as Error);
  if (error instanceof APIConnectionTimeoutError) return new ModelServerError("timeout", url, "no answer within the timeout", undefined, undefined, { cause: error });
  if (error instanceof APIConnectionError) {
    return new ModelServerError("connection", url, `connection failed (${describeCause(error.cause ?? error)})`, undefined, undefined, { cause: error });
  }
  if (error instanceof APIError) {
    const { status, headers } = error as { status: number | undefined; headers: Headers | undefined };
    const code = status ?? 0;
    return new ModelServerError("status", url, `HTTP ${code}: ${error.message}`, code, retryAfterMs(headers), { cause: error });
  }
  if (error instanceof SyntaxError) return new ModelServerError("malformed", url, `response is not JSON (${error.message})`, undefined, undefined, { cause: error });
  // undici reports a body cut off mid-way as `TypeError: terminated`.
  if (error instanceof TypeError) return new ModelServerError("connection", url, `connection failed (${describeCause(error)})`, undefined, undefined, { cause: error });
  return error instanceof Error ? error : new Error(String(error));
}

function describeCause(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  const cause = error.cause instanceof Error ? `: ${error.cause.message}` : "";
  return `${error.message}${cause}`;
}

function errorMessage(text: string): string {
  try {
    const body = JSON.parse(text) as { error?: { message?: unknown } | string; message?: unknown; detail?: unknown };
    if (typeof body.error === "string") return body.error;
    if (typeof body.error?.message === "string") return body.error.message;
    if (typeof body.message === "string") return body.message;
    if (typeof body.detail === "string") return body.detail;
  } catch {
    // Not JSON: show the text itself.
  }
  return snippet(text);
}

export function snippet(text: string, max = 200): string {
  const flat = text.replace(/\s+/g, " ").trim();
  return flat.length > max ? `${flat.slice(0, max)}…` : flat || "(empty body)";
}
