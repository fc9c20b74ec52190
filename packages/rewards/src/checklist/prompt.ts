import type { ChecklistItem, Message } from "@envace/protocol";
import { splitAssistant } from "./assistant-parts.js";
import type { Dialogue, DialogueTurn } from "./dialogue.js";

const NONE = "(none)";

/** How messages are rendered for the judge. */
export interface RenderOptions {
  /**
   * Cut every rendered field (a user message, thinking, reply, tool arguments, a tool result)
   * to this many characters, marking the cut, so long tool results cannot overflow the judge's
   * context. Default: no limit.
   */
  maxFieldChars?: number;
}

/** Render messages as turns and steps, with thinking, visible reply and tool calls on separate labelled lines. */
export function renderMessages(preamble: readonly Message[], turns: readonly DialogueTurn[], lastStep?: number, options: RenderOptions = {}): string {
  const field = (text: string) => clip(text, options.maxFieldChars);
  const blocks: string[] = preamble.map((message) =>
    message.role === "assistant" ? `assistant: ${field(splitAssistant(message).reply) || NONE}` : `${message.role}.content: ${field(message.content)}`,
  );
  turns.forEach((turn, t) => {
    const steps = t === turns.length - 1 && lastStep !== undefined ? turn.steps.slice(0, lastStep + 1) : turn.steps;
    blocks.push(`## Turn ${turn.index}\nuser.content: ${field(turn.user.content)}`);
    steps.forEach((step, s) => {
      const parts = splitAssistant(step.assistant);
      const calls = parts.toolCalls.length === 0 ? ` ${NONE}` : parts.toolCalls.map((c) => `\n  - ${c.name} ${field(c.arguments)}`).join("");
      const lines = [
        `### Step ${s}`,
        `assistant.content.thinking: ${field(parts.thinking) || NONE}`,
        `assistant.content.user_visible_reply: ${field(parts.reply) || NONE}`,
        `assistant.tool_calls:${calls}`,
        ...step.tools.map((tool) => `tool.content${tool.name ? ` (${tool.name})` : ""}: ${field(tool.content)}`),
      ];
      blocks.push(lines.join("\n"));
    });
  });
  return blocks.length === 0 ? NONE : blocks.join("\n\n");
}

function clip(text: string, limit: number | undefined): string {
  if (limit === undefined || text.length <= limit) return text;
  return `${text.slice(0, limit)}… [${text.length - limit} more characters cut]`;
}

/** Everything a judge prompt is built from: one checklist item, judged at one step of one turn. */
export interface JudgePromptInput {
  item: ChecklistItem;
  dialogue: Dialogue;
  /** Index into `dialogue.turns`. */
  turn: number;
  /** Index into that turn's steps: the messages under evaluation end with this step's tool results. */
  step: number;
  render?: RenderOptions;
}

/**
 * The judge prompt: the item's criteria, the messages before the turn, and the turn so far. The
 * five numbered instructions line up with the fields of the verdict schema.
 */
export function buildJudgePrompt({ item, dialogue, turn, step, render = {} }: JudgePromptInput): string {
  const current = dialogue.turns[turn];
  if (!current) throw new RangeError(`turn ${turn} is not in the dialogue (${dialogue.turns.length} turns)`);
  const failures = item.failure_examples.length === 0 ? NONE : item.failure_examples.map((f) => `- ${f}`).join("\n");
  const evidence =
    item.evidence.length === 0 ? NONE : item.evidence.map((e) => `- turn ${e.turn}, step ${e.step}, ${e.from}: ${JSON.stringify(e.snippet)}`).join("\n");
  return `# Task
You check one checklist item against a conversation between a user, an assistant and tools. Reply with one JSON object and nothing else.

# Checklist item
Question: ${item.question}
Focus on: ${item.focus_on}
Pass condition: ${item.pass_condition}
Failure examples:
${failures}
Evidence from a reference dialogue (what a correct assistant did there; the conversation below may differ in wording and values):
${evidence}

# Previous messages
${renderMessages(dialogue.preamble, dialogue.turns.slice(0, turn), undefined, render)}

# Messages under evaluation
${renderMessages([], [current], step, render)}

# How to read the messages
- assistant.content.thinking is private reasoning that the user never sees.
- assistant.content.user_visible_reply is what the user sees.
- assistant.tool_calls lists the calls the assistant really made. A call written only in the thinking was never made and does not count: when assistant.tool_calls is ${NONE}, the assistant made no call at that step, whatever its thinking says.
- When a tool message reports that a call was invalid, the calls of the assistant step just before it did not take effect.

# Verdict
Fill the fields in this order:
1. high_level_understanding_of_the_question: what the question checks and what passing means here.
2. analysis_of_if_focus_on: whether the part named in "Focus on" is present in the messages under evaluation.
3. analysis_of_pass_condition: whether the pass condition is fully met.
4. analysis_of_failure_examples: for each failure example, "triggered" or "not triggered", and why.
5. answer: true only if the focus part is present, the pass condition is fully met and no failure example is triggered; otherwise false.`;
}
