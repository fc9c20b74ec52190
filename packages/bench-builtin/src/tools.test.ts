import { ToolSpec } from "@envace/protocol";
import { describe, expect, it } from "vitest";
import { DEMO_WORLD } from "./examples.js";
import { ErrorCode, Shop, TOOL_SPECS, ToolName, WRITE_TOOLS } from "./tools.js";
import type { World } from "./world.js";

// The demo shop, with a richer user, mivo sold out and a cancelled order, so that every rule of
// every tool has a case to fail on.
const world: World = {
  ...DEMO_WORLD,
  users: { ...DEMO_WORLD.users, ada: { balance: 20 } },
  items: { ...DEMO_WORLD.items, mivo: { price: 2, stock: 0, locked: false } },
  orders: { ...DEMO_WORLD.orders, o3: { user: "ada", item: "suta", qty: 1, cost: 1, state: "cancelled" } },
};

function errorOf(shop: Shop, name: string, args: unknown) {
  const result = shop.call(name, args);
  if (result.ok) throw new Error(`expected ${name} to fail, got ${JSON.stringify(result.content)}`);
  return result.error;
}

/** A write tool's refusals: each answers its code and message, changes nothing, and is recorded in `rejected`. */
function rejects(tool: ToolName, cases: [args: Record<string, unknown>, code: string, message: string][]): void {
  it.each(cases)("rejects %j with %s", (args, code, message) => {
    const shop = new Shop(world);
    expect(errorOf(shop, tool, args)).toEqual({ code, message });
    expect(shop.state()).toEqual({ ...world, rejected: [{ tool, code }] });
  });
}

describe("tool specs", () => {
  it("are OpenAI function tools with closed JSON-Schema parameters, one per tool name", () => {
    expect(TOOL_SPECS.map((spec) => ToolSpec.parse(spec).function.name)).toEqual(ToolName.options);
    const buy = TOOL_SPECS.find((spec) => spec.function.name === "buy")!;
    expect(buy.function.parameters).toEqual({
      type: "object",
      properties: { user: { type: "string" }, item: { type: "string" }, qty: { type: "integer", minimum: 1 } },
      required: ["user", "item", "qty"],
      additionalProperties: false,
    });
  });
});

describe("reads", () => {
  it("user shows the balance and the user's orders (id → item)", () => {
    expect(new Shop(world).call("user", { user: "ada" })).toEqual({ ok: true, content: { balance: 20, orders: { o1: "kelo", o3: "suta" } } });
  });

  it("item shows price, stock and the lock", () => {
    expect(new Shop(world).call("item", { item: "suta" })).toEqual({ ok: true, content: { price: 1, stock: 6, locked: true } });
  });

  it("order shows who ordered what, its cost and its state", () => {
    expect(new Shop(world).call("order", { id: "o2" })).toEqual({
      ok: true,
      content: { user: "bela", item: "mivo", qty: 1, cost: 2, state: "shipped" },
    });
  });

  it("fail with NOT_FOUND naming the missing thing, and never change the state", () => {
    const shop = new Shop(world);
    expect(errorOf(shop, "user", { user: "cara" })).toEqual({ code: "NOT_FOUND", message: "no user cara" });
    expect(errorOf(shop, "item", { item: "rabo" })).toEqual({ code: "NOT_FOUND", message: "no item rabo" });
    expect(errorOf(shop, "order", { id: "o9" })).toEqual({ code: "NOT_FOUND", message: "no order o9" });
    expect(shop.state()).toEqual(world);
  });
});

describe("buy", () => {
  it("moves stock and money and creates the next order", () => {
    const shop = new Shop(world);
    expect(shop.call("buy", { user: "ada", item: "kelo", qty: 3 })).toEqual({ ok: true, content: { order: "o4", cost: 12, balance: 8 } });
    const after = shop.state();
    expect(after.users.ada!.balance).toBe(8);
    expect(after.items.kelo!.stock).toBe(2);
    expect(after.orders.o4).toEqual({ user: "ada", item: "kelo", qty: 3, cost: 12, state: "placed" });
  });

  rejects("buy", [
    [{ user: "cara", item: "kelo", qty: 1 }, "NOT_FOUND", "no user cara"],
    [{ user: "ada", item: "rabo", qty: 1 }, "NOT_FOUND", "no item rabo"],
    [{ user: "ada", item: "suta", qty: 1 }, "ITEM_LOCKED", "suta is locked"],
    [{ user: "ada", item: "mivo", qty: 1 }, "OUT_OF_STOCK", "mivo is out of stock"],
    [{ user: "ada", item: "kelo", qty: 6 }, "OUT_OF_STOCK", "only 5 kelo in stock"],
    [{ user: "bela", item: "kelo", qty: 1 }, "LOW_BALANCE", "balance 3 is below 4"],
  ]);

  it("checks the lock before the stock and the stock before the balance", () => {
    const shop = new Shop({ ...world, items: { x: { price: 9, stock: 0, locked: true } } });
    expect(errorOf(shop, "buy", { user: "bela", item: "x", qty: 1 }).code).toBe("ITEM_LOCKED");
    const unlocked = new Shop({ ...world, items: { x: { price: 9, stock: 0, locked: false } } });
    expect(errorOf(unlocked, "buy", { user: "bela", item: "x", qty: 1 }).code).toBe("OUT_OF_STOCK");
  });
});

