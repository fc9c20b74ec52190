import type { Environment, Task, ToolResult } from "@envace/protocol";
import { rehearseThenCommit } from "@envace/rehearsal";
import { ScriptedPolicy } from "@envace/trajectory";

const task: Task = {
  id: "send-500",
  messages: [
    { role: "system", content: "You are a bank agent. Tools: balance(account), transfer(to, amount)." },
    { role: "user", content: "Send 500 to Bob." },
  ],
  tools: [
    { type: "function", function: { name: "balance", parameters: { type: "object", properties: { account: { type: "string" } } } } },
    { type: "function", function: { name: "transfer", parameters: { type: "object", properties: { to: { type: "string" }, amount: { type: "number" } } } } },
  ],
  metadata: {},
};

// The real bank holds 120. Its log shows every call that reaches it.
const log: string[] = [];
const bank: Environment = {
  reset: () => Promise.resolve(),
  tools: () => task.tools,
  state: () => Promise.resolve({ balance: 120 }),
  call: (call) => {
    log.push(`${call.name} ${JSON.stringify(call.arguments)}`);
    const result: ToolResult =
      call.name === "balance"
        ? { status: "ok", callId: call.id, name: call.name, content: { balance: 120 } }
        : { status: "error", callId: call.id, name: call.name, error: { code: "INSUFFICIENT_FUNDS", message: "balance 120 < 500" } };
    return Promise.resolve(result);
  },
};

// A scripted stand-in for a trained policy, one queue of outputs per role.
const transfer = '<tool_call>{"name":"transfer","arguments":{"to":"Bob","amount":500}}</tool_call>';
const policy = ScriptedPolicy.queues("scripted", {
  // In rehearsal it transfers at once; for real it tries again, is shown the prediction, and reads instead.
  act: [
    transfer,
    "I could not send it.",
    transfer,
    '<tool_call>{"name":"balance","arguments":{"account":"me"}}</tool_call>',
    "You have 120, so I cannot send 500.",
  ],
  rehearse: ['<execution_result>{"error":{"code":"INSUFFICIENT_FUNDS","message":"balance 120 < 500"}}</execution_result>'],
  reflect: ['<assessment>{"reached_goal": false, "went_wrong": "the transfer fails", "revision": "check the balance first"}</assessment>'],
  summarize: ['<memory>{"plan": "Check the balance, then tell the user what is possible.", "lessons": ["500 is more than the balance."]}</memory>'],
});

const episode = await rehearseThenCommit({ task, policy, environment: bank, setting: "parallel:1", rehearsal: { memoryBudget: 100 }, safeWrites: true });
console.log(episode.rehearsal?.memory.text);
console.log(
  "gate:",
  episode.committed.gate.map((event) => `turn ${event.turn}: ${event.flagged[0]?.name} held back, changed: ${event.changed}`),
);
console.log("the bank saw:", log);
console.log("ended:", episode.committed.trajectory.termination.reason);
