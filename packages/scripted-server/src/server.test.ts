import OpenAI from "openai";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { reply, startScriptedServer, tokensOf, type ScriptedServer } from "./index.js";

let server: ScriptedServer;
let client: OpenAI;

beforeAll(async () => {
  server = await startScriptedServer({ models: ["tiny", "qwen3"] });
  client = new OpenAI({ baseURL: server.baseURL, apiKey: "test", maxRetries: 0, timeout: 5_000 });
});
afterAll(() => server.close());
afterEach(() => {
  server.setScript([]);
  server.clearRequests();
});

const weatherTool = {
  type: "function" as const,
  function: { name: "get_weather", description: "Weather for a city", parameters: { type: "object", properties: { city: { type: "string" } } } },
};

describe("chat completions through the openai client", () => {
  it("answers with the scripted text and records the request", async () => {
    server.enqueue(reply.text("Hello there."));
    const completion = await client.chat.completions.create({
      model: "tiny",
      messages: [{ role: "user", content: "Hi" }],
      temperature: 0.6,
      top_p: 0.95,
      max_completion_tokens: 32,
    });
    expect(completion.choices[0]!.message.content).toBe("Hello there.");
    expect(completion.choices[0]!.finish_reason).toBe("stop");
    expect(completion.model).toBe("tiny");
    expect(server.scripted).toHaveLength(1);
    expect(server.scripted[0]).toMatchObject({
      method: "POST",
      path: "/v1/chat/completions",
      body: { model: "tiny", messages: [{ role: "user", content: "Hi" }], temperature: 0.6, top_p: 0.95, max_completion_tokens: 32 },
    });
    expect(server.scripted[0]!.headers.authorization).toBe("Bearer test");
    expect(server.pending).toBe(0);
  });

  it("returns native tool calls, encoding object arguments and keeping string ones verbatim", async () => {
    server.enqueue(
      reply.toolCalls([
        { name: "get_weather", arguments: { city: "Paris" } },
        { id: "call_x", name: "get_weather", arguments: '{"city": "Par' },
      ]),
    );
    const completion = await client.chat.completions.create({
      model: "tiny",
      messages: [{ role: "user", content: "Weather?" }],
      tools: [weatherTool],
    });
    const choice = completion.choices[0]!;
    expect(choice.finish_reason).toBe("tool_calls");
    expect(choice.message.content).toBeNull();
    expect(choice.message.tool_calls).toEqual([
      { id: "call_0_0", type: "function", function: { name: "get_weather", arguments: '{"city":"Paris"}' } },
      { id: "call_x", type: "function", function: { name: "get_weather", arguments: '{"city": "Par' } },
    ]);
    expect(server.scripted[0]!.body).toMatchObject({ tools: [weatherTool] });
  });

  it("records response_format json_schema and returns reasoning separately", async () => {
    server.enqueue(reply.text('{"answer": 4}', { reasoning: "2 + 2 = 4" }));
    const completion = await client.chat.completions.create({
      model: "tiny",
      messages: [{ role: "user", content: "2+2?" }],
      response_format: {
        type: "json_schema",
        json_schema: { name: "answer", schema: { type: "object", properties: { answer: { type: "number" } } }, strict: true },
      },
    });
    expect(JSON.parse(completion.choices[0]!.message.content!)).toEqual({ answer: 4 });
    expect((completion.choices[0]!.message as unknown as { reasoning_content: string }).reasoning_content).toBe("2 + 2 = 4");
    expect(server.scripted[0]!.body).toMatchObject({ response_format: { type: "json_schema", json_schema: { name: "answer" } } });
  });

  it("fills n choices by repeating the scripted ones in turn", async () => {
    server.enqueue(reply.choices([{ text: "a" }, { text: "b" }]));
    const completion = await client.chat.completions.create({ model: "tiny", messages: [{ role: "user", content: "?" }], n: 3 });
    expect(completion.choices.map((c) => [c.index, c.message.content])).toEqual([
      [0, "a"],
      [1, "b"],
      [2, "a"],
    ]);
  });

  it("returns logprobs, and in the vLLM dialect token ids and prompt token ids", async () => {
    server.enqueue(reply.tokens(tokensOf("ok", [-0.5, -0.25]), { promptTokenIds: [1, 2, 3] }));
    const completion = await client.chat.completions.create({
      model: "tiny",
      messages: [{ role: "user", content: "?" }],
      logprobs: true,
      top_logprobs: 0,
      // vLLM extension, sent through the body as users of the openai client do.
      ...({ return_token_ids: true } as object),
    });
    const choice = completion.choices[0]! as unknown as { token_ids: number[]; message: { content: string } };
    expect(choice.message.content).toBe("ok");
    expect(completion.choices[0]!.logprobs!.content!.map((t) => [t.token, t.logprob])).toEqual([
      ["o", -0.5],
      ["k", -0.25],
    ]);
    expect(choice.token_ids).toEqual([111, 107]);
    expect((completion as unknown as { prompt_token_ids: number[] }).prompt_token_ids).toEqual([1, 2, 3]);
  });

  it("in the OpenAI dialect returns logprobs but never token ids", async () => {
    const openaiServer = await startScriptedServer({ dialect: "openai", script: [reply.tokens(tokensOf("ok", [-0.5, -0.25]))] });
    try {
      const openaiClient = new OpenAI({ baseURL: openaiServer.baseURL, apiKey: "k", maxRetries: 0 });
      const completion = await openaiClient.chat.completions.create({
        model: "m",
        messages: [{ role: "user", content: "?" }],
        logprobs: true,
        ...({ return_token_ids: true } as object),
      });
      expect(completion.choices[0]!.logprobs!.content).toHaveLength(2);
      expect("token_ids" in completion.choices[0]!).toBe(false);
      expect("prompt_token_ids" in completion).toBe(false);
    } finally {
      await openaiServer.close();
    }
  });

  it("answers per request when the script is a function", async () => {
    server.setScript((request) => {
      const body = request.body as { messages: { content: string }[] };
      return reply.text(`echo: ${body.messages.at(-1)!.content}`);
    });
    const a = await client.chat.completions.create({ model: "tiny", messages: [{ role: "user", content: "one" }] });
    const b = await client.chat.completions.create({ model: "tiny", messages: [{ role: "user", content: "two" }] });
    expect([a.choices[0]!.message.content, b.choices[0]!.message.content]).toEqual(["echo: one", "echo: two"]);
  });

  it("streams text, reasoning, tool calls and usage", async () => {
    server.enqueue(
      reply.choices([
        {
          tokens: tokensOf("hey", [-1, -2, -3]),
          reasoning: "greet",
          toolCalls: [{ name: "get_weather", arguments: { city: "Oslo" } }],
        },
      ]),
    );
    const stream = await client.chat.completions.create({
      model: "tiny",
      messages: [{ role: "user", content: "?" }],
      stream: true,
      stream_options: { include_usage: true },
    });
    let content = "";
    const toolArgs: string[] = [];
    let finish: string | null = null;
    let usage: unknown;
    for await (const chunk of stream) {
      if (chunk.usage) usage = chunk.usage;
      const choice = chunk.choices[0];
      if (!choice) continue;
      content += choice.delta.content ?? "";
      for (const call of choice.delta.tool_calls ?? []) toolArgs.push(`${call.function?.name}:${call.function?.arguments}`);
      finish = choice.finish_reason ?? finish;
    }
    expect(content).toBe("hey");
    expect(toolArgs).toEqual(['get_weather:{"city":"Oslo"}']);
    expect(finish).toBe("tool_calls");
    expect(usage).toEqual({ prompt_tokens: 0, completion_tokens: 3, total_tokens: 3 });
  });
});

