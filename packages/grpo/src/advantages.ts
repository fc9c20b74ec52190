import { EnvaceError } from "@envace/errors";
import type { PolicyRole, RewardVerdict, TrainingRow, Trajectory } from "@envace/protocol";
import { z } from "zod";

/**
 * Which population a group's baseline averages over.
 *
 * - `row`: every row of the role in the group counts once, so a rollout with many Act turns
 *   weighs more. This is what the reference implementation does.
 * - `trajectory`: each rollout that contains the role counts once (the mean score of its rows of
 *   that role), so long rollouts do not dominate the baseline.
 */
export const BaselineMode = z.enum(["row", "trajectory"]);
export type BaselineMode = z.infer<typeof BaselineMode>;

export const AdvantageConfig = z.object({
  baseline: BaselineMode.default("row"),
  /** One baseline per role (role-wise GRPO); false gives plain GRPO, one baseline for all roles. */
  roleWise: z.boolean().default(true),
  /** Divide by the group's standard deviation. Off by default: the paper uses none. */
  normalizeStd: z.boolean().default(false),
  /** Added to the standard deviation before dividing. */
  stdEpsilon: z.number().positive().default(1e-6),
  /**
   * Subtracted from the score of an invalid row (`TrainingRow.invalid`: empty or unparsable
   * output) before baselines are taken. The reference implementation uses 0.1.
   */
  invalidPenalty: z.number().min(0).default(0.1),
  /** Expected rollouts per task (G). Tasks with fewer scored rollouts are reported, never padded. */
  groupSize: z.number().int().positive().optional(),
  /** Leave out groups whose advantages are all zero (they carry no policy gradient). */
  dropZeroAdvantageGroups: z.boolean().default(false),
});
export type AdvantageConfig = z.infer<typeof AdvantageConfig>;
export type AdvantageConfigInput = z.input<typeof AdvantageConfig>;

/** The role a baseline group is keyed by: a policy role, or `all` in plain GRPO. */
export type GroupRole = PolicyRole | "all";

/** A training row with its rollout's reward, its own score and its advantage. */
export interface ScoredRow {
  row: TrainingRow;
  /** The rollout's reward. */
  reward: number;
  /** `reward`, plus the row's own bonus (`AdvantageOptions.bonus`), minus the invalid-output penalty when the row is invalid. */
  score: number;
  advantage: number;
  groupRole: GroupRole;
}

/** One baseline group: the rows of one role (or all roles) across the rollouts of one task. */
export interface GroupSummary {
  taskId: string;
  role: GroupRole;
  rows: number;
  /** Scored rollouts that contributed rows to the group. */
  rollouts: number;
  baseline: number;
  /** Sample standard deviation of the baseline population (0 with fewer than two members). */
  std: number;
  /** Every advantage is exactly 0: the group carries no policy gradient. */
  zeroAdvantage: boolean;
}

export interface TaskSummary {
  taskId: string;
  scoredRollouts: number;
  maskedRollouts: number;
  /** Fewer scored rollouts than `groupSize`; the group is used as it is. */
  uneven: boolean;
}

/** A rollout left out of training because its reward was masked (never scored as 0). */
export interface MaskedRollout {
  taskId: string;
  trajectoryId: string;
  rollout: number;
  reason: string;
  rows: number;
}

export interface AdvantageBatch {
  /** Rows that train, in input order. */
  rows: ScoredRow[];
  /** Rows of zero-advantage groups left out by `dropZeroAdvantageGroups`. */
  dropped: ScoredRow[];
  groups: GroupSummary[];
  tasks: TaskSummary[];
  masked: MaskedRollout[];
  config: AdvantageConfig;
}

/** What a caller adds to the rollouts' rewards, row by row. */
export interface AdvantageOptions {
  /**
   * A number added to one row's score before baselines are taken (0 for a row it does not name):
   * for example a grounded Rehearse row's agreement with the real answer. Must be finite.
   */
  bonus?: (row: TrainingRow) => number;
}

/** Inputs that cannot be grouped honestly: missing verdicts, duplicated rows or rollouts. */
export class AdvantageInputError extends EnvaceError {
  override readonly code = "advantage-input";
}

/** The reward verdict of every trajectory, keyed by trajectory id. */
export function verdictsOf(trajectories: readonly Pick<Trajectory, "id" | "reward">[]): Map<string, RewardVerdict> {
  const verdicts = new Map<string, RewardVerdict>();
  for (const trajectory of trajectories) {
    if (!trajectory.reward) throw new AdvantageInputError(`trajectory "${trajectory.id}" has no reward verdict`);
    verdicts.set(trajectory.id, trajectory.reward);
  }
  return verdicts;
}

interface Rollout {
  taskId: string;
  trajectoryId: string;
  rollout: number;
  verdict: RewardVerdict;
  indices: Set<number>;
  rows: number;
}

