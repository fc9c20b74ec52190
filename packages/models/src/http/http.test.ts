import { describe, expect, it } from "vitest";
import { ModelServerError } from "./errors.js";
import { defaultRetryOptions, withRetry } from "./retry.js";

describe("ModelServerError.retryable", () => {
  const status = (code: number) => new ModelServerError("status", "http://x", "e", code);
  it("retries throttling, conflicts, timeouts and server faults but not client errors or dialect mismatches", () => {
    expect([408, 409, 429, 500, 503].map((code) => status(code).retryable)).toEqual([true, true, true, true, true]);
    expect([400, 401, 404, 422].map((code) => status(code).retryable)).toEqual([false, false, false, false]);
    expect(new ModelServerError("connection", "u", "m").retryable).toBe(true);
    expect(new ModelServerError("timeout", "u", "m").retryable).toBe(true);
    expect(new ModelServerError("malformed", "u", "m").retryable).toBe(true);
    expect(new ModelServerError("shape", "u", "m").retryable).toBe(false);
  });
});

describe("withRetry", () => {
  const fast = { ...defaultRetryOptions, initialDelayMs: 1, maxDelayMs: 2 };

  it("retries retryable failures until success and reports each retry", async () => {
    let calls = 0;
    const retries: number[] = [];
    const result = await withRetry(
      () => {
        calls++;
        if (calls < 3) return Promise.reject(new ModelServerError("status", "u", "busy", 503));
        return Promise.resolve("done");
      },
      fast,
      undefined,
      (event) => retries.push(event.attempt),
    );
    expect(result).toBe("done");
    expect(retries).toEqual([0, 1]);
  });

  it("gives up after maxRetries with the last error", async () => {
    let calls = 0;
    const failing = () => {
      calls++;
      return Promise.reject(new ModelServerError("status", "u", `busy ${calls}`, 503));
    };
    await expect(withRetry(failing, { ...fast, maxRetries: 2 })).rejects.toThrow("busy 3");
    expect(calls).toBe(3);
  });

  it("does not retry other errors", async () => {
    let calls = 0;
    const failing = () => {
      calls++;
      return Promise.reject(new ModelServerError("status", "u", "bad request", 400));
    };
    await expect(withRetry(failing, fast)).rejects.toThrow("bad request");
    expect(calls).toBe(1);
  });

  it("stops waiting as soon as the signal aborts", async () => {
    const controller = new AbortController();
    const slow = { ...fast, initialDelayMs: 60_000, maxDelayMs: 60_000 };
    const pending = withRetry(() => Promise.reject(new ModelServerError("timeout", "u", "slow")), slow, controller.signal);
    setTimeout(() => controller.abort(), 10);
    await expect(pending).rejects.toMatchObject({ name: "AbortError" });
  });
});
