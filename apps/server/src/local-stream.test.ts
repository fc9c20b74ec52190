import type OpenAI from "openai";
import type { ChatCompletionChunk } from "openai/resources/chat/completions";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { lookupTool } from "./testing/harness.js";
import { reassemble } from "./testing/stream.js";
import { metricValue, startTinyHarness, TINY_MODEL, type TinyHarness } from "./testing/tiny.js";

let harness: TinyHarness;
beforeAll(async () => {
  harness = await startTinyHarness();
}, 60_000);
afterAll(() => harness.close());

const user = [{ role: "user" as const, content: "What does the rabo cost?" }];

/** The chunks of a streamed request, and how many of them carried content. */
async function streamed(body: Omit<OpenAI.ChatCompletionCreateParamsStreaming, "model" | "stream">) {
  const chunks: ChatCompletionChunk[] = [];
  for await (const chunk of await harness.client.chat.completions.create({ ...body, model: TINY_MODEL, stream: true })) chunks.push(chunk);
  const contentChunks = chunks.filter((c) => (c.choices[0]?.delta.content ?? "") !== "").length;
  const [choice] = await reassemble(chunks.values() as unknown as AsyncIterable<ChatCompletionChunk>);
  return { choice: choice!, contentChunks };
}

describe("stream: true in front of a tiny checkpoint", () => {
  it("streams the text token by token, reassembling to the non-streaming answer with the same seed", async () => {
    const request = { messages: user, max_tokens: 48, temperature: 1, seed: 11 };
    const plain = await harness.client.chat.completions.create({ ...request, model: TINY_MODEL });
    const { choice, contentChunks } = await streamed(request);
    expect(choice.content).toBe(plain.choices[0]!.message.content);
    expect(choice.finish).toBe(plain.choices[0]!.finish_reason);
    // One chunk per decoded piece, not one for the whole answer.
    expect(contentChunks).toBeGreaterThan(1);
  }, 60_000);

  it("with tools, reassembles to the non-streaming message (content and tool calls)", async () => {
    const request = { messages: user, tools: [lookupTool], max_tokens: 48, temperature: 1, seed: 12 };
    const plain = (await harness.client.chat.completions.create({ ...request, model: TINY_MODEL })).choices[0]!;
    const { choice } = await streamed(request);
    expect(choice.content).toBe(plain.message.content ?? "");
    expect(choice.calls).toEqual(
      (plain.message.tool_calls ?? []).map((c) => (c.type === "function" ? { id: c.id, name: c.function.name, arguments: c.function.arguments } : {})),
    );
    expect(choice.finish).toBe(plain.finish_reason);
  }, 60_000);

  it("stops sampling when the client aborts the stream", async () => {
    // Greedy: this model never picks its stop token here, so left alone it runs to the limit.
    const request = { messages: user, max_tokens: 2000, temperature: 0 };
    const before = await metricValue(harness.server, "envace_server_completion_tokens_total");
    const plain = await harness.client.chat.completions.create({ ...request, model: TINY_MODEL });
    expect(plain.choices[0]!.finish_reason).toBe("length");
    expect(plain.usage!.completion_tokens).toBe(2000);
    const afterPlain = await metricValue(harness.server, "envace_server_completion_tokens_total");
    expect(afterPlain - before).toBe(2000);

    const controller = new AbortController();
    const stream = await harness.client.chat.completions.create({ ...request, model: TINY_MODEL, stream: true }, { signal: controller.signal });
    let pieces = 0;
    // The client ends its iteration quietly on an abort.
    for await (const chunk of stream) {
      if ((chunk.choices[0]?.delta.content ?? "") !== "") pieces += 1;
      if (pieces === 3) controller.abort();
    }
    expect(pieces).toBe(3);
    // The generation ended when the connection closed: the server counts its tokens then.
    for (let waited = 0; (await metricValue(harness.server, "envace_server_completion_tokens_total")) === afterPlain; waited += 20) {
      if (waited > 10_000) throw new Error("the aborted generation never ended");
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    const aborted = (await metricValue(harness.server, "envace_server_completion_tokens_total")) - afterPlain;
    expect(aborted).toBeGreaterThanOrEqual(3);
    expect(aborted).toBeLessThan(2000);
    const health = (await (await fetch(`${harness.server.url}/health`)).json()) as { in_flight: number };
    expect(health.in_flight).toBe(0);
  }, 120_000);
});