function collectRollouts(rows: readonly TrainingRow[], verdicts: ReadonlyMap<string, RewardVerdict>): Map<string, Rollout> {
  const rollouts = new Map<string, Rollout>();
  const slots = new Map<string, string>();
  for (const row of rows) {
    let rollout = rollouts.get(row.trajectoryId);
    if (!rollout) {
      const verdict = verdicts.get(row.trajectoryId);
      if (!verdict) {
        throw new AdvantageInputError(`row ${row.index} of trajectory "${row.trajectoryId}": no reward verdict for this trajectory`);
      }
      if (verdict.status === "scored" && !Number.isFinite(verdict.value)) {
        throw new AdvantageInputError(`trajectory "${row.trajectoryId}": reward ${verdict.value} is not a finite number`);
      }
      const slot = `${row.taskId}\u0000${row.rollout}`;
      const other = slots.get(slot);
      if (other !== undefined) {
        throw new AdvantageInputError(
          `task "${row.taskId}" rollout ${row.rollout} appears as two trajectories ("${other}" and "${row.trajectoryId}"); ` +
            "groups must hold each rollout once (never pad by duplicating rows)",
        );
      }
      slots.set(slot, row.trajectoryId);
      rollout = { taskId: row.taskId, trajectoryId: row.trajectoryId, rollout: row.rollout, verdict, indices: new Set(), rows: 0 };
      rollouts.set(row.trajectoryId, rollout);
    }
    if (rollout.taskId !== row.taskId) {
      throw new AdvantageInputError(`trajectory "${row.trajectoryId}" appears with task "${rollout.taskId}" and task "${row.taskId}"`);
    }
    if (rollout.rollout !== row.rollout) {
      throw new AdvantageInputError(`trajectory "${row.trajectoryId}" appears as rollout ${rollout.rollout} and rollout ${row.rollout}`);
    }
    if (rollout.indices.has(row.index)) {
      throw new AdvantageInputError(`trajectory "${row.trajectoryId}": row index ${row.index} appears twice`);
    }
    rollout.indices.add(row.index);
    rollout.rows += 1;
  }
  return rollouts;
}

function mean(values: readonly number[]): number {
  return values.reduce((sum, v) => sum + v, 0) / values.length;
}

function sampleStd(values: readonly number[]): number {
  if (values.length < 2) return 0;
  const m = mean(values);
  return Math.sqrt(values.reduce((sum, v) => sum + (v - m) ** 2, 0) / (values.length - 1));
}

/** All members equal up to rounding: the group has nothing to compare, so advantages are exactly 0. */
function allEqual(values: readonly number[]): boolean {
  const lo = Math.min(...values);
  const hi = Math.max(...values);
  return hi - lo <= 1e-12 * Math.max(1, Math.abs(hi), Math.abs(lo));
}

/**
 * Role-wise GRPO advantages. Rows are grouped by task (its G rollouts) and by role; a row's
 * advantage is its score minus the group's baseline (optionally over the group's standard
 * deviation). Masked rollouts are left out entirely, so they change no other baseline except by
 * not being in it; groups are used exactly as they are, whatever their size.
 */
export function computeAdvantages(
  rows: readonly TrainingRow[],
  verdicts: ReadonlyMap<string, RewardVerdict>,
  configInput: AdvantageConfigInput = {},
  options: AdvantageOptions = {},
): AdvantageBatch {
  const config = AdvantageConfig.parse(configInput);
  const rollouts = collectRollouts(rows, verdicts);

  const masked: MaskedRollout[] = [];
  const tasks = new Map<string, TaskSummary>();
  for (const rollout of rollouts.values()) {
    const task = tasks.get(rollout.taskId) ?? { taskId: rollout.taskId, scoredRollouts: 0, maskedRollouts: 0, uneven: false };
    tasks.set(rollout.taskId, task);
    if (rollout.verdict.status === "masked") {
      task.maskedRollouts += 1;
      masked.push({
        taskId: rollout.taskId,
        trajectoryId: rollout.trajectoryId,
        rollout: rollout.rollout,
        reason: rollout.verdict.reason,
        rows: rollout.rows,
      });
    } else {
      task.scoredRollouts += 1;
    }
  }
  for (const task of tasks.values()) {
    task.uneven = config.groupSize !== undefined && task.scoredRollouts < config.groupSize;
  }

  const scored: ScoredRow[] = [];
  const groups = new Map<string, ScoredRow[]>();
  for (const row of rows) {
    const verdict = rollouts.get(row.trajectoryId)!.verdict;
    if (verdict.status === "masked") continue;
    const groupRole: GroupRole = config.roleWise ? row.role : "all";
    const reward = options.bonus === undefined ? verdict.value : verdict.value + rowBonus(options.bonus, row);
    const item: ScoredRow = {
      row,
      reward: verdict.value,
      score: reward - (row.invalid ? config.invalidPenalty : 0),
      advantage: 0,
      groupRole,
    };
    scored.push(item);
    const key = `${row.taskId}\u0000${groupRole}`;
    const members = groups.get(key);
    if (members) members.push(item);
    else groups.set(key, [item]);
  }

  const summaries: GroupSummary[] = [];
  const zeroGroups = new Set<ScoredRow[]>();
  for (const members of groups.values()) {
    const population = baselinePopulation(members, config.baseline);
    const baseline = mean(population);
    const std = sampleStd(population);
    const flat = allEqual(population);
    for (const item of members) {
      if (flat) item.advantage = 0;
      else if (config.normalizeStd) item.advantage = (item.score - baseline) / (std + config.stdEpsilon);
      else item.advantage = item.score - baseline;
    }
    const zeroAdvantage = members.every((item) => item.advantage === 0);
    if (zeroAdvantage) zeroGroups.add(members);
    const first = members[0]!;
    summaries.push({
      taskId: first.row.taskId,
      role: first.groupRole,
      rows: members.length,
      rollouts: new Set(members.map((item) => item.row.trajectoryId)).size,
      baseline,
      std,
      zeroAdvantage,
    });
  }

  const dropKeys = new Set<ScoredRow>();
  if (config.dropZeroAdvantageGroups) {
    for (const members of zeroGroups) for (const item of members) dropKeys.add(item);
  }
  return {
    rows: scored.filter((item) => !dropKeys.has(item)),
    dropped: scored.filter((item) => dropKeys.has(item)),
    groups: summaries,
    tasks: [...tasks.values()],
    masked,
    config,
  };
}

