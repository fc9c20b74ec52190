import { InvariantError } from "@envace/errors";
import type { JsonObject, JsonValue } from "@envace/protocol";
import { ITEM_NAMES } from "./names.js";
import type { Rng } from "./random.js";
import type { Family, Outcome, Request, RequestOf } from "./request.js";
import type { ShopResult, ToolName } from "./tools.js";
import type { OrderState, World } from "./world.js";

/** Executes one tool call against the task's world (the gold solver sees nothing else). */
export type CallTool = (name: ToolName, args: JsonObject) => ShopResult;

/** What the gold solver concluded from its observations. */
export interface Solution {
  outcome: Outcome;
  /** The final reply to the user. */
  reply: string;
  /** Facts the reply must state: each entry lists accepted phrasings, one of which must appear. */
  required: string[][];
  /**
   * When a precondition fails: the write an agent that skipped the check would make instead of
   * the reply, which the shop refuses with the outcome's code. The gold solution never makes it.
   */
  declined?: { name: ToolName; args: JsonObject };
}

interface FamilyRules<F extends Family> {
  /** The outcomes this family can have; `ok` first. */
  outcomes: readonly Outcome[];
  /** Pick the request and adjust `world` in place so that the correct outcome is `outcome`. */
  build(world: World, rng: Rng, outcome: Outcome): RequestOf<F>;
  /** Phrasings of the request. None reveals what the lookups will return. */
  instructions(request: RequestOf<F>): string[];
  /** The gold solver: looks things up, decides from what it saw, writes only if it will succeed. */
  solve(request: RequestOf<F>, call: CallTool): Solution;
}

const REASON_TERMS = {
  NOT_FOUND: ["no item", "not found", "unknown", "does not exist"],
  ITEM_LOCKED: ["locked"],
  OUT_OF_STOCK: ["stock"],
  LOW_BALANCE: ["balance", "afford", "not enough"],
} as const;

/** How a reply says there are fewer than wanted in stock. */
function stockText(stock: number, item: string): string {
  return stock === 0 ? `${item} is out of stock` : `only ${stock} ${item} in stock`;
}

function content(result: ShopResult): JsonObject {
  if (!result.ok) throw new InvariantError(`gold solver expected success, got ${result.error.code}: ${result.error.message}`);
  return result.content;
}

function num(object: JsonObject, key: string): number {
  const value = object[key];
  if (typeof value !== "number") throw new InvariantError(`expected a number at "${key}"`);
  return value;
}

function str(object: JsonObject, key: string): string {
  const value = object[key];
  if (typeof value !== "string") throw new InvariantError(`expected a string at "${key}"`);
  return value;
}

function obj(object: JsonObject, key: string): JsonObject {
  const value: JsonValue | undefined = object[key];
  if (value === null || typeof value !== "object" || Array.isArray(value)) throw new InvariantError(`expected an object at "${key}"`);
  return value;
}

function entry<T>(record: Record<string, T>, key: string): T {
  const value = record[key];
  if (value === undefined) throw new InvariantError(`world has no "${key}"`);
  return value;
}

/** The id of `user`'s order of `item`, read from a `user` lookup (worlds hold at most one). */
function orderOf(userInfo: JsonObject, item: string): string | undefined {
  return Object.entries(obj(userInfo, "orders")).find(([, orderItem]) => orderItem === item)?.[0];
}