describe("text completions (token in, token out)", () => {
  it("echoes a token prompt as prompt_token_ids and reports tokens as ids when asked", async () => {
    server.enqueue(
      reply.tokens(
        [
          {
            id: 42,
            text: "Hi",
            logprob: -0.1,
            top: [
              { id: 42, text: "Hi", logprob: -0.1 },
              { id: 7, text: "Yo", logprob: -2.5 },
            ],
          },
          { id: 2, text: "!", logprob: -0.2 },
        ],
        { finishReason: "length" },
      ),
    );
    const completion = await client.completions.create({
      model: "tiny",
      prompt: [5, 6, 7],
      max_tokens: 2,
      logprobs: 2,
      ...({ return_token_ids: true, return_tokens_as_token_ids: true } as object),
    });
    const choice = completion.choices[0]! as unknown as Record<string, unknown>;
    expect(completion.choices[0]!.text).toBe("Hi!");
    expect(completion.choices[0]!.finish_reason).toBe("length");
    expect(choice.token_ids).toEqual([42, 2]);
    expect(choice.prompt_token_ids).toEqual([5, 6, 7]);
    expect(completion.choices[0]!.logprobs).toEqual({
      tokens: ["token_id:42", "token_id:2"],
      token_logprobs: [-0.1, -0.2],
      top_logprobs: [{ "token_id:42": -0.1, "token_id:7": -2.5 }, {}],
      text_offset: [0, 2],
    });
    expect(completion.usage).toEqual({ prompt_tokens: 3, completion_tokens: 2, total_tokens: 5 });
    expect(server.scripted[0]!.body).toMatchObject({ prompt: [5, 6, 7], logprobs: 2, return_token_ids: true });
  });

  it("streams completions token by token with token ids", async () => {
    server.enqueue(reply.tokens(tokensOf("abc", [-1, -1, -1])));
    const stream = await client.completions.create({
      model: "tiny",
      prompt: [1, 2],
      stream: true,
      logprobs: 0,
      ...({ return_token_ids: true } as object),
    });
    const ids: number[] = [];
    let text = "";
    let prompt: unknown;
    for await (const chunk of stream) {
      const choice = chunk.choices[0] as unknown as { text: string; token_ids?: number[]; prompt_token_ids?: number[] } | undefined;
      if (!choice) continue;
      text += choice.text;
      ids.push(...(choice.token_ids ?? []));
      prompt ??= choice.prompt_token_ids;
    }
    expect(text).toBe("abc");
    expect(ids).toEqual([97, 98, 99]);
    expect(prompt).toEqual([1, 2]);
  });
});

