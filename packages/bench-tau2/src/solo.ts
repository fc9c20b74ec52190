import type { Policy, ToolSpec } from "@envace/protocol";
import { oracleCall, scriptedGeneration } from "./oracle.js";
import type { Tau2AssistantMessage, Tau2Task } from "./task.js";

// Upstream's solo mode (`llm_agent_solo`): no user simulator. The agent reads the task's ticket
// in its system prompt, works it alone with the tools of both sides, and ends by calling `done`.

/** The tool a solo agent calls to end the conversation (upstream's `STOP_FUNCTION_NAME`). */
export const SOLO_STOP_TOOL = "done";

/** The text a solo agent's `done` call becomes (upstream's `STOP_TOKEN`). */
export const SOLO_STOP_TOKEN = "###STOP###";

/** `done()`, offered to a solo agent after the domain's tools; its schema is pydantic's for no arguments. */
export const SOLO_STOP_SPEC: ToolSpec = {
  type: "function",
  function: {
    name: SOLO_STOP_TOOL,
    description: "Call this function when you are done with the task.",
    parameters: { properties: {}, required: [], title: "parameters", type: "object" },
  },
};

/**
 * The solo agent's instructions around the policy. Paraphrased; pass upstream's own text
 * (`AGENT_SOLO_INSTRUCTION`, its `{stop_function_name}` filled in) to reproduce its prompt exactly.
 */
export const DEFAULT_SOLO_INSTRUCTION = `You are a customer service agent. Resolve the ticket below in line with the <policy> below.
You cannot talk to the user: plan the work and make tool calls only.
When you consider the ticket resolved, send one message holding a single call to the \`${SOLO_STOP_TOOL}\` tool and no other call.
Follow the policy at all times, and write only valid JSON in tool calls.`;

/** The solo agent's system prompt: instructions, policy and the task's ticket, in upstream's tags. */
export function soloSystemPrompt(policy: string, ticket: string | null, instruction: string = DEFAULT_SOLO_INSTRUCTION): string {
  // Upstream formats a missing ticket as Python's `None`.
  return `<instructions>\n${instruction}\n</instructions>\n<policy>\n${policy}\n</policy>\n<ticket>\n${ticket ?? "None"}\n</ticket>`;
}

/**
 * Upstream's solo task filter (`LLMSoloAgent.check_valid_task`). A task with an initial state
 * qualifies when its message history holds only tool traffic (no user message, no agent text);
 * its ticket is not checked. Any other task needs a ticket and at least one gold action.
 */
export function isSoloTask(task: Tau2Task): boolean {
  if (task.initial_state !== null) {
    return (task.initial_state.message_history ?? []).every(
      (message) => message.role !== "user" && !(message.role === "assistant" && message.tool_calls === null),
    );
  }
  return task.ticket !== null && task.evaluation_criteria !== null && (task.evaluation_criteria.actions ?? []).length > 0;
}

/**
 * Upstream's `_check_if_stop_toolcall`: a message calling `done` becomes the stop message, its
 * content the stop token and its calls dropped (any others with it too); other messages stay.
 */
export function soloStop(message: Tau2AssistantMessage): Tau2AssistantMessage | undefined {
  if (!(message.tool_calls ?? []).some((call) => call.name === SOLO_STOP_TOOL)) return undefined;
  return { ...message, content: SOLO_STOP_TOKEN, tool_calls: null };
}

/** The solo oracle: every gold action in order as the agent's own call, one per turn, then `done`. */
export function soloOracle(task: Tau2Task): Policy {
  const actions = task.evaluation_criteria?.actions ?? [];
  let next = 0;
  return {
    id: "oracle",
    generate: (request) => {
      const action = actions[next++];
      const call = action === undefined ? { id: "done", type: "function" as const, function: { name: SOLO_STOP_TOOL, arguments: "{}" } } : oracleCall(action);
      return Promise.resolve(scriptedGeneration(request, "", [call]));
    },
  };
}
