import { EnvaceError } from "@envace/errors";
import type { PolicyRole, TrainingRow } from "@envace/protocol";
import type { ScoredRow } from "./advantages.js";

/**
 * One row laid out for a training backend, position by position (the shape of a Tinker Datum
 * and of `Datum` in `@envace/training`). Position t of `tokens` predicts `targetTokens[t]`.
 *
 * For a prompt p₀…p_{L−1} and output s₀…s_{n−1}: `tokens` = p₀…p_{L−1} s₀…s_{n−2} and
 * `targetTokens` = p₁…p_{L−1} s₀…s_{n−1}. The first L−1 positions predict prompt tokens: their
 * mask, advantage and sampler log-probability are 0. The last n positions predict the output:
 * mask 1, the row's advantage, and the sampler's log-probability of each output token.
 */
export interface PolicySequence {
  tokens: number[];
  targetTokens: number[];
  logprobs: number[];
  advantages: number[];
  mask: number[];
}

/** A row that cannot become a sequence at all: the data is unusable, not merely uninformative. */
export class SequenceError extends EnvaceError {
  override readonly code = "sequence";
}

function describe(row: TrainingRow): string {
  return `row ${row.index} (${row.role}) of trajectory "${row.trajectoryId}"`;
}

/** Lay out one row with its advantage on every output token. */
export function toSequence(row: TrainingRow, advantage: number): PolicySequence {
  if (row.logprobs === null) {
    throw new SequenceError(`${describe(row)}: the sampler returned no log-probabilities, so it cannot be trained on`);
  }
  if (row.logprobs.length !== row.outputTokens.length) {
    throw new SequenceError(`${describe(row)}: ${row.logprobs.length} log-probabilities for ${row.outputTokens.length} output tokens`);
  }
  if (row.promptTokens.length === 0) {
    throw new SequenceError(`${describe(row)}: empty prompt, so no position predicts the first output token`);
  }
  const n = row.outputTokens.length;
  const observed = row.promptTokens.length - 1;
  const full = [...row.promptTokens, ...row.outputTokens];
  return {
    tokens: full.slice(0, -1),
    targetTokens: full.slice(1),
    logprobs: [...new Array<number>(observed).fill(0), ...row.logprobs],
    advantages: [...new Array<number>(observed).fill(0), ...new Array<number>(n).fill(advantage)],
    mask: [...new Array<number>(observed).fill(0), ...new Array<number>(n).fill(1)],
  };
}

export interface SequenceBatch {
  sequences: PolicySequence[];
  /** The scored row behind each sequence, index for index. */
  rows: ScoredRow[];
  /** Rows that were not laid out, and why. */
  skipped: { row: ScoredRow; reason: "empty-output" | "role-not-trained" }[];
}

/**
 * Lay out scored rows for a backend. `roles` restricts training to some roles (the others are
 * skipped, e.g. an Act-only ablation); rows with no output tokens carry no gradient and are
 * skipped. Rows without sampler log-probabilities are refused with a `SequenceError`.
 */
export function toSequences(rows: readonly ScoredRow[], options: { roles?: readonly PolicyRole[] } = {}): SequenceBatch {
  const batch: SequenceBatch = { sequences: [], rows: [], skipped: [] };
  for (const item of rows) {
    if (options.roles && !options.roles.includes(item.row.role)) {
      batch.skipped.push({ row: item, reason: "role-not-trained" });
    } else if (item.row.outputTokens.length === 0) {
      batch.skipped.push({ row: item, reason: "empty-output" });
    } else {
      batch.sequences.push(toSequence(item.row, item.advantage));
      batch.rows.push(item);
    }
  }
  return batch;
}
