import type { Message } from "@envace/protocol";
import { ScriptedPolicy } from "@envace/trajectory";
import { describe, expect, it } from "vitest";
import { rehearseConversation, rehearseThenAct } from "./turn.js";
import { assessment, call, charTokenizer, memory, recording, result, systemOf, task, tools } from "./testing/bank.js";

const sampling = { temperature: 0.6, topP: 0.95, topK: 0, maxTokens: 256, stop: [], seed: 7 };

// Written out by hand from the memory format: the one failure the attempt predicted, then the plan.
const MEMORY = [
  "## Rehearsal memory",
  "You rehearsed this task privately before acting. These are your own predictions, not real results.",
  "Predicted to fail:",
  '- transfer {"amount":500,"to":"Bob"}: INSUFFICIENT_FUNDS (balance 120 < 500)',
  "Plan: Check the balance first.",
].join("\n");

const script = {
  act: [call("transfer", { to: "Bob", amount: 500 }), "I cannot send it.", call("balance", { account: "me" }), call("balance", { account: "me" })],
  rehearse: [result({ error: { code: "INSUFFICIENT_FUNDS", message: "balance 120 < 500" } })],
  reflect: [assessment({ reached_goal: false, went_wrong: "the transfer fails", revision: "check the balance" })],
  summarize: [memory({ plan: "Check the balance first.", lessons: [] })],
};

describe("rehearseThenAct: rehearse from a conversation prefix, then one committed Act turn", () => {
  it("rehearses the prefix privately, then prompts the committed turn with the memory in its system message", async () => {
    const policy = recording(ScriptedPolicy.queues("scripted", script, { tokenizer: charTokenizer }));
    const turn = await rehearseThenAct({ messages: task.messages, tools, policy, setting: "parallel:1", sampling, n: 2, tokenizer: charTokenizer });
    expect(policy.requests.map((r) => r.role)).toEqual(["act", "rehearse", "act", "reflect", "summarize", "act", "act"]);
    expect(turn.memory?.text).toBe(MEMORY);
    expect(turn.rehearsal?.attempts).toHaveLength(1);
    const committed = policy.requests.slice(-2);
    for (const request of committed) {
      expect(systemOf(request)).toBe(`You are a bank agent. Check the balance before you transfer.\n\n${MEMORY}`);
      expect(request.messages.at(-1)).toEqual({ role: "user", content: "Send 500 to Bob." });
      expect(request.tools.map((t) => t.function.name)).toEqual(["balance", "transfer"]);
    }
    // Sample i of the committed turn gets seed + i.
    expect(committed.map((r) => r.sampling.seed)).toEqual([7, 8]);
    expect(turn.generations.map((g) => g.text)).toEqual([call("balance", { account: "me" }), call("balance", { account: "me" })]);
  });

  it("uses a memory it is given as it is, with no new rehearsal, on a later turn of the conversation", async () => {
    const first = await rehearseConversation({
      messages: task.messages,
      tools,
      policy: ScriptedPolicy.queues("scripted", script, { tokenizer: charTokenizer }),
      setting: "parallel:1",
      tokenizer: charTokenizer,
    });
    const later: Message[] = [
      ...task.messages,
      { role: "assistant", content: "", tool_calls: [{ id: "c1", type: "function", function: { name: "balance", arguments: '{"account":"me"}' } }] },
      { role: "tool", tool_call_id: "c1", content: '{"balance":120}' },
    ];
    const policy = recording(ScriptedPolicy.queues("scripted", { act: ["You have 120; 500 is too much."] }));
    const turn = await rehearseThenAct({ messages: later, tools, policy, setting: "parallel:3", memory: first.memory, sampling });
    expect(turn.rehearsal).toBeUndefined();
    expect(policy.requests.map((r) => r.role)).toEqual(["act"]);
    expect(systemOf(policy.requests[0]!)).toContain(MEMORY);
    expect(policy.requests[0]!.messages.slice(1)).toEqual(later.slice(1));
  });

  it("with the setting none, the committed turn sees the conversation unchanged", async () => {
    const policy = recording(ScriptedPolicy.queues("scripted", { act: ["Hello."] }));
    const turn = await rehearseThenAct({ messages: task.messages, tools, policy, setting: "none", sampling });
    expect(turn.memory).toBeUndefined();
    expect(policy.requests[0]!.messages).toEqual(task.messages);
  });
});
