import { randomUUID } from "node:crypto";
import type { Backoff } from "@envace/concurrency";
import { errorDetail, HttpError, isSuccess, parseReply, send, shouldRetry, statusError, withRetry, type HttpReply } from "@envace/http";
import type { z } from "zod";
import { TinkerHttpError, TinkerTimeoutError } from "./errors.js";
import { PROTOBUF } from "./proto/schema.js";

/** Backoff and patience for submissions and for polling futures. */
export interface RetryPolicy extends Backoff {
  /** How long a submission is retried on 408, 429, 5xx and connection errors. */
  submitDeadlineMs: number;
  /** How often a 400 from `retrieve_future` is retried (it may be a proxy glitch) before failing. */
  badRequestRetries: number;
  /** How often a request whose future is gone (410) is submitted again. */
  goneResubmits: number;
  /** The pause after a 402 (billing), and the longest total such pause before giving up. */
  billingPauseMs: number;
  billingMaxPauseMs: number;
  /** The longest wait for one future; unlimited by default, as in the Python SDK. */
  futureDeadlineMs: number;
}

/** Backoff 1, 2, 4 … 30 s (or longer when the server asks, up to the cap), as the Python SDK. */
export const defaultRetryPolicy: RetryPolicy = {
  initialDelayMs: 1_000,
  maxDelayMs: 30_000,
  factor: 2,
  submitDeadlineMs: 300_000,
  badRequestRetries: 3,
  goneResubmits: 3,
  billingPauseMs: 5_000,
  billingMaxPauseMs: 3_600_000,
  futureDeadlineMs: Infinity,
};

export interface TinkerHttpOptions {
  baseUrl: string;
  fetch: typeof fetch;
  retry: RetryPolicy;
  /** Timeout of one request; polls of `retrieve_future` use `pollTimeoutMs`. */
  requestTimeoutMs: number;
  pollTimeoutMs: number;
  userAgent: string;
  /** The value of `X-API-Key` for the next request (a key, a JWT, or nothing). */
  apiKey: () => Promise<string | undefined>;
}

/** Submissions are retried on 408, 429 and 5xx; a 409 is a `seq_id` conflict, which another try repeats. */
function retryableSubmit(status: number): boolean {
  return status === 408 || status === 429 || status >= 500;
}

/** The last failure of a submission that gave up, as a user reads it: `HTTP 503: busy`, `fetch failed (ECONNREFUSED)`. */
function lastFailure(error: HttpError): string {
  if (error.code === "status") return `HTTP ${error.status ?? 0}: ${error.detail}`;
  const cause = error.cause;
  if (error.code !== "connection" || !(cause instanceof Error)) return error.detail;
  const code = (cause.cause as { code?: unknown } | undefined)?.code;
  return typeof code === "string" ? `${cause.message} (${code})` : cause.message;
}

/** The Tinker protocol over `@envace/http`: its headers, protobuf bodies and the submission retry rules. */
export class TinkerHttp {
  constructor(readonly options: TinkerHttpOptions) {}

  url(route: string): string {
    return `${this.options.baseUrl}${route}`;
  }

  /**
   * One attempt; any HTTP status is returned. A `Uint8Array` body is a protobuf message, anything
   * else goes as JSON; a protobuf reply comes back as its bytes. Throws an `HttpError` when no
   * usable answer comes (connection, timeout, a successful reply that is not JSON).
   */
  async send(
    method: "GET" | "POST",
    route: string,
    body: unknown,
    init: { timeoutMs?: number; signal?: AbortSignal; headers?: Record<string, string> } = {},
  ): Promise<HttpReply> {
    const headers: Record<string, string> = { "User-Agent": this.options.userAgent, ...init.headers };
    const key = await this.options.apiKey();
    if (key !== undefined) headers["X-API-Key"] = key;
    return send({
      url: this.url(route),
      method,
      ...(method === "POST" ? { body: body ?? {}, contentType: PROTOBUF } : {}),
      headers,
      timeoutMs: init.timeoutMs ?? this.options.requestTimeoutMs,
      ...(init.signal ? { signal: init.signal } : {}),
      fetch: this.options.fetch,
      binaryTypes: [PROTOBUF],
    });
  }

  /**
   * POST with retries on 408, 429, 5xx and connection errors (`withRetry` for up to
   * `submitDeadlineMs`), one idempotency key across the retries. Other statuses throw
   * `TinkerHttpError`; running out of time throws `TinkerTimeoutError` with the last failure.
   */
  async post(route: string, body: unknown, signal?: AbortSignal, headers: Record<string, string> = {}): Promise<unknown> {
    const idempotency = { "X-Idempotency-Key": `envace-${randomUUID()}`, ...headers };
    const { retry } = this.options;
    const policy = { ...retry, maxRetries: Infinity, deadlineMs: retry.submitDeadlineMs, retryStatus: retryableSubmit };
    let attempts = 0;
    try {
      return await withRetry(
        async (index) => {
          attempts = index + 1;
          const reply = await this.send("POST", route, body, { ...(signal ? { signal } : {}), headers: idempotency });
          if (isSuccess(reply.status)) return reply.body;
          throw statusError(this.url(route), reply);
        },
        policy,
        signal,
      );
    } catch (error) {
      if (!(error instanceof HttpError) || signal?.aborted) throw error;
      if (shouldRetry(error, retryableSubmit)) {
        throw new TinkerTimeoutError(`${this.url(route)}: gave up after ${attempts} attempts (last: ${lastFailure(error)})`, { cause: error });
      }
      if (error.code === "status") throw new TinkerHttpError(route, error.status ?? 0, error.detail);
      throw error;
    }
  }

  /** `post`, then parse the reply with `schema` (a reply that does not fit names the route). */
  async postParsed<S extends z.ZodType>(route: string, body: unknown, schema: S, signal?: AbortSignal): Promise<z.output<S>> {
    return this.parse(route, await this.post(route, body, signal), schema);
  }

  async getParsed<S extends z.ZodType>(route: string, schema: S): Promise<z.output<S>> {
    const reply = await this.send("GET", route, undefined);
    if (reply.status !== 200) throw new TinkerHttpError(route, reply.status, errorDetail(reply.body));
    return this.parse(route, reply.body, schema);
  }

  /** A reply that does not fit `schema` is an `HttpError` (`shape`) naming the route and each field. */
  parse<S extends z.ZodType>(route: string, body: unknown, schema: S): z.output<S> {
    return parseReply(schema, body, this.url(route));
  }
}