const buy: FamilyRules<"buy"> = {
  outcomes: ["ok", "NOT_FOUND", "ITEM_LOCKED", "OUT_OF_STOCK", "LOW_BALANCE"],
  build(world, rng, outcome) {
    const user = rng.pick(Object.keys(world.users));
    const qty = rng.int(1, 3);
    if (outcome === "NOT_FOUND") {
      return { family: "buy", user, item: rng.pick(ITEM_NAMES.filter((name) => !(name in world.items))), qty };
    }
    const item = rng.pick(Object.keys(world.items));
    const it = entry(world.items, item);
    const buyer = entry(world.users, user);
    if (outcome === "ITEM_LOCKED") {
      it.locked = true;
    } else {
      it.locked = false;
      it.stock = outcome === "OUT_OF_STOCK" ? rng.int(0, qty - 1) : rng.int(qty, 9);
      const cost = qty * it.price;
      if (outcome === "ok") buyer.balance = cost + rng.int(0, 15);
      if (outcome === "LOW_BALANCE") buyer.balance = rng.int(0, cost - 1);
    }
    return { family: "buy", user, item, qty };
  },
  instructions: ({ user, item, qty }) => [`Buy ${qty} ${item} for ${user}.`, `${user} wants ${qty} ${item}. Please buy ${qty === 1 ? "it" : "them"}.`],
  solve({ user, item, qty }, call) {
    const balance = num(content(call("user", { user })), "balance");
    const looked = call("item", { item });
    const declined = { name: "buy", args: { user, item, qty } } as const;
    if (!looked.ok) {
      return { outcome: "NOT_FOUND", reply: `Sorry, there is no item ${item}.`, required: [[...REASON_TERMS.NOT_FOUND]], declined };
    }
    const info = looked.content;
    const stock = num(info, "stock");
    const cost = qty * num(info, "price");
    if (info.locked === true) {
      return { outcome: "ITEM_LOCKED", reply: `Sorry, ${item} is locked, so I did not buy it.`, required: [[...REASON_TERMS.ITEM_LOCKED]], declined };
    }
    if (stock < qty) {
      return {
        outcome: "OUT_OF_STOCK",
        reply: `Sorry, ${stockText(stock, item)}, so I did not buy it.`,
        required: [[...REASON_TERMS.OUT_OF_STOCK]],
        declined,
      };
    }
    if (balance < cost) {
      return {
        outcome: "LOW_BALANCE",
        reply: `Sorry, the balance of ${user} is ${balance} but ${qty} ${item} cost ${cost}.`,
        required: [[...REASON_TERMS.LOW_BALANCE]],
        declined,
      };
    }
    const order = str(content(call("buy", { user, item, qty })), "order");
    return { outcome: "ok", reply: `Done: bought ${qty} ${item} for ${user}, order ${order}, cost ${cost}.`, required: [[order]] };
  },
};

const cancel: FamilyRules<"cancel"> = {
  outcomes: ["ok", "WRONG_STATE"],
  build(world, rng, outcome) {
    const order = entry(world.orders, rng.pick(Object.keys(world.orders)));
    order.state = outcome === "ok" ? "placed" : rng.pick<OrderState>(["shipped", "cancelled"]);
    return { family: "cancel", user: order.user, item: order.item };
  },
  instructions: ({ user, item }) => [`Cancel the ${item} order of ${user}.`, `${user} no longer wants the ${item} order. Cancel it.`],
  solve({ user, item }, call) {
    const id = orderOf(content(call("user", { user })), item);
    if (id === undefined) throw new InvariantError(`${user} has no ${item} order`);
    const state = str(content(call("order", { id })), "state");
    if (state !== "placed") {
      return { outcome: "WRONG_STATE", reply: `Sorry, order ${id} is already ${state}.`, required: [[state]], declined: { name: "cancel", args: { id } } };
    }
    const refund = num(content(call("cancel", { id })), "refund");
    return { outcome: "ok", reply: `Done: cancelled order ${id}, refund ${refund}.`, required: [[id]] };
  },
};

const pay: FamilyRules<"pay"> = {
  outcomes: ["ok", "LOW_BALANCE"],
  build(world, rng, outcome) {
    const [user, to] = rng.sample(Object.keys(world.users), 2) as [string, string];
    const item = rng.pick(Object.keys(world.items));
    const count = rng.int(1, 3);
    const amount = count * entry(world.items, item).price;
    entry(world.users, user).balance = outcome === "ok" ? amount + rng.int(0, 15) : rng.int(0, amount - 1);
    return { family: "pay", user, to, item, count };
  },
  instructions: ({ user, to, item, count }) => [
    `${user} owes ${to} for ${count} ${item}. Pay it from the balance of ${user}.`,
    `Pay ${to} the price of ${count} ${item} from the balance of ${user}.`,
  ],
  solve({ user, to, item, count }, call) {
    const balance = num(content(call("user", { user })), "balance");
    const amount = count * num(content(call("item", { item })), "price");
    if (balance < amount) {
      return {
        outcome: "LOW_BALANCE",
        reply: `Sorry, the balance of ${user} is ${balance} but ${count} ${item} cost ${amount}.`,
        required: [[...REASON_TERMS.LOW_BALANCE]],
        declined: { name: "pay", args: { from: user, to, amount } },
      };
    }
    call("pay", { from: user, to, amount });
    return { outcome: "ok", reply: `Done: ${user} paid ${amount} to ${to}.`, required: [[String(amount)]] };
  },
};

