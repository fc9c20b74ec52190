import { EnvaceError } from "@envace/errors";
import type { AssistantMessage, Message, Step, Termination, ToolMessage, ToolOutcome, UserMessage } from "@envace/protocol";
import { CallRejectionCode, toWireToolCall } from "@envace/protocol";
import { splitAssistant } from "./assistant-parts.js";

/** A dialogue or CM2 record whose messages are out of order or lack the turn a call needs. */
export class DialogueError extends EnvaceError {
  override readonly code = "dialogue";
}

/**
 * The tool-error codes that mean a call itself was invalid: the protocol's `CallRejectionCode`s
 * (bad format, unknown tool, arguments that violate the schema). A checklist item about tool
 * calls or tool content fails at a step where one of its calls was invalid, without a judge call.
 */
export const INVALID_CALL_CODES: readonly string[] = CallRejectionCode.options;

/** One assistant step of a user turn: the assistant message and the tool messages answering it. */
export interface DialogueStep {
  assistant: AssistantMessage;
  tools: ToolMessage[];
  /** One of this step's calls was rejected as invalid (see `INVALID_CALL_CODES`). */
  invalidCall: boolean;
}

/** One user turn: the user message and every assistant step until the next user message. */
export interface DialogueTurn {
  index: number;
  user: UserMessage;
  steps: DialogueStep[];
  /**
   * The assistant ended the turn: its last step is a reply with no tool calls (and, for a
   * trajectory, neither truncated nor malformed), or a later user turn follows.
   */
  complete: boolean;
}

/** A dialogue as user turns of assistant steps: the shape checklists are written against. */
export interface Dialogue {
  /** Messages before the first user message (system prompts). */
  preamble: Message[];
  turns: DialogueTurn[];
}

export interface DialogueOptions {
  /** Tool-error codes that mark a call as invalid. Defaults to `INVALID_CALL_CODES`. */
  invalidCallCodes?: readonly string[];
}

/**
 * A protocol trajectory, finished or still unfolding (the rollout engine asks about the turn it
 * just completed before the trajectory has a termination).
 */
export interface TrajectoryLike {
  id?: string;
  context: readonly Message[];
  steps: readonly Step[];
  termination?: Termination;
}

/** A plain OpenAI message list, or a protocol trajectory. */
export type DialogueSource = TrajectoryLike | readonly Message[];

export function toDialogue(source: DialogueSource, options: DialogueOptions = {}): Dialogue {
  const codes = options.invalidCallCodes ?? INVALID_CALL_CODES;
  return isMessageList(source) ? fromMessages(source, codes) : fromTrajectory(source, codes);
}

function isMessageList(source: DialogueSource): source is readonly Message[] {
  return Array.isArray(source);
}

/** Plain messages: a tool message is an invalid call when its JSON says so. */
function fromMessages(messages: readonly Message[], codes: readonly string[]): Dialogue {
  return build(messages, (tool) => toolContentMarksInvalid(tool.content, codes));
}

function fromTrajectory(trajectory: TrajectoryLike, codes: readonly string[]): Dialogue {
  const messages: Message[] = [...trajectory.context];
  const invalid = new Set<ToolMessage>();
  for (const step of trajectory.steps) {
    if (step.type === "user") {
      messages.push(step.message);
      continue;
    }
    messages.push(withDecodedCalls(step.message, step.outcomes));
    for (const outcome of step.outcomes) {
      const tool = toolMessage(outcome);
      if (outcome.result.status === "error" && codes.includes(outcome.result.error.code)) invalid.add(tool);
      messages.push(tool);
    }
  }
  const dialogue = build(messages, (tool) => invalid.has(tool));
  const last = trajectory.steps.at(-1);
  const turn = dialogue.turns.at(-1);
  if (turn?.complete && last?.type === "act") {
    turn.complete = last.generation.finishReason !== "length" && trajectory.termination?.reason !== "parse_error";
  }
  return dialogue;
}

/** The rollout engine parsed the calls; make sure the message carries them as the judge should see them. */
function withDecodedCalls(message: AssistantMessage, outcomes: readonly ToolOutcome[]): AssistantMessage {
  if ((message.tool_calls?.length ?? 0) > 0 || outcomes.length === 0) return message;
  return { ...message, tool_calls: outcomes.map((outcome) => toWireToolCall(outcome.call)) };
}

/** How a tool outcome reads as an OpenAI tool message. */
export function toolMessage(outcome: ToolOutcome): ToolMessage {
  const { result } = outcome;
  const content =
    result.status === "ok" ? (typeof result.content === "string" ? result.content : JSON.stringify(result.content)) : JSON.stringify({ error: result.error });
  return { role: "tool", tool_call_id: result.callId, name: result.name, content };
}

/** CM2 data marks a rejected call with an `error_tool_call` key; ours with `{"error": {"code": …}}`. */
function toolContentMarksInvalid(content: string, codes: readonly string[]): boolean {
  let value: unknown;
  try {
    value = JSON.parse(content);
  } catch {
    return false;
  }
  if (value === null || typeof value !== "object" || Array.isArray(value)) return false;
  if ("error_tool_call" in value) return true;
  const error = (value as { error?: unknown }).error;
  if (error === null || typeof error !== "object") return false;
  const code = (error as { code?: unknown }).code;
  return typeof code === "string" && codes.includes(code);
}

function build(messages: readonly Message[], isInvalid: (tool: ToolMessage) => boolean): Dialogue {
  const preamble: Message[] = [];
  const turns: DialogueTurn[] = [];
  messages.forEach((message, position) => {
    const turn = turns.at(-1);
    if (message.role === "user") {
      turns.push({ index: turns.length, user: message, steps: [], complete: false });
      return;
    }
    if (!turn) {
      preamble.push(message);
      return;
    }
    if (message.role === "assistant") {
      turn.steps.push({ assistant: message, tools: [], invalidCall: false });
      return;
    }
    if (message.role === "system") {
      throw new DialogueError(`messages[${position}]: a system message may only come before the first user message`);
    }
    const step = turn.steps.at(-1);
    if (!step) throw new DialogueError(`messages[${position}]: a tool message must follow the assistant message that called the tool`);
    step.tools.push(message);
    if (isInvalid(message)) step.invalidCall = true;
  });
  turns.forEach((turn, i) => {
    const last = turn.steps.at(-1);
    const repliedLast = last?.tools.length === 0 && splitAssistant(last.assistant).toolCalls.length === 0;
    turn.complete = i < turns.length - 1 || repliedLast;
  });
  return { preamble, turns };
}

/** The messages of a turn up to and including step `step` and its tool results. */
export function turnMessages(turn: DialogueTurn, step = turn.steps.length - 1): Message[] {
  return [turn.user, ...turn.steps.slice(0, step + 1).flatMap((s) => [s.assistant, ...s.tools])];
}
