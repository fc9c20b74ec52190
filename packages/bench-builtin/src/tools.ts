import { InvariantError } from "@envace/errors";
import type { JsonObject, ToolError, ToolSpec } from "@envace/protocol";
import { z } from "zod";
import { orderId } from "./names.js";
import { cloneWorld, type World } from "./world.js";

/** The tools, by name. Reads never change the state; writes check their preconditions first. */
export const ToolName = z.enum(["user", "item", "order", "buy", "cancel", "pay"]);
export type ToolName = z.infer<typeof ToolName>;

export const WRITE_TOOLS: readonly ToolName[] = ["buy", "cancel", "pay"];

/**
 * Every error code a tool can return. `TOOL_NOT_AVAILABLE` and `INVALID_PARAMETERS` are the
 * protocol's generic codes; the rest are domain preconditions, so a rehearsal of a write can
 * predict its failure from what earlier reads showed.
 */
export const ErrorCode = z.enum(["TOOL_NOT_AVAILABLE", "INVALID_PARAMETERS", "NOT_FOUND", "ITEM_LOCKED", "OUT_OF_STOCK", "LOW_BALANCE", "WRONG_STATE"]);
export type ErrorCode = z.infer<typeof ErrorCode>;

/** Parameter kinds: a name or id, or a whole number of at least 1. */
type ParamKind = "string" | "integer";

const PARAMS = {
  user: { user: "string" },
  item: { item: "string" },
  order: { id: "string" },
  buy: { user: "string", item: "string", qty: "integer" },
  cancel: { id: "string" },
  pay: { from: "string", to: "string", amount: "integer" },
} as const satisfies Record<ToolName, Record<string, ParamKind>>;

const DESCRIPTIONS: Record<ToolName, string> = {
  user: "Look up a user: balance and orders.",
  item: "Look up an item: price, stock, locked.",
  order: "Look up an order.",
  buy: "Buy qty of an item for a user.",
  cancel: "Cancel a placed order; refunds its cost.",
  pay: "Move money from one user to another.",
};

type Args<T extends ToolName> = {
  [K in keyof (typeof PARAMS)[T]]: (typeof PARAMS)[T][K] extends "integer" ? number : string;
};

function paramSchema(kind: ParamKind): JsonObject {
  return kind === "integer" ? { type: "integer", minimum: 1 } : { type: "string" };
}

/** The tools as OpenAI function tools, in a fixed order. */
export const TOOL_SPECS: readonly ToolSpec[] = ToolName.options.map((name) => {
  const params: Record<string, ParamKind> = PARAMS[name];
  return {
    type: "function",
    function: {
      name,
      description: DESCRIPTIONS[name],
      parameters: {
        type: "object",
        properties: Object.fromEntries(Object.entries(params).map(([key, kind]) => [key, paramSchema(kind)])),
        required: Object.keys(params),
        additionalProperties: false,
      },
    },
  };
});

/** The outcome of one call: JSON content, or a typed error. */
export type ShopResult = { ok: true; content: JsonObject } | { ok: false; error: ToolError & { code: ErrorCode } };

function fail(code: ErrorCode, message: string): ShopResult {
  return { ok: false, error: { code, message } };
}

function ok(content: JsonObject): ShopResult {
  return { ok: true, content };
}

/** Check arguments against a tool's parameters; the first problem found is reported. */
function checkArgs(params: Record<string, ParamKind>, args: unknown): string | undefined {
  if (args === null || typeof args !== "object" || Array.isArray(args)) return "arguments must be an object";
  const given = args as Record<string, unknown>;
  const unknown = Object.keys(given).find((key) => !(key in params));
  if (unknown !== undefined) return `unknown argument ${unknown}`;
  for (const [key, kind] of Object.entries(params)) {
    const value = given[key];
    if (value === undefined) return `missing ${key}`;
    if (kind === "string" && typeof value !== "string") return `${key} must be a string`;
    if (kind === "integer" && !(typeof value === "number" && Number.isInteger(value) && value >= 1)) {
      return `${key} must be a whole number of at least 1`;
    }
  }
  return undefined;
}

type Handler<T extends ToolName> = (world: World, args: Args<T>) => ShopResult;

