import type { Message } from "@envace/protocol";
import { describe, expect, it } from "vitest";
import { actStep, trajectory, userStep } from "../testing/fixtures.js";
import { toDialogue, turnMessages } from "./dialogue.js";

const system: Message = { role: "system", content: "Be helpful." };
const call = (id: string, name: string, args: string) => ({ id, type: "function" as const, function: { name, arguments: args } });

describe("toDialogue on plain messages", () => {
  const messages: Message[] = [
    system,
    { role: "user", content: "Weather in Oslo?" },
    { role: "assistant", content: null, tool_calls: [call("a", "get_weather", '{"city":"Oslo"}')] },
    { role: "tool", tool_call_id: "a", content: '{"temp_c": -3}' },
    { role: "assistant", content: "It is -3 °C." },
    { role: "user", content: "Tomorrow?" },
    { role: "assistant", content: null, tool_calls: [call("b", "get_forecast", '{"city":"Oslo"}')] },
  ];

  it("groups messages into user turns of assistant steps with their tool results", () => {
    const dialogue = toDialogue(messages);
    expect(dialogue.preamble).toEqual([system]);
    expect(dialogue.turns.map((t) => t.steps.map((s) => s.tools.length))).toEqual([[1, 0], [0]]);
    expect(dialogue.turns[0]!.user.content).toBe("Weather in Oslo?");
  });

  it("marks a turn complete once the assistant replies without calling a tool", () => {
    expect(toDialogue(messages).turns.map((t) => t.complete)).toEqual([true, false]);
    expect(toDialogue(messages.slice(0, 4)).turns[0]!.complete).toBe(false);
    expect(toDialogue(messages.slice(0, 2)).turns[0]!.complete).toBe(false);
  });

  it("flags a step whose call was rejected as invalid", () => {
    const rejected: Message[] = [
      { role: "user", content: "Book it" },
      { role: "assistant", content: null, tool_calls: [call("x", "book", "{oops")] },
      { role: "tool", tool_call_id: "x", content: '{"error_tool_call": "arguments are not JSON"}' },
      { role: "assistant", content: null, tool_calls: [call("y", "book", "{}")] },
      { role: "tool", tool_call_id: "y", content: '{"error": {"code": "INVALID_PARAMETERS", "message": "id is required"}}' },
      { role: "assistant", content: null, tool_calls: [call("z", "book", '{"id": 1}')] },
      { role: "tool", tool_call_id: "z", content: '{"error": {"code": "SOLD_OUT", "message": "no seats"}}' },
    ];
    expect(toDialogue(rejected).turns[0]!.steps.map((s) => s.invalidCall)).toEqual([true, true, false]);
    expect(toDialogue(rejected, { invalidCallCodes: ["SOLD_OUT"] }).turns[0]!.steps.map((s) => s.invalidCall)).toEqual([true, false, true]);
  });

  it("names the message that breaks the structure", () => {
    expect(() =>
      toDialogue([
        { role: "user", content: "x" },
        { role: "tool", tool_call_id: "t", content: "{}" },
      ]),
    ).toThrow("messages[1]: a tool message must follow the assistant message that called the tool");
    expect(() => toDialogue([{ role: "user", content: "x" }, system])).toThrow("messages[1]: a system message may only come before");
  });

  it("gives the messages of a turn up to a step", () => {
    const turn = toDialogue(messages).turns[0]!;
    expect(turnMessages(turn, 0)).toEqual(messages.slice(1, 4));
    expect(turnMessages(turn)).toEqual(messages.slice(1, 5));
  });
});

describe("toDialogue on trajectories", () => {
  const context: Message[] = [system, { role: "user", content: "Weather in Oslo?" }];

  it("turns tool outcomes into tool messages, errors included", () => {
    const dialogue = toDialogue(
      trajectory(context, [
        actStep(null, [{ name: "get_weather", arguments: { city: "Oslo" }, result: { temp_c: -3 } }]),
        actStep(null, [{ name: "get_weather", arguments: {}, result: { error: { code: "INVALID_PARAMETERS", message: "city missing" } } }]),
        actStep("It is -3 °C."),
      ]),
    );
    const steps = dialogue.turns[0]!.steps;
    expect(steps.map((s) => s.tools.map((t) => t.content))).toEqual([
      ['{"temp_c":-3}'],
      ['{"error":{"code":"INVALID_PARAMETERS","message":"city missing"}}'],
      [],
    ]);
    expect(steps.map((s) => s.invalidCall)).toEqual([false, true, false]);
    expect(steps[0]!.tools[0]).toMatchObject({ role: "tool", name: "get_weather", tool_call_id: "call_0_get_weather" });
    expect(dialogue.turns[0]!.complete).toBe(true);
  });

  it("starts a new turn at every user step", () => {
    const dialogue = toDialogue(trajectory(context, [actStep("Cold."), userStep("Tomorrow?"), actStep("Colder.")]));
    expect(dialogue.turns.map((t) => [t.user.content, t.steps.length, t.complete])).toEqual([
      ["Weather in Oslo?", 1, true],
      ["Tomorrow?", 1, true],
    ]);
  });

  it("does not count a truncated or malformed last reply as the end of the turn", () => {
    const truncated = trajectory(context, [actStep("It is", [], "length")], { reason: "max_tokens", limit: 8 });
    expect(toDialogue(truncated).turns[0]!.complete).toBe(false);
    const malformed = trajectory(context, [actStep("<tool_call>{oops")], { reason: "parse_error", code: "JSON_DECODE_ERROR", detail: "x" });
    expect(toDialogue(malformed).turns[0]!.complete).toBe(false);
  });
});
