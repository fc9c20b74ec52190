import { reply, startScriptedServer, tokensOf, type ScriptedServer } from "@envace/scripted-server";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { HttpError } from "@envace/http";
import { OpenAIChatPolicy } from "./chat-policy.js";
import { canStream, type GenerationDelta } from "@envace/protocol";

let server: ScriptedServer;
beforeAll(async () => {
  server = await startScriptedServer();
});
afterAll(() => server.close());

const request = { role: "act" as const, messages: [{ role: "user" as const, content: "Weather in Paris?" }], sampling: { temperature: 0.6, maxTokens: 64 } };
const tool = { type: "function" as const, function: { name: "get_weather", parameters: { type: "object" } } };

describe("streaming chat generations", () => {
  it("hands over each delta as it arrives and settles with the whole generation", async () => {
    server.setScript([reply.tokens(tokensOf("Sunny.", [-0.1, -0.1, -0.1, -0.1, -0.1, -0.1]), { reasoning: "Look it up." })]);
    const policy = new OpenAIChatPolicy({ baseURL: server.baseURL, model: "scripted-model", retry: { maxRetries: 0 } });
    expect(canStream(policy)).toBe(true);
    const deltas: GenerationDelta[] = [];
    const generation = await policy.generateStream(request, (delta) => {
      deltas.push(delta);
    });
    expect(deltas).toEqual([{ reasoning: "Look it up." }, ...["S", "u", "n", "n", "y", "."].map((content) => ({ content }))]);
    expect(generation).toMatchObject({ role: "act", text: "Sunny.", reasoning: "Look it up.", finishReason: "stop", logprobs: null });
    const body = server.scripted.at(-1)!.body as Record<string, unknown>;
    expect(body.stream).toBe(true);
    expect(body.temperature).toBe(0.6);
    expect(body.logprobs).toBeUndefined();
  });

  it("reassembles native tool calls from their deltas", async () => {
    server.setScript([reply.toolCalls([{ id: "call_9", name: "get_weather", arguments: { city: "Paris" } }])]);
    const policy = new OpenAIChatPolicy({ baseURL: server.baseURL, model: "scripted-model", retry: { maxRetries: 0 } });
    const generation = await policy.generateStream({ ...request, tools: [tool] }, () => undefined);
    expect(generation.toolCalls).toEqual([{ id: "call_9", type: "function", function: { name: "get_weather", arguments: '{"city":"Paris"}' } }]);
    expect(generation.finishReason).toBe("tool_calls");
  });

  it("retries opening the stream, and a cancelled request aborts it", async () => {
    server.setScript([reply.error(503), reply.text("Rain.")]);
    const policy = new OpenAIChatPolicy({ baseURL: server.baseURL, model: "scripted-model", retry: { maxRetries: 1, initialDelayMs: 1, maxDelayMs: 2 } });
    expect((await policy.generateStream(request, () => undefined)).text).toBe("Rain.");
    server.setScript([reply.delay(5000, reply.text("late"))]);
    const controller = new AbortController();
    const pending = policy.generateStream(request, () => undefined, controller.signal);
    setTimeout(() => controller.abort(), 50);
    const started = Date.now();
    await expect(pending).rejects.toThrow();
    expect(Date.now() - started).toBeLessThan(2000);
    server.setScript([reply.error(400, "bad request")]);
    await expect(policy.generateStream(request, () => undefined)).rejects.toThrow(HttpError);
  });
});
