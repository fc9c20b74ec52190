import { InvariantError } from "@envace/errors";
import { parseRecord, type Task } from "@envace/protocol";
import { z } from "zod";
import { canonicalJson } from "@envace/records";
import { fnv1a32 } from "./hash.js";
import { checklistOf } from "./checklist.js";
import { buildRequest, familyOutcomes, instructionVariants } from "./families.js";
import { goldDialogue, runGold } from "./gold.js";
import type { BuiltinMeta } from "./meta.js";
import { DOMAIN_VERSION, Split } from "./meta.js";
import { ITEM_NAMES, USER_NAMES, orderId } from "./names.js";
import { SYSTEM_PROMPT } from "./prompt.js";
import { Rng, mixSeed } from "./random.js";
import { Family, type Outcome, type Request } from "./request.js";
import { TOOL_SPECS } from "./tools.js";
import type { OrderState, World } from "./world.js";

export const GenerateOptions = z.object({
  seed: z.number().int().nonnegative().max(Number.MAX_SAFE_INTEGER),
  count: z.number().int().nonnegative(),
  split: Split,
  /** Families to draw from, uniformly. */
  families: z
    .array(Family)
    .min(1)
    .default([...Family.options]),
  /** Probability that a task's correct outcome is a failed precondition (no write, explain why). */
  failureRate: z.number().min(0).max(1).default(0.4),
  systemPrompt: z.string().min(1).default(SYSTEM_PROMPT),
});
export type GenerateOptions = z.infer<typeof GenerateOptions>;
export type GenerateOptionsInput = z.input<typeof GenerateOptions>;

const WORLD_USERS = 3;
const WORLD_ITEMS = 4;

/** A random shop: 3 users, 4 items, 2–4 orders with at most one per (user, item). */
export function randomWorld(rng: Rng): World {
  const users = rng.sample(USER_NAMES, WORLD_USERS);
  const items = rng.sample(ITEM_NAMES, WORLD_ITEMS);
  const world: World = {
    users: Object.fromEntries(users.map((name) => [name, { balance: rng.int(0, 40) }])),
    items: Object.fromEntries(items.map((name) => [name, { price: rng.int(1, 9), stock: rng.int(0, 9), locked: rng.chance(0.15) }])),
    orders: {},
    rejected: [],
  };
  const pairs = users.flatMap((user) => items.map((item) => [user, item] as const));
  rng.sample(pairs, rng.int(2, 4)).forEach(([user, item], index) => {
    const qty = rng.int(1, 3);
    const roll = rng.float();
    const state: OrderState = roll < 0.5 ? "placed" : roll < 0.85 ? "shipped" : "cancelled";
    world.orders[orderId(index + 1)] = { user, item, qty, cost: qty * world.items[item]!.price, state };
  });
  return world;
}

/**
 * The split a world belongs to, from a hash of its canonical JSON. Because it is a function of
 * the world itself, no world can ever appear in both splits, whatever the seeds.
 */
export function worldSplit(world: World): Split {
  return (fnv1a32(canonicalJson(world)) & 1) === 0 ? "train" : "test";
}

interface Draft {
  candidate: number;
  family: Family;
  outcome: Outcome;
  world: World;
  request: Request;
  variant: number;
  instruction: string;
}

function draft(options: GenerateOptions, candidate: number): Draft {
  const rng = new Rng(mixSeed(options.seed, candidate));
  const world = randomWorld(rng);
  const family = rng.pick(options.families);
  const [ok, ...failures] = familyOutcomes(family);
  const outcome = rng.chance(options.failureRate) ? rng.pick(failures) : ok!;
  const request = buildRequest(family, world, rng, outcome);
  const variants = instructionVariants(request);
  const variant = rng.int(0, variants.length - 1);
  return { candidate, family, outcome, world, request, variant, instruction: variants[variant]! };
}

function build(options: GenerateOptions, index: number, d: Draft): Task {
  const run = runGold(d.world, d.request);
  if (run.solution.outcome !== d.outcome) {
    throw new InvariantError(`internal: candidate ${d.candidate} was built for ${d.outcome} but solves to ${run.solution.outcome}`);
  }
  const meta: BuiltinMeta = {
    domain: "builtin",
    version: DOMAIN_VERSION,
    split: options.split,
    seed: options.seed,
    candidate: d.candidate,
    family: d.family,
    outcome: d.outcome,
    variant: d.variant,
    request: d.request,
    world: d.world,
    required: run.solution.required,
  };
  const messages: Task["messages"] = [
    { role: "system", content: options.systemPrompt },
    { role: "user", content: d.instruction },
  ];
  return {
    id: `builtin-${options.split}-${options.seed}-${index}`,
    messages,
    tools: [...TOOL_SPECS],
    reference: goldDialogue(messages, run),
    checklists: [checklistOf(run, run.solution.required)],
    goldActions: run.calls.map(({ call }) => call),
    expectedState: run.finalState,
    metadata: meta,
  };
}

/**
 * Generate `count` tasks of one split. Deterministic: the same options give the same tasks, byte
 * for byte, and a smaller `count` gives a prefix of a larger one. Candidates are drawn from
 * `(seed, 0), (seed, 1), …`; each lands in the split its world hashes to, so train and test share
 * neither a candidate seed nor a world.
 */
export function generateTasks(options: GenerateOptionsInput): Task[] {
  const parsed = parseRecord(GenerateOptions, options, { file: "generateTasks options" });
  const tasks: Task[] = [];
  for (let candidate = 0; tasks.length < parsed.count; candidate++) {
    const d = draft(parsed, candidate);
    if (worldSplit(d.world) === parsed.split) tasks.push(build(parsed, tasks.length, d));
  }
  return tasks;
}
