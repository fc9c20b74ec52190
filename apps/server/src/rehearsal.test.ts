import { reply, type RecordedRequest } from "@envace/scripted-server";
import OpenAI from "openai";
import { afterEach, describe, expect, it } from "vitest";
import { lookupTool, MODEL, startHarness, type Harness } from "./testing/harness.js";

let harness: Harness | undefined;
afterEach(async () => {
  await harness?.close();
  harness = undefined;
});

const TOKENS = ["token-of-client-a-0123456789abcdef0123", "token-of-client-b-0123456789abcdef0123"];

/** Which role a request to the upstream is for, from the prompts of @envace/rehearsal and @envace/trajectory. */
function roleOf(request: RecordedRequest): string {
  const body = request.body as { messages: { role: string; content: string }[]; tools?: unknown[] };
  const system = body.messages[0]?.role === "system" ? body.messages[0].content : "";
  if (system.startsWith("You play the environment")) return "rehearse";
  if (system.startsWith("You review one private rehearsal")) return "reflect";
  if (system.startsWith("You condense")) return "summarize";
  return "act";
}

/**
 * The model: in rehearsal it buys at once and predicts the purchase fails; the summary says to look
 * the item up first; committed, it looks the item up.
 */
function script(request: RecordedRequest) {
  const body = request.body as { messages: { role: string; content: string | null }[] };
  switch (roleOf(request)) {
    case "rehearse":
      return reply.text('<execution_result>{"error": {"code": "OUT_OF_STOCK", "message": "no rabo left"}}</execution_result>');
    case "reflect":
      return reply.text('<assessment>{"reached_goal": false, "went_wrong": "bought without looking", "revision": "look the item up first"}</assessment>');
    case "summarize":
      return reply.text('<memory>{"plan": "Look the rabo up before buying.", "lessons": []}</memory>');
    default: {
      const inRehearsal = !body.messages.some((m) => m.role === "system" && (m.content ?? "").includes("## Rehearsal memory"));
      if (inRehearsal) {
        const afterTool = body.messages.at(-1)?.role === "tool";
        return reply.text(afterTool ? "Sorry, it is sold out." : '<tool_call>{"name": "lookup", "arguments": {"item": "rabo"}}</tool_call>');
      }
      return reply.text('<tool_call>{"name": "lookup", "arguments": {"item": "rabo"}}</tool_call>');
    }
  }
}

const opening = [
  { role: "system" as const, content: "You run a shop." },
  { role: "user" as const, content: "Buy me a rabo." },
];

describe("private rehearsal per request", () => {
  it("rehearses before answering a request with tools, reports it in the envace field, and the next turn reuses the memory", async () => {
    harness = await startHarness({ script, tokens: TOKENS, apiKey: TOKENS[0]! });
    const body = { model: MODEL, messages: opening, tools: [lookupTool], seed: 5, envace: { rehearsal: "parallel:2", memory_budget: 200 } };
    const first = (await harness.client.chat.completions.create(body as unknown as OpenAI.ChatCompletionCreateParamsNonStreaming)) as OpenAI.ChatCompletion & {
      envace: Record<string, unknown>;
    };
    expect(first.envace).toMatchObject({ rehearsal: "parallel:2", attempts: 2, predicted_failures: 1, memory: "new" });
    expect(first.envace.memory_tokens).toBeGreaterThan(0);
    const roles = harness.upstream.scripted.map(roleOf);
    // Two attempts (act, rehearse, act each), two reflections, one summary, then the committed turn.
    expect(roles.filter((r) => r === "reflect")).toHaveLength(2);
    expect(roles.filter((r) => r === "summarize")).toHaveLength(1);
    expect(roles.filter((r) => r === "rehearse")).toHaveLength(2);
    expect(roles.at(-1)).toBe("act");
    const committed = harness.upstream.scripted.at(-1)!.body as { messages: { role: string; content: string }[] };
    expect(committed.messages[0]!.content).toBe(
      [
        "You run a shop.",
        "",
        "## Rehearsal memory",
        "You rehearsed this task privately before acting. These are your own predictions, not real results.",
        "Predicted to fail:",
        '- lookup {"item":"rabo"}: OUT_OF_STOCK (no rabo left) [2/2 attempts]',
        "Plan: Look the rabo up before buying.",
      ].join("\n"),
    );
    // The client sees only the committed turn's tool call, to run itself.
    const call = first.choices[0]!.message.tool_calls![0]!;
    expect(call.type === "function" ? [call.function.name, call.function.arguments] : []).toEqual(["lookup", '{"item":"rabo"}']);

    const before = harness.upstream.scripted.length;
    const next = { ...body, messages: [...opening, first.choices[0]!.message, { role: "tool", tool_call_id: call.id, content: '{"stock": 0}' }] };
    const second = (await harness.client.chat.completions.create(next as unknown as OpenAI.ChatCompletionCreateParamsNonStreaming)) as OpenAI.ChatCompletion & {
      envace: Record<string, unknown>;
    };
    expect(second.envace).toMatchObject({ attempts: 0, memory: "reused", predicted_failures: 1 });
    expect(harness.upstream.scripted.length - before).toBe(1);

    // Another client's identical conversation does not see the first client's memory.
    const other = new OpenAI({ baseURL: `${harness.server.url}/v1`, apiKey: TOKENS[1], maxRetries: 0 });
    const third = (await other.chat.completions.create(body as unknown as OpenAI.ChatCompletionCreateParamsNonStreaming)) as OpenAI.ChatCompletion & {
      envace: Record<string, unknown>;
    };
    expect(third.envace).toMatchObject({ attempts: 2, memory: "new" });
    const metrics = await (await fetch(`${harness.server.url}/metrics`)).text();
    expect(metrics).toContain("envace_server_rehearsal_attempts_total 4");
    expect(metrics).toContain("envace_server_rehearsal_memory_hits_total 1");
  });

  it("rehearses by the server's default setting, and streams the envace field in the last chunk", async () => {
    harness = await startHarness({ script, config: { rehearsal: { setting: "parallel:1" } } });
    const stream = await harness.client.chat.completions.create({ model: MODEL, messages: opening, tools: [lookupTool], stream: true });
    const chunks: Record<string, unknown>[] = [];
    for await (const chunk of stream) chunks.push(chunk as unknown as Record<string, unknown>);
    expect(chunks.at(-1)!.envace).toMatchObject({ rehearsal: "parallel:1", attempts: 1, memory: "new" });
    // Requests without tools are not rehearsed.
    harness.upstream.setScript([reply.text("Hello.")]);
    const plain = (await harness.client.chat.completions.create({ model: MODEL, messages: opening })) as OpenAI.ChatCompletion & { envace?: unknown };
    expect(plain.envace).toBeUndefined();
  });
});