describe("models", () => {
  it("lists and retrieves the configured models", async () => {
    const ids: string[] = [];
    for await (const model of client.models.list()) ids.push(model.id);
    expect(ids).toEqual(["tiny", "qwen3"]);
    const card = await client.models.retrieve("qwen3");
    expect(card).toMatchObject({ id: "qwen3", owned_by: "vllm" });
    await expect(client.models.retrieve("nope")).rejects.toMatchObject({ status: 404 });
    expect(server.scripted).toHaveLength(0);
    expect(server.requests).toHaveLength(3);
  });
});

describe("injected failures", () => {
  const ask = (c: OpenAI = client) => c.chat.completions.create({ model: "tiny", messages: [{ role: "user", content: "?" }] });

  it("returns a scripted 500 as an APIError with the OpenAI error body", async () => {
    server.enqueue(reply.error(500, "boom"));
    await expect(ask()).rejects.toMatchObject({ status: 500, message: expect.stringContaining("boom") as string });
  });

  it("lets the openai client retry a 429 and a 503 until the scripted success", async () => {
    server.enqueue(reply.rateLimited(1), reply.error(503, "overloaded", { "retry-after-ms": "1" }), reply.text("finally"));
    const retrying = new OpenAI({ baseURL: server.baseURL, apiKey: "k", maxRetries: 2 });
    const completion = await ask(retrying);
    expect(completion.choices[0]!.message.content).toBe("finally");
    expect(server.scripted).toHaveLength(3);
  });

  it("holds a reply longer than the client timeout", async () => {
    server.enqueue(reply.delay(2_000, reply.text("too late")));
    const impatient = new OpenAI({ baseURL: server.baseURL, apiKey: "k", maxRetries: 0, timeout: 100 });
    await expect(ask(impatient)).rejects.toBeInstanceOf(OpenAI.APIConnectionTimeoutError);
  });

  it("sends a truncated JSON body", async () => {
    server.enqueue(reply.malformed());
    await expect(ask()).rejects.toThrow();
    expect(server.pending).toBe(0);
  });

  it("drops the connection, with or without a partial body", async () => {
    server.enqueue(reply.drop(), reply.drop('{"id": "x", "choi'));
    await expect(ask()).rejects.toBeInstanceOf(OpenAI.APIConnectionError);
    await expect(ask()).rejects.toThrow();
    expect(server.scripted).toHaveLength(2);
  });

  it("answers 500 and records the request when nothing is scripted", async () => {
    await expect(ask()).rejects.toMatchObject({ status: 500, message: expect.stringContaining("no reply scripted") as string });
    expect(server.unexpected.map((r) => r.path)).toEqual(["/v1/chat/completions"]);
  });

  it("rejects requests no OpenAI-compatible server would accept, without consuming the script", async () => {
    server.enqueue(reply.text("unused"));
    const res = await fetch(`${server.baseURL}/chat/completions`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ model: "tiny", messages: [] }),
    });
    expect(res.status).toBe(400);
    expect(((await res.json()) as { error: { message: string } }).error.message).toContain("messages");
    expect(server.pending).toBe(1);
  });
});

describe("other routes and lifecycle", () => {
  it("answers any other route from the script with raw JSON (e.g. SGLang /generate)", async () => {
    server.enqueue(reply.json({ text: "hi", meta_info: { output_token_logprobs: [[-0.1, 5, null]] } }));
    const res = await fetch(`${server.url}/generate`, {
      method: "POST",
      body: JSON.stringify({ input_ids: [1, 2], return_logprob: true }),
    });
    expect(await res.json()).toEqual({ text: "hi", meta_info: { output_token_logprobs: [[-0.1, 5, null]] } });
    expect(server.scripted[0]).toMatchObject({ path: "/generate", body: { input_ids: [1, 2], return_logprob: true } });
  });

  it("refuses to render a generation on a route it does not know", async () => {
    server.enqueue(reply.text("hi"));
    const res = await fetch(`${server.url}/generate`, { method: "POST", body: "{}" });
    expect(res.status).toBe(500);
    expect(((await res.json()) as { error: { message: string } }).error.message).toContain("json reply");
  });

  it("starts on a free port and closes promptly even with a reply still delayed", async () => {
    const other = await startScriptedServer({ script: [reply.delay(60_000, reply.text("never"))] });
    expect(other.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(other.url).not.toBe(server.url);
    const pendingRequest = fetch(`${other.baseURL}/chat/completions`, {
      method: "POST",
      body: JSON.stringify({ model: "m", messages: [{ role: "user", content: "?" }] }),
    }).catch((error: unknown) => error);
    await new Promise((resolve) => setTimeout(resolve, 50));
    const started = Date.now();
    await other.close();
    await other.close();
    expect(Date.now() - started).toBeLessThan(1_000);
    expect(await pendingRequest).toBeInstanceOf(Error);
  });
});