const HANDLERS: { [T in ToolName]: Handler<T> } = {
  user(world, { user: name }) {
    const user = world.users[name];
    if (!user) return fail("NOT_FOUND", `no user ${name}`);
    const orders = Object.fromEntries(
      Object.entries(world.orders)
        .filter(([, order]) => order.user === name)
        .map(([id, order]) => [id, order.item]),
    );
    return ok({ balance: user.balance, orders });
  },

  item(world, { item: name }) {
    const item = world.items[name];
    if (!item) return fail("NOT_FOUND", `no item ${name}`);
    return ok({ price: item.price, stock: item.stock, locked: item.locked });
  },

  order(world, { id }) {
    const order = world.orders[id];
    if (!order) return fail("NOT_FOUND", `no order ${id}`);
    return ok({ user: order.user, item: order.item, qty: order.qty, cost: order.cost, state: order.state });
  },

  buy(world, { user: userName, item: itemName, qty }) {
    const user = world.users[userName];
    if (!user) return fail("NOT_FOUND", `no user ${userName}`);
    const item = world.items[itemName];
    if (!item) return fail("NOT_FOUND", `no item ${itemName}`);
    if (item.locked) return fail("ITEM_LOCKED", `${itemName} is locked`);
    if (item.stock < qty) {
      return fail("OUT_OF_STOCK", item.stock === 0 ? `${itemName} is out of stock` : `only ${item.stock} ${itemName} in stock`);
    }
    const cost = qty * item.price;
    if (user.balance < cost) return fail("LOW_BALANCE", `balance ${user.balance} is below ${cost}`);
    const id = orderId(Object.keys(world.orders).length + 1);
    item.stock -= qty;
    user.balance -= cost;
    world.orders[id] = { user: userName, item: itemName, qty, cost, state: "placed" };
    return ok({ order: id, cost, balance: user.balance });
  },

  cancel(world, { id }) {
    const order = world.orders[id];
    if (!order) return fail("NOT_FOUND", `no order ${id}`);
    if (order.state !== "placed") return fail("WRONG_STATE", `order ${id} is ${order.state}`);
    const user = world.users[order.user];
    const item = world.items[order.item];
    // Worlds are generated with consistent references; a hand-edited one may not be.
    if (!user || !item) throw new InvariantError(`order ${id} refers to a missing user or item`);
    order.state = "cancelled";
    user.balance += order.cost;
    item.stock += order.qty;
    return ok({ refund: order.cost, balance: user.balance });
  },

  pay(world, { from, to, amount }) {
    if (from === to) return fail("INVALID_PARAMETERS", "from and to must differ");
    const payer = world.users[from];
    if (!payer) return fail("NOT_FOUND", `no user ${from}`);
    const payee = world.users[to];
    if (!payee) return fail("NOT_FOUND", `no user ${to}`);
    if (payer.balance < amount) return fail("LOW_BALANCE", `balance ${payer.balance} is below ${amount}`);
    payer.balance -= amount;
    payee.balance += amount;
    return ok({ paid: amount, balance: payer.balance });
  },
};

/** Arguments that passed `checkArgs`: names are strings, counts whole numbers. */
type CheckedArgs = Record<string, string | number>;

/**
 * The shop's rules over one world. Synchronous and deterministic: the environment, the gold
 * solver and the replaying verifier all execute calls through it, so they cannot disagree.
 */
export class Shop {
  private readonly world: World;

  constructor(world: World) {
    this.world = cloneWorld(world);
  }

  /** A copy of the current state. */
  state(): World {
    return cloneWorld(this.world);
  }

  /** Execute one call. A write that fails is recorded in `rejected`. */
  call(name: string, args: unknown): ShopResult {
    const parsed = ToolName.safeParse(name);
    if (!parsed.success) return fail("TOOL_NOT_AVAILABLE", `no tool ${name}`);
    const tool = parsed.data;
    const problem = checkArgs(PARAMS[tool], args);
    const handler = HANDLERS[tool] as (world: World, args: CheckedArgs) => ShopResult;
    const result = problem === undefined ? handler(this.world, args as CheckedArgs) : fail("INVALID_PARAMETERS", problem);
    if (!result.ok && WRITE_TOOLS.includes(tool)) this.world.rejected.push({ tool, code: result.error.code });
    return result;
  }
}
