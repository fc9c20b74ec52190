import type { ChecklistItem, JsonObject, JsonValue, Message, ToolMessage } from "@envace/protocol";
import type { AssistantParts } from "./assistant-parts.js";
import type { Dialogue } from "./dialogue.js";
import { structuralEqual } from "../structural-equal.js";

/** A tool call of the step under evaluation, with its arguments decoded (`null` when they are not a JSON object). */
export interface DecodedToolCall {
  name: string;
  arguments: JsonObject | null;
  /** The arguments exactly as sent. */
  raw: string;
}

/** What a programmatic checklist item sees: one item, at one step of one turn. */
export interface ChecklistStepView {
  item: ChecklistItem;
  checklist: number;
  turn: number;
  step: number;
  dialogue: Dialogue;
  /** The step's assistant message, split into thinking, visible reply and tool calls. */
  assistant: AssistantParts;
  toolCalls: DecodedToolCall[];
  toolResults: ToolMessage[];
  /** The turn so far: its user message, and every step up to this one with its tool results. */
  messages: Message[];
}

/**
 * A checklist item decided by code instead of a judge: for domains with checkable rules. Like a
 * judged item it is asked at every step of the turn and passes for the turn if it passes at any.
 */
export type ChecklistPredicate = (view: ChecklistStepView) => boolean | Promise<boolean>;

/** Which items are programmatic: predicates by item id, or a function choosing one per item. */
export type ProgrammaticItems =
  Readonly<Record<string, ChecklistPredicate>> | ((item: ChecklistItem, where: { checklist: number; turn: number }) => ChecklistPredicate | undefined);

export function predicateFor(
  programmatic: ProgrammaticItems | undefined,
  item: ChecklistItem,
  where: { checklist: number; turn: number },
): ChecklistPredicate | undefined {
  if (programmatic === undefined) return undefined;
  if (typeof programmatic === "function") return programmatic(item, where);
  return Object.hasOwn(programmatic, item.id) ? programmatic[item.id] : undefined;
}

export function decodeToolCall(call: { name: string; arguments: string }): DecodedToolCall {
  let value: unknown;
  try {
    value = JSON.parse(call.arguments);
  } catch {
    value = undefined;
  }
  const isObject = value !== null && typeof value === "object" && !Array.isArray(value);
  return { name: call.name, arguments: isObject ? (value as JsonObject) : null, raw: call.arguments };
}

/** Ready-made predicates. */
export const predicates = {
  /** The step calls `name`, with at least the given arguments (deep-equal values). */
  calledTool(name: string, args: JsonObject = {}): ChecklistPredicate {
    return ({ toolCalls }) =>
      toolCalls.some(
        (call) => call.name === name && call.arguments !== null && Object.entries(args).every(([key, value]) => jsonEqual(call.arguments![key], value)),
      );
  },
  /** The step's user-visible reply contains `text` (case-insensitive unless asked). */
  replyIncludes(text: string, options: { caseSensitive?: boolean } = {}): ChecklistPredicate {
    return ({ assistant }) => includes(assistant.reply, text, options.caseSensitive ?? false);
  },
  /** A tool result of the step contains `text` (case-insensitive unless asked). */
  toolResultIncludes(text: string, options: { caseSensitive?: boolean } = {}): ChecklistPredicate {
    return ({ toolResults }) => toolResults.some((tool) => includes(tool.content, text, options.caseSensitive ?? false));
  },
  /** Every predicate passes at the step. */
  all(...checks: ChecklistPredicate[]): ChecklistPredicate {
    return async (view) => {
      for (const check of checks) if (!(await check(view))) return false;
      return true;
    };
  },
  /** Some predicate passes at the step. */
  any(...checks: ChecklistPredicate[]): ChecklistPredicate {
    return async (view) => {
      for (const check of checks) if (await check(view)) return true;
      return false;
    };
  },
} as const;

function includes(haystack: string, needle: string, caseSensitive: boolean): boolean {
  return caseSensitive ? haystack.includes(needle) : haystack.toLowerCase().includes(needle.toLowerCase());
}

/** Structural equality of JSON values (object key order ignored). */
export function jsonEqual(a: JsonValue | undefined, b: JsonValue | undefined): boolean {
  return structuralEqual(a, b, (x, y) => x === y);
}
