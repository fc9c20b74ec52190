import { getEventListeners } from "node:events";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { ConcurrencyLimit } from "./limit.js";

const tick = () => new Promise((resolve) => setImmediate(resolve));

describe("ConcurrencyLimit", () => {
  it("never runs more than the limit at once and runs everything", async () => {
    const limit = new ConcurrencyLimit(2);
    let active = 0;
    let peak = 0;
    const task = async (i: number) => {
      active++;
      peak = Math.max(peak, active);
      await new Promise((resolve) => setTimeout(resolve, 5));
      active--;
      return i;
    };
    const results = await Promise.all([0, 1, 2, 3, 4, 5].map((i) => limit.run(() => task(i))));
    expect(results).toEqual([0, 1, 2, 3, 4, 5]);
    expect(peak).toBe(2);
    expect(limit.active).toBe(0);
  });

  it("starts waiting tasks in arrival order", async () => {
    const limit = new ConcurrencyLimit(2);
    const started: number[] = [];
    let peak = 0;
    const release: (() => void)[] = [];
    const tasks = [0, 1, 2, 3, 4].map((n) =>
      limit.run(async () => {
        started.push(n);
        peak = Math.max(peak, limit.active);
        await new Promise<void>((resolve) => release.push(resolve));
        return n;
      }),
    );
    await tick();
    expect(started).toEqual([0, 1]);
    expect(limit.pending).toBe(3);
    while (release.length > 0 || started.length < 5) {
      release.shift()?.();
      await tick();
    }
    expect(await Promise.all(tasks)).toEqual([0, 1, 2, 3, 4]);
    expect(started).toEqual([0, 1, 2, 3, 4]);
    expect(peak).toBe(2);
    expect(limit.active).toBe(0);
  });

  it("drops a waiting task whose signal aborts, without running it", async () => {
    const limit = new ConcurrencyLimit(1);
    let release!: () => void;
    const first = limit.run(() => new Promise<void>((resolve) => (release = resolve)));
    const controller = new AbortController();
    let ran = false;
    const second = limit.run(() => {
      ran = true;
      return Promise.resolve();
    }, controller.signal);
    expect(limit.pending).toBe(1);
    controller.abort();
    await expect(second).rejects.toMatchObject({ name: "AbortError" });
    expect(limit.pending).toBe(0);
    release();
    await first;
    expect(ran).toBe(false);
    expect(limit.active).toBe(0);
  });

  it("listens to a signal once however many tasks wait on it, and stops listening when none waits", async () => {
    const limit = new ConcurrencyLimit(1);
    const shared = new AbortController();
    const other = new AbortController();
    const release: (() => void)[] = [];
    const hold = () => new Promise<void>((resolve) => release.push(resolve));
    const running = limit.run(hold);
    const waiting = Array.from({ length: 12 }, (_, i) => limit.run(hold, i === 5 ? other.signal : shared.signal));
    expect(getEventListeners(shared.signal, "abort")).toHaveLength(1);
    expect(getEventListeners(other.signal, "abort")).toHaveLength(1);
    shared.abort(new Error("stop"));
    const settled = await Promise.allSettled(waiting.filter((_, i) => i !== 5));
    expect(settled.every((r) => r.status === "rejected" && (r.reason as Error).message === "stop")).toBe(true);
    expect(limit.pending).toBe(1);
    release.shift()!();
    await running;
    await tick();
    expect(getEventListeners(other.signal, "abort")).toHaveLength(0);
    release.shift()!();
    await waiting[5];
    expect(limit.active).toBe(0);
  });

  it("rejects with the signal's reason, and at once when the signal has already aborted", async () => {
    const limit = new ConcurrencyLimit(1);
    const controller = new AbortController();
    controller.abort(new Error("cancelled by user"));
    let ran = false;
    await expect(
      limit.run(() => {
        ran = true;
        return Promise.resolve();
      }, controller.signal),
    ).rejects.toThrow("cancelled by user");
    expect(ran).toBe(false);
    expect(limit.active).toBe(0);
  });

  it("frees the slot of a task that throws", async () => {
    const limit = new ConcurrencyLimit(1);
    await expect(limit.run(() => Promise.reject(new Error("boom")))).rejects.toThrow("boom");
    expect(await limit.run(() => Promise.resolve("next"))).toBe("next");
  });

  it("rejects a limit that is not a positive integer", () => {
    expect(() => new ConcurrencyLimit(0)).toThrow("positive integer");
    expect(() => new ConcurrencyLimit(1.5)).toThrow(RangeError);
  });

  it("keeps active + pending equal to the tasks not yet settled, and active within the limit, whatever aborts", async () => {
    await fc.assert(
      fc.asyncProperty(fc.integer({ min: 1, max: 4 }), fc.array(fc.boolean(), { minLength: 1, maxLength: 12 }), async (size, aborts) => {
        const limit = new ConcurrencyLimit(size);
        const release: (() => void)[] = [];
        const controllers = aborts.map(() => new AbortController());
        let ran = 0;
        const runs = aborts.map((_, i) =>
          limit
            .run(() => {
              ran++;
              return new Promise<void>((resolve) => release.push(resolve));
            }, controllers[i]!.signal)
            .catch(() => undefined),
        );
        expect(limit.active).toBe(Math.min(size, aborts.length));
        aborts.forEach((abort, i) => {
          if (abort) controllers[i]!.abort();
        });
        await tick();
        while (release.length > 0) {
          expect(limit.active).toBeLessThanOrEqual(size);
          release.shift()!();
          await tick();
        }
        await Promise.all(runs);
        expect(limit.active).toBe(0);
        expect(limit.pending).toBe(0);
        // Tasks already running when their signal aborted finish; waiting ones never start.
        expect(ran).toBe(aborts.filter((abort, i) => !abort || i < size).length);
      }),
    );
  });
});
