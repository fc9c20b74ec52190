import type { GenerateRequestInput } from "@envace/protocol";
import { reply, startScriptedServer, tokensOf, type ScriptedServer } from "@envace/scripted-server";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { HttpError } from "@envace/http";
import { TokenDataUnavailableError } from "./errors.js";
import { capabilitiesOf, detectServer, trainingGaps } from "./capabilities.js";
import { OpenAIChatPolicy } from "./chat-policy.js";
import { ServerTokenSampler } from "./token-sampler.js";
import { idsFromLabels, samplingFields, toFinishReason } from "./wire.js";

let vllm: ScriptedServer;
beforeAll(async () => {
  vllm = await startScriptedServer({ models: ["qwen3"] });
});
afterAll(() => vllm.close());
afterEach(() => {
  vllm.setScript([]);
  vllm.clearRequests();
});

const fastRetry = { initialDelayMs: 1, maxDelayMs: 5 };
const weatherTool = {
  type: "function" as const,
  function: { name: "get_weather", parameters: { type: "object", properties: { city: { type: "string" } } } },
};
const request = (extra: Partial<GenerateRequestInput> = {}): GenerateRequestInput => ({
  role: "act",
  messages: [
    { role: "system", content: "You are helpful." },
    { role: "user", content: "Weather in Paris?" },
  ],
  sampling: { temperature: 1, maxTokens: 64 },
  ...extra,
});
const chatBodies = (server: ScriptedServer) => server.scripted.filter((r) => r.path === "/v1/chat/completions").map((r) => r.body as Record<string, unknown>);

describe("server detection", () => {
  it("recognises vLLM and OpenAI by the models' owner", async () => {
    const openai = await startScriptedServer({ dialect: "openai" });
    try {
      expect((await detectServer(vllm.baseURL, { timeoutMs: 2_000 })).capabilities.kind).toBe("vllm");
      const detected = await detectServer(openai.baseURL, { timeoutMs: 2_000 });
      expect(detected.capabilities.kind).toBe("openai");
      expect(detected.models).toEqual(["scripted-model"]);
    } finally {
      await openai.close();
    }
  });

  it("falls back to each server's own probe route", async () => {
    const llama = await startScriptedServer({
      ownedBy: "someone",
      script: (r) => (r.path === "/props" ? reply.json({ default_generation_settings: {} }) : reply.error(404, "not found")),
    });
    try {
      expect((await detectServer(llama.baseURL, { timeoutMs: 2_000 })).capabilities.kind).toBe("llama.cpp");
      llama.setScript((r) => (r.path === "/get_model_info" ? reply.json({ model_path: "/m" }) : reply.error(404)));
      expect((await detectServer(llama.baseURL, { timeoutMs: 2_000 })).capabilities.kind).toBe("sglang");
      llama.setScript(() => reply.error(404));
      expect((await detectServer(llama.baseURL, { timeoutMs: 2_000 })).capabilities.kind).toBe("unknown");
    } finally {
      await llama.close();
    }
  });

  it("names what training would miss on each server and route", () => {
    expect(trainingGaps(capabilitiesOf("vllm"), "chat")).toEqual([]);
    expect(trainingGaps(capabilitiesOf("vllm"), "tokens")).toEqual([]);
    expect(trainingGaps(capabilitiesOf("sglang"), "chat")).toEqual([
      "the sglang server returns no output token ids on chat completions",
      "the sglang server returns no prompt token ids on chat completions",
    ]);
    expect(trainingGaps(capabilitiesOf("llama.cpp"), "tokens")).toEqual([]);
    expect(trainingGaps(capabilitiesOf("openai"), "tokens")[0]).toContain("no token-in/token-out route");
  });
});

