import type { Message } from "@envace/protocol";
import { describe, expect, it } from "vitest";
import { item } from "../testing/fixtures.js";
import { splitAssistant } from "./assistant-parts.js";
import { toDialogue } from "./dialogue.js";
import { type ChecklistStepView, decodeToolCall, predicateFor, predicates } from "./predicates.js";

const messages: Message[] = [
  { role: "user", content: "Book AF123" },
  {
    role: "assistant",
    content: "<think>book it</think>Booking now.",
    tool_calls: [{ id: "c", type: "function", function: { name: "book_flight", arguments: '{"flight_id":"AF123","seats":[1,2]}' } }],
  },
  { role: "tool", tool_call_id: "c", content: '{"status":"CONFIRMED"}' },
];

function view(): ChecklistStepView {
  const dialogue = toDialogue(messages);
  const step = dialogue.turns[0]!.steps[0]!;
  const assistant = splitAssistant(step.assistant);
  return {
    item: item("x"),
    checklist: 0,
    turn: 0,
    step: 0,
    dialogue,
    assistant,
    toolCalls: assistant.toolCalls.map(decodeToolCall),
    toolResults: step.tools,
    messages,
  };
}

describe("predicates", () => {
  it("checks a call by name and a subset of its arguments", async () => {
    expect(await predicates.calledTool("book_flight")(view())).toBe(true);
    expect(await predicates.calledTool("book_flight", { seats: [1, 2] })(view())).toBe(true);
    expect(await predicates.calledTool("book_flight", { seats: [2, 1] })(view())).toBe(false);
    expect(await predicates.calledTool("cancel")(view())).toBe(false);
  });

  it("checks the visible reply and the tool results, not the thinking", async () => {
    expect(await predicates.replyIncludes("booking")(view())).toBe(true);
    expect(await predicates.replyIncludes("book it")(view())).toBe(false);
    expect(await predicates.replyIncludes("booking", { caseSensitive: true })(view())).toBe(false);
    expect(await predicates.toolResultIncludes("confirmed")(view())).toBe(true);
  });

  it("combines predicates", async () => {
    const yes = predicates.replyIncludes("now");
    const no = predicates.replyIncludes("never");
    expect([await predicates.all(yes, yes)(view()), await predicates.all(yes, no)(view())]).toEqual([true, false]);
    expect([await predicates.any(no, yes)(view()), await predicates.any(no, no)(view())]).toEqual([true, false]);
  });

  it("decodes arguments that are a JSON object, and keeps the raw text", () => {
    expect(decodeToolCall({ name: "f", arguments: '{"a":1}' })).toEqual({ name: "f", arguments: { a: 1 }, raw: '{"a":1}' });
    expect(decodeToolCall({ name: "f", arguments: "[1]" }).arguments).toBeNull();
    expect(decodeToolCall({ name: "f", arguments: "{oops" }).arguments).toBeNull();
  });

  it("chooses predicates by item id or by a function", () => {
    const check = predicates.replyIncludes("x");
    expect(predicateFor({ a: check }, item("a"), { checklist: 0, turn: 0 })).toBe(check);
    expect(predicateFor({ a: check }, item("toString"), { checklist: 0, turn: 0 })).toBeUndefined();
    expect(predicateFor((it) => (it.focus_on === "tool.content" ? check : undefined), item("b", { focus_on: "tool.content" }), { checklist: 0, turn: 1 })).toBe(
      check,
    );
    expect(predicateFor(undefined, item("a"), { checklist: 0, turn: 0 })).toBeUndefined();
  });
});
