import { TaskContentError } from "@envace/protocol";
import type { JsonValue, RewardVerdict, Task } from "@envace/protocol";
import { canonicalJson } from "@envace/records";
import type { DialogueSource, RewardFunction } from "@envace/rewards";
import { builtinMeta } from "./meta.js";
import { Shop } from "./tools.js";
import { mentions, transcriptOf, type Transcript } from "./transcript.js";
import type { World } from "./world.js";

/** The final state and reply of an episode. */
export interface EpisodeOutcome {
  state: JsonValue;
  reply: string;
}

/**
 * The verifiable outcome check. Components: `state` is 1 when the final state equals the
 * expected one (canonical JSON, so key order does not matter; a rejected write is part of the
 * state), `info` is 1 when the reply states every required fact. The reward is their product.
 */
export function checkOutcome(task: Task, outcome: EpisodeOutcome): RewardVerdict {
  const meta = builtinMeta(task);
  if (task.expectedState === undefined) throw new TaskContentError(`task ${task.id} has no expectedState`);
  const state = canonicalJson(outcome.state) === canonicalJson(task.expectedState) ? 1 : 0;
  const info = meta.required.every((phrasings) => mentions(outcome.reply, phrasings)) ? 1 : 0;
  return { status: "scored", value: state * info, components: { state, info } };
}

/**
 * The state a transcript's calls reach from the task's initial world. Calls whose arguments
 * could not be decoded are skipped: an environment never receives them.
 */
export function replayState(task: Task, transcript: Transcript): World {
  const shop = new Shop(builtinMeta(task).world);
  for (const call of transcript.calls) {
    if (call.arguments !== null) shop.call(call.name, call.arguments);
  }
  return shop.state();
}

/**
 * Score a finished rollout (rehearsed or grounded) or a dialogue by replaying its calls against
 * a private copy of the task's world, then checking the outcome. This is an evaluation step,
 * like τ²-Bench's database check, and touches no environment the rollout used.
 */
export function scoreTrajectory(task: Task, source: DialogueSource): RewardVerdict {
  const transcript = transcriptOf(source);
  return checkOutcome(task, { state: replayState(task, transcript), reply: transcript.reply });
}

/**
 * The outcome check as an `@envace/rewards` `RewardFunction`. With `context.state` (the final
 * state of a grounded episode) it checks that state; without, it replays the rollout's calls.
 */
export const outcomeReward: RewardFunction = (trajectory, task, context) => {
  try {
    const verdict =
      context?.state === undefined ? scoreTrajectory(task, trajectory) : checkOutcome(task, { state: context.state, reply: transcriptOf(trajectory).reply });
    return Promise.resolve(verdict);
  } catch (error) {
    return Promise.reject(error instanceof Error ? error : new Error(String(error)));
  }
};
