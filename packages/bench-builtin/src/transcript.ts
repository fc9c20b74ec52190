import type { JsonObject, Message, Trajectory } from "@envace/protocol";

/** One call the agent made. `arguments` is null when they were not a decodable JSON object. */
export interface TranscriptCall {
  name: string;
  arguments: JsonObject | null;
}

/**
 * What the outcome check and the checklist predicates look at: the agent's tool calls in order
 * (whether their results were real or rehearsed) and its final user-visible reply.
 */
export interface Transcript {
  calls: TranscriptCall[];
  /** The content of the last assistant message if it made no tool calls, thinking removed; else "". */
  reply: string;
}

function decodeArguments(text: string): JsonObject | null {
  try {
    const value: unknown = JSON.parse(text);
    return value !== null && typeof value === "object" && !Array.isArray(value) ? (value as JsonObject) : null;
  } catch {
    return null;
  }
}

/** Remove `<think>…</think>` blocks; an unclosed `<think>` hides everything after it. */
export function userVisible(content: string): string {
  return content.replace(/<think>[\s\S]*?(<\/think>|$)/g, "").trim();
}

function replyOf(last: Extract<Message, { role: "assistant" }> | undefined): string {
  if (!last || (last.tool_calls?.length ?? 0) > 0) return "";
  return userVisible(last.content ?? "");
}

/** The transcript of an OpenAI-shaped dialogue. */
export function transcriptOfMessages(messages: readonly Message[]): Transcript {
  const assistant = messages.filter((m): m is Extract<Message, { role: "assistant" }> => m.role === "assistant");
  const calls = assistant.flatMap((m) =>
    (m.tool_calls ?? []).map((c) => ({ name: c.function.name, arguments: decodeArguments(c.function.arguments) })),
  );
  return { calls, reply: replyOf(assistant.at(-1)) };
}

/**
 * The transcript of a rollout. Calls come from each Act step's outcomes (the decoded calls that
 * were answered, rehearsed or grounded), or from its message when no outcome was recorded.
 */
export function transcriptOfTrajectory(trajectory: Trajectory): Transcript {
  const acts = trajectory.steps.filter((s) => s.type === "act");
  const calls = acts.flatMap((step) =>
    step.outcomes.length > 0
      ? step.outcomes.map((o) => ({ name: o.call.name, arguments: o.call.arguments }))
      : transcriptOfMessages([step.message]).calls,
  );
  return { calls, reply: replyOf(acts.at(-1)?.message) };
}

/** A transcript of either a rollout or a plain dialogue. */
export function transcriptOf(source: Trajectory | readonly Message[]): Transcript {
  return isMessageList(source) ? transcriptOfMessages(source) : transcriptOfTrajectory(source);
}

function isMessageList(source: Trajectory | readonly Message[]): source is readonly Message[] {
  return Array.isArray(source);
}

function normalise(text: string): string {
  return text.toLowerCase().replaceAll(",", "");
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}

/**
 * Whether `reply` states a fact: one of `phrasings` appears, case-insensitively, commas ignored,
 * as whole words (so "o1" does not match inside "o12").
 */
export function mentions(reply: string, phrasings: readonly string[]): boolean {
  const text = normalise(reply);
  return phrasings.some((phrasing) => {
    const phrase = normalise(phrasing);
    // Word edges are only required where the phrase itself begins or ends with a word character.
    const before = /^[a-z0-9]/.test(phrase) ? "(?<![a-z0-9])" : "";
    const after = /[a-z0-9]$/.test(phrase) ? "(?![a-z0-9])" : "";
    return new RegExp(`${before}${escapeRegExp(phrase)}${after}`).test(text);
  });
}
