import { parseRecord, RecordError, ToolResult, Trajectory } from "@envace/protocol";

// A tool's answer as a typed result: an error is data with a code, never an exception.
const result = ToolResult.parse({ status: "error", callId: "c1", name: "buy", error: { code: "OUT_OF_STOCK", message: "only 2 kelo in stock" } });
console.log(result.status === "error" ? result.error.code : result.content);

// A trajectory whose one call was answered by the policy itself: the provenance says so.
const trajectory = Trajectory.parse({
  id: "t/0",
  taskId: "t",
  rollout: 0,
  context: [{ role: "user", content: "Buy 2 kelo for ada." }],
  steps: [
    {
      type: "act",
      generation: { role: "act", text: "…", promptTokens: [], outputTokens: [], logprobs: null, finishReason: "stop" },
      message: { role: "assistant", content: null },
      outcomes: [
        {
          provenance: "rehearsed",
          call: { id: "c1", name: "user", arguments: { user: "ada" } },
          result: { status: "ok", callId: "c1", name: "user", content: { balance: 4 } },
          generation: { role: "rehearse", text: "…", promptTokens: [], outputTokens: [], logprobs: null, finishReason: "stop" },
        },
      ],
    },
  ],
  termination: { reason: "agent_stop" },
});
console.log(trajectory.steps[0]?.type === "act" ? trajectory.steps[0].outcomes[0]?.provenance : "");

// A bad record names its file, line and field.
try {
  parseRecord(ToolResult, JSON.parse('{"status":"ok","name":"user"}'), { file: "results.jsonl", line: 2 });
} catch (error) {
  if (error instanceof RecordError) console.log(error.message);
}
