// Update: clipped policy-gradient steps with AdamW on the scored rows, the whole step at once or
// in mini-batches of whole task groups (PPO-style).
import { InvariantError } from "@envace/errors";
import type { PolicyLossConfig, ScoredRow } from "@envace/grpo";
import { datumFromRow, type AdamParams, type Datum, type ScoringOptions, type TrainingBackend } from "@envace/training";

export interface UpdateResult {
  loss: number;
  metrics: Record<string, number>;
  /** Loss tokens (output tokens of the rows trained). */
  tokens: number;
  /** The supervised term's mean cross-entropy per target token and its target tokens, when there was one. */
  supervised?: { loss: number; tokens: number };
}

/**
 * A supervised term trained with the policy-gradient rows (grounded Rehearse targets): datums with
 * mask 1 on their target tokens, each trained in the mini-batch that holds its task's group, with
 * loss `coef ·` the mean cross-entropy over the mini-batch's target tokens.
 */
export interface SupervisedTerm {
  data: readonly { taskId: string; datum: Datum }[];
  coef: number;
}

/** How a step's rows are taken: `size` tasks' groups per optimizer step (null: all), `epochs` passes. */
export interface MiniBatching {
  size: number | null;
  epochs: number;
}

/**
 * Split rows into mini-batches of `size` tasks each, in the order the tasks first appear, so a
 * group never straddles two updates. null: one batch of everything.
 */
export function miniBatches<T extends { row: { taskId: string } }>(rows: readonly T[], size: number | null): T[][] {
  if (size === null) return rows.length > 0 ? [[...rows]] : [];
  const byTask = new Map<string, T[]>();
  for (const r of rows) {
    const group = byTask.get(r.row.taskId);
    if (group) group.push(r);
    else byTask.set(r.row.taskId, [r]);
  }
  const groups = [...byTask.values()];
  const batches: T[][] = [];
  for (let i = 0; i < groups.length; i += size) batches.push(groups.slice(i, i + size).flat());
  return batches;
}

/**
 * The policy-gradient steps of one training step: for each epoch, each mini-batch's datums, the
 * clipped loss against the sampler's log-probabilities, AdamW. The loss is the mean over the
 * updates, each metric combined by its reduction. With a KL term, `reference` (a frozen copy of
 * the weights RL started from) scores every datum first.
 */
export async function policyUpdate(
  backend: TrainingBackend,
  rows: readonly ScoredRow[],
  loss: PolicyLossConfig,
  adam: AdamParams,
  reference?: Pick<TrainingBackend, "forward">,
  /** The rollouts' sampling temperature: the learner (and the reference) score that distribution. */
  scoring: ScoringOptions = {},
  batching: MiniBatching = { size: null, epochs: 1 },
  supervised?: SupervisedTerm,
): Promise<UpdateResult> {
  const grouped = miniBatches(
    rows.filter((s) => s.row.outputTokens.length > 0),
    batching.size,
  );
  const batches = grouped.map((batch) => batch.map((s) => datumFromRow(s.row, s.advantage)));
  if (batches.length === 0) return { loss: 0, metrics: {}, tokens: 0 };
  const targets = grouped.map((batch) => supervisedData(supervised, new Set(batch.map((s) => s.row.taskId))));
  if (loss.klCoef > 0) {
    if (reference === undefined) throw new InvariantError("a KL term needs the reference model's log-probabilities");
    for (const data of batches) {
      const refs = await reference.forward(data, scoring);
      data.forEach((d, i) => (d.refLogprobs = refs[i]!));
    }
  }
  const losses: number[] = [];
  const metrics: Record<string, number>[] = [];
  const supervisedLosses: number[] = [];
  for (let epoch = 0; epoch < batching.epochs; epoch++) {
    for (const [index, data] of batches.entries()) {
      const result = await backend.forwardBackward(data, { type: "grpo", config: loss }, scoring);
      // The supervised term's gradient joins the same accumulator, before the one optimizer step.
      const target = targets[index]!;
      if (target.data.length > 0) supervisedLosses.push((await backend.forwardBackward(target.data, { type: "cross_entropy" })).loss / supervised!.coef);
      const optim = await backend.optimStep(adam);
      losses.push(result.loss);
      metrics.push({ ...result.metrics, ...optim });
    }
  }
  const tokens = batches.flat().reduce((s, d) => s + d.mask.reduce((a, m) => a + m, 0), 0);
  const targetTokens = targets.reduce((s, t) => s + t.tokens, 0);
  return {
    loss: mean(losses),
    metrics: combineMetrics(metrics),
    tokens,
    ...(supervisedLosses.length > 0 ? { supervised: { loss: mean(supervisedLosses), tokens: targetTokens } } : {}),
  };
}

/**
 * The supervised datums of one mini-batch's tasks, their masks scaled to `coef / target tokens`:
 * a cross-entropy sum over them is `coef ·` the mean cross-entropy per target token.
 */
export function supervisedData(term: SupervisedTerm | undefined, tasks: ReadonlySet<string>): { data: Datum[]; tokens: number } {
  const chosen = (term?.data ?? []).filter((d) => tasks.has(d.taskId));
  const tokens = chosen.reduce((s, d) => s + d.datum.mask.reduce((a, m) => a + m, 0), 0);
  if (term === undefined || tokens === 0) return { data: [], tokens: 0 };
  return { data: chosen.map(({ datum }) => ({ ...datum, mask: datum.mask.map((m) => (m * term.coef) / tokens) })), tokens };
}

function mean(values: readonly number[]): number {
  return values.reduce((a, b) => a + b, 0) / values.length;
}

/**
 * The updates' metrics as one step's, each by the reduction its name carries (Tinker's
 * `name:reduction`): `:max` the largest, `:min` the smallest, `:sum` the total, anything else the mean.
 */
function combineMetrics(updates: readonly Record<string, number>[]): Record<string, number> {
  const keys = new Set(updates.flatMap((m) => Object.keys(m)));
  return Object.fromEntries(
    [...keys].map((key) => {
      const values = updates.flatMap((m) => (key in m ? [m[key]!] : []));
      if (key.endsWith(":max")) return [key, Math.max(...values)];
      if (key.endsWith(":min")) return [key, Math.min(...values)];
      if (key.endsWith(":sum")) return [key, values.reduce((a, b) => a + b, 0)];
      return [key, mean(values)];
    }),
  );
}