describe("cancel", () => {
  it("cancels a placed order, refunds its cost and restocks", () => {
    const shop = new Shop(world);
    expect(shop.call("cancel", { id: "o1" })).toEqual({ ok: true, content: { refund: 8, balance: 28 } });
    const after = shop.state();
    expect(after.orders.o1!.state).toBe("cancelled");
    expect(after.items.kelo!.stock).toBe(7);
  });

  rejects("cancel", [
    [{ id: "o2" }, "WRONG_STATE", "order o2 is shipped"],
    [{ id: "o3" }, "WRONG_STATE", "order o3 is cancelled"],
    [{ id: "o9" }, "NOT_FOUND", "no order o9"],
  ]);

  it("cannot cancel the same order twice", () => {
    const shop = new Shop(world);
    expect(shop.call("cancel", { id: "o1" }).ok).toBe(true);
    expect(errorOf(shop, "cancel", { id: "o1" })).toEqual({ code: "WRONG_STATE", message: "order o1 is cancelled" });
  });
});

describe("pay", () => {
  it("moves the amount from one user to the other", () => {
    const shop = new Shop(world);
    expect(shop.call("pay", { from: "ada", to: "bela", amount: 5 })).toEqual({ ok: true, content: { paid: 5, balance: 15 } });
    expect(shop.state().users).toEqual({ ada: { balance: 15 }, bela: { balance: 8 } });
  });

  rejects("pay", [
    [{ from: "ada", to: "ada", amount: 1 }, "INVALID_PARAMETERS", "from and to must differ"],
    [{ from: "cara", to: "ada", amount: 1 }, "NOT_FOUND", "no user cara"],
    [{ from: "ada", to: "cara", amount: 1 }, "NOT_FOUND", "no user cara"],
    [{ from: "bela", to: "ada", amount: 4 }, "LOW_BALANCE", "balance 3 is below 4"],
  ]);
});

describe("calls the shop cannot take", () => {
  it("answers an unknown tool with TOOL_NOT_AVAILABLE and does not record it as a write", () => {
    const shop = new Shop(world);
    expect(errorOf(shop, "sell", { item: "kelo" })).toEqual({ code: "TOOL_NOT_AVAILABLE", message: "no tool sell" });
    expect(shop.state()).toEqual(world);
  });

  it.each([
    ["user", null, "arguments must be an object"],
    ["user", ["ada"], "arguments must be an object"],
    ["user", { user: "ada", qty: 1 }, "unknown argument qty"],
    ["user", {}, "missing user"],
    ["item", { item: 3 }, "item must be a string"],
    ["order", { id: null }, "id must be a string"],
    ["buy", { user: "ada", item: "kelo" }, "missing qty"],
    ["buy", { user: "ada", item: "kelo", qty: 0 }, "qty must be a whole number of at least 1"],
    ["buy", { user: "ada", item: "kelo", qty: 1.5 }, "qty must be a whole number of at least 1"],
    ["buy", { user: "ada", item: "kelo", qty: "2" }, "qty must be a whole number of at least 1"],
    ["cancel", { order: "o1" }, "unknown argument order"],
    ["pay", { from: "ada", to: "bela", amount: -3 }, "amount must be a whole number of at least 1"],
  ])("%s(%j) fails with INVALID_PARAMETERS: %s", (name, args, message) => {
    const shop = new Shop(world);
    expect(errorOf(shop, name, args)).toEqual({ code: "INVALID_PARAMETERS", message });
    const rejected = (WRITE_TOOLS as readonly string[]).includes(name) ? [{ tool: name, code: "INVALID_PARAMETERS" }] : [];
    expect(shop.state()).toEqual({ ...world, rejected });
  });

  it("uses only the documented error codes", () => {
    const codes = new Set<string>();
    const shop = new Shop(world);
    for (const [name, args] of [
      ["sell", {}],
      ["user", {}],
      ["user", { user: "x" }],
      ["buy", { user: "ada", item: "suta", qty: 1 }],
      ["buy", { user: "ada", item: "mivo", qty: 1 }],
      ["buy", { user: "bela", item: "kelo", qty: 1 }],
      ["cancel", { id: "o2" }],
    ] as const) {
      codes.add(errorOf(shop, name, args).code);
    }
    expect([...codes].sort()).toEqual([...ErrorCode.options].sort());
  });
});

describe("the shop's own state", () => {
  it("is a copy: neither the input world nor a returned state can be changed from outside", () => {
    const input = structuredClone(world);
    const shop = new Shop(input);
    input.users.ada!.balance = 0;
    shop.state().users.ada!.balance = 0;
    expect(shop.state().users.ada!.balance).toBe(20);
  });
});
