import { describe, expect, it } from "vitest";
import { ConcurrencyLimiter } from "./limiter.js";
import { backoffDelay, DEFAULT_RETRY, sleep } from "./retry.js";

describe("backoffDelay", () => {
  const policy = { maxAttempts: 6, initialDelayMs: 100, maxDelayMs: 1_000, multiplier: 2 };

  it("doubles from the initial delay up to the cap", () => {
    expect([1, 2, 3, 4, 5].map((attempt) => backoffDelay(attempt, policy))).toEqual([100, 200, 400, 800, 1_000]);
  });

  it("waits at least what the server asked, but never past the cap", () => {
    expect(backoffDelay(1, policy, 350)).toBe(350);
    expect(backoffDelay(1, policy, 60_000)).toBe(1_000);
  });

  it("defaults to 1 s, 2 s, 4 s, 8 s between five attempts, capped at 30 s", () => {
    expect([1, 2, 3, 4].map((attempt) => backoffDelay(attempt, DEFAULT_RETRY))).toEqual([1_000, 2_000, 4_000, 8_000]);
    expect(backoffDelay(10, DEFAULT_RETRY)).toBe(30_000);
  });
});

describe("sleep", () => {
  it("rejects with the abort reason as soon as the signal aborts", async () => {
    const controller = new AbortController();
    const waiting = sleep(10_000, controller.signal);
    controller.abort(new Error("stop"));
    await expect(waiting).rejects.toThrow("stop");
    await expect(sleep(1, controller.signal)).rejects.toThrow("stop");
  });
});

describe("ConcurrencyLimiter", () => {
  it("runs at most `limit` tasks at once, in arrival order", async () => {
    const limiter = new ConcurrencyLimiter(2);
    const started: number[] = [];
    let peak = 0;
    const release: (() => void)[] = [];
    const tasks = [0, 1, 2, 3, 4].map((n) =>
      limiter.run(async () => {
        started.push(n);
        peak = Math.max(peak, limiter.running);
        await new Promise<void>((resolve) => release.push(resolve));
        return n;
      }),
    );
    await new Promise((resolve) => setImmediate(resolve));
    expect(started).toEqual([0, 1]);
    while (release.length > 0 || started.length < 5) {
      release.shift()?.();
      await new Promise((resolve) => setImmediate(resolve));
    }
    expect(await Promise.all(tasks)).toEqual([0, 1, 2, 3, 4]);
    expect(started).toEqual([0, 1, 2, 3, 4]);
    expect(peak).toBe(2);
    expect(limiter.running).toBe(0);
  });

  it("frees the slot of a task that throws", async () => {
    const limiter = new ConcurrencyLimiter(1);
    await expect(limiter.run(() => Promise.reject(new Error("boom")))).rejects.toThrow("boom");
    expect(await limiter.run(() => Promise.resolve("next"))).toBe("next");
  });

  it("rejects a limit that is not a positive integer", () => {
    expect(() => new ConcurrencyLimiter(0)).toThrow(RangeError);
  });
});
