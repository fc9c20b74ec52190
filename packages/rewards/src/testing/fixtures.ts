import { fileURLToPath } from "node:url";
import {
  type ActStep,
  type ChecklistItem,
  type Generation,
  type JsonObject,
  type JsonValue,
  type Message,
  type Step,
  type Termination,
  type ToolOutcome,
  type Trajectory,
  type UserStep,
  toWireToolCall,
} from "@envace/protocol";

/** A file of the package's `fixtures/` folder. */
export function fixturePath(...parts: string[]): string {
  return fileURLToPath(new URL(["../../fixtures", ...parts].join("/"), import.meta.url));
}

/** A checklist item with defaults for everything the test does not care about. */
export function item(id: string, fields: Partial<ChecklistItem> = {}): ChecklistItem {
  return {
    id,
    evidence: [],
    focus_on: "assistant.content.user_visible_reply",
    question: `Question ${id}?`,
    pass_condition: `Condition ${id}.`,
    failure_examples: [],
    required_for_next_turn: false,
    dependence: [],
    weight: 0,
    ...fields,
  };
}

/** A trajectory step in which the assistant says `content` and makes `calls`, each answered by the matching result. */
export function actStep(
  content: string | null,
  calls: { name: string; arguments: JsonObject; result: JsonValue | { error: { code: string; message: string } } }[] = [],
  finishReason: Generation["finishReason"] = calls.length > 0 ? "tool_calls" : "stop",
): ActStep {
  const outcomes: ToolOutcome[] = calls.map((call, i) => {
    const id = `call_${i}_${call.name}`;
    const toolCall = { id, name: call.name, arguments: call.arguments };
    const result = call.result;
    const isError = result !== null && typeof result === "object" && !Array.isArray(result) && "error" in result && typeof result.error === "object";
    return {
      provenance: "rehearsed",
      call: toolCall,
      result: isError
        ? { status: "error", callId: id, name: call.name, error: (result as { error: { code: string; message: string } }).error }
        : { status: "ok", callId: id, name: call.name, content: result },
    };
  });
  return {
    type: "act",
    generation: { role: "act", text: content ?? "", promptTokens: [], outputTokens: [], logprobs: null, finishReason },
    message: {
      role: "assistant",
      content,
      ...(outcomes.length > 0 ? { tool_calls: outcomes.map((o) => toWireToolCall(o.call)) } : {}),
    },
    outcomes,
  };
}

export function userStep(content: string): UserStep {
  return { type: "user", source: "replay", message: { role: "user", content } };
}

export function trajectory(context: Message[], steps: Step[], termination: Termination = { reason: "agent_stop" }, id = "traj-1"): Trajectory {
  return { id, taskId: "task-1", rollout: 0, context, steps, termination, metadata: {} };
}
