import { parseRecord, type Task } from "@envace/protocol";
import { z } from "zod";
import { Family, Outcome, Request } from "./request.js";
import { World } from "./world.js";

/** Bumped whenever the same seed would generate different tasks. */
export const DOMAIN_VERSION = 2;

export const Split = z.enum(["train", "test"]);
export type Split = z.infer<typeof Split>;

/**
 * What a built-in task carries in `Task.metadata`: where it came from, the request, the initial
 * world the environment starts from, and the facts the final reply must state.
 */
export const BuiltinMeta = z
  .object({
    domain: z.literal("builtin"),
    version: z.number().int().positive(),
    split: Split,
    seed: z.number().int().nonnegative(),
    /** Index of the candidate draw this task came from (train and test never share one). */
    candidate: z.number().int().nonnegative(),
    family: Family,
    outcome: Outcome,
    /** Which phrasing of the request the instruction uses. */
    variant: z.number().int().nonnegative(),
    request: Request,
    world: World,
    /** Each entry lists accepted phrasings of one fact; the reply must contain one of each. */
    required: z.array(z.array(z.string().min(1)).min(1)),
  })
  .refine((meta) => meta.request.family === meta.family, {
    error: "request.family must equal family",
    path: ["request", "family"],
  });
export type BuiltinMeta = z.infer<typeof BuiltinMeta>;

// Rollouts score the same task many times; parse its metadata once per metadata object.
const parsed = new WeakMap<object, BuiltinMeta>();

/**
 * The built-in metadata of `task`, or a `RecordError` naming the task and the bad field. The
 * result is cached per metadata object and shared: treat it as read-only.
 */
export function builtinMeta(task: Pick<Task, "id" | "metadata">): BuiltinMeta {
  const cached = parsed.get(task.metadata);
  if (cached) return cached;
  const meta = parseRecord(BuiltinMeta, task.metadata, { file: "task metadata", record: task.id });
  parsed.set(task.metadata, meta);
  return meta;
}
