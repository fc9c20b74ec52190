import { InvariantError } from "@envace/errors";
import { TaskContentError, type JsonValue, type Task } from "@envace/protocol";
import { contentHash } from "@envace/records";
import { type RewardFunction, scored } from "../reward.js";

/**
 * The content address of an environment state: SHA-256 of its canonical JSON (object keys sorted
 * at every depth), so two states built in different key orders hash alike.
 */
export function stateHash(state: JsonValue): string {
  return contentHash(state);
}

export interface StateMatchOptions {
  /** The state a correct solution reaches. Default: `task.expectedState`. */
  expected?: (task: Task) => JsonValue | undefined;
}

/**
 * 1 if the environment's final state (`context.state`) has the same canonical hash as the
 * expected one, else 0: the τ²-bench database check. Rejects when either state is missing.
 */
export function stateMatchReward(options: StateMatchOptions = {}): RewardFunction {
  const expectedOf = options.expected ?? ((task: Task) => task.expectedState);
  return (_trajectory, task, context) => {
    const expected = expectedOf(task);
    if (expected === undefined) return Promise.reject(new TaskContentError(`task "${task.id}" has no expected state to compare with`));
    if (context?.state === undefined) {
      // The caller composes evaluators with the environment it ran: a missing state is its bug.
      return Promise.reject(new InvariantError(`state match for task "${task.id}" needs the final environment state in context.state`));
    }
    const value = stateHash(context.state) === stateHash(expected) ? 1 : 0;
    return Promise.resolve(scored(value, { state: value }));
  };
}
