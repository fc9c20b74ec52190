import { z } from "zod";
import { toolExamples } from "./examples.js";
import { generateTasks } from "./generate.js";
import { renderPlain } from "./gold.js";
import { ITEM_NAMES, USER_NAMES, orderId } from "./names.js";
import { SYSTEM_PROMPT, SYSTEM_PROMPT_SHORT } from "./prompt.js";
import { ErrorCode, Shop, TOOL_SPECS } from "./tools.js";
import { OrderState, type World } from "./world.js";

/** The largest number the lexicon lists; gold values stay below it. */
export const LEXICON_MAX_NUMBER = 99;

export const CorpusOptions = z.object({
  seed: z.number().int().nonnegative().default(0),
  /** Gold dialogues to include, from the train split. */
  tasks: z.number().int().nonnegative().default(1000),
});
export type CorpusOptionsInput = z.input<typeof CorpusOptions>;

/** One world that triggers every tool error the shop has, with every name in the lexicon. */
const ERROR_WORLD: World = {
  users: { ada: { balance: 3 }, bela: { balance: 50 } },
  items: { kelo: { price: 4, stock: 2, locked: false }, mivo: { price: 2, stock: 0, locked: false }, suta: { price: 1, stock: 5, locked: true } },
  orders: { o1: { user: "ada", item: "kelo", qty: 1, cost: 4, state: "shipped" } },
  rejected: [],
};

const ERROR_CALLS: readonly [string, unknown][] = [
  ["kelo", {}],
  ["user", []],
  ["user", { user: "ada", price: 1 }],
  ["user", {}],
  ["user", { user: 7 }],
  ["buy", { user: "ada", item: "kelo", qty: 0 }],
  ["user", { user: "cara" }],
  ["item", { item: "rabo" }],
  ["order", { id: "o9" }],
  ["buy", { user: "ada", item: "suta", qty: 1 }],
  ["buy", { user: "ada", item: "mivo", qty: 1 }],
  ["buy", { user: "ada", item: "kelo", qty: 3 }],
  ["buy", { user: "ada", item: "kelo", qty: 1 }],
  ["cancel", { id: "o1" }],
  ["pay", { from: "ada", to: "ada", amount: 1 }],
  ["pay", { from: "ada", to: "bela", amount: 9 }],
];

/** Every tool error message template, instantiated once. */
function errorMessages(): string[] {
  const shop = new Shop(ERROR_WORLD);
  return ERROR_CALLS.map(([name, args]) => {
    const result = shop.call(name, args);
    return result.ok ? "" : JSON.stringify({ error: result.error });
  }).filter(Boolean);
}

/** Names, numbers, order ids, order states and error codes: the closed lexicon. */
function lexicon(): string[] {
  const numbers = Array.from({ length: LEXICON_MAX_NUMBER + 1 }, (_, n) => String(n));
  const ids = Array.from({ length: 20 }, (_, n) => orderId(n + 1));
  return [USER_NAMES.join(" "), ITEM_NAMES.join(" "), numbers.join(" "), ids.join(" "), OrderState.options.join(" "), ErrorCode.options.join(" ")];
}

/**
 * Text for training a tokenizer on the domain: both system prompts (a custom one is not
 * included), the tool specs, the lexicon,
 * every tool error message, and gold dialogues (plain rendering, so `<tool_call>` and
 * `<execution_result>` blocks included) of train tasks. Only the train split is used.
 */
export function domainCorpus(options: CorpusOptionsInput = {}): string[] {
  const { seed, tasks } = CorpusOptions.parse(options);
  return [
    SYSTEM_PROMPT,
    SYSTEM_PROMPT_SHORT,
    ...TOOL_SPECS.map((spec) => JSON.stringify(spec)),
    ...lexicon(),
    ...errorMessages(),
    ...toolExamples().map((example) => JSON.stringify(example)),
    ...generateTasks({ seed, count: tasks, split: "train" }).map((task) => renderPlain(task.reference ?? task.messages)),
  ];
}

/** Split text into words: runs of letters, runs of digits, and single other non-space characters. */
export function wordsOf(text: string): string[] {
  return text.match(/[A-Za-z]+|[0-9]+|[^\sA-Za-z0-9]/g) ?? [];
}

/** The sorted set of words of `domainCorpus(options)`: what a word-level tokenizer must hold. */
export function vocabulary(options: CorpusOptionsInput = {}): string[] {
  return [...new Set(domainCorpus(options).flatMap(wordsOf))].sort();
}