describe("wire helpers", () => {
  it("sets every sampling knob on self-hosted servers, in each server's spelling", () => {
    const params = { temperature: 0.6, topP: 0.95, topK: 0, maxTokens: 10, stop: ["</s>"], seed: 7 };
    expect(samplingFields(params, capabilitiesOf("vllm"))).toEqual({
      temperature: 0.6,
      top_p: 0.95,
      top_k: -1,
      min_p: 0,
      repetition_penalty: 1,
      stop: ["</s>"],
      seed: 7,
    });
    expect(samplingFields({ ...params, topK: 20 }, capabilitiesOf("llama.cpp"))).toMatchObject({ top_k: 20, repeat_penalty: 1 });
    expect(samplingFields(params, capabilitiesOf("llama.cpp"))).toMatchObject({ top_k: 0 });
    expect(samplingFields(params, capabilitiesOf("openai"))).toEqual({ temperature: 0.6, top_p: 0.95, stop: ["</s>"], seed: 7 });
    expect(() => samplingFields({ ...params, topK: 5 }, capabilitiesOf("openai"))).toThrow("no top_k parameter");
  });

  it("maps finish reasons and token-id labels", () => {
    expect(["stop", "length", "tool_calls", "function_call", "abort", "content_filter", null].map(toFinishReason)).toEqual([
      "stop",
      "length",
      "tool_calls",
      "tool_calls",
      "abort",
      "error",
      "stop",
    ]);
    expect(idsFromLabels(["token_id:5", "token_id:0"])).toEqual([5, 0]);
    expect(idsFromLabels(["token_id:5", "hello"])).toBeUndefined();
  });
});

describe("OpenAIChatPolicy on vLLM", () => {
  const policy = () => new OpenAIChatPolicy({ baseURL: vllm.baseURL, model: "qwen3", retry: fastRetry });

  it("sends protocol messages, tools and explicit sampling, and returns native tool calls with token data", async () => {
    vllm.enqueue(
      reply.choices(
        [
          {
            reasoning: "They want weather.",
            toolCalls: [{ name: "get_weather", arguments: { city: "Paris" } }],
            tokens: tokensOf("<tc>", [-0.1, -0.2, -0.3, -0.4]),
            text: "",
          },
        ],
        [10, 11, 12],
      ),
    );
    const generation = await policy().generate(
      request({
        tools: [weatherTool],
        messages: [
          { role: "user", content: "Weather?" },
          {
            role: "assistant",
            content: null,
            reasoning_content: "think",
            tool_calls: [{ id: "c1", type: "function", function: { name: "get_weather", arguments: "{}" } }],
          },
          { role: "tool", tool_call_id: "c1", content: '{"error": "city required"}' },
        ],
      }),
    );
    expect(generation).toEqual({
      role: "act",
      text: "",
      reasoning: "They want weather.",
      toolCalls: [{ id: "call_0_0", type: "function", function: { name: "get_weather", arguments: '{"city":"Paris"}' } }],
      promptTokens: [10, 11, 12],
      outputTokens: [60, 116, 99, 62],
      logprobs: [-0.1, -0.2, -0.3, -0.4],
      finishReason: "tool_calls",
    });
    const [body] = chatBodies(vllm);
    expect(body).toMatchObject({
      model: "qwen3",
      tools: [weatherTool],
      temperature: 1,
      top_p: 1,
      top_k: -1,
      min_p: 0,
      repetition_penalty: 1,
      max_tokens: 64,
      logprobs: true,
      return_token_ids: true,
      return_tokens_as_token_ids: true,
    });
    expect((body!.messages as unknown[])[1]).toMatchObject({ role: "assistant", reasoning_content: "think" });
  });

  it("keeps malformed tool-call arguments as data", async () => {
    vllm.enqueue(reply.toolCalls([{ name: "get_weather", arguments: '{"city": "Par' }]));
    const generation = await policy().generate(request());
    expect(generation.toolCalls![0]!.function.arguments).toBe('{"city": "Par');
  });

  it("draws n samples in one request", async () => {
    vllm.enqueue(reply.choices([{ text: "a" }, { text: "b" }, { text: "c" }]));
    const generations = await policy().generateN(request(), 3);
    expect(generations.map((g) => g.text)).toEqual(["a", "b", "c"]);
    expect(chatBodies(vllm)).toHaveLength(1);
    expect(chatBodies(vllm)[0]!.n).toBe(3);
  });

  it("merges extra body fields such as chat_template_kwargs", async () => {
    vllm.enqueue(reply.text("hi"));
    const withExtra = new OpenAIChatPolicy({ baseURL: vllm.baseURL, model: "qwen3", extraBody: { chat_template_kwargs: { enable_thinking: false } } });
    await withExtra.generate(request());
    expect(chatBodies(vllm)[0]!.chat_template_kwargs).toEqual({ enable_thinking: false });
  });

  it("with tokenData require, fails clearly when a response lacks token data", async () => {
    vllm.enqueue(reply.text("no tokens here"));
    const strict = new OpenAIChatPolicy({ baseURL: vllm.baseURL, model: "qwen3", tokenData: "require" });
    const error = await strict.generate(request()).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(TokenDataUnavailableError);
    expect((error as Error).message).toContain("prompt token ids, output token ids and logprobs");
  });

  it("with tokenData off, asks for no token data", async () => {
    vllm.enqueue(reply.text("hi"));
    await new OpenAIChatPolicy({ baseURL: vllm.baseURL, model: "qwen3", tokenData: "off" }).generate(request());
    expect(chatBodies(vllm)[0]).not.toHaveProperty("logprobs");
    expect(chatBodies(vllm)[0]).not.toHaveProperty("return_token_ids");
  });
});