const swap: FamilyRules<"swap"> = {
  outcomes: ["ok", "WRONG_STATE", "ITEM_LOCKED", "OUT_OF_STOCK", "LOW_BALANCE"],
  build(world, rng, outcome) {
    const order = entry(world.orders, rng.pick(Object.keys(world.orders)));
    const newItem = rng.pick(Object.keys(world.items).filter((name) => name !== order.item));
    const it = entry(world.items, newItem);
    let qty = rng.int(1, 3);
    if (outcome === "WRONG_STATE") {
      order.state = rng.pick<OrderState>(["shipped", "cancelled"]);
      return { family: "swap", user: order.user, item: order.item, newItem, qty };
    }
    order.state = "placed";
    it.locked = outcome === "ITEM_LOCKED";
    if (outcome === "LOW_BALANCE" && qty * it.price <= order.cost) {
      // Make the new items dearer than the refund, or no balance could be too low.
      qty = 3;
      it.price = 9;
      if (qty * it.price <= order.cost) {
        order.qty = 2;
        order.cost = 2 * entry(world.items, order.item).price;
      }
    }
    it.stock = outcome === "OUT_OF_STOCK" ? rng.int(0, qty - 1) : rng.int(qty, 9);
    const need = qty * it.price - order.cost;
    const buyer = entry(world.users, order.user);
    if (outcome === "LOW_BALANCE") buyer.balance = rng.int(0, need - 1);
    if (outcome === "ok") buyer.balance = Math.max(0, need) + rng.int(0, 10);
    return { family: "swap", user: order.user, item: order.item, newItem, qty };
  },
  instructions: ({ user, item, newItem, qty }) => [
    `Swap the ${item} order of ${user} for ${qty} ${newItem}.`,
    `${user} wants ${qty} ${newItem} instead of the ${item} order.`,
  ],
  solve({ user, item, newItem, qty }, call) {
    const userInfo = content(call("user", { user }));
    const id = orderOf(userInfo, item);
    if (id === undefined) throw new InvariantError(`${user} has no ${item} order`);
    const order = content(call("order", { id }));
    const info = content(call("item", { item: newItem }));
    const state = str(order, "state");
    const balance = num(userInfo, "balance");
    const refund = num(order, "cost");
    const stock = num(info, "stock");
    const cost = qty * num(info, "price");
    const nothing = "so I changed nothing";
    if (state !== "placed") {
      return {
        outcome: "WRONG_STATE",
        reply: `Sorry, order ${id} is already ${state}, ${nothing}.`,
        required: [[state]],
        declined: { name: "cancel", args: { id } },
      };
    }
    // Past the order's state, the write that fails is the purchase: asked now, before any cancel,
    // the shop refuses it with the same code (without the refund the balance is lower still).
    const declined = { name: "buy", args: { user, item: newItem, qty } } as const;
    if (info.locked === true) {
      return { outcome: "ITEM_LOCKED", reply: `Sorry, ${newItem} is locked, ${nothing}.`, required: [[...REASON_TERMS.ITEM_LOCKED]], declined };
    }
    if (stock < qty) {
      return {
        outcome: "OUT_OF_STOCK",
        reply: `Sorry, ${stockText(stock, newItem)}, ${nothing}.`,
        required: [[...REASON_TERMS.OUT_OF_STOCK]],
        declined,
      };
    }
    if (balance + refund < cost) {
      return {
        outcome: "LOW_BALANCE",
        reply: `Sorry, the balance of ${user} is ${balance} plus a refund of ${refund} but ${qty} ${newItem} cost ${cost}, ${nothing}.`,
        required: [[...REASON_TERMS.LOW_BALANCE]],
        declined,
      };
    }
    call("cancel", { id });
    const newOrder = str(content(call("buy", { user, item: newItem, qty })), "order");
    return {
      outcome: "ok",
      reply: `Done: cancelled order ${id}, new order ${newOrder} for ${qty} ${newItem}.`,
      required: [[newOrder]],
    };
  },
};

const RULES: { [F in Family]: FamilyRules<F> } = { buy, cancel, pay, swap };

function rules<F extends Family>(family: F): FamilyRules<F> {
  return RULES[family];
}

/** The outcomes a family can have, `ok` first. */
export function familyOutcomes(family: Family): readonly Outcome[] {
  return RULES[family].outcomes;
}

export function buildRequest(family: Family, world: World, rng: Rng, outcome: Outcome): Request {
  return rules(family).build(world, rng, outcome);
}

export function instructionVariants(request: Request): string[] {
  return rules(request.family).instructions(request);
}

export function solveRequest(request: Request, call: CallTool): Solution {
  return rules(request.family).solve(request, call);
}
