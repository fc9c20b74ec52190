import { TinkerHttpError, TinkerRequestFailedError, TinkerTimeoutError } from "./errors.js";
import { backoffDelay, retryAfterMs, sleep } from "@envace/concurrency";
import { errorDetail, HttpError, type HttpReply } from "@envace/http";
import type { TinkerHttp } from "./http.js";
import { FailedFuture, MetadataOnly, TryAgain } from "./wire.js";

export const RETRIEVE_FUTURE = "/api/v1/retrieve_future";

export interface FutureOptions {
  /** Submit the original request again and return its new request id (after a 410). */
  resubmit?: () => Promise<string>;
  signal?: AbortSignal;
  /** `X-Tinker-Request-Type` telemetry, e.g. `ForwardBackward`. */
  requestType?: string;
  /** The `Accept` header of the polls: protobuf and JSON for results that have a protobuf form. */
  accept?: string;
}

/**
 * Poll `retrieve_future` until the request completes, with the protocol's reply handling:
 *
 * | reply | action |
 * | --- | --- |
 * | 200 result | return it (a protobuf result as its bytes) |
 * | 200 `try_again`, 408 | poll again at once (the server long-polls) |
 * | 200 `complete_metadata` | poll again for the payload |
 * | 200 `{error, category}` | throw `TinkerRequestFailedError` |
 * | 5xx | poll again after a short, growing pause |
 * | 429, connection error, timeout | back off min(2ⁿ, 30) s (longer when `Retry-After` asks, up to 30 s) |
 * | 400 | retry up to `badRequestRetries` times, then throw (SkyRL tx reports failures so) |
 * | 410 | submit the request again (`resubmit`) up to `goneResubmits` times |
 * | 402 | pause `billingPauseMs`, up to `billingMaxPauseMs` in all |
 * | other 4xx | throw `TinkerHttpError` |
 */
export async function retrieveFuture(http: TinkerHttp, firstRequestId: string, options: FutureOptions = {}): Promise<unknown> {
  const policy = http.options.retry;
  const started = Date.now();
  let requestId = firstRequestId;
  let iteration = 0;
  let backoffs = 0;
  let serverErrors = 0;
  let badRequests = 0;
  let resubmits = 0;
  let billingPaused = 0;
  for (;;) {
    if (Date.now() - started > policy.futureDeadlineMs) {
      throw new TinkerTimeoutError(`request ${requestId}: no result after ${policy.futureDeadlineMs} ms`);
    }
    let reply: HttpReply;
    try {
      reply = await http.send(
        "POST",
        RETRIEVE_FUTURE,
        { request_id: requestId, allow_metadata_only: false },
        {
          timeoutMs: http.options.pollTimeoutMs,
          ...(options.signal ? { signal: options.signal } : {}),
          headers: {
            "X-Tinker-Request-Iteration": String(iteration++),
            ...(options.requestType ? { "X-Tinker-Request-Type": options.requestType } : {}),
            ...(options.accept ? { Accept: options.accept } : {}),
          },
        },
      );
    } catch (error) {
      // Only silence is waited out: a reply the client cannot read will not improve.
      if (options.signal?.aborted || !(error instanceof HttpError) || (error.code !== "connection" && error.code !== "timeout")) throw error;
      await sleep(backoffDelay(backoffs++, policy), options.signal);
      continue;
    }
    const { status, body } = reply;
    if (status === 200) {
      if (body instanceof Uint8Array) return body;
      if (TryAgain.safeParse(body).success || MetadataOnly.safeParse(body).success) continue;
      const failed = FailedFuture.safeParse(body);
      if (failed.success) throw new TinkerRequestFailedError(requestId, failed.data.error, failed.data.category);
      return body;
    }
    if (status === 408) continue;
    if (status >= 500) {
      await sleep(Math.min(50 * 2 ** serverErrors++, policy.initialDelayMs), options.signal);
      continue;
    }
    if (status === 429) {
      await sleep(backoffDelay(backoffs++, policy, Math.random, retryAfterMs(reply.headers)), options.signal);
      continue;
    }
    if (status === 400) {
      if (badRequests++ < policy.badRequestRetries) continue;
      throw new TinkerRequestFailedError(requestId, errorDetail(body), "unknown");
    }
    if (status === 410 && options.resubmit && resubmits < policy.goneResubmits) {
      resubmits += 1;
      requestId = await options.resubmit();
      continue;
    }
    if (status === 402 && billingPaused + policy.billingPauseMs <= policy.billingMaxPauseMs) {
      billingPaused += policy.billingPauseMs;
      await sleep(policy.billingPauseMs, options.signal);
      continue;
    }
    throw new TinkerHttpError(RETRIEVE_FUTURE, status, `request ${requestId}: ${errorDetail(body)}`);
  }
}
