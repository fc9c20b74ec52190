import { z } from "zod";

/** Where in the reference dialogue a checklist item's evidence is. */
export const ChecklistEvidence = z.object({
  turn: z.number().int().nonnegative(),
  step: z.number().int().nonnegative(),
  from: z.string(),
  snippet: z.string(),
});
export type ChecklistEvidence = z.infer<typeof ChecklistEvidence>;

/** One checklist item (CM2 format): a yes/no question a judge answers about one user turn. */
export const ChecklistItem = z.object({
  id: z.string().min(1),
  evidence: z.array(ChecklistEvidence),
  /** What the judge should look at, e.g. `assistant.tool_calls`, `tool.content`. */
  focus_on: z.string(),
  question: z.string(),
  pass_condition: z.string(),
  failure_examples: z.array(z.string()),
  /** The next reference user turn is replayed only if every such item passed. */
  required_for_next_turn: z.boolean(),
  /** Ids of items that must pass for this one to count. */
  dependence: z.array(z.string()),
  weight: z.number().min(0).max(1),
});
export type ChecklistItem = z.infer<typeof ChecklistItem>;

const WEIGHT_TOLERANCE = 1e-6;

/** The items of one user turn. Their weights sum to 1 and their ids are unique. */
export const ChecklistTurn = z.array(ChecklistItem).superRefine((items, ctx) => {
  const total = items.reduce((sum, item) => sum + item.weight, 0);
  if (items.length > 0 && Math.abs(total - 1) > WEIGHT_TOLERANCE) {
    ctx.addIssue({ code: "custom", message: `weights sum to ${total}, expected 1` });
  }
  const ids = new Set<string>();
  items.forEach((item, index) => {
    if (ids.has(item.id)) ctx.addIssue({ code: "custom", path: [index, "id"], message: `duplicate item id "${item.id}"` });
    ids.add(item.id);
  });
  items.forEach((item, index) => {
    item.dependence.forEach((dep, depIndex) => {
      if (!ids.has(dep)) {
        ctx.addIssue({
          code: "custom",
          path: [index, "dependence", depIndex],
          message: `depends on unknown item "${dep}"`,
        });
      }
    });
  });
});
export type ChecklistTurn = z.infer<typeof ChecklistTurn>;

/** One checklist: its items for each reference user turn. */
export const Checklist = z.array(ChecklistTurn);
export type Checklist = z.infer<typeof Checklist>;