describe("OpenAIChatPolicy on the OpenAI API", () => {
  it("sends only standard fields and strips reasoning_content", async () => {
    const openai = await startScriptedServer({ dialect: "openai", script: [reply.text("hello")] });
    try {
      const policy = new OpenAIChatPolicy({ baseURL: openai.baseURL, model: "gpt", apiKey: "sk-test" });
      const generation = await policy.generate(
        request({
          messages: [
            { role: "user", content: "hi" },
            { role: "assistant", content: "ok", reasoning_content: "r" },
            { role: "user", content: "again" },
          ],
        }),
      );
      expect(generation).toMatchObject({ text: "hello", promptTokens: [], outputTokens: [], logprobs: null });
      const body = chatBodies(openai)[0]!;
      expect(body).toMatchObject({ max_completion_tokens: 64, logprobs: true });
      for (const key of ["top_k", "min_p", "repetition_penalty", "return_token_ids", "max_tokens"]) expect(body).not.toHaveProperty(key);
      expect((body.messages as unknown[])[1]).toEqual({ role: "assistant", content: "ok" });
      expect(openai.scripted[0]!.headers.authorization).toBe("Bearer sk-test");
    } finally {
      await openai.close();
    }
  });

  it("refuses training use before sending anything", async () => {
    const openai = await startScriptedServer({ dialect: "openai" });
    try {
      const policy = new OpenAIChatPolicy({ baseURL: openai.baseURL, model: "gpt", tokenData: "require" });
      await expect(policy.generate(request())).rejects.toThrow(/returns no output token ids on chat completions/);
      expect(chatBodies(openai)).toHaveLength(0);
    } finally {
      await openai.close();
    }
  });
});

