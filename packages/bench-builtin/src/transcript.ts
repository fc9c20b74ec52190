import type { JsonObject } from "@envace/protocol";
import { decodeToolCall, splitAssistant, toDialogue, type Dialogue, type DialogueSource } from "@envace/rewards";

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
  /** The user-visible reply of the last assistant step if it made no tool call; else "". */
  reply: string;
}

/**
 * The transcript of a dialogue as `@envace/rewards` reads it for the checklist judge: tool calls
 * are the native `tool_calls` (for a rollout, the calls the engine decoded), or else the
 * `<tool_call>` blocks of the visible reply; thinking (`reasoning_content`, `<think>…</think>`)
 * is neither a call nor part of the reply.
 */
export function transcriptOfDialogue(dialogue: Dialogue): Transcript {
  const parts = dialogue.turns.flatMap((turn) => turn.steps).map((step) => splitAssistant(step.assistant));
  const calls = parts.flatMap((part) => part.toolCalls.map(decodeToolCall).map(({ name, arguments: args }) => ({ name, arguments: args })));
  const last = parts.at(-1);
  return { calls, reply: last?.toolCalls.length === 0 ? last.reply : "" };
}

/** The transcript of a rollout (protocol `Trajectory`) or of a plain OpenAI message list. */
export function transcriptOf(source: DialogueSource): Transcript {
  return transcriptOfDialogue(toDialogue(source));
}

function normalise(text: string): string {
  return text.toLowerCase().replaceAll(",", "");
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}

/**
 * Whether `reply` states a fact: one of `phrasings` appears, case-insensitively, commas ignored
 * (τ²-Bench's normalisation), and as whole words, so "o1" does not match inside "o12".
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
