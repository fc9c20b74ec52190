import OpenAI from "openai";
import type { ChatCompletionChunk } from "openai/resources/chat/completions";
import { describe, expect, it } from "vitest";
import { lookupTool, MODEL } from "./testing/harness.js";
import { chunkEvent, sseServers, startStream, type Answer, type StartedSse } from "./testing/sse-upstream.js";

const servers = sseServers();
let started: StartedSse | undefined;

async function start(answer: Answer): Promise<OpenAI> {
  started = await servers.start(answer);
  return started.client;
}

const messages = [{ role: "user" as const, content: "Where is the rabo?" }];
const metricsText = async (): Promise<string> => (await fetch(`${started!.server.url}/metrics`)).text();

/** A stream the upstream ends cleanly after some content: no finish_reason, no [DONE]. */
const cutAfter =
  (...pieces: string[]): Answer =>
  (_body, res) => {
    startStream(res);
    res.write(chunkEvent({ role: "assistant", content: "" }));
    for (const piece of pieces) res.write(chunkEvent({ content: piece }));
    res.end();
  };

describe("an upstream stream cut short", () => {
  it.each([
    ["without tools", {}],
    ["with tools", { tools: [lookupTool] }],
  ])("%s: the openai client raises instead of returning a truncated answer, and it counts as an upstream error", async (_name, extra) => {
    const client = await start(cutAfter("The rabo ", "is on shelf"));
    const stream = await client.chat.completions.create({ model: MODEL, messages, stream: true, ...extra });
    let content = "";
    const failure = await (async () => {
      for await (const chunk of stream) content += chunk.choices[0]?.delta.content ?? "";
    })().catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(OpenAI.APIError);
    expect((failure as InstanceType<typeof OpenAI.APIError>).error).toMatchObject({ type: "upstream_error" });
    // What arrived before the cut was passed on as it came; only its end is refused.
    expect(content).toBe("The rabo is on shelf");
    const metrics = await metricsText();
    expect(metrics).toContain('envace_server_upstream_errors_total{kind="connection"} 1');
  });

  it("ends the response with an error event and without [DONE] or a finish reason", async () => {
    await start(cutAfter("The rabo ", "is on shelf"));
    const response = await fetch(`${started!.server.url}/v1/chat/completions`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ model: MODEL, messages, stream: true }),
    });
    expect(response.status).toBe(200);
    const events = (await response.text()).split("\n\n").filter((event) => event.length > 0);
    expect(events.at(-1)).toMatch(/^data: \{"error":\{/);
    expect(events.some((event) => event.includes("[DONE]"))).toBe(false);
    expect(events.some((event) => event.includes('"finish_reason":"'))).toBe(false);
  });

  it("cut before any content: a plain 502, nothing streamed", async () => {
    const client = await start(cutAfter());
    const failure = await client.chat.completions.create({ model: MODEL, messages, stream: true }).catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(OpenAI.APIError);
    expect((failure as InstanceType<typeof OpenAI.APIError>).status).toBe(502);
    expect(await metricsText()).toContain('envace_server_upstream_errors_total{kind="connection"} 1');
  });

  it("a stream that finishes without [DONE] is complete: its finish_reason says so", async () => {
    const client = await start((_body, res) => {
      startStream(res);
      res.write(chunkEvent({ role: "assistant", content: "Shelf 4." }));
      res.end(chunkEvent({}, "stop"));
    });
    let content = "";
    let finish: string | null = null;
    for await (const chunk of await client.chat.completions.create({ model: MODEL, messages, stream: true })) {
      content += chunk.choices[0]?.delta.content ?? "";
      finish = chunk.choices[0]?.finish_reason ?? finish;
    }
    expect([content, finish]).toEqual(["Shelf 4.", "stop"]);
  });
});

describe("usage", () => {
  /** A non-streamed chat completion body with the given choices and usage. */
  const completionBody = (choices: Record<string, unknown>[], usage: Record<string, number>, extra: Record<string, unknown> = {}) => ({
    id: "chatcmpl-up",
    object: "chat.completion",
    created: 0,
    model: MODEL,
    choices: choices.map((choice, index) => ({ index, finish_reason: "stop", message: { role: "assistant", ...choice } })),
    usage,
    ...extra,
  });
  const json =
    (body: unknown): Answer =>
    (_request, res) => {
      res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(body));
    };

  it("is the upstream's usage when it returns no token ids, and counts the completion tokens", async () => {
    const client = await start(json(completionBody([{ content: "Shelf 4." }], { prompt_tokens: 23, completion_tokens: 7, total_tokens: 30 })));
    const completion = await client.chat.completions.create({ model: MODEL, messages });
    expect(completion.usage).toEqual({ prompt_tokens: 23, completion_tokens: 7, total_tokens: 30 });
    expect(await metricsText()).toContain("envace_server_completion_tokens_total 7");
  });

  it("is counted from the token ids when the upstream returns them, whatever its usage says", async () => {
    const body = completionBody([{ content: "Shelf 4." }], { prompt_tokens: 99, completion_tokens: 99, total_tokens: 198 }, { prompt_token_ids: [1, 2, 3] });
    (body.choices[0] as Record<string, unknown>).token_ids = [40, 41];
    const client = await start(json(body));
    const completion = await client.chat.completions.create({ model: MODEL, messages });
    expect(completion.usage).toEqual({ prompt_tokens: 3, completion_tokens: 2, total_tokens: 5 });
    expect(await metricsText()).toContain("envace_server_completion_tokens_total 2");
  });

  it("n choices of one upstream request count its usage once", async () => {
    const client = await start(
      json(completionBody([{ content: "Shelf 4." }, { content: "Shelf 5." }], { prompt_tokens: 10, completion_tokens: 8, total_tokens: 18 })),
    );
    const completion = await client.chat.completions.create({ model: MODEL, messages, n: 2 });
    expect(completion.usage).toEqual({ prompt_tokens: 10, completion_tokens: 8, total_tokens: 18 });
  });

  it("streamed: the upstream's usage chunk, asked for with stream_options", async () => {
    const client = await start((_body, res) => {
      startStream(res);
      res.write(chunkEvent({ role: "assistant", content: "Shelf " }));
      res.write(chunkEvent({ content: "4." }));
      res.write(chunkEvent({}, "stop"));
      res.write(
        `data: ${JSON.stringify({ id: "chatcmpl-up", object: "chat.completion.chunk", created: 0, model: MODEL, choices: [], usage: { prompt_tokens: 17, completion_tokens: 5, total_tokens: 22 } })}\n\n`,
      );
      res.end("data: [DONE]\n\n");
    });
    const chunks: ChatCompletionChunk[] = [];
    for await (const chunk of await client.chat.completions.create({ model: MODEL, messages, stream: true, stream_options: { include_usage: true } }))
      chunks.push(chunk);
    expect(chunks.at(-1)!.usage).toEqual({ prompt_tokens: 17, completion_tokens: 5, total_tokens: 22 });
    expect(started!.upstream.bodies[0]!.stream_options).toEqual({ include_usage: true });
    expect(await metricsText()).toContain("envace_server_completion_tokens_total 5");
  });
});
