import { describe, expect, it } from "vitest";
import { conversationKey, LruStore } from "./memory-store.js";

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

describe("conversationKey", () => {
  const opening = [
    { role: "system" as const, content: "s" },
    { role: "user" as const, content: "u" },
  ];
  it("is the same for every later turn of a conversation, and differs by owner, tools and opening", () => {
    const later = [...opening, { role: "assistant" as const, content: "a" }, { role: "user" as const, content: "more" }];
    expect(conversationKey("t", [], later)).toBe(conversationKey("t", [], opening));
    expect(conversationKey("t2", [], opening)).not.toBe(conversationKey("t", [], opening));
    expect(conversationKey("t", [{ type: "function", function: { name: "f" } }], opening)).not.toBe(conversationKey("t", [], opening));
    expect(conversationKey("t", [], [opening[0]!, { role: "user", content: "v" }])).not.toBe(conversationKey("t", [], opening));
  });
});
