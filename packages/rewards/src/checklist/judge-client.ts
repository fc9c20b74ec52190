import { abortReason, backoffDelay, retryAfterMs, sleep } from "@envace/concurrency";
import { isRetryableStatus } from "@envace/errors";
import type OpenAI from "openai";
import { APIConnectionError, APIConnectionTimeoutError, APIError, APIUserAbortError } from "openai";
import { canonicalJson, sha256Hex } from "@envace/records";
import { DEFAULT_RETRY, type RetryPolicy } from "./retry.js";
import { JUDGE_RESPONSE_FORMAT, type JudgeVerdict, parseVerdict, VerdictParseError } from "./verdict.js";

/** Sampling for judge calls, in the OpenAI request's own names. */
export interface JudgeSampling {
  temperature?: number;
  top_p?: number;
  max_tokens?: number;
  seed?: number;
}

/** One judge request: everything that determines the answer, and so the cache key. */
export interface JudgeRequest {
  model: string;
  prompt: string;
  sampling: JudgeSampling;
}

/** The content address of a judge request: SHA-256 over model, prompt, response schema and sampling. */
export function judgeRequestKey(request: JudgeRequest): string {
  return sha256Hex(
    canonicalJson({ model: request.model, prompt: request.prompt, response_format: JUDGE_RESPONSE_FORMAT, sampling: request.sampling }),
  );
}

export type JudgeCallResult =
  | { ok: true; verdict: JudgeVerdict; attempts: number; latencyMs: number }
  | { ok: false; error: string; attempts: number; latencyMs: number };

export interface JudgeCallOptions {
  retry?: RetryPolicy;
  /** Per attempt. */
  timeoutMs?: number;
  signal?: AbortSignal;
}

/**
 * Ask the judge once, retrying HTTP errors worth retrying (timeouts, connection failures, 408,
 * 409, 429, 5xx) and unusable replies (malformed or schema-violating JSON) with capped
 * exponential backoff. Other 4xx answers are not retried: asking again cannot change them. A
 * failure is returned, not thrown, so the caller can mask the rollout; only cancellation through
 * `signal` throws.
 */
export async function callJudge(client: OpenAI, request: JudgeRequest, options: JudgeCallOptions = {}): Promise<JudgeCallResult> {
  const retry = options.retry ?? DEFAULT_RETRY;
  const started = performance.now();
  let attempts = 0;
  for (;;) {
    attempts++;
    const outcome = await attempt(client, request, options);
    const latencyMs = performance.now() - started;
    if (outcome.ok) return { ok: true, verdict: outcome.verdict, attempts, latencyMs };
    if (!outcome.retryable || attempts >= retry.maxAttempts) {
      const tail = outcome.retryable ? `after ${attempts} attempts` : "(not retried)";
      return { ok: false, error: `${outcome.error} ${tail}`, attempts, latencyMs };
    }
    await sleep(backoffDelay(attempts - 1, retry, Math.random, outcome.retryAfterMs), options.signal);
  }
}

type AttemptOutcome = { ok: true; verdict: JudgeVerdict } | { ok: false; error: string; retryable: boolean; retryAfterMs?: number };

async function attempt(client: OpenAI, request: JudgeRequest, options: JudgeCallOptions): Promise<AttemptOutcome> {
  let content: string | null | undefined;
  try {
    const completion = await client.chat.completions.create(
      {
        model: request.model,
        messages: [{ role: "user", content: request.prompt }],
        response_format: JUDGE_RESPONSE_FORMAT,
        ...request.sampling,
      },
      {
        // Retries are ours, so attempts are counted and backoff is capped the same way for every failure.
        maxRetries: 0,
        ...(options.timeoutMs === undefined ? {} : { timeout: options.timeoutMs }),
        ...(options.signal ? { signal: options.signal } : {}),
      },
    );
    content = (completion as { choices?: { message?: { content?: string | null } }[] }).choices?.[0]?.message?.content;
  } catch (error) {
    if (options.signal?.aborted === true) throw abortReason(options.signal);
    if (error instanceof APIUserAbortError) throw error;
    return classify(error, options.timeoutMs);
  }
  try {
    return { ok: true, verdict: parseVerdict(content) };
  } catch (error) {
    if (error instanceof VerdictParseError) return { ok: false, error: error.message, retryable: true };
    throw error;
  }
}

function classify(error: unknown, timeoutMs: number | undefined): AttemptOutcome {
  if (error instanceof APIConnectionTimeoutError) {
    return { ok: false, error: `judge timed out${timeoutMs === undefined ? "" : ` after ${timeoutMs} ms`}`, retryable: true };
  }
  if (error instanceof APIConnectionError) return { ok: false, error: `judge connection failed: ${error.message}`, retryable: true };
  if (error instanceof APIError && typeof error.status === "number") {
    const status = error.status;
    return { ok: false, error: `judge HTTP ${status}: ${error.message}`, retryable: isRetryableStatus(status), retryAfterMs: retryAfterMs(error.headers as Headers | undefined) };
  }
  // Anything else is a reply the client could not read (a body that is not JSON, say).
  return { ok: false, error: `judge reply unreadable: ${error instanceof Error ? error.message : String(error)}`, retryable: true };
}
