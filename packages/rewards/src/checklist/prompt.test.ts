import type { Message } from "@envace/protocol";
import { describe, expect, it } from "vitest";
import { item } from "../testing/fixtures.js";
import { toDialogue } from "./dialogue.js";
import { buildJudgePrompt, renderMessages } from "./prompt.js";

const messages: Message[] = [
  { role: "system", content: "You book flights." },
  { role: "user", content: "Find a flight to Rome." },
  {
    role: "assistant",
    content: "<think>search first</think>",
    tool_calls: [{ id: "c1", type: "function", function: { name: "search_flights", arguments: '{"to":"ROM"}' } }],
  },
  { role: "tool", tool_call_id: "c1", name: "search_flights", content: '{"flights":["AF123"]}' },
  { role: "assistant", content: "<think>found it</think>AF123 is available." },
  { role: "user", content: "Book it." },
  { role: "assistant", content: '<think>I would call <tool_call>{"name":"book_flight","arguments":{"id":"AF123"}}</tool_call></think>Booked!' },
];
const dialogue = toDialogue(messages);

describe("renderMessages", () => {
  it("lays out turns and steps with thinking, visible reply and tool calls on separate lines", () => {
    expect(renderMessages(dialogue.preamble, dialogue.turns.slice(0, 1))).toBe(
      [
        "system.content: You book flights.",
        "",
        "## Turn 0",
        "user.content: Find a flight to Rome.",
        "",
        "### Step 0",
        "assistant.content.thinking: search first",
        "assistant.content.user_visible_reply: (none)",
        "assistant.tool_calls:",
        '  - search_flights {"to":"ROM"}',
        'tool.content (search_flights): {"flights":["AF123"]}',
        "",
        "### Step 1",
        "assistant.content.thinking: found it",
        "assistant.content.user_visible_reply: AF123 is available.",
        "assistant.tool_calls: (none)",
      ].join("\n"),
    );
  });

  it("stops the last turn at the step asked for", () => {
    const text = renderMessages([], dialogue.turns.slice(0, 1), 0);
    expect(text).toContain("### Step 0");
    expect(text).not.toContain("### Step 1");
  });

  it("cuts long fields when asked, marking the cut", () => {
    const text = renderMessages([], dialogue.turns.slice(0, 1), undefined, { maxFieldChars: 8 });
    expect(text).toContain('tool.content (search_flights): {"flight… [13 more characters cut]');
    expect(text).toContain("user.content: Find a f… [14 more characters cut]");
    expect(text).toContain("assistant.content.thinking: search f… [4 more characters cut]");
  });

  it("renders nothing as (none)", () => {
    expect(renderMessages([], [])).toBe("(none)");
  });
});

describe("buildJudgePrompt", () => {
  const criteria = item("book", {
    question: "Did the assistant book AF123?",
    focus_on: "assistant.tool_calls",
    pass_condition: "book_flight is called with AF123.",
    failure_examples: ["Claims a booking without calling book_flight"],
    evidence: [{ turn: 1, step: 0, from: "assistant.tool_calls", snippet: "book_flight(id=AF123)" }],
  });

  it("carries the item's criteria and evidence", () => {
    const prompt = buildJudgePrompt({ item: criteria, dialogue, turn: 1, step: 0 });
    expect(prompt).toContain("Question: Did the assistant book AF123?");
    expect(prompt).toContain("Focus on: assistant.tool_calls");
    expect(prompt).toContain("Pass condition: book_flight is called with AF123.");
    expect(prompt).toContain("- Claims a booking without calling book_flight");
    expect(prompt).toContain('- turn 1, step 0, assistant.tool_calls: "book_flight(id=AF123)"');
  });

  it("puts earlier turns under previous messages and the turn so far under evaluation", () => {
    const prompt = buildJudgePrompt({ item: criteria, dialogue, turn: 1, step: 0 });
    const [previous, current] = prompt.split("# Messages under evaluation");
    expect(previous).toContain("# Previous messages\nsystem.content: You book flights.");
    expect(previous).toContain("AF123 is available.");
    expect(current).toContain("## Turn 1\nuser.content: Book it.");
    expect(current).not.toContain("Find a flight to Rome.");
  });

  it("shows a call written only in the thinking as thinking, with no tool call", () => {
    const prompt = buildJudgePrompt({ item: criteria, dialogue, turn: 1, step: 0 });
    expect(prompt).toContain("assistant.tool_calls: (none)");
    expect(prompt).toMatch(/assistant\.content\.thinking: I would call <tool_call>.*<\/tool_call>/);
    expect(prompt).toContain("A call written only in the thinking was never made and does not count");
  });

  it("asks for the verdict fields in schema order", () => {
    const prompt = buildJudgePrompt({ item: criteria, dialogue, turn: 0, step: 1 });
    const order = [
      "high_level_understanding_of_the_question",
      "analysis_of_if_focus_on",
      "analysis_of_pass_condition",
      "analysis_of_failure_examples",
      "answer:",
    ].map((field) => prompt.indexOf(field));
    expect(order.every((at, i) => at > 0 && (i === 0 || at > order[i - 1]!))).toBe(true);
    expect(prompt).toContain("# Previous messages\nsystem.content: You book flights.\n\n# Messages");
  });

  it("rejects a turn that is not in the dialogue", () => {
    expect(() => buildJudgePrompt({ item: criteria, dialogue, turn: 5, step: 0 })).toThrow("turn 5 is not in the dialogue (2 turns)");
  });
});
