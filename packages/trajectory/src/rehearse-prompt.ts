import type { AssistantMessage, JsonValue, Message, ToolCall, ToolError, ToolSpec } from "@envace/protocol";
import { flattenAssistant, flattenConversation } from "./messages.js";

/** One example of a tool's input and output, shown to the Rehearse role as a few-shot example. */
export interface ToolExample {
  call: Pick<ToolCall, "name" | "arguments">;
  /** The tool's answer: a JSON result, or a typed error. */
  output: { result: JsonValue } | { error: ToolError };
}

/** Which sections the Rehearse prompt holds. The call to simulate is always there. */
export interface RehearseSections {
  /** The simulator instructions (system message): `true` for the built-in text, a string to replace it. */
  instructions?: boolean | string;
  /** The tool whitelist with each tool's JSON Schema. */
  tools?: boolean;
  /** Few-shot tool input/output examples (shown when `examples` is non-empty). */
  examples?: boolean;
  /** The conversation before the latest Act turn, flattened to text. */
  history?: boolean;
  /** The latest Act output, with all of its tool calls. */
  latestAct?: boolean;
}

export interface RehearsePromptOptions {
  sections?: RehearseSections;
  examples?: readonly ToolExample[];
  /** Show the agent's reasoning in the history and latest turn. Default false. */
  reasoning?: boolean;
}

/** What the Rehearse role is asked about: one call, and the conversation it was made in. */
export interface RehearseRequest {
  tools: readonly ToolSpec[];
  /** The conversation before the latest Act turn (its context and earlier steps). */
  history: readonly Message[];
  /** The Act turn that made the call. Parallel calls of one turn all see the same history. */
  latestAct: AssistantMessage;
  call: ToolCall;
}

export const DEFAULT_REHEARSE_INSTRUCTIONS = `You play the environment of a tool-using agent. The agent has made a tool call; answer with exactly what the real tool would return.

- Stay consistent with everything earlier tool results established; where nothing is known yet, return specific, plausible data.
- Apply the tool's real rules. If the call would fail in the real system (a missing record, a broken rule, insufficient funds), return that failure instead of a result.
- Do not do the agent's work and do not address the user: you are the tool.

Format: you may first think inside <think>…</think>. Then write the tool's response as JSON inside <execution_result>…</execution_result>: a JSON object or array for a result, or {"error": {"code": "UPPER_SNAKE_CASE", "message": "what went wrong"}} for a failure.`;

const ALL_SECTIONS: Required<Omit<RehearseSections, "instructions">> & { instructions: boolean | string } = {
  instructions: true,
  tools: true,
  examples: true,
  history: true,
  latestAct: true,
};

/**
 * The prompt of the Rehearse role, as chat messages: the simulator instructions as a system
 * message, then one user message with the enabled sections and the call to simulate.
 */
export function buildRehearsePrompt(request: RehearseRequest, options: RehearsePromptOptions = {}): Message[] {
  const sections = { ...ALL_SECTIONS, ...options.sections };
  const messages: Message[] = [];
  if (sections.instructions !== false) {
    messages.push({
      role: "system",
      content: typeof sections.instructions === "string" ? sections.instructions : DEFAULT_REHEARSE_INSTRUCTIONS,
    });
  }

  const parts: string[] = [];
  if (sections.tools) {
    const specs = request.tools.map((tool) => JSON.stringify(tool.function));
    parts.push(`## Available tools\n${specs.length > 0 ? specs.join("\n") : "(none)"}`);
  }
  const examples = options.examples ?? [];
  if (sections.examples && examples.length > 0) {
    parts.push(`## Examples\n${examples.map(formatExample).join("\n\n")}`);
  }
  const flatten = { reasoning: options.reasoning ?? false };
  if (sections.history) {
    parts.push(`## Conversation so far\n${request.history.length > 0 ? flattenConversation(request.history, flatten) : "(empty)"}`);
  }
  if (sections.latestAct) {
    parts.push(`## The agent's latest turn\n${flattenAssistant(request.latestAct, flatten)}`);
  }
  parts.push(`## Tool call to simulate\n${callJson(request.call)}`);
  messages.push({ role: "user", content: parts.join("\n\n") });
  return messages;
}

function callJson(call: Pick<ToolCall, "name" | "arguments">): string {
  return JSON.stringify({ name: call.name, arguments: call.arguments });
}

function formatExample(example: ToolExample): string {
  const output = "error" in example.output ? { error: example.output.error } : example.output.result;
  return `Call: ${callJson(example.call)}\n<execution_result>${JSON.stringify(output)}</execution_result>`;
}
