import { describe, expect, it } from "vitest";
import type { Message } from "@envace/protocol";
import { flattenConversation } from "./messages.js";

const call = (id: string, name: string) => ({ id, type: "function" as const, function: { name, arguments: "{}" } });

describe("flattenConversation", () => {
  it("writes one block per message, tool results under their tool's name", () => {
    const messages: Message[] = [
      { role: "system", content: "Be brief." },
      { role: "user", content: "Balance?" },
      { role: "assistant", content: "", reasoning_content: "look it up", tool_calls: [call("a", "get_balance")] },
      { role: "tool", tool_call_id: "a", name: "get_balance", content: '{"balance": 5}' },
      { role: "assistant", content: "You have 5." },
    ];
    expect(flattenConversation(messages)).toBe(
      [
        "[system]\nBe brief.",
        "[user]\nBalance?",
        "[assistant]\n(calls get_balance) {}",
        '[tool result: get_balance]\n{"balance": 5}',
        "[assistant]\nYou have 5.",
      ].join("\n\n"),
    );
    expect(flattenConversation(messages, { reasoning: true })).toContain("[assistant]\n(reasoning) look it up\n(calls get_balance) {}");
  });

  it("names a tool message without a name from the latest call with its id, else 'tool'", () => {
    const messages: Message[] = [
      { role: "assistant", content: "", tool_calls: [call("call_0", "search"), call("call_1", "open")] },
      { role: "tool", tool_call_id: "call_1", content: "page" },
      { role: "assistant", content: "", tool_calls: [call("call_0", "buy")] },
      { role: "tool", tool_call_id: "call_0", content: "done" },
      { role: "tool", tool_call_id: "nobody", content: "?" },
    ];
    const flat = flattenConversation(messages);
    expect(flat).toContain("[tool result: open]\npage");
    expect(flat).toContain("[tool result: buy]\ndone");
    expect(flat).toContain("[tool result: tool]\n?");
  });
});
