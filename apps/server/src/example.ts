import { startServer } from "@envace/server";
import { ScriptedPolicy } from "@envace/trajectory";
import OpenAI from "openai";

// A scripted stand-in for a trained policy, one queue of outputs per role. In its private
// rehearsal it buys at once and predicts the purchase fails; committed, it checks the stock first.
const buy = '<tool_call>{"name": "buy", "arguments": {"item": "rabo"}}</tool_call>';
const policy = ScriptedPolicy.queues("scripted", {
  act: [buy, "Sorry, there is none left.", '<tool_call>{"name": "stock", "arguments": {"item": "rabo"}}</tool_call>'],
  rehearse: ['<execution_result>{"error": {"code": "OUT_OF_STOCK", "message": "no rabo left"}}</execution_result>'],
  reflect: ['<assessment>{"reached_goal": false, "went_wrong": "bought without checking", "revision": "check the stock first"}</assessment>'],
  summarize: ['<memory>{"plan": "Check the stock of rabo before buying.", "lessons": []}</memory>'],
});
const server = await startServer({ policy, model: "shop-agent", config: { port: 0, log_level: "silent" } });

// Any OpenAI client works; `envace` asks for private rehearsal before the answer.
const client = new OpenAI({ baseURL: `${server.url}/v1`, apiKey: "unused" });
const item = { type: "object", properties: { item: { type: "string" } }, required: ["item"] };
const completion = await client.chat.completions.create({
  model: "shop-agent",
  messages: [{ role: "user", content: "Buy me a rabo." }],
  tools: [
    { type: "function", function: { name: "stock", parameters: item } },
    { type: "function", function: { name: "buy", parameters: item } },
  ],
  // @ts-expect-error: the server's extension field, unknown to the client's types
  envace: { rehearsal: "parallel:1" },
});
const choice = completion.choices[0]!;
for (const call of choice.message.tool_calls ?? [])
  if (call.type === "function") console.log(choice.finish_reason, call.function.name, call.function.arguments);
const { attempts, predicted_failures, memory } = (completion as unknown as { envace: Record<string, unknown> }).envace;
console.log({ attempts, predicted_failures, memory });
await server.close();
