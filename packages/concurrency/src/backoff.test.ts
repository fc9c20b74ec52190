import { describe, expect, it } from "vitest";
import { abortReason } from "./abort.js";
import { backoffDelay, retryAfterMs, sleep } from "./backoff.js";

describe("backoffDelay", () => {
  const jittered = { initialDelayMs: 100, maxDelayMs: 1_000, factor: 2, jitter: 0.5 };
  const plain = { initialDelayMs: 100, maxDelayMs: 1_000, factor: 2 };

  it("grows exponentially with the random part at its bounds", () => {
    // retry 2: 100 * 2^2 = 400; half fixed, half random.
    expect(backoffDelay(2, jittered, () => 0)).toBe(200);
    expect(backoffDelay(2, jittered, () => 1)).toBe(400);
    expect(backoffDelay(0, jittered, () => 0.5)).toBe(75);
  });

  it("without jitter, doubles from the initial delay up to the cap", () => {
    expect([0, 1, 2, 3, 4].map((retry) => backoffDelay(retry, plain))).toEqual([100, 200, 400, 800, 1_000]);
  });

  it("never exceeds the cap, even when the server asks for longer", () => {
    expect(backoffDelay(10, jittered, () => 1)).toBe(1_000);
    expect(backoffDelay(0, jittered, () => 0, 60_000)).toBe(1_000);
    expect(backoffDelay(0, plain, Math.random, 60_000)).toBe(1_000);
  });

  it("waits at least what the server asked for", () => {
    expect(backoffDelay(0, jittered, () => 0, 700)).toBe(700);
    expect(backoffDelay(0, plain, Math.random, 350)).toBe(350);
  });
});

describe("retryAfterMs", () => {
  const headers = (entries: Record<string, string>) => new Headers(entries);
  it("reads milliseconds, seconds and HTTP dates", () => {
    expect(retryAfterMs(headers({ "retry-after-ms": "250" }))).toBe(250);
    expect(retryAfterMs(headers({ "retry-after": "3" }))).toBe(3_000);
    expect(retryAfterMs(headers({ "retry-after": "0" }))).toBe(0);
    const now = Date.parse("2025-01-01T00:00:00Z");
    expect(retryAfterMs(headers({ "retry-after": "Wed, 01 Jan 2025 00:00:05 GMT" }), now)).toBe(5_000);
    expect(retryAfterMs(headers({ "retry-after": "Tue, 31 Dec 2024 23:59:00 GMT" }), now)).toBe(0);
  });

  it("is undefined when the server asked for nothing readable", () => {
    expect(retryAfterMs(undefined)).toBeUndefined();
    expect(retryAfterMs(headers({}))).toBeUndefined();
    expect(retryAfterMs(headers({ "retry-after": "soon" }))).toBeUndefined();
    expect(retryAfterMs(headers({ "retry-after-ms": "-5" }))).toBeUndefined();
  });
});

describe("sleep", () => {
  it("resolves after the delay", async () => {
    const started = performance.now();
    await sleep(20);
    expect(performance.now() - started).toBeGreaterThanOrEqual(15);
  });

  it("rejects with the abort reason as soon as the signal aborts", async () => {
    const controller = new AbortController();
    const waiting = sleep(10_000, controller.signal);
    controller.abort(new Error("stop"));
    await expect(waiting).rejects.toThrow("stop");
    await expect(sleep(1, controller.signal)).rejects.toThrow("stop");
  });
});

describe("abortReason", () => {
  it("is the signal's reason when that is an error, else an AbortError that keeps the reason as its cause", () => {
    const stop = new Error("stop");
    expect(abortReason(AbortSignal.abort(stop))).toBe(stop);
    expect(abortReason(AbortSignal.abort())).toMatchObject({ name: "AbortError" });
    const fromString = abortReason(AbortSignal.abort("shutting down"));
    expect(fromString).toBeInstanceOf(Error);
    expect(fromString).toMatchObject({ name: "AbortError", cause: "shutting down" });
  });
});
