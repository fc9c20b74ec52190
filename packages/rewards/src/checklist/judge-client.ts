import { HttpError, withRetry, type RetryOptions } from "@envace/http";
import { fromOpenAIError } from "@envace/http/openai";
import type OpenAI from "openai";
import { canonicalJson, sha256Hex } from "@envace/records";
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
  return sha256Hex(canonicalJson({ model: request.model, prompt: request.prompt, response_format: JUDGE_RESPONSE_FORMAT, sampling: request.sampling }));
}

/** 1 s, 2 s, 4 s, 8 s between five attempts; no wait is longer than 30 s, whatever `retry-after` asks. */
export const defaultJudgeRetry: RetryOptions = { maxRetries: 4, initialDelayMs: 1_000, maxDelayMs: 30_000, factor: 2 };

export type JudgeCallResult =
  { ok: true; verdict: JudgeVerdict; attempts: number; latencyMs: number } | { ok: false; error: string; attempts: number; latencyMs: number };

export interface JudgeCallOptions {
  /** Default `defaultJudgeRetry`. */
  retry?: RetryOptions;
  /** Per attempt. */
  timeoutMs?: number;
  signal?: AbortSignal;
}

/**
 * Ask the judge once, through `@envace/http`'s retry policy: HTTP failures worth retrying
 * (timeouts, connection failures, 408, 409, 429, 5xx) and unusable replies (malformed or
 * schema-violating JSON, as a `malformed` HttpError) are tried again with capped exponential
 * backoff; other 4xx answers are not, since asking again cannot change them. A failure is
 * returned, not thrown, so the caller can mask the rollout; only cancellation through `signal`
 * throws.
 */
export async function callJudge(client: OpenAI, request: JudgeRequest, options: JudgeCallOptions = {}): Promise<JudgeCallResult> {
  const retry = options.retry ?? defaultJudgeRetry;
  // eslint-disable-next-line regexp/no-super-linear-move -- the configured judge URL, short and trusted
  const url = `${client.baseURL.replace(/\/+$/, "")}/chat/completions`;
  const started = performance.now();
  let attempts = 0;
  try {
    const verdict = await withRetry(
      () => {
        attempts++;
        return attempt(client, url, request, options);
      },
      retry,
      options.signal,
    );
    return { ok: true, verdict, attempts, latencyMs: performance.now() - started };
  } catch (error) {
    if (options.signal?.aborted === true || !(error instanceof HttpError)) throw error;
    const tail = error.isRetryable ? `after ${attempts} attempts` : "(not retried)";
    return { ok: false, error: `${describe(error, options.timeoutMs)} ${tail}`, attempts, latencyMs: performance.now() - started };
  }
}

async function attempt(client: OpenAI, url: string, request: JudgeRequest, options: JudgeCallOptions): Promise<JudgeVerdict> {
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
        // Retries are withRetry's, so attempts are counted and backoff is capped the same way for every failure.
        maxRetries: 0,
        ...(options.timeoutMs === undefined ? {} : { timeout: options.timeoutMs }),
        ...(options.signal ? { signal: options.signal } : {}),
      },
    );
    content = (completion as { choices?: { message?: { content?: string | null } }[] }).choices?.[0]?.message?.content;
  } catch (error) {
    throw fromOpenAIError(error, url, options.signal);
  }
  try {
    return parseVerdict(content);
  } catch (error) {
    // An unusable reply is worth another try, like a body that is not JSON.
    if (error instanceof VerdictParseError) throw new HttpError("malformed", url, error.message, { cause: error });
    throw error;
  }
}

/** A failed judge call in a line for the masked rollout's reason (the URL stays in the error's cause chain). */
function describe(error: HttpError, timeoutMs: number | undefined): string {
  switch (error.code) {
    case "timeout":
      return `judge timed out${timeoutMs === undefined ? "" : ` after ${timeoutMs} ms`}`;
    case "connection":
      return `judge ${error.detail}`;
    case "status":
      return `judge HTTP ${error.status ?? 0}: ${error.detail}`;
    default:
      return `judge reply unusable: ${error.detail}`;
  }
}
