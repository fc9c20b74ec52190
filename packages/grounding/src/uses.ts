import { InputError, type JsonValue, type Tokenizer, type ToolResult, type TrainingRow } from "@envace/protocol";
import { aggregateFidelity, type Agreement, type FidelityRecord } from "@envace/rehearsal";
import type { RehearsedCall } from "./candidates.js";
import type { Grounding } from "./replay.js";

/** What grounding can be used for: logged fidelity, a supervised target, a reward term. */
export type GroundingUse = "metric" | "target" | "reward";
export const GROUNDING_USES: readonly GroundingUse[] = ["metric", "target", "reward"];

/** A grounded call with what its grounding found. */
export interface GroundedCall {
  candidate: RehearsedCall;
  grounding: Grounding;
}

/** The compared calls (the prefix replayed and the call made), narrowed. */
export function comparedCalls(grounded: readonly GroundedCall[]): (GroundedCall & { grounding: Extract<Grounding, { kind: "compared" }> })[] {
  return grounded.filter((g): g is GroundedCall & { grounding: Extract<Grounding, { kind: "compared" }> } => g.grounding.kind === "compared");
}

/**
 * The agreement of one rehearsed answer with the real one, in [0, 1]: the mean of the three
 * measures. Exact implies the same keys, which implies the same status, so it takes four values:
 * 0 (not even the status), 1/3 (the status), 2/3 (the key set or error code), 1 (exact).
 */
export function agreementScore(agreement: Agreement): number {
  return (Number(agreement.exact) + Number(agreement.keys) + Number(agreement.status)) / 3;
}

/**
 * The reward term of a grounded Rehearse row: `λ·(2a − 1)` for agreement `a`, so the row's reward
 * is `r_rehearse = r + λ·(2a − 1)` — +λ for an exact answer, +λ/3 for the right key set, −λ/3 for
 * the right status only, −λ for a wrong status or an unreadable answer. Rows not grounded keep
 * `r`: centred, so being selected for grounding is no reward in itself.
 */
export function rehearseBonus(agreement: Agreement, coef: number): number {
  return coef * (2 * agreementScore(agreement) - 1);
}

/** The key of a training row: its trajectory and index. */
export function rowKey(row: Pick<TrainingRow, "trajectoryId" | "index">): string {
  return `${row.trajectoryId}\u0000${row.index}`;
}

/** The reward term of every compared call's Rehearse row, by `rowKey`. */
export function rehearseBonuses(grounded: readonly GroundedCall[], coef: number): Map<string, number> {
  return new Map(
    comparedCalls(grounded).map(({ candidate, grounding }) => [
      rowKey({ trajectoryId: candidate.trajectory.id, index: candidate.row }),
      rehearseBonus(grounding, coef),
    ]),
  );
}

/** The JSON the Rehearse role writes for a result: its content, or `{"error": {"code", "message"}}`. */
function answerJson(result: ToolResult): JsonValue {
  return result.status === "ok" ? result.content : { error: { code: result.error.code, message: result.error.message } };
}

/** What the Rehearse role should have written for a call whose real answer is `result`. */
export function rehearseTargetText(result: ToolResult): string {
  return `<execution_result>${JSON.stringify(answerJson(result))}</execution_result>`;
}

/**
 * The supervised row that teaches a grounded call's real answer: the Rehearse row's own prompt
 * tokens (exactly what it was asked), the target text and the stop token as output. Sampler
 * log-probabilities are 0: cross-entropy does not read them.
 */
export function targetRow(candidate: RehearsedCall, real: ToolResult, tokenizer: Tokenizer): TrainingRow {
  const stop = tokenizer.stopTokenIds[0];
  if (stop === undefined) throw new InputError("the tokenizer has no stop token to end a grounded target with");
  const outputTokens = [...tokenizer.encode(rehearseTargetText(real)), stop];
  return {
    taskId: candidate.trajectory.taskId,
    trajectoryId: candidate.trajectory.id,
    rollout: candidate.trajectory.rollout,
    index: candidate.row,
    role: "rehearse",
    promptTokens: [...candidate.generation.promptTokens],
    outputTokens,
    logprobs: outputTokens.map(() => 0),
    invalid: false,
  };
}

/** The supervised rows of every compared call. */
export function targetRows(grounded: readonly GroundedCall[], tokenizer: Tokenizer): TrainingRow[] {
  return comparedCalls(grounded).map(({ candidate, grounding }) => targetRow(candidate, grounding.real, tokenizer));
}

/** A compared call as rehearsal's fidelity record (`aggregateFidelity` reads these). */
export function groundedFidelityRecord({ candidate, grounding }: GroundedCall & { grounding: Extract<Grounding, { kind: "compared" }> }): FidelityRecord {
  return {
    tool: candidate.call.name,
    answer: candidate.answer,
    exact: grounding.exact,
    keys: grounding.keys,
    status: grounding.status,
    failed: grounding.real.status === "error",
  };
}

/** One step's grounding, as its `metrics.jsonl` record carries it. */
export interface GroundingMetrics {
  /** Rehearsed calls of the step (calls the validator refused are none). */
  candidates: number;
  /** Selected by `select` and `fraction`. */
  selected: number;
  /** Selected calls the budget left out. */
  over_budget: number;
  compared: number;
  /** Replays whose prefix diverged from the trajectory (not compared), and environment exceptions. */
  diverged: number;
  exceptions: number;
  /** Real calls grounding made this step (prefixes included), and in the run so far. */
  calls: number;
  calls_run: number;
  /** Rates over the compared calls (null when none); `failures`: compared calls that really failed. */
  exact: number | null;
  keys: number | null;
  status: number | null;
  unreadable: number;
  failures: number;
  failure_recall: number | null;
}

export function groundingMetrics(
  counts: { candidates: number; selected: number; overBudget: number; callsRun: number },
  grounded: readonly GroundedCall[],
): GroundingMetrics {
  const { overall } = aggregateFidelity(comparedCalls(grounded).map(groundedFidelityRecord));
  return {
    candidates: counts.candidates,
    selected: counts.selected,
    over_budget: counts.overBudget,
    compared: overall.compared,
    diverged: grounded.filter((g) => g.grounding.kind === "diverged").length,
    exceptions: grounded.filter((g) => g.grounding.kind === "exception").length,
    calls: grounded.reduce((sum, g) => sum + g.grounding.calls, 0),
    calls_run: counts.callsRun,
    exact: overall.exactRate,
    keys: overall.keysRate,
    status: overall.statusRate,
    unreadable: overall.unreadable,
    failures: overall.failures,
    failure_recall: overall.failureRecall,
  };
}
