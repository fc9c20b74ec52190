import { randomUUID } from "node:crypto";
import { backoffDelay, retryAfterMs, sleep } from "@envace/concurrency";
import type { z } from "zod";
import { TinkerHttpError, TinkerTimeoutError } from "./errors.js";
import { PROTOBUF } from "./proto/schema.js";

/** Backoff and patience for submissions and for polling futures. */
export interface RetryPolicy {
  /** First backoff delay; doubles on every retry up to `maxDelayMs`. */
  initialDelayMs: number;
  maxDelayMs: number;
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

export const defaultRetryPolicy: RetryPolicy = {
  initialDelayMs: 1_000,
  maxDelayMs: 30_000,
  submitDeadlineMs: 300_000,
  badRequestRetries: 3,
  goneResubmits: 3,
  billingPauseMs: 5_000,
  billingMaxPauseMs: 3_600_000,
  futureDeadlineMs: Infinity,
};

export interface HttpOptions {
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

export interface HttpReply {
  status: number;
  /** Parsed JSON; the raw bytes of a protobuf reply. */
  body: unknown;
  headers: Headers;
}

/**
 * The n-th backoff delay (n from 0): doubling from `initialDelayMs` up to `maxDelayMs`, or the
 * server's `Retry-After` when it sent one (at most 60 s, as the Python SDK allows).
 */
export function retryDelay(policy: RetryPolicy, attempt: number, headers?: Headers): number {
  const asked = retryAfterMs(headers);
  if (asked !== undefined) return Math.min(asked, 60_000);
  return backoffDelay(attempt, { initialDelayMs: policy.initialDelayMs, maxDelayMs: policy.maxDelayMs, factor: 2 });
}

/** A failed fetch as a user reads it: `fetch failed (ECONNREFUSED)`. */
function failureOf(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  const code = (error.cause as { code?: unknown } | undefined)?.code;
  return typeof code === "string" ? `${error.message} (${code})` : error.message;
}

/** A short human-readable reason from an error reply (`detail`, `error` or `message`). */
export function replyDetail(body: unknown): string {
  if (body && typeof body === "object") {
    const record = body as Record<string, unknown>;
    for (const key of ["detail", "error", "message"]) {
      const value = record[key];
      if (typeof value === "string") return value;
      if (value !== undefined) return JSON.stringify(value);
    }
  }
  return typeof body === "string" ? body.slice(0, 500) : JSON.stringify(body);
}

const RETRYABLE_SUBMIT = new Set([408, 429]);

/** JSON over HTTP with the protocol's headers and the submission retry rules. */
export class TinkerHttp {
  constructor(readonly options: HttpOptions) {}

  /** One attempt. Throws on connection errors and timeouts; any HTTP status is returned. */
  async send(
    method: "GET" | "POST",
    route: string,
    body: unknown,
    init: { timeoutMs?: number; signal?: AbortSignal; headers?: Record<string, string> } = {},
  ): Promise<HttpReply> {
    const headers: Record<string, string> = {
      Accept: "application/json",
      "User-Agent": this.options.userAgent,
      ...init.headers,
    };
    const key = await this.options.apiKey();
    if (key !== undefined) headers["X-API-Key"] = key;
    // A Uint8Array body is a protobuf message; anything else goes as JSON.
    const binary = body instanceof Uint8Array;
    if (method === "POST") headers["Content-Type"] = binary ? PROTOBUF : "application/json";
    const timeout = AbortSignal.timeout(init.timeoutMs ?? this.options.requestTimeoutMs);
    const response = await this.options.fetch(`${this.options.baseUrl}${route}`, {
      method,
      headers,
      ...(method === "POST" ? { body: binary ? new Uint8Array(body) : JSON.stringify(body ?? {}) } : {}),
      signal: init.signal ? AbortSignal.any([init.signal, timeout]) : timeout,
    });
    if ((response.headers.get("content-type") ?? "").includes(PROTOBUF)) {
      return { status: response.status, body: new Uint8Array(await response.arrayBuffer()), headers: response.headers };
    }
    const text = await response.text();
    let parsed: unknown = text;
    if (text.length > 0) {
      try {
        parsed = JSON.parse(text);
      } catch {
        if (response.ok) throw new TinkerHttpError(route, response.status, `reply is not JSON: ${text.slice(0, 200)}`);
      }
    }
    return { status: response.status, body: parsed, headers: response.headers };
  }

  /**
   * POST with retries on 408, 429, 5xx and connection errors (backoff 1, 2, 4 … 30 s, for up to
   * `submitDeadlineMs`), one idempotency key across the retries. Other statuses throw.
   */
  async post(route: string, body: unknown, signal?: AbortSignal, headers: Record<string, string> = {}): Promise<unknown> {
    const idempotency = { "X-Idempotency-Key": `envace-${randomUUID()}`, ...headers };
    const deadline = Date.now() + this.options.retry.submitDeadlineMs;
    for (let attempt = 0; ; attempt++) {
      let reply: HttpReply;
      try {
        reply = await this.send("POST", route, body, { ...(signal ? { signal } : {}), headers: idempotency });
      } catch (error) {
        if (signal?.aborted || error instanceof TinkerHttpError) throw error;
        await this.pause(route, attempt, deadline, undefined, error, signal);
        continue;
      }
      if (reply.status >= 200 && reply.status < 300) return reply.body;
      const retryable = RETRYABLE_SUBMIT.has(reply.status) || reply.status >= 500;
      if (!retryable || reply.headers.get("x-should-retry") === "false") {
        throw new TinkerHttpError(route, reply.status, replyDetail(reply.body));
      }
      await this.pause(route, attempt, deadline, reply, undefined, signal);
    }
  }

  /** `post`, then parse the reply with `schema` (a reply that does not fit names the route). */
  async postParsed<S extends z.ZodType>(route: string, body: unknown, schema: S, signal?: AbortSignal): Promise<z.output<S>> {
    return this.parse(route, await this.post(route, body, signal), schema);
  }

  async getParsed<S extends z.ZodType>(route: string, schema: S): Promise<z.output<S>> {
    const reply = await this.send("GET", route, undefined);
    if (reply.status !== 200) throw new TinkerHttpError(route, reply.status, replyDetail(reply.body));
    return this.parse(route, reply.body, schema);
  }

  parse<S extends z.ZodType>(route: string, body: unknown, schema: S): z.output<S> {
    const result = schema.safeParse(body);
    if (result.success) return result.data;
    const problems = result.error.issues.map((issue) => `${issue.path.join(".") || "(reply)"}: ${issue.message}`).join("; ");
    throw new TinkerHttpError(route, 200, `unexpected reply (${problems}): ${JSON.stringify(body).slice(0, 300)}`);
  }

  private async pause(
    route: string,
    attempt: number,
    deadline: number,
    reply: HttpReply | undefined,
    error: unknown,
    signal: AbortSignal | undefined,
  ): Promise<void> {
    const delay = retryDelay(this.options.retry, attempt, reply?.headers);
    if (Date.now() + delay > deadline) {
      const last = reply ? `HTTP ${reply.status}: ${replyDetail(reply.body)}` : failureOf(error);
      throw new TinkerTimeoutError(`${this.options.baseUrl}${route}: gave up after ${attempt + 1} attempts (last: ${last})`);
    }
    await sleep(delay, signal);
  }
}
