import type { AdvantageBatch, GroupRole } from "./advantages.js";

/** What the trainer logs per role (or for `all` in plain GRPO) after computing advantages. */
export interface RoleMetrics {
  role: GroupRole;
  rows: number;
  /** Scored rollouts that contain the role. */
  rollouts: number;
  groups: number;
  /** Groups whose advantages are all zero (no policy gradient). */
  zeroAdvantageGroups: number;
  invalidRows: number;
  outputTokens: number;
  /** Mean rollout reward, each rollout counted once. */
  rewardMean: number;
  /** Mean row score (reward minus the invalid-output penalty), each row counted once. */
  scoreMean: number;
  advantageMean: number;
  /** Population standard deviation of the rows' advantages. */
  advantageStd: number;
  advantageMin: number;
  advantageMax: number;
}

/** Per-role statistics of the rows that train, in the order roles first appear. */
export function roleMetrics(batch: AdvantageBatch): RoleMetrics[] {
  const byRole = new Map<GroupRole, AdvantageBatch["rows"]>();
  for (const item of batch.rows) {
    const list = byRole.get(item.groupRole);
    if (list) list.push(item);
    else byRole.set(item.groupRole, [item]);
  }
  return [...byRole.entries()].map(([role, items]) => {
    const rewards = new Map(items.map((item) => [item.row.trajectoryId, item.reward]));
    const advantages = items.map((item) => item.advantage);
    const advantageMean = advantages.reduce((s, a) => s + a, 0) / advantages.length;
    const groups = batch.groups.filter((g) => g.role === role);
    return {
      role,
      rows: items.length,
      rollouts: rewards.size,
      groups: groups.length,
      zeroAdvantageGroups: groups.filter((g) => g.zeroAdvantage).length,
      invalidRows: items.filter((item) => item.row.invalid).length,
      outputTokens: items.reduce((s, item) => s + item.row.outputTokens.length, 0),
      rewardMean: [...rewards.values()].reduce((s, r) => s + r, 0) / rewards.size,
      scoreMean: items.reduce((s, item) => s + item.score, 0) / items.length,
      advantageMean,
      advantageStd: Math.sqrt(advantages.reduce((s, a) => s + (a - advantageMean) ** 2, 0) / advantages.length),
      advantageMin: Math.min(...advantages),
      advantageMax: Math.max(...advantages),
    };
  });
}

/**
 * The batch as flat metrics: `<role>/<name>` per role, and `batch/<name>` for what is not
 * per role (masked rollouts, uneven tasks, dropped rows).
 */
export function advantageMetrics(batch: AdvantageBatch): Record<string, number> {
  const metrics: Record<string, number> = {
    "batch/rows": batch.rows.length,
    "batch/dropped_rows": batch.dropped.length,
    "batch/tasks": batch.tasks.length,
    "batch/masked_rollouts": batch.masked.length,
    "batch/uneven_tasks": batch.tasks.filter((t) => t.uneven).length,
    "batch/zero_advantage_groups": batch.groups.filter((g) => g.zeroAdvantage).length,
  };
  for (const m of roleMetrics(batch)) {
    for (const field of ROLE_FIELDS) metrics[`${m.role}/${snakeCase(field)}`] = m[field];
  }
  return metrics;
}

/** Every number of `RoleMetrics`, each flattened as `<role>/<its name in snake case>`. */
const ROLE_FIELDS = [
  "rows",
  "rollouts",
  "groups",
  "zeroAdvantageGroups",
  "invalidRows",
  "outputTokens",
  "rewardMean",
  "scoreMean",
  "advantageMean",
  "advantageStd",
  "advantageMin",
  "advantageMax",
] as const satisfies readonly Exclude<keyof RoleMetrics, "role">[];

const snakeCase = (name: string): string => name.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);
