import { TaskContentError, type JsonValue, type Task, type Trajectory } from "@envace/protocol";
import { splitAssistant } from "../checklist/assistant-parts.js";
import { type RewardFunction, scored } from "../reward.js";

/**
 * Whether `info` was told to the user, by τ²-bench's rule: its lower-cased text is a substring of
 * some assistant reply, lower-cased with its commas removed (so "1,000" in a reply matches
 * "1000"). Only what the user sees counts: thinking is left out.
 */
export function infoCommunicated(info: string, replies: readonly string[]): boolean {
  const needle = info.toLowerCase();
  return replies.some((reply) => reply.toLowerCase().replaceAll(",", "").includes(needle));
}

/** The user-visible text of every assistant step, in order (empty replies left out). */
export function assistantReplies(trajectory: Trajectory): string[] {
  return trajectory.steps.flatMap((step) => {
    if (step.type !== "act") return [];
    const { reply } = splitAssistant(step.message);
    return reply === "" ? [] : [reply];
  });
}

export interface CommunicateInfoOptions {
  /** The facts to communicate. Default: the task's `metadata.communicate_info` (a list of strings). */
  info?: (task: Task) => readonly string[] | undefined;
}

/**
 * 1 if every expected fact was communicated, else 0 (τ²-bench's communicate reward). An empty
 * list scores 1; a task without one rejects.
 */
export function communicateInfoReward(options: CommunicateInfoOptions = {}): RewardFunction {
  const infoOf = options.info ?? ((task: Task) => stringList(task.metadata.communicate_info));
  return (trajectory, task) => {
    const info = infoOf(task);
    if (info === undefined) return Promise.reject(new TaskContentError(`task "${task.id}" has no communicate_info list`));
    const replies = assistantReplies(trajectory);
    const value = info.every((fact) => infoCommunicated(fact, replies)) ? 1 : 0;
    return Promise.resolve(scored(value, { communicate: value }));
  };
}

function stringList(value: JsonValue | undefined): string[] | undefined {
  return Array.isArray(value) && value.every((v) => typeof v === "string") ? value : undefined;
}
