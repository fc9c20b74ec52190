import { reply, tokensOf } from "@envace/scripted-server";
import OpenAI from "openai";
import type { ChatCompletionChunk } from "openai/resources/chat/completions";
import { afterEach, describe, expect, it } from "vitest";
import { lookupTool, MODEL, startHarness, waitFor, type Harness } from "./testing/harness.js";
import { reassemble } from "./testing/stream.js";

let harness: Harness | undefined;
afterEach(async () => {
  await harness?.close();
  harness = undefined;
});

const user = [{ role: "user" as const, content: "Where is the rabo?" }];

describe("chat completions through the server, driven by the openai client", () => {
  it("answers without tools with the upstream's text, the served model and the token usage", async () => {
    harness = await startHarness({ script: [reply.text("It is on shelf 4.")] });
    const completion = await harness.client.chat.completions.create({ model: MODEL, messages: user });
    expect(completion.object).toBe("chat.completion");
    expect(completion.model).toBe(MODEL);
    expect(completion.choices).toHaveLength(1);
    expect(completion.choices[0]!.message.content).toBe("It is on shelf 4.");
    expect(completion.choices[0]!.finish_reason).toBe("stop");
    // The upstream got the conversation as it was sent.
    const sent = harness.upstream.scripted[0]!.body as { messages: unknown[]; tools?: unknown };
    expect(sent.messages).toEqual([{ role: "user", content: "Where is the rabo?" }]);
    expect(sent.tools).toBeUndefined();
  });

  it("reads a Hermes <tool_call> block of the model into OpenAI tool_calls", async () => {
    harness = await startHarness({ script: [reply.text('Let me look.<tool_call>{"name": "lookup", "arguments": {"item": "rabo"}}</tool_call>')] });
    const completion = await harness.client.chat.completions.create({ model: MODEL, messages: user, tools: [lookupTool] });
    const choice = completion.choices[0]!;
    expect(choice.finish_reason).toBe("tool_calls");
    expect(choice.message.content).toBe("Let me look.");
    expect(choice.message.tool_calls).toHaveLength(1);
    const call = choice.message.tool_calls![0]!;
    expect(call.type).toBe("function");
    expect(call.type === "function" ? [call.function.name, JSON.parse(call.function.arguments)] : []).toEqual(["lookup", { item: "rabo" }]);
    expect((harness.upstream.scripted[0]!.body as { tools: unknown }).tools).toEqual([lookupTool]);
  });

  it("passes native tool calls of the upstream through with their ids", async () => {
    harness = await startHarness({ script: [reply.toolCalls([{ id: "call_up_1", name: "lookup", arguments: { item: "mela" } }])] });
    const completion = await harness.client.chat.completions.create({ model: MODEL, messages: user, tools: [lookupTool] });
    expect(completion.choices[0]!.message.tool_calls).toEqual([
      { id: "call_up_1", type: "function", function: { name: "lookup", arguments: '{"item":"mela"}' } },
    ]);
    expect(completion.choices[0]!.message.content).toBeNull();
  });

  it("streams chunks that reassemble to the non-streaming answer: content and tool-call deltas", async () => {
    const text =
      'I will check the shelf for you now.<tool_call>{"name": "lookup", "arguments": {"item": "rabo with a long name"}}</tool_call><tool_call>{"name": "lookup", "arguments": {"item": "mela"}}</tool_call>';
    harness = await startHarness({ script: [reply.text(text), reply.text(text)] });
    const plain = await harness.client.chat.completions.create({ model: MODEL, messages: user, tools: [lookupTool] });
    const stream = await harness.client.chat.completions.create({ model: MODEL, messages: user, tools: [lookupTool], stream: true });
    const [streamed] = await reassemble(stream);
    expect(streamed!.content).toBe("I will check the shelf for you now.");
    expect(streamed!.finish).toBe("tool_calls");
    expect(streamed!.calls.map((c) => [c.name, JSON.parse(c.arguments) as unknown])).toEqual([
      ["lookup", { item: "rabo with a long name" }],
      ["lookup", { item: "mela" }],
    ]);
    const message = plain.choices[0]!.message;
    expect(message.content).toBe(streamed!.content);
    expect(message.tool_calls!.map((c) => (c.type === "function" ? [c.function.name, c.function.arguments] : []))).toEqual(
      streamed!.calls.map((c) => [c.name, c.arguments]),
    );
  });

  it("returns n choices, streamed or not", async () => {
    const two = reply.choices([{ text: "Shelf 4." }, { text: "Shelf 5." }]);
    harness = await startHarness({ script: [two, two] });
    const completion = await harness.client.chat.completions.create({ model: MODEL, messages: user, n: 2 });
    expect(completion.choices.map((c) => [c.index, c.message.content])).toEqual([
      [0, "Shelf 4."],
      [1, "Shelf 5."],
    ]);
    expect((harness.upstream.scripted[0]!.body as { n: number }).n).toBe(2);
    const streamed = await reassemble(await harness.client.chat.completions.create({ model: MODEL, messages: user, n: 2, stream: true }));
    expect(streamed.map((c) => c.content)).toEqual(["Shelf 4.", "Shelf 5."]);
  });

  it("lists the served model and answers health and metrics", async () => {
    harness = await startHarness({ script: [reply.text("ok")] });
    const models = await harness.client.models.list();
    expect(models.data.map((m) => m.id)).toEqual([MODEL]);
    await harness.client.chat.completions.create({ model: MODEL, messages: user });
    const health = (await (await fetch(`${harness.server.url}/health`)).json()) as { status: string };
    expect(health.status).toBe("ok");
    const metrics = await (await fetch(`${harness.server.url}/metrics`)).text();
    expect(metrics).toContain('envace_server_requests_total{route="/v1/chat/completions",status="200"} 1');
    expect(metrics).toContain("envace_server_queue_depth 0");
  });

  it("a client that gives up cancels the generation upstream and frees its slot", async () => {
    harness = await startHarness({ script: [reply.delay(5000, reply.text("too late"))], config: { concurrency: { requests: 1, queue: 0 } } });
    const controller = new AbortController();
    const pending = harness.client.chat.completions.create({ model: MODEL, messages: user }, { signal: controller.signal });
    await waitFor(() => harness!.upstream.scripted.length === 1);
    expect(harness.server.app.slots.active).toBe(1);
    controller.abort();
    await expect(pending).rejects.toThrow(OpenAI.APIUserAbortError);
    // The upstream call was aborted, not waited out: the slot is free long before the 5 s delay.
    const started = Date.now();
    await waitFor(() => harness!.server.app.slots.active === 0);
    expect(Date.now() - started).toBeLessThan(2000);
    harness.upstream.setScript([reply.text("next")]);
    const next = await harness.client.chat.completions.create({ model: MODEL, messages: user });
    expect(next.choices[0]!.message.content).toBe("next");
  });

  it("streams an upstream's tokens as they come, and the stream reassembles to the non-streaming answer", async () => {
    const tokens = tokensOf(
      "On shelf 4.",
      Array.from({ length: 11 }, () => -0.5),
    );
    harness = await startHarness({ script: [reply.tokens(tokens), reply.tokens(tokens)] });
    const plain = await harness.client.chat.completions.create({ model: MODEL, messages: user });
    const chunks: ChatCompletionChunk[] = [];
    for await (const chunk of await harness.client.chat.completions.create({
      model: MODEL,
      messages: user,
      stream: true,
      stream_options: { include_usage: true },
    }))
      chunks.push(chunk);
    const [streamed] = await reassemble(chunks.values() as unknown as AsyncIterable<ChatCompletionChunk>);
    expect(streamed!.content).toBe(plain.choices[0]!.message.content);
    expect(streamed!.content).toBe("On shelf 4.");
    expect(streamed!.finish).toBe("stop");
    // One chunk per upstream token: the text was passed on as it arrived, not cut up afterwards.
    expect(chunks.filter((c) => (c.choices[0]?.delta.content ?? "") !== "")).toHaveLength(11);
    expect(chunks.at(-1)!.usage).toBeDefined();
    expect((harness.upstream.scripted[1]!.body as { stream?: boolean }).stream).toBe(true);
  });

  it("a streamed request that fails before its first token gets the HTTP error, not a broken stream", async () => {
    harness = await startHarness({ script: [reply.error(500, "boom")] });
    const failed = await harness.client.chat.completions.create({ model: MODEL, messages: user, stream: true }).catch((error: unknown) => error);
    expect(failed).toBeInstanceOf(OpenAI.APIError);
    expect((failed as InstanceType<typeof OpenAI.APIError>).status).toBe(502);
    const metrics = await (await fetch(`${harness.server.url}/metrics`)).text();
    expect(metrics).toContain('envace_server_requests_total{route="/v1/chat/completions",status="502"} 1');
    expect(metrics).toContain('envace_server_upstream_errors_total{kind="status"} 1');
  });

  it("a streaming client that gives up cancels the upstream stream and frees its slot", async () => {
    harness = await startHarness({ script: [reply.delay(5000, reply.text("too late"))] });
    const controller = new AbortController();
    const pending = harness.client.chat.completions.create({ model: MODEL, messages: user, stream: true }, { signal: controller.signal });
    await waitFor(() => harness!.upstream.scripted.length === 1);
    controller.abort();
    await expect(pending).rejects.toThrow(OpenAI.APIUserAbortError);
    const started = Date.now();
    await waitFor(() => harness!.server.app.slots.active === 0);
    expect(Date.now() - started).toBeLessThan(2000);
  });
});
