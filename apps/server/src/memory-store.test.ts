import { createHash } from "node:crypto";
import type { Message } from "@envace/protocol";
import { describe, expect, it } from "vitest";
import { LruStore, memoryScope, prefixKeys } from "./memory-store.js";

describe("LruStore", () => {
  it("evicts the least recently used entry beyond the count bound; a read refreshes an entry", () => {
    const store = new LruStore<string>(2, 1000);
    store.set("a", "A", 1);
    store.set("b", "B", 1);
    expect(store.get("a")).toBe("A");
    store.set("c", "C", 1);
    expect(store.get("b")).toBeUndefined();
    expect([store.get("a"), store.get("c"), store.size]).toEqual(["A", "C", 2]);
  });

  it("evicts until the byte bound holds, and keeps nothing larger than the bound", () => {
    const store = new LruStore<string>(10, 10);
    store.set("a", "A", 4);
    store.set("b", "B", 4);
    store.set("c", "C", 4);
    expect([store.get("a"), store.get("b"), store.get("c"), store.bytes]).toEqual([undefined, "B", "C", 8]);
    store.set("huge", "H", 11);
    expect([store.get("huge"), store.bytes]).toEqual([undefined, 8]);
    store.set("b", "B2", 2);
    expect([store.get("b"), store.bytes]).toEqual(["B2", 6]);
  });
});

describe("prefixKeys and memoryScope", () => {
  const sha = (text: string): string => createHash("sha256").update(text).digest("hex");
  const opening: Message[] = [
    { role: "system", content: "s" },
    { role: "user", content: "u" },
  ];

  it("chains the canonical JSON hash of each message onto the scope, longest prefix first", () => {
    const first = sha(`scope\n${sha('{"content":"s","role":"system"}')}`);
    const second = sha(`${first}\n${sha('{"content":"u","role":"user"}')}`);
    expect(prefixKeys("scope", opening)).toEqual([second, first]);
    // Key order inside a message does not change its key.
    expect(prefixKeys("scope", [{ content: "s", role: "system" }])).toEqual([first]);
  });

  it("a conversation that extends another finds its key; one that only shares the opening does not", () => {
    const a: Message[] = [...opening, { role: "assistant", content: "a1" }, { role: "user", content: "secret of A" }];
    const aLater: Message[] = [...a, { role: "assistant", content: "a2" }];
    const b: Message[] = [...opening, { role: "assistant", content: "a1" }, { role: "user", content: "question of B" }];
    const builtFrom = prefixKeys("scope", a)[0]!;
    expect(prefixKeys("scope", aLater)).toContain(builtFrom);
    expect(prefixKeys("scope", b)).not.toContain(builtFrom);
    // B shares only A's first three messages.
    expect(prefixKeys("scope", b).filter((key) => prefixKeys("scope", a).includes(key))).toHaveLength(3);
  });

  it("the scope differs by owner, tools, rehearsal setting and memory budget", () => {
    const tool = { type: "function" as const, function: { name: "f" } };
    const base = memoryScope("token-a", [], "parallel:2", 64);
    const others = [
      memoryScope("token-b", [], "parallel:2", 64),
      memoryScope("token-a", [tool], "parallel:2", 64),
      memoryScope("token-a", [], "parallel:1", 64),
      memoryScope("token-a", [], "parallel:2", null),
    ];
    expect(new Set([base, ...others]).size).toBe(5);
    expect(memoryScope("token-a", [], "parallel:2", 64)).toBe(base);
  });
});

describe("LruStore.obtain: single flight", () => {
  const never = new AbortController().signal;
  const gate = () => {
    let open!: () => void;
    const opened = new Promise<void>((resolve) => (open = resolve));
    return { open, opened };
  };
  /** `obtain` with a build that resolves to `value` at once, sized 1. */
  const obtainValue = (store: LruStore<string>, keys: string[], value: string, signal = never) =>
    store.obtain(
      keys,
      () => Promise.resolve(value),
      () => 1,
      signal,
    );

  it("concurrent callers of one key share one build; the value is stored for the next", async () => {
    const store = new LruStore<string>(10, 1000);
    const { open, opened } = gate();
    let builds = 0;
    const build = async () => {
      builds += 1;
      await opened;
      return "memory";
    };
    const first = store.obtain(["k"], build, () => 1, never);
    const second = store.obtain(["k"], build, () => 1, never);
    expect(store.building).toBe(1);
    open();
    expect(await Promise.all([first, second])).toEqual([
      { value: "memory", built: true },
      { value: "memory", built: false },
    ]);
    expect(await store.obtain(["k"], build, () => 1, never)).toEqual({ value: "memory", built: false });
    expect([builds, store.building, store.size]).toEqual([1, 0, 1]);
  });

  it("prefers the first key that has a value, and stores a build under the first key", async () => {
    const store = new LruStore<string>(10, 1000);
    store.set("short", "old", 1);
    expect(await obtainValue(store, ["long", "short"], "new")).toEqual({ value: "old", built: false });
    store.set("long", "longer", 1);
    expect(await obtainValue(store, ["long", "short"], "new")).toEqual({ value: "longer", built: false });
    expect(await obtainValue(store, ["other", "none"], "new")).toEqual({ value: "new", built: true });
    expect([store.get("other"), store.get("none")]).toEqual(["new", undefined]);
  });

  it("a failed build is shared with its waiters but not kept", async () => {
    const store = new LruStore<string>(10, 1000);
    const { open, opened } = gate();
    const failing = async (): Promise<string> => {
      await opened;
      throw new Error("upstream down");
    };
    const first = store.obtain(["k"], failing, () => 1, never);
    const second = obtainValue(store, ["k"], "unused");
    open();
    await expect(first).rejects.toThrow("upstream down");
    await expect(second).rejects.toThrow("upstream down");
    expect([store.size, store.building]).toEqual([0, 0]);
    expect(await obtainValue(store, ["k"], "again")).toEqual({ value: "again", built: true });
  });

  it("a waiter whose builder's client left builds on its own; a waiter that leaves stops waiting", async () => {
    const store = new LruStore<string>(10, 1000);
    const leader = new AbortController();
    // A build that runs until its request is cancelled.
    const cancelled = () => new Promise<string>((_resolve, reject) => leader.signal.addEventListener("abort", () => reject(leader.signal.reason as Error)));
    const first = store.obtain(["k"], cancelled, () => 1, leader.signal);
    const second = obtainValue(store, ["k"], "own");
    const leaving = new AbortController();
    const third = obtainValue(store, ["k"], "unused", leaving.signal);
    leaving.abort(new Error("client left"));
    await expect(third).rejects.toThrow("client left");
    leader.abort(new Error("leader left"));
    await expect(first).rejects.toThrow("leader left");
    expect(await second).toEqual({ value: "own", built: true });
  });

  it("shares at most maxInFlight builds; beyond that a build runs unshared", async () => {
    const store = new LruStore<string>(10, 1000, 1);
    const { open, opened } = gate();
    let builds = 0;
    const build = (value: string) => async () => {
      builds += 1;
      await opened;
      return value;
    };
    const a = store.obtain(["a"], build("A"), () => 1, never);
    const b = store.obtain(["b"], build("B"), () => 1, never);
    const b2 = store.obtain(["b"], build("B2"), () => 1, never);
    expect(store.building).toBe(1);
    open();
    expect((await Promise.all([a, b, b2])).map((r) => r.value)).toEqual(["A", "B", "B2"]);
    expect(builds).toBe(3);
  });
});
