import type { JsonValue, ToolCall, ToolError } from "@envace/protocol";
import { Shop } from "./tools.js";
import type { World } from "./world.js";

/**
 * One tool input and its true output, in the shape of the Rehearse prompt's few-shot examples
 * (`@envace/trajectory` `ToolExample`).
 */
export interface ToolExample {
  call: Pick<ToolCall, "name" | "arguments">;
  output: { result: JsonValue } | { error: ToolError };
}

/** A small fixed shop, used by no generated task's gold (it only illustrates the rules). */
export const DEMO_WORLD: World = {
  users: { ada: { balance: 12 }, bela: { balance: 3 } },
  items: {
    kelo: { price: 4, stock: 5, locked: false },
    mivo: { price: 2, stock: 1, locked: false },
    suta: { price: 1, stock: 6, locked: true },
  },
  orders: {
    o1: { user: "ada", item: "kelo", qty: 2, cost: 8, state: "placed" },
    o2: { user: "bela", item: "mivo", qty: 1, cost: 2, state: "shipped" },
  },
  rejected: [],
};

const DEMO_CALLS: readonly ToolExample["call"][] = [
  { name: "user", arguments: { user: "ada" } },
  { name: "item", arguments: { item: "kelo" } },
  { name: "order", arguments: { id: "o2" } },
  { name: "item", arguments: { item: "rabo" } },
  { name: "buy", arguments: { user: "bela", item: "kelo", qty: 1 } },
  { name: "buy", arguments: { user: "ada", item: "suta", qty: 2 } },
  { name: "buy", arguments: { user: "ada", item: "mivo", qty: 2 } },
  { name: "buy", arguments: { user: "ada", item: "mivo", qty: 1 } },
  { name: "cancel", arguments: { id: "o2" } },
  { name: "cancel", arguments: { id: "o1" } },
  { name: "pay", arguments: { from: "bela", to: "ada", amount: 5 } },
  { name: "pay", arguments: { from: "ada", to: "bela", amount: 5 } },
];

/**
 * Few-shot examples for a Rehearse prompt: every tool, and every precondition failing once,
 * executed in order against one demo shop so each answer is what the real tool returned.
 */
export function toolExamples(): ToolExample[] {
  const shop = new Shop(DEMO_WORLD);
  return DEMO_CALLS.map((call) => {
    const result = shop.call(call.name, call.arguments);
    return { call, output: result.ok ? { result: result.content } : { error: result.error } };
  });
}
