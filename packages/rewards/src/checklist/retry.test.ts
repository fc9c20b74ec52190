import { backoffDelay } from "@envace/concurrency";
import { describe, expect, it } from "vitest";
import { DEFAULT_RETRY } from "./retry.js";

describe("DEFAULT_RETRY", () => {
  it("waits 1 s, 2 s, 4 s, 8 s between five attempts, capped at 30 s", () => {
    expect([0, 1, 2, 3].map((retry) => backoffDelay(retry, DEFAULT_RETRY))).toEqual([1_000, 2_000, 4_000, 8_000]);
    expect(backoffDelay(9, DEFAULT_RETRY)).toBe(30_000);
    expect(DEFAULT_RETRY.maxAttempts).toBe(5);
  });

  it("waits at least what the server asked, never past the cap", () => {
    expect(backoffDelay(0, DEFAULT_RETRY, Math.random, 3_500)).toBe(3_500);
    expect(backoffDelay(0, DEFAULT_RETRY, Math.random, 600_000)).toBe(30_000);
  });
});
