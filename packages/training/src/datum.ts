import { TrainingInputError } from "./errors.js";
import { toSequence } from "@envace/grpo";
import type { TrainingRow } from "@envace/protocol";
import type { Datum } from "./backend.js";

/**
 * A training row as a `Datum`, with the Tinker shift: for the full sequence prompt ++ output,
 * `tokens` = full[:-1] and `targetTokens` = full[1:]. Positions that predict prompt tokens get
 * mask 0, advantage 0 and sampler log-probability 0; the positions that predict output tokens get
 * mask 1, the sampler's log-probabilities and `advantages` (one number for every output token,
 * or one per output token). Rows without sampler log-probabilities are refused.
 */
export function datumFromRow(row: TrainingRow, advantages: number | readonly number[], refLogprobs?: readonly number[]): Datum {
  const sequence = toSequence(row, 0);
  const n = row.outputTokens.length;
  const offset = sequence.tokens.length - n;
  const perToken = typeof advantages === "number" ? new Array<number>(n).fill(advantages) : advantages;
  if (perToken.length !== n) {
    throw new TrainingInputError(`row ${row.index} of trajectory "${row.trajectoryId}": ${perToken.length} advantages for ${n} output tokens`);
  }
  if (perToken.some((a) => !Number.isFinite(a))) {
    throw new TrainingInputError(`row ${row.index} of trajectory "${row.trajectoryId}": advantages must be finite numbers`);
  }
  perToken.forEach((a, t) => (sequence.advantages[offset + t] = a));
  const datum: Datum = { ...sequence };
  if (refLogprobs !== undefined) {
    if (refLogprobs.length !== sequence.tokens.length) {
      throw new TrainingInputError(
        `row ${row.index} of trajectory "${row.trajectoryId}": ${refLogprobs.length} reference log-probabilities for ${sequence.tokens.length} positions`,
      );
    }
    datum.refLogprobs = [...refLogprobs];
  }
  return datum;
}
