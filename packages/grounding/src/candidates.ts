import type { Generation, ToolCall, ToolResult, Trajectory } from "@envace/protocol";
import { unreadRehearseEnding } from "@envace/trajectory";

/** One call a trajectory committed to before a later one: the agent's, or the user's on their own side (dual control). */
export interface CommittedCall {
  side: "agent" | "user";
  call: ToolCall;
  /** What the trajectory says it returned (the imagined answer, or the validator's refusal). */
  result: ToolResult;
}

/**
 * A tool call the Rehearse role answered in a trajectory: a call that can be grounded. Calls the
 * validator refused without asking the model have no Rehearse row and are no candidates.
 */
export interface RehearsedCall {
  trajectory: Trajectory;
  /** 0-based index of the Act step that made the call, and of the call among that step's outcomes. */
  step: number;
  outcome: number;
  call: ToolCall;
  /** The imagined answer (for an unreadable output, the error `unfold` recorded for it). */
  rehearsed: ToolResult;
  generation: Generation;
  /** The Rehearse row's `index`, as `rowsOf` numbers the trajectory's generations. */
  row: number;
  /** `model`: the answer was read; `unreadable`: the output could not be read or was cut off (it ended the rollout). */
  answer: "model" | "unreadable";
  /** Every call the trajectory committed to before this one, in order: what a replay executes first. */
  prefix: CommittedCall[];
}

/**
 * The rehearsed calls of a trajectory, in order. Row indices follow `rowsOf`: every Act
 * generation, then the Rehearse generations of its calls. A Rehearse output that ended the rollout
 * unread (malformed or cut off) is the trajectory's last generation.
 */
export function rehearsedCalls(trajectory: Trajectory): RehearsedCall[] {
  const calls: RehearsedCall[] = [];
  const committed: CommittedCall[] = [];
  const unread = unreadRehearseEnding(trajectory.termination) !== undefined;
  let generations = 0;
  trajectory.steps.forEach((step, stepIndex) => {
    if (step.type === "user") {
      for (const action of step.actions ?? []) for (const o of action.outcomes) committed.push({ side: "user", call: o.call, result: o.result });
      return;
    }
    generations += 1;
    step.outcomes.forEach((outcome, outcomeIndex) => {
      if (outcome.provenance === "rehearsed" && outcome.generation !== undefined) {
        const row = generations;
        generations += 1;
        calls.push({
          trajectory,
          step: stepIndex,
          outcome: outcomeIndex,
          call: outcome.call,
          rehearsed: outcome.result,
          generation: outcome.generation,
          row,
          answer: "model",
          prefix: [...committed],
        });
      }
      committed.push({ side: "agent", call: outcome.call, result: outcome.result });
    });
  });
  // `unfold` stops right after the Rehearse output it could not read: the last call is that one.
  const last = calls.at(-1);
  if (unread && last?.row === generations - 1) last.answer = "unreadable";
  return calls;
}

/**
 * The Rehearse role's uncertainty about its answer: the mean surprisal (−log p) of the tokens it
 * sampled, a one-sample estimate of the per-token entropy of the distribution it sampled from.
 * Null where the sampler returned no log-probabilities (or no tokens).
 */
export function answerEntropy(generation: Generation): number | null {
  const { logprobs } = generation;
  if (logprobs === null || logprobs.length === 0) return null;
  return -logprobs.reduce((sum, lp) => sum + lp, 0) / logprobs.length;
}