describe("failures", () => {
  it("retries 500s, 429s, malformed bodies, dropped connections and timeouts, then succeeds", async () => {
    vllm.enqueue(
      reply.error(500, "boom"),
      reply.rateLimited(1),
      reply.malformed(),
      reply.drop(),
      reply.drop('{"choices": ['),
      reply.delay(1_000, reply.text("too late")),
      reply.text("finally"),
    );
    const retried: string[] = [];
    const policy = new OpenAIChatPolicy({
      baseURL: vllm.baseURL,
      model: "qwen3",
      server: "vllm",
      timeoutMs: 150,
      retry: { ...fastRetry, maxRetries: 6 },
      onRetry: (event) => retried.push(event.error.code),
    });
    const generation = await policy.generate(request());
    expect(generation.text).toBe("finally");
    expect(retried).toEqual(["status", "status", "malformed", "connection", "connection", "timeout"]);
    expect(chatBodies(vllm)).toHaveLength(7);
  });

  it("gives up after the last retry with an error naming the endpoint and status", async () => {
    vllm.setScript(() => reply.error(503, "overloaded"));
    const policy = new OpenAIChatPolicy({ baseURL: vllm.baseURL, model: "qwen3", server: "vllm", retry: { ...fastRetry, maxRetries: 2 } });
    const error = (await policy.generate(request()).catch((e: unknown) => e)) as HttpError;
    expect(error).toBeInstanceOf(HttpError);
    expect(error).toMatchObject({ code: "status", status: 503 });
    expect(error.message).toContain(`${vllm.baseURL}/chat/completions: HTTP 503`);
    expect(chatBodies(vllm)).toHaveLength(3);
  });

  it("does not retry a request the server rejects", async () => {
    vllm.enqueue(reply.error(400, "bad tools"), reply.text("unused"));
    const policy = new OpenAIChatPolicy({ baseURL: vllm.baseURL, model: "qwen3", server: "vllm", retry: fastRetry });
    await expect(policy.generate(request())).rejects.toMatchObject({ code: "status", status: 400 });
    expect(vllm.pending).toBe(1);
  });

  it("reports a body of the wrong shape without retrying", async () => {
    vllm.enqueue(reply.json({ result: "not a completion" }), reply.text("unused"));
    const policy = new OpenAIChatPolicy({ baseURL: vllm.baseURL, model: "qwen3", server: "vllm", retry: fastRetry });
    await expect(policy.generate(request())).rejects.toMatchObject({ code: "shape", message: expect.stringContaining("choices") as string });
    expect(vllm.pending).toBe(1);
  });

  it("caps the requests in flight", async () => {
    let active = 0;
    let peak = 0;
    vllm.setScript(async () => {
      active++;
      peak = Math.max(peak, active);
      await new Promise((resolve) => setTimeout(resolve, 30));
      active--;
      return reply.text("ok");
    });
    const policy = new OpenAIChatPolicy({ baseURL: vllm.baseURL, model: "qwen3", server: "vllm", maxConcurrency: 2 });
    const generations = await Promise.all(Array.from({ length: 6 }, () => policy.generate(request())));
    expect(generations.every((g) => g.text === "ok")).toBe(true);
    expect(peak).toBe(2);
  });

  it("cancels an in-flight request and never sends a queued one", async () => {
    vllm.setScript(() => reply.delay(5_000, reply.text("late")));
    const policy = new OpenAIChatPolicy({ baseURL: vllm.baseURL, model: "qwen3", server: "vllm", maxConcurrency: 1 });
    const controller = new AbortController();
    const inFlight = policy.generate(request(), controller.signal);
    const queued = policy.generate(request(), controller.signal);
    await new Promise((resolve) => setTimeout(resolve, 50));
    const started = Date.now();
    controller.abort();
    await expect(inFlight).rejects.toMatchObject({ name: "AbortError" });
    await expect(queued).rejects.toMatchObject({ name: "AbortError" });
    expect(Date.now() - started).toBeLessThan(1_000);
    expect(chatBodies(vllm)).toHaveLength(1);
  });
});

