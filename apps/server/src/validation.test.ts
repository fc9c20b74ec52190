import { reply } from "@envace/scripted-server";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { MODEL, postRaw, startHarness, type Harness } from "./testing/harness.js";

let harness: Harness;
beforeAll(async () => {
  harness = await startHarness({ script: () => reply.text("unused"), config: { limits: { max_completion_tokens: 512, max_n: 4, body_bytes: 64 * 1024 } } });
});
afterAll(async () => {
  await harness.close();
});

const messages = [{ role: "user", content: "hi" }];
const tool = { type: "function", function: { name: "lookup", parameters: { type: "object" } } };

// Each malformed or unsupported request, and the field its 400 must name.
const cases: [string, Record<string, unknown>, string][] = [
  ["no messages", { model: MODEL }, "messages"],
  ["empty messages", { model: MODEL, messages: [] }, "messages"],
  ["no model", { messages }, "model"],
  ["an unknown role", { model: MODEL, messages: [{ role: "function", content: "x" }] }, "messages[0].role"],
  ["an image part", { model: MODEL, messages: [{ role: "user", content: [{ type: "image_url", image_url: { url: "x" } }] }] }, "messages[0].content"],
  ["a tool message without its call id", { model: MODEL, messages: [{ role: "tool", content: "x" }] }, "messages[0].tool_call_id"],
  [
    "a tool call with object arguments",
    { model: MODEL, messages: [{ role: "assistant", content: null, tool_calls: [{ id: "c", type: "function", function: { name: "f", arguments: {} } }] }] },
    "messages[0].tool_calls[0].function.arguments",
  ],
  ["a non-function tool", { model: MODEL, messages, tools: [{ type: "web_search" }] }, "tools[0].type"],
  ["tool_choice required", { model: MODEL, messages, tools: [tool], tool_choice: "required" }, "tool_choice"],
  ["a named tool_choice", { model: MODEL, messages, tools: [tool], tool_choice: { type: "function", function: { name: "lookup" } } }, "tool_choice"],
  ["parallel_tool_calls false", { model: MODEL, messages, tools: [tool], parallel_tool_calls: false }, "parallel_tool_calls"],
  ["n over the limit", { model: MODEL, messages, n: 5 }, "n"],
  ["n of 0", { model: MODEL, messages, n: 0 }, "n"],
  ["temperature above 2", { model: MODEL, messages, temperature: 2.5 }, "temperature"],
  ["top_p of 0", { model: MODEL, messages, top_p: 0 }, "top_p"],
  ["max_tokens over the limit", { model: MODEL, messages, max_tokens: 513 }, "max_tokens"],
  ["max_completion_tokens over the limit", { model: MODEL, messages, max_completion_tokens: 10_000 }, "max_completion_tokens"],
  ["five stop strings", { model: MODEL, messages, stop: ["a", "b", "c", "d", "e"] }, "stop"],
  ["a fractional seed", { model: MODEL, messages, seed: 1.5 }, "seed"],
  ["logprobs as a string", { model: MODEL, messages, logprobs: "yes" }, "logprobs"],
  ["logprobs the upstream policy cannot give", { model: MODEL, messages, logprobs: true }, "logprobs"],
  ["top_logprobs", { model: MODEL, messages, top_logprobs: 3 }, "top_logprobs"],
  ["a presence penalty", { model: MODEL, messages, presence_penalty: 0.5 }, "presence_penalty"],
  ["a JSON response format", { model: MODEL, messages, response_format: { type: "json_object" } }, "response_format.type"],
  ["an unknown field", { model: MODEL, messages, best_of: 3 }, "best_of"],
  ["a bad rehearsal setting", { model: MODEL, messages, tools: [tool], envace: { rehearsal: "often" } }, "envace.rehearsal"],
  ["too many rehearsal attempts", { model: MODEL, messages, tools: [tool], envace: { rehearsal: "parallel:9" } }, "envace.rehearsal"],
  ["rehearsal without tools", { model: MODEL, messages, envace: { rehearsal: "parallel:2" } }, "envace.rehearsal"],
  ["a zero memory budget", { model: MODEL, messages, envace: { memory_budget: 0 } }, "envace.memory_budget"],
];

describe("every malformed or unsupported request is a 400 naming its field", () => {
  it.each(cases)("%s → 400 on %s", async (_name, body, param) => {
    const before = harness.upstream.scripted.length;
    const { status, body: answer } = await postRaw(harness.server, body);
    expect(status).toBe(400);
    expect(answer.error?.type).toBe("invalid_request_error");
    expect(answer.error?.param).toBe(param);
    expect(answer.error?.message.startsWith(`${param}: `)).toBe(true);
    // Nothing reached the model.
    expect(harness.upstream.scripted.length).toBe(before);
  });

  it("a body that is not JSON is a 400, a body over the limit a 413, an unknown model a 404", async () => {
    const broken = await postRaw(harness.server, "{not json");
    expect(broken.status).toBe(400);
    expect(broken.body.error?.type).toBe("invalid_request_error");
    const big = await postRaw(harness.server, { model: MODEL, messages: [{ role: "user", content: "x".repeat(70 * 1024) }] });
    expect(big.status).toBe(413);
    expect(big.body.error?.type).toBe("invalid_request_error");
    const unknown = await postRaw(harness.server, { model: "gpt-9", messages });
    expect(unknown.status).toBe(404);
    expect(unknown.body.error).toMatchObject({ param: "model", code: "model_not_found" });
  });

  it("accepts what harnesses really send: content parts, developer messages, a string stop, nulls", async () => {
    harness.upstream.setScript([reply.text("ok")]);
    const { status } = await postRaw(harness.server, {
      model: MODEL,
      messages: [
        { role: "developer", content: "Be brief." },
        {
          role: "user",
          content: [
            { type: "text", text: "Say " },
            { type: "text", text: "ok." },
          ],
          name: "ada",
        },
      ],
      tools: null,
      stop: "\n\n",
      seed: 3,
      temperature: null,
      max_completion_tokens: 64,
      logprobs: false,
      user: "ada",
    });
    expect(status).toBe(200);
    const sent = harness.upstream.scripted.at(-1)!.body as Record<string, unknown>;
    expect(sent.messages).toEqual([
      { role: "system", content: "Be brief." },
      { role: "user", content: "Say ok." },
    ]);
    expect(sent.stop).toEqual(["\n\n"]);
    expect(sent.seed).toBe(3);
    expect(sent.temperature).toBe(1);
    expect(sent.max_tokens).toBe(64);
  });
});
