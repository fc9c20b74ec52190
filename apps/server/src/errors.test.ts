import { EnvaceError } from "@envace/errors";
import { HttpError } from "@envace/http";
import { describe, expect, it } from "vitest";
import { ApiError, badField, toApiError } from "./errors.js";

describe("ApiError", () => {
  it("is an EnvaceError whose code is the OpenAI code it answers with", () => {
    const error = new ApiError(429, "busy", "rate_limit_error", null, "queue_full", { "retry-after": "1" });
    expect(error).toBeInstanceOf(EnvaceError);
    expect(error.name).toBe("ApiError");
    expect(error.code).toBe("queue_full");
    expect(error.headers).toEqual({ "retry-after": "1" });
    expect(error.body).toEqual({ error: { message: "busy", type: "rate_limit_error", param: null, code: "queue_full" } });
  });

  it("answers code null when given none, and reads its type as its code", () => {
    const error = new ApiError(400, "bad", "invalid_request_error");
    expect(error.code).toBe("invalid_request_error");
    expect(error.body.error.code).toBeNull();
  });

  it("is retryable for a full queue and server errors, not for the client's own", () => {
    expect(new ApiError(429, "busy", "rate_limit_error").isRetryable).toBe(true);
    expect(new ApiError(502, "upstream", "upstream_error").isRetryable).toBe(true);
    expect(badField("n", "too large").isRetryable).toBe(false);
  });

  it("maps upstream failures to 502 and 504", () => {
    const timeout = toApiError(new HttpError("timeout", "http://model/v1", "no answer"));
    expect([timeout.status, timeout.code]).toEqual([504, "upstream_timeout"]);
    const failed = toApiError(new HttpError("connection", "http://model/v1", "reset"));
    expect([failed.status, failed.code]).toEqual([502, "upstream_error"]);
    expect(toApiError(new Error("boom")).body.error).toEqual({ message: "internal server error", type: "server_error", param: null, code: "internal_error" });
  });
});
