import type { AssistantMessage, Message, Step, ToolMessage, ToolResult } from "@envace/protocol";

/**
 * The text a tool message carries for a result. Errors use the same envelope the Rehearse role
 * writes, `{"error": {"code", "message"}}`, so the agent reads real and rehearsed failures alike.
 * String content is passed through as is; other JSON is serialised.
 */
export function toolResultText(result: ToolResult): string {
  if (result.status === "error") return JSON.stringify({ error: result.error });
  return typeof result.content === "string" ? result.content : JSON.stringify(result.content);
}

export function toolMessage(result: ToolResult): ToolMessage {
  return { role: "tool", tool_call_id: result.callId, name: result.name, content: toolResultText(result) };
}

/** The messages one step adds to the conversation: the assistant turn and its tool results, or a user turn. */
export function stepMessages(step: Step): Message[] {
  if (step.type === "user") return [step.message];
  return [step.message, ...step.outcomes.map((outcome) => toolMessage(outcome.result))];
}

/** The whole conversation of a rollout: its starting context, then every step's messages. */
export function conversationOf(trajectory: { context: readonly Message[]; steps: readonly Step[] }): Message[] {
  const messages = [...trajectory.context];
  for (const step of trajectory.steps) messages.push(...stepMessages(step));
  return messages;
}

export interface FlattenOptions {
  /** Include assistant reasoning (`reasoning_content`). Default false. */
  reasoning?: boolean;
}

/**
 * A conversation as plain text, one block per message, for prompts that show a dialogue to a
 * model in another role (the Rehearse role, a user simulator, a judge).
 */
export function flattenConversation(messages: readonly Message[], options: FlattenOptions = {}): string {
  const blocks: string[] = [];
  for (let index = 0; index < messages.length; index += 1) {
    const message = messages[index]!;
    switch (message.role) {
      case "system":
        blocks.push(`[system]\n${message.content}`);
        break;
      case "user":
        blocks.push(`[user]\n${message.content}`);
        break;
      case "assistant":
        blocks.push(`[assistant]\n${flattenAssistant(message, options)}`);
        break;
      case "tool":
        blocks.push(`[tool result: ${message.name ?? calledName(messages, index, message.tool_call_id)}]\n${message.content}`);
        break;
    }
  }
  return blocks.join("\n\n");
}

/**
 * The name of the tool an assistant turn before `index` called with `callId`, for tool messages
 * that do not carry it. Searched only when needed: most tool messages name their tool.
 */
function calledName(messages: readonly Message[], index: number, callId: string): string {
  for (let i = index - 1; i >= 0; i -= 1) {
    const message = messages[i]!;
    if (message.role !== "assistant") continue;
    const call = message.tool_calls?.find((c) => c.id === callId);
    if (call !== undefined) return call.function.name;
  }
  return "tool";
}

/** One assistant turn as text: reasoning (if asked for), visible content, then one line per call. */
export function flattenAssistant(message: AssistantMessage, options: FlattenOptions = {}): string {
  const lines: string[] = [];
  if (options.reasoning === true && message.reasoning_content !== undefined && message.reasoning_content.length > 0) {
    lines.push(`(reasoning) ${message.reasoning_content}`);
  }
  if (message.content !== null && message.content.length > 0) lines.push(message.content);
  for (const call of message.tool_calls ?? []) {
    lines.push(`(calls ${call.function.name}) ${call.function.arguments}`);
  }
  return lines.length > 0 ? lines.join("\n") : "(empty)";
}