describe("the rehearsal memory's key: the whole conversation it was built from", () => {
  /**
   * The model of `script`, except that each summary names the secret (a tool result only one
   * conversation holds) that its rehearsal's Act turns saw, and the Reflect role takes `delayMs`.
   */
  function tracking(delayMs = 0) {
    let seen = "nothing";
    return (request: RecordedRequest) => {
      const role = roleOf(request);
      const text = JSON.stringify(request.body);
      if (role === "act") seen = /secret-[A-Z]/.exec(text)?.[0] ?? seen;
      if (role === "summarize") return reply.text(`<memory>{"plan": "Plan made from ${seen}.", "lessons": []}</memory>`);
      const answer = script(request);
      return role === "reflect" && delayMs > 0 ? reply.delay(delayMs, answer) : answer;
    };
  }
  const called = {
    role: "assistant" as const,
    content: null,
    tool_calls: [{ id: "call_1", type: "function" as const, function: { name: "lookup", arguments: '{"item":"rabo"}' } }],
  };
  const conversation = (secret: string) => [
    ...opening,
    called,
    { role: "tool" as const, tool_call_id: "call_1", content: `${secret}: the rabo is in aisle 9` },
  ];
  type Answer = OpenAI.ChatCompletion & { envace: Record<string, unknown> };
  const committedSystem = (h: Harness): string => (h.upstream.scripted.at(-1)!.body as { messages: { content: string }[] }).messages[0]!.content;

  it("a conversation with the same opening but other later turns never gets a memory built from another's turns", async () => {
    harness = await startHarness({ script: tracking(), config: { rehearsal: { setting: "parallel:1" } } });
    const ask = (messages: unknown, envace?: unknown) =>
      harness!.client.chat.completions.create({
        model: MODEL,
        messages,
        tools: [lookupTool],
        ...(envace ? { envace } : {}),
      } as unknown as OpenAI.ChatCompletionCreateParamsNonStreaming) as unknown as Promise<Answer>;
    // Conversation A reaches the server first with a tool result only A holds.
    expect((await ask(conversation("secret-A"))).envace).toMatchObject({ memory: "new", attempts: 1 });
    expect(committedSystem(harness)).toContain("Plan made from secret-A.");
    // B shares A's opening (and even its first call) but not its tool result: it rehearses anew.
    expect((await ask(conversation("secret-B"))).envace).toMatchObject({ memory: "new", attempts: 1 });
    expect(committedSystem(harness)).toContain("Plan made from secret-B.");
    expect(committedSystem(harness)).not.toContain("secret-A");
    // A's next turn extends what A's memory was built from: it is reused.
    const later = [...conversation("secret-A"), { role: "assistant", content: "It is in aisle 9." }, { role: "user", content: "Thanks, buy it." }];
    expect((await ask(later)).envace).toMatchObject({ memory: "reused", attempts: 0 });
    expect(committedSystem(harness)).toContain("Plan made from secret-A.");
    // Another memory budget or setting makes another memory.
    expect((await ask(later, { memory_budget: 300 })).envace).toMatchObject({ memory: "new" });
    expect((await ask(later, { rehearsal: "parallel:2" })).envace).toMatchObject({ memory: "new", attempts: 2 });
  });

  it("two concurrent first requests of one conversation share one rehearsal", async () => {
    harness = await startHarness({ script: tracking(300), config: { rehearsal: { setting: "parallel:1" } } });
    const body = { model: MODEL, messages: conversation("secret-C"), tools: [lookupTool] } as unknown as OpenAI.ChatCompletionCreateParamsNonStreaming;
    const answers = (await Promise.all([harness.client.chat.completions.create(body), harness.client.chat.completions.create(body)])) as Answer[];
    expect(answers.map((a) => a.envace.memory).sort()).toEqual(["new", "reused"]);
    expect(answers.map((a) => a.envace.attempts).sort()).toEqual([0, 1]);
    const roles = harness.upstream.scripted.map(roleOf);
    // One rehearsal (its attempt answers the tool result with one Act turn, then one reflection and
    // one summary), then the two committed Act turns: five requests, where two rehearsals make eight.
    expect(["reflect", "summarize"].map((role) => roles.filter((r) => r === role).length)).toEqual([1, 1]);
    expect(roles).toHaveLength(5);
    const metrics = await (await fetch(`${harness.server.url}/metrics`)).text();
    expect(metrics).toContain("envace_server_rehearsal_attempts_total 1");
    expect(metrics).toContain("envace_server_rehearsal_memory_hits_total 1");
    expect(harness.server.app.memories.size).toBe(1);
  });
});