function rowBonus(bonus: (row: TrainingRow) => number, row: TrainingRow): number {
  const value = bonus(row);
  if (!Number.isFinite(value)) throw new AdvantageInputError(`row ${row.index} of trajectory "${row.trajectoryId}": bonus ${value} is not a finite number`);
  return value;
}

/** The values a group's baseline averages: row scores, or one mean score per rollout. */
function baselinePopulation(members: readonly ScoredRow[], mode: BaselineMode): number[] {
  if (mode === "row") return members.map((item) => item.score);
  const perRollout = new Map<string, number[]>();
  for (const item of members) {
    const scores = perRollout.get(item.row.trajectoryId);
    if (scores) scores.push(item.score);
    else perRollout.set(item.row.trajectoryId, [item.score]);
  }
  return [...perRollout.values()].map(mean);
}

/**
 * Role-wise advantages when the roles inherit different rewards: each role's rows are grouped
 * and baselined against that role's verdicts (for example Act rows judged on the world the
 * rollout observed, Rehearse rows on whether that world led to the real outcome). With role-wise
 * baselines this is `computeAdvantages` run per role; a single baseline over all roles cannot
 * mix two rewards, so `roleWise: false` is refused.
 */
export function computeRoleAdvantages(
  rows: readonly TrainingRow[],
  verdictsOf: (role: TrainingRow["role"]) => ReadonlyMap<string, RewardVerdict>,
  configInput: AdvantageConfigInput = {},
  options: AdvantageOptions = {},
): AdvantageBatch {
  const config = AdvantageConfig.parse(configInput);
  if (!config.roleWise) throw new AdvantageInputError("per-role rewards need role-wise baselines (roleWise: true)");
  const order = new Map(rows.map((row, i) => [row, i]));
  const byOrder = (a: ScoredRow, b: ScoredRow): number => order.get(a.row)! - order.get(b.row)!;
  const parts = [...new Set(rows.map((row) => row.role))].map((role) =>
    computeAdvantages(
      rows.filter((row) => row.role === role),
      verdictsOf(role),
      config,
      options,
    ),
  );
  const tasks = new Map<string, TaskSummary>();
  for (const task of parts.flatMap((part) => part.tasks)) {
    const seen = tasks.get(task.taskId);
    tasks.set(
      task.taskId,
      seen === undefined
        ? { ...task }
        : {
            taskId: task.taskId,
            scoredRollouts: Math.max(seen.scoredRollouts, task.scoredRollouts),
            maskedRollouts: Math.max(seen.maskedRollouts, task.maskedRollouts),
            uneven: seen.uneven || task.uneven,
          },
    );
  }
  // A rollout masked for several roles is one masked rollout.
  const masked = new Map<string, MaskedRollout>();
  for (const m of parts.flatMap((part) => part.masked)) {
    const seen = masked.get(m.trajectoryId);
    masked.set(m.trajectoryId, seen === undefined ? { ...m } : { ...seen, rows: seen.rows + m.rows });
  }
  return {
    rows: parts.flatMap((part) => part.rows).sort(byOrder),
    dropped: parts.flatMap((part) => part.dropped).sort(byOrder),
    groups: parts.flatMap((part) => part.groups),
    tasks: [...tasks.values()],
    masked: [...masked.values()],
    config,
  };
}
