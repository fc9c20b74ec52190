import {
  ToolSpec,
  type AssistantMessage,
  type Environment,
  type Message,
  type SamplingParams,
  type Task,
  type ToolCall,
  type ToolOutcome,
  type ToolResult,
} from "@envace/protocol";
import { z } from "zod";
import { RehearsalEnvironment } from "./rehearsal-environment.js";
import { seededFor } from "./seed.js";

/**
 * The user's own side in a dual-control task (τ²-Bench telecom: the customer's phone), as a user
 * simulator sees it: the tools it may call there, and who answers them. A real `Environment`
 * answers `grounded`; a `RehearsalEnvironment` makes the policy imagine the answers (`rehearsed`),
 * so a private rehearsal reaches no real system on either side.
 */
export interface UserDevice {
  readonly tools: readonly ToolSpec[];
  /**
   * Answer one of the user's calls. `history` is the conversation as the user simulator sees it
   * and `latestAct` its message holding the calls; `round` and `index` number the call in the turn.
   */
  answer(call: ToolCall, context: { history: readonly Message[]; latestAct: AssistantMessage; round: number; index: number }): Promise<ToolOutcome>;
}

/** Where the user's tools live when the rehearsed side has no tool list of its own: `task.metadata.user_tools`. */
export function userToolsOf(task: Task): ToolSpec[] {
  const parsed = z.array(ToolSpec).safeParse(task.metadata.user_tools);
  return parsed.success ? parsed.data : [];
}

/**
 * Start the user's side for `task` and wrap it as a `UserDevice`. A real environment is reset and
 * offers its own tools; a rehearsal one is reset with the task's user tools as its whitelist.
 */
export async function openUserDevice(
  environment: Environment | RehearsalEnvironment,
  task: Task,
  rehearseSampling: SamplingParams,
  position: { rollout: number; turn: () => number },
  signal?: AbortSignal,
): Promise<UserDevice> {
  if (environment instanceof RehearsalEnvironment) {
    const tools = userToolsOf(task);
    environment.reset({ ...task, tools });
    return {
      tools,
      async answer(call, context) {
        // Seeds apart from the agent side's (which use small call numbers).
        const sampling = seededFor(rehearseSampling, position.rollout, position.turn(), 1000 + 100 * context.round + context.index);
        const answer = await environment.rehearse(call, { history: context.history, latestAct: context.latestAct }, sampling, signal);
        switch (answer.kind) {
          case "rejected":
            return { provenance: "rehearsed", call, result: answer.result };
          case "rehearsed":
            return { provenance: "rehearsed", call, result: answer.result, generation: answer.generation };
          case "failed":
            return { provenance: "rehearsed", call, result: failure(call, answer.code, answer.detail), generation: answer.generation };
          case "too_long":
            return { provenance: "rehearsed", call, result: failure(call, "PROMPT_TOO_LONG", `the Rehearse prompt has ${answer.promptTokens} tokens`) };
        }
      },
    };
  }
  await environment.reset(task);
  return {
    tools: [...environment.tools()],
    async answer(call) {
      try {
        return { provenance: "grounded", call, result: await environment.call(call) };
      } catch (error) {
        return { provenance: "grounded", call, result: failure(call, "ENVIRONMENT_EXCEPTION", `${call.name}: ${(error as Error).message}`) };
      }
    },
  };
}

function failure(call: ToolCall, code: string, message: string): ToolResult {
  return { status: "error", callId: call.id, name: call.name, error: { code, message } };
}