describe("ServerTokenSampler", () => {
  const params = { temperature: 1, topP: 1, topK: 0, maxTokens: 3, stop: [] };

  it("samples token ids in and out through vLLM /v1/completions", async () => {
    vllm.enqueue(reply.tokens(tokensOf("abc", [-1, -2, -3]), { finishReason: "length" }));
    const sampler = new ServerTokenSampler({ baseURL: vllm.baseURL, model: "qwen3" });
    const sampled = await sampler.sample([1, 2, 3], params);
    expect(sampled).toEqual({ tokens: [97, 98, 99], logprobs: [-1, -2, -3], finishReason: "length" });
    expect(vllm.scripted.at(-1)).toMatchObject({
      path: "/v1/completions",
      body: { model: "qwen3", prompt: [1, 2, 3], max_tokens: 3, logprobs: 0, return_token_ids: true, top_k: -1 },
    });
  });

  it("reads ids from token_id labels when an older vLLM returns no token_ids", async () => {
    vllm.enqueue(
      reply.json({
        choices: [{ index: 0, text: "xy", finish_reason: "stop", logprobs: { tokens: ["token_id:7", "token_id:8"], token_logprobs: [-0.5, -0.25] } }],
      }),
    );
    const sampled = await new ServerTokenSampler({ baseURL: vllm.baseURL, model: "qwen3", server: "vllm" }).sample([1], params);
    expect(sampled).toEqual({ tokens: [7, 8], logprobs: [-0.5, -0.25], finishReason: "stop" });
  });

  it("fails clearly when the completion carries no token data", async () => {
    vllm.enqueue(reply.text("plain"));
    const error = await new ServerTokenSampler({ baseURL: vllm.baseURL, model: "qwen3", server: "vllm" }).sample([1], params).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(TokenDataUnavailableError);
    expect((error as Error).message).toContain("no token ids and no logprobs");
  });

  it("uses SGLang /generate with input_ids and return_logprob", async () => {
    const sglang = await startScriptedServer({
      ownedBy: "sglang",
      script: [
        reply.json({
          text: "hi",
          meta_info: {
            finish_reason: { type: "length" },
            output_token_logprobs: [
              [-0.1, 5, null],
              [-0.2, 6, null],
            ],
          },
        }),
      ],
    });
    try {
      const sampled = await new ServerTokenSampler({ baseURL: sglang.baseURL, model: "m" }).sample([9, 9], { ...params, seed: 3 });
      expect(sampled).toEqual({ tokens: [5, 6], logprobs: [-0.1, -0.2], finishReason: "length" });
      expect(sglang.scripted[0]).toMatchObject({
        path: "/generate",
        body: {
          input_ids: [9, 9],
          return_logprob: true,
          sampling_params: { max_new_tokens: 3, temperature: 1, top_p: 1, top_k: -1, min_p: 0, repetition_penalty: 1, sampling_seed: 3 },
        },
      });
    } finally {
      await sglang.close();
    }
  });

  it("uses llama.cpp /completion with return_tokens and n_probs, and retries its failures", async () => {
    const llama = await startScriptedServer({
      ownedBy: "llamacpp",
      script: [
        reply.error(503, "loading model"),
        reply.json({
          content: "ok",
          tokens: [40, 41],
          stop_type: "eos",
          completion_probabilities: [
            { id: 40, token: "o", logprob: -0.3, top_logprobs: [] },
            { id: 41, token: "k", logprob: -0.6, top_logprobs: [] },
          ],
        }),
      ],
    });
    try {
      const sampler = new ServerTokenSampler({ baseURL: llama.baseURL, model: "m", retry: fastRetry });
      expect(await sampler.sample([1, 2], params)).toEqual({ tokens: [40, 41], logprobs: [-0.3, -0.6], finishReason: "stop" });
      expect(llama.scripted.at(-1)).toMatchObject({
        path: "/completion",
        body: { prompt: [1, 2], n_predict: 3, n_probs: 1, return_tokens: true, top_k: 0, min_p: 0, repeat_penalty: 1 },
      });
      expect(llama.scripted.filter((r) => r.path === "/completion")).toHaveLength(2);
    } finally {
      await llama.close();
    }
  });

  it("refuses a server with no token route", async () => {
    const openai = await startScriptedServer({ dialect: "openai" });
    try {
      await expect(new ServerTokenSampler({ baseURL: openai.baseURL, model: "gpt" }).sample([1], params)).rejects.toBeInstanceOf(TokenDataUnavailableError);
      expect(openai.scripted).toHaveLength(0);
    } finally {
      await openai.close();
    }
  });
});
